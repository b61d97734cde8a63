-- Checkout core (schema public): the original monolith tables. Their shape is load-bearing
-- for the checkout service and its queries: change them only through a reviewed migration.
-- Data: 310_checkout.sql; indexes: 410_checkout.sql; grants: 510_checkout.sql.

CREATE TABLE merchants(id int PRIMARY KEY, name text NOT NULL,
    order_count bigint NOT NULL DEFAULT 0, open_value_cents bigint,
    settled_at timestamptz, updated_at timestamptz NOT NULL DEFAULT now());

CREATE TABLE price_history(sku int NOT NULL, valid_from date NOT NULL,
    valid_to date, price_cents int NOT NULL);

CREATE TABLE orders(id bigserial PRIMARY KEY, merchant_id int NOT NULL
    REFERENCES merchants(id), sku int NOT NULL, qty int NOT NULL,
    status text NOT NULL DEFAULT 'new', created_at timestamptz NOT NULL DEFAULT now());

COMMENT ON TABLE merchants IS 'Sellers on the marketplace; order_count and open_value_cents are running totals kept by the checkout service.';
COMMENT ON TABLE price_history IS 'Price versions per SKU (valid_from .. valid_to, open-ended for the current one); written by pricing_engine.';
COMMENT ON TABLE orders IS 'Live checkout orders. Settled orders are copied to the warehouse; ids are also carried by payments and fulfilment.';
COMMENT ON COLUMN merchants.settled_at IS 'Last time the nightly settlement run closed this merchant''s open orders.';
COMMENT ON COLUMN orders.status IS 'new, paid, shipped, cancelled (free text for historical reasons; the service validates it).';

-- Flyway's own bookkeeping table, exactly as Flyway 9 creates it (do not add constraints:
-- Flyway validates its shape on start-up).
CREATE TABLE flyway_schema_history (
    installed_rank integer NOT NULL,
    version varchar(50),
    description varchar(200) NOT NULL,
    type varchar(20) NOT NULL,
    script varchar(1000) NOT NULL,
    checksum integer,
    installed_by varchar(100) NOT NULL,
    installed_on timestamp NOT NULL DEFAULT now(),
    execution_time integer NOT NULL,
    success boolean NOT NULL,
    CONSTRAINT flyway_schema_history_pk PRIMARY KEY (installed_rank)
);
CREATE INDEX flyway_schema_history_s_idx ON flyway_schema_history (success);
COMMENT ON TABLE flyway_schema_history IS 'Flyway migration history for the whole database (all domains migrate through one Flyway project).';
