"""Evidence lookup in a saved exceptions file, so questions can be answered after a restart.

The exceptions CSV that a reconciliation exports holds every finding with its ids and row
numbers; looking an id up in it (`findings_for`), or listing the findings of one category
(`findings_of`), needs no re-run of the reconciliation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.data.duck import session
from agent.data.profile import normalize_key

_TOKENS = (
    "list_transform(string_split(coalesce({0}, ''), '; '), "
    "lambda x: lower(trim(replace(ltrim(x, chr(39)), '#', ''))))"
)

LOOKUP_LIMIT = 20
LIST_LIMIT = 20
"""How many findings of one category are listed when no limit is asked for."""
MAX_LIST_LIMIT = 100
"""The most findings of one category listed at once; the exceptions file holds every one."""

# A cell as the exceptions CSV writes it: one from an uploaded file may carry a leading `'`
# (`spreadsheet_safe`, reconcile/sql/setup.sql), which is not part of the value.
_CELL = "trim(ltrim(coalesce({0}, ''), chr(39)))"
# The size of a finding's difference: `difference` (actual - expected) when both amounts
# exist, else the one amount there is (a capture without an order has no expected amount).
_SIZE = (
    "abs(coalesce(TRY_CAST(difference AS DECIMAL(38, 4)), TRY_CAST(actual AS DECIMAL(38, 4)), "
    "TRY_CAST(expected AS DECIMAL(38, 4))))"
)
# The first data row a finding names in a file: the tie-break after the size, so that equal
# differences (or none) come in the files' order.
_FIRST_ROW = "TRY_CAST(split_part(trim(coalesce({0}, '')), ' ', 1) AS BIGINT)"


@dataclass(frozen=True)
class CategoryFindings:
    """The findings of one category in an exceptions file: how many there are in all (in the
    currency asked for, if any), how many per currency, and the first `limit` of them, largest
    difference first."""

    category: str
    currency: str | None
    total: int
    by_currency: dict[str, int]
    findings: list[dict[str, Any]]


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


def findings_of(
    export: Path, category: str, *, currency: str | None = None, limit: int = LIST_LIMIT
) -> CategoryFindings:
    """The findings of `category` in an exceptions file (in `currency` only, when given), the
    largest first: by the size of the difference between the actual and the expected amount
    (the one amount there is when the other is empty), amounts compared as written whatever
    their currency; equal sizes in the order of the first orders row, then payments row.

    `limit` is kept between 1 and MAX_LIST_LIMIT. The total and the counts per currency are of
    every finding of the category (in `currency`, for the total), listed or not. Ignored rows
    (category `ignored`) are never findings.
    """
    limit = max(1, min(int(limit), MAX_LIST_LIMIT))
    code = currency.strip().upper() if currency and currency.strip() else None
    con = session()
    try:
        source = str(export).replace("'", "''")
        picked = f"""
            SELECT *, upper({_CELL.format("currency")}) AS currency_code
            FROM read_csv('{source}', header = true, all_varchar = true)
            WHERE category = ?
        """
        counted = con.execute(
            f"SELECT currency_code, count(*) FROM ({picked}) GROUP BY currency_code ORDER BY 1",
            [category],
        ).fetchall()
        by_currency = {str(c): int(n) for c, n in counted}
        cursor = con.execute(
            f"""
            SELECT * EXCLUDE (currency_code) FROM ({picked})
            WHERE ? IS NULL OR currency_code = ?
            ORDER BY {_SIZE} DESC NULLS LAST, {_FIRST_ROW.format("orders_rows")} NULLS LAST,
                     {_FIRST_ROW.format("payments_rows")} NULLS LAST
            LIMIT {limit}
            """,
            [category, code, code],
        )
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        con.close()
    total = by_currency.get(code, 0) if code else sum(by_currency.values())
    return CategoryFindings(category, code, total, by_currency, rows)
