"""The summary of a finished reconciliation: counts and money per category and per currency."""

from __future__ import annotations

import duckdb

from agent.data.ledger import FileLedger
from agent.data.reconcile.runner import run_sql
from agent.data.reconcile.values import (
    FINDING_CATEGORIES,
    CategoryTotal,
    CurrencyTotals,
    Summary,
)


def build_summary(
    con: duckdb.DuckDBPyConnection, policy_version: str, ledger: list[FileLedger]
) -> Summary:
    """Counts and amounts per category, and matched totals per currency and side.

    Reads the engine's tables in `con` (`findings`, `order_findings`, `payments`, ...) and the
    row ledger; every category is listed, those without findings at zero.
    """
    counts = dict.fromkeys(FINDING_CATEGORIES, 0)
    diffs: dict[str, dict[str, str]] = {c: {} for c in FINDING_CATEGORIES}
    for category, currency, count, diff in run_sql(con, "category_totals").fetchall():
        counts[category] += count
        if currency is not None and diff is not None:
            diffs[category][currency] = diff
    currencies = [
        CurrencyTotals(
            currency=row[0],
            orders=row[1],
            order_total=row[2],
            captures=row[3],
            captured_total=row[4],
            matched_orders=row[5],
            matched_total=row[6],
        )
        for row in run_sql(con, "currency_totals").fetchall()
    ]
    stats = run_sql(con, "summary_stats").fetchone()
    assert stats is not None
    return Summary(
        policy_version=policy_version,
        orders=stats[0],
        order_rows=stats[1],
        payments=stats[2],
        payment_rows=stats[3],
        failed_attempts=stats[4],
        unreadable_orders=list(stats[5] or []),
        unreadable_payments=list(stats[6] or []),
        counts=counts,
        categories=[
            CategoryTotal(category=c, count=counts[c], difference_by_currency=diffs[c])
            for c in FINDING_CATEGORIES
        ],
        currencies=currencies,
        ledger=ledger,
    )
