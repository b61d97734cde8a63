"""The SQL safety layer: what a statement does to a live database, read from PostgreSQL's own
parse tree rather than from its text."""

from dbabench.policy.classify import (
    HARNESS_ACCESS,
    REFUSED,
    classify,
    is_mutating,
    normalize_relation,
    parse_pg_bool,
)
from dbabench.policy.reach import pg_magnitude

__all__ = ["HARNESS_ACCESS", "REFUSED", "classify", "is_mutating",
           "normalize_relation", "parse_pg_bool", "pg_magnitude"]
