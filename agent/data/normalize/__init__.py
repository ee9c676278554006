"""Read a whole file into DuckDB under an approved mapping, and check it (validation).

`load_dataset` reads every row with exactly the approved reading options into a table of
canonical fields (`orders_rows` or `payments_rows`), with exact decimals and the keys that join
the files, and beside each amount and timestamp whether its cell was filled, so that `validate`
can report, per field, the share of values that do not read and example rows. `load_both` reads
the two files at once. Minor units are computed by the engine, where a currency table can be joined.

The package: `load` (loading), `columns` (what is read of each file), `expressions` (the SQL
that reads ids, references and amounts, shared with the engine), `zones` (per-row time zones),
`validation` and `report` (the checks and their report, whose problems and facts are notes:
`codes` names them, `wording` and `meaning_words` put them in words), `memo` (reports kept).
"""

from agent.data.normalize.columns import kinds_column
from agent.data.normalize.expressions import (
    REFERENCE_SEPARATORS,
    key_sql,
    minor_sql,
    reference_tokens_sql,
    sql_words,
)
from agent.data.normalize.load import SOURCE, load_both, load_dataset, table_name
from agent.data.normalize.report import FieldCheck, ValidationReport, merge
from agent.data.normalize.validation import REQUIRED_SHARE, validate
from agent.data.normalize.zones import MAX_ZONES, ZONE_ABBREVIATIONS, ZONE_NAMES, zone_sql

__all__ = [
    "MAX_ZONES",
    "REFERENCE_SEPARATORS",
    "REQUIRED_SHARE",
    "SOURCE",
    "ZONE_ABBREVIATIONS",
    "ZONE_NAMES",
    "FieldCheck",
    "ValidationReport",
    "key_sql",
    "kinds_column",
    "load_both",
    "load_dataset",
    "merge",
    "minor_sql",
    "reference_tokens_sql",
    "sql_words",
    "table_name",
    "validate",
    "zone_sql",
]
