-- Checkout core indexes (the only secondary indexes these tables have; the checkout
-- service's query plans depend on exactly these).
CREATE INDEX price_history_sku_idx ON price_history(sku);
CREATE INDEX orders_merchant_idx ON orders(merchant_id, id);
