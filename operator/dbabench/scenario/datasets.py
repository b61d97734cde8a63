"""Schemas and data a scenario's database starts from, before any fault.

A dataset is SQL the superuser runs in the application database. Its version is part of the
golden snapshot's key, so changing it here rebuilds every snapshot that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dataset:
    name: str
    version: int
    statements: tuple[str, ...]


def checkout(scale: int) -> Dataset:
    """Merchants, a price list with history, and orders: the checkout service's database.

    ``price_history`` keeps 500 versions per SKU with one current row, indexed on ``sku``
    alone, so a per-order lookup of the current price is cheap only in bulk (a hash join)
    and expensive per row (a bitmap scan of 500 versions in a nested loop).
    """
    merchants, orders_per_merchant = 100, 3000 * scale
    return Dataset(
        name="checkout",
        version=3,
        statements=(
            "CREATE TABLE merchants(id int PRIMARY KEY, name text NOT NULL,"
            " order_count bigint NOT NULL DEFAULT 0, open_value_cents bigint,"
            " settled_at timestamptz, updated_at timestamptz NOT NULL DEFAULT now())",
            f"INSERT INTO merchants(id, name) SELECT g, 'merchant-' || g"
            f" FROM generate_series(1, {merchants + 1}) g",
            "CREATE TABLE price_history(sku int NOT NULL, valid_from date NOT NULL,"
            " valid_to date, price_cents int NOT NULL)",
            "INSERT INTO price_history SELECT s, date '2020-01-01' + v,"
            " CASE WHEN v = 499 THEN NULL ELSE date '2020-01-01' + v + 1 END,"
            " 100 + (s * 37 + v * 11) % 9900"
            " FROM generate_series(1, 2000) s, generate_series(0, 499) v",
            "CREATE INDEX price_history_sku_idx ON price_history(sku)",
            "CREATE TABLE orders(id bigserial PRIMARY KEY, merchant_id int NOT NULL"
            " REFERENCES merchants(id), sku int NOT NULL, qty int NOT NULL,"
            " status text NOT NULL DEFAULT 'new', created_at timestamptz NOT NULL DEFAULT now())",
            "CREATE INDEX orders_merchant_idx ON orders(merchant_id, id)",
            f"INSERT INTO orders(merchant_id, sku, qty, created_at)"
            f" SELECT 1 + g % {merchants}, 1 + (g::bigint * 7919) % 2000, 1 + g % 5,"
            f" now() - make_interval(secs => g % 86400)"
            f" FROM generate_series(1, {merchants * orders_per_merchant}) g",
            "GRANT SELECT, INSERT, UPDATE ON merchants, orders, price_history TO app",
            "GRANT USAGE ON SEQUENCE orders_id_seq TO app",
            "VACUUM ANALYZE",
        ),
    )


DATASETS = {"checkout": checkout}
