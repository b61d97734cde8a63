"""The checkout dataset's section: its tables, indexes, sequences, roles and privileges, and
the definition as the build runs it."""

from __future__ import annotations

from dbabench.env import postgres
from dbabench.evaluate.reference.dataset_build import Statement
from dbabench.evaluate.reference.dataset_shape import ROLE_DEFAULTS, DatasetShape, dataset_shape
from dbabench.evaluate.reference.markdown import code, count, doc, table
from dbabench.scenario.datasets import DATASETS


def _rows_text(rows: dict[int, int]) -> str:
    one, two = rows[1], rows[2]
    if one == two:
        return count(one)
    if two == 2 * one:
        return f"{count(one)} × `scale`"
    return f"{count(one)} at scale 1, {count(two)} at scale 2"


def _definition(build: list[Statement]) -> list[str]:
    lines, session = [], None
    for statement in build:
        if (statement.database, statement.application_name) != session:
            session = (statement.database, statement.application_name)
            lines += [*([""] if lines else []),
                      f"-- in database {statement.database}, as {postgres.SUPERUSER}"
                      f" (application_name {statement.application_name})"]
        lines.append(f"{statement.text};")
    return lines


def section(name: str, build: list[Statement], at_two: DatasetShape) -> list[str]:
    shape = dataset_shape(build)
    app_db = shape.databases[0]
    lines = [
        f"## The {name} dataset",
        "",
        f"`database.dataset: {name}` (scenario/datasets.py; the other, `estate`, a company's"
        " primary database around this one, is described in [The estate](estate.md)).",
        doc(DATASETS[name]),
        "",
        f"The harness builds it once per golden snapshot: as `{postgres.SUPERUSER}` it creates"
        f" the application role and database `{app_db}`, then runs the dataset's statements"
        f" in `{app_db}`, each in autocommit (the full text is at the end of this section)."
        " Scale multiplies the rows of the tables whose load depends on it; every shipped"
        " scenario uses scale 1.",
        "",
        "### Tables",
        "",
        *table(("table", "rows", "columns", "indexes"),
               ((code(t.name), _rows_text({1: t.rows, 2: at_two.tables[t.name].rows}),
                 ", ".join(c.name for c in t.columns),
                 ", ".join(code(i[0]) for i in t.indexes) or "none")
                for t in shape.tables.values())),
    ]
    for t in shape.tables.values():
        lines += ["", f"#### {t.name}", "",
                  *table(("column", "type", "null", "default", "loaded with"),
                         ((code(c.name), c.type, "NOT NULL" if c.not_null else "nullable",
                           code(c.default) if c.default else "",
                           code(t.filled[c.name]) if c.name in t.filled
                           else "its default")
                          for c in t.columns)),
                  "",
                  f"Rows: {_rows_text({1: t.rows, 2: at_two.tables[t.name].rows})},"
                  f" one per {' × '.join(t.ranges)} (scale 1)."]
        if t.constraints:
            lines.append("Constraints: " + "; ".join(t.constraints) + ".")
    lines += ["", "### Indexes", "",
              *table(("index", "table", "definition", "made by"),
                     ((code(i[0]), code(t.name), i[1], i[2])
                      for t in shape.tables.values() for i in t.indexes)),
              "", "### Sequences", "",
              *table(("sequence", "type", "owned by", "value after the load"),
                     ((code(s), kind, code(owner),
                       f"{_rows_text({1: t.rows, 2: at_two.tables[t.name].rows})}"
                       " (one per loaded row)" if owner.split(".")[1] not in t.filled
                       else "as the load left it")
                      for t in shape.tables.values() for s, kind, owner in t.sequences)),
              "",
              "### Roles and privileges",
              "",
              *table(("role", "made by", "attributes", "privileges"),
                     ((code(r.name), r.made_by, r.attributes,
                       "; ".join(r.grants) or "all (superuser)")
                      for r in shape.roles.values())),
              "",
              f"Attributes a `CREATE ROLE` does not name keep PostgreSQL's defaults"
              f" ({ROLE_DEFAULTS}, no connection limit, no expiry). The application role's"
              " password is generated with the golden; a role a fault creates for a job"
              " (`role`) is given the same password at restore. Beyond these grants"
              " PostgreSQL 15's defaults hold: any role may connect to the database and use"
              " (not create in) schema `public`. The load ends with"
              f" {', '.join(map(code, shape.last))}, so the statistics are fresh when the"
              " fault starts.",
              "",
              "### The definition, as run",
              "",
              "```sql",
              *_definition(build),
              "```"]
    return lines
