"""Evidence lookup in a saved exceptions file, so questions can be answered after a restart.

The exceptions CSV that a reconciliation exports holds every finding with its ids and row
numbers; looking an id up in it needs no re-run of the reconciliation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.data.duck import session
from agent.data.profile import normalize_key

_TOKENS = (
    "list_transform(string_split(coalesce({0}, ''), '; '), "
    "lambda x: lower(trim(replace(ltrim(x, chr(39)), '#', ''))))"
)

LOOKUP_LIMIT = 20


def findings_for(
    export: Path, identifier: str, *, limit: int = LOOKUP_LIMIT
) -> list[dict[str, Any]]:
    """The findings of an exceptions file that concern an order or payment id, in file order."""
    # A typed id is read leniently: any whitespace around it (a tab or a no-break space pasted
    # from a spreadsheet) goes, then the rule ids are compared by.
    key = normalize_key(identifier.strip().lstrip("'")).replace("#", "").lower()
    if not key:
        return []
    con = session()
    try:
        source = str(export).replace("'", "''")
        cursor = con.execute(
            f"""
            SELECT * FROM read_csv('{source}', header = true, all_varchar = true)
            WHERE list_contains({_TOKENS.format("order_ids")}, ?)
               OR list_contains({_TOKENS.format("payment_ids")}, ?)
            LIMIT {int(limit)}
            """,
            [key, key],
        )
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        con.close()
