"""The gate's list of PostgreSQL's own names (policy/catalog_names.txt), which decides that an
unqualified ``ALTER FUNCTION lo_export(...) RENAME`` is DDL on the catalog, is the server's."""

from __future__ import annotations

import psycopg
import pytest

from dbabench.env.postgres import PostgresInstance
from dbabench.policy.reach import catalog_names

pytestmark = pytest.mark.integration

_NAMES = """
SELECT proname FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace AND oid < 16384
UNION SELECT typname FROM pg_type WHERE typnamespace = 'pg_catalog'::regnamespace
   AND oid < 16384
UNION SELECT oprname FROM pg_operator WHERE oprnamespace = 'pg_catalog'::regnamespace
   AND oid < 16384
"""


def test_the_gates_catalog_names_are_the_servers(postgres: PostgresInstance) -> None:
    with psycopg.connect(postgres.dsn(database="postgres"), autocommit=True) as conn:
        live = {row[0] for row in conn.execute(_NAMES).fetchall()}
    assert catalog_names() == live
