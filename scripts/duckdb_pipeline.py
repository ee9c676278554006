"""A peer for the benchmark: the job of scripts/pandas_pipeline.py written as plain DuckDB SQL.

Why: pandas is single-threaded and eager, so beating it says little. This is how a capable
engineer would write the job for speed with the obvious columnar tool: read both `reconbot
demo-data` files with `read_csv` (every column VARCHAR, converted in SQL), reconcile under the
same rules as reconbot's policy defaults with the same categories as the pandas pipeline, `COPY`
the exceptions to a CSV and print one JSON line of per-category counts. DuckDB uses its default
number of threads and a memory limit of 1 GB.

Unlike the pandas pipeline it does not hash the files: the peer's job is "read, reconcile,
count". `--hash` also sha256-hashes both files first, for a like-for-like figure. Usage:

    python scripts/duckdb_pipeline.py ORDERS PAYMENTS OUT [--hash]
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from straight_job import command_line

MEMORY_LIMIT = "1GB"
TOL = 1
"""Amounts within this many minor units agree (the policy default)."""
EARLY_S = 24 * 3600
"""A capture more than this long before its order is outside the window."""
LATE_S = 30 * 86400
"""A capture more than this long after its order is outside the window."""

FAILED = ("failed", "declined", "canceled", "cancelled", "blocked", "error", "expired")
REFUNDED = ("refunded", "partially_refunded", "reversed")
VOIDED = ("voided", "void", "cancelled", "canceled")
EXPONENTS = {"USD": 2, "EUR": 2, "GBP": 2, "JPY": 0, "KWD": 3}
TOKEN = r"[^\s,;|/&+]*[0-9][^\s,;|/&+]*"
"""An order reference in a payment: a run between separators that holds a digit."""


def sql_list(values: tuple[str, ...]) -> str:
    """A SQL list of string literals (the values are this module's constants)."""
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def read_csv(path: Path) -> str:
    """A `read_csv` call for `path` with its dialect given, every column VARCHAR, named by the
    header."""
    quoted = str(path).replace("'", "''")
    return (
        f"read_csv('{quoted}', header = true, delim = ',', quote = '\"', escape = '\"', "
        "all_varchar = true)"
    )


def minor(amount: str, currency: str) -> str:
    """SQL: the text `amount` (thousands separators allowed) in minor units of `currency`."""
    scale = " ".join(f"WHEN '{code}' THEN {10**exp}" for code, exp in EXPONENTS.items())
    return (
        f"CAST(round(TRY_CAST(replace({amount}, ',', '') AS DECIMAL(18, 4)) "
        f"* CASE {currency} {scale} END) AS BIGINT)"
    )


def key(text: str) -> str:
    """SQL: an order reference compared as reconbot compares ids (no `#`, trimmed, lower case)."""
    return f"lower(trim(replace({text}, '#', '')))"


def load(con: duckdb.DuckDBPyConnection, orders: Path, payments: Path) -> None:
    """Read both files into tables `o_rows` and `p_rows`, one row per record in file order (so
    data row n is `rowid + 1`), with the fields the reconciliation needs already converted."""
    name_key = key("""coalesce("Name", '')""")
    con.execute(
        f"""
        CREATE TEMP TABLE o_rows AS
        SELECT "Name" AS name,
               {name_key} AS key,
               lower(trim(coalesce("Financial Status", ''))) AS status,
               upper(trim("Currency")) AS currency,
               {minor('"Total"', 'upper(trim("Currency"))')} AS amount,
               epoch(strptime("Created at", '%Y-%m-%d %H:%M:%S %z')) AS t
        FROM {read_csv(orders)}
        """
    )
    tokens = f"""regexp_extract_all(coalesce("order_id (metadata)", ''), '{TOKEN}')"""
    con.execute(
        f"""
        CREATE TEMP TABLE p_rows AS
        SELECT id,
               lower(trim(coalesce("Status", ''))) AS status,
               upper(trim("Currency")) AS currency,
               {minor('"Amount"', 'upper(trim("Currency"))')} AS amount,
               coalesce({minor('"Amount Refunded"', 'upper(trim("Currency"))')}, 0) AS refunded,
               epoch(strptime("Created date (UTC)", '%Y-%m-%d %H:%M:%S')) AS t,
               list_distinct(list_transform({tokens}, lambda s: {key("s")})) AS refs
        FROM {read_csv(payments)}
        """
    )


EXCEPTIONS = f"""
CREATE TEMP TABLE exceptions AS
WITH orders AS (          -- an order's first row: the others are its further line items
    SELECT rowid + 1 AS row, * FROM o_rows
    QUALIFY row_number() OVER (PARTITION BY key ORDER BY rowid) = 1
),
pay AS (                  -- payments that went through, each id once, with its copies counted
    SELECT rowid + 1 AS row, *, len(refs) AS n_refs, refs[1] AS ref,
           status IN {sql_list(REFUNDED)} AS refunded_status,
           count(*) OVER (PARTITION BY id) AS copies
    FROM p_rows
    WHERE status NOT IN {sql_list(FAILED)}
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY rowid) = 1
),
multi AS (SELECT DISTINCT unnest(refs) AS key FROM pay WHERE n_refs > 1),
agg AS (                  -- each order's single-reference captures
    SELECT o.key,
           count(*) AS n,
           sum(p.amount) AS captured,
           sum(p.refunded) AS refunded,
           bool_or(p.currency <> o.currency) AS currency_differs,
           bool_and(p.refunded >= p.amount OR p.refunded_status) AS all_refunded,
           bool_or(p.refunded_status) AS any_refunded,
           bool_or(abs(p.amount - o.amount) <= {TOL}) AS one_covers,
           bool_or(p.t < o.t - {EARLY_S} OR p.t > o.t + {LATE_S}) AS outside
    FROM pay p JOIN orders o ON p.ref = o.key
    WHERE p.n_refs = 1
    GROUP BY o.key
),
order_findings AS (
    SELECT o.row, o.name, o.currency, o.amount, a.captured,
        CASE
            WHEN m.key IS NOT NULL THEN NULL
            WHEN a.n IS NULL AND o.status IN {sql_list(VOIDED)} THEN NULL
            WHEN a.n IS NULL THEN 'order_without_capture'
            WHEN a.currency_differs THEN 'currency_mismatch'
            WHEN (o.status IN {sql_list(VOIDED)} AND a.captured - a.refunded > {TOL})
                OR (o.status = 'refunded' AND a.refunded = 0
                    AND NOT coalesce(a.any_refunded, false))
                OR (a.all_refunded AND o.status = 'paid') THEN 'status_mismatch'
            WHEN a.n >= 2 AND a.one_covers AND a.captured > o.amount + {TOL}
                THEN 'duplicate_capture'
            WHEN abs(a.captured - o.amount) <= {TOL}
                THEN CASE WHEN a.outside THEN 'capture_outside_window' END
            WHEN a.n = 1 THEN 'amount_mismatch'
            WHEN a.captured < o.amount THEN 'partial_capture'
            ELSE 'over_capture'
        END AS category
    FROM orders o
    LEFT JOIN agg a USING (key)
    LEFT JOIN multi m USING (key)
),
payment_findings AS (
    SELECT p.row, p.id, p.currency, p.amount,
        CASE
            WHEN p.n_refs > 1 THEN 1
            WHEN p.n_refs = 0 THEN 2
            WHEN p.n_refs = 1 AND o.key IS NULL THEN 3
            WHEN p.copies > 1 THEN 4
        END AS rank
    FROM pay p LEFT JOIN orders o ON p.n_refs = 1 AND p.ref = o.key
)
SELECT category, name AS id, row, currency, amount AS expected, captured AS actual,
       0 AS rank
FROM order_findings WHERE category IS NOT NULL
UNION ALL
SELECT CASE rank WHEN 1 THEN 'multi_order_payment' WHEN 4 THEN 'duplicate_payment_row'
                 ELSE 'capture_without_order' END,
       id, row, currency, NULL, amount, rank
FROM payment_findings WHERE rank IS NOT NULL
"""
"""The exceptions, one row per finding; `rank` orders them as the pandas pipeline writes them
(flagged orders, then multi-order payments, payments without a reference, payments whose
reference names no order, and repeated payment rows, each in file order)."""


def reconcile(orders: Path, payments: Path, out: Path) -> dict[str, int]:
    """Reconcile `orders` against `payments`, write the exceptions CSV to `out` and return the
    per-category counts (most frequent first)."""
    with duckdb.connect(config={"memory_limit": MEMORY_LIMIT}) as con:
        load(con, orders, payments)
        con.execute(EXCEPTIONS)
        target = str(out).replace("'", "''")
        con.execute(
            "COPY (SELECT category, id, row, currency, expected, actual FROM exceptions "
            f"ORDER BY rank, row) TO '{target}' (HEADER, DELIMITER ',')"
        )
        rows = con.execute(
            "SELECT category, count(*) AS n FROM exceptions GROUP BY category "
            "ORDER BY n DESC, category"
        ).fetchall()
    return {str(category): int(n) for category, n in rows}


if __name__ == "__main__":
    command_line(reconcile, __doc__ or "")
