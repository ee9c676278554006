"""Findings as values: the rows of the `findings` table a person looks at, with evidence."""

from __future__ import annotations

import duckdb

from agent.data.reconcile.runner import run_sql
from agent.data.reconcile.values import Evidence, Finding
from agent.data.schema import Role


def fetch_findings(
    con: duckdb.DuckDBPyConnection,
    files: dict[Role, str],
    *,
    category: str | None = None,
    key: str | None = None,
    limit: int | None = None,
    informative: bool = False,
) -> list[Finding]:
    """Findings in category order then file order, each with its evidence per file.

    Only those of `category` and those concerning the id `key` (lower case) when given, and at
    most `limit` of them; `informative`: the largest of each category first, then the largest
    left (for examples a person reads, not for lists). Findings stay in DuckDB until asked
    for: only these become values.
    `files` names each role's file as the uploader named it, for the evidence.
    """
    if informative:  # the largest of each category first (`example_rows.sql`)
        rows = run_sql(con, "example_rows", {"limit": limit}).fetchall()
    else:
        rows = run_sql(
            con, "finding_rows", {"category": category, "key": key, "limit": limit}
        ).fetchall()
    found = []
    for (
        category_,
        reason,
        order_ids,
        payment_ids,
        currency,
        expected,
        actual,
        o_rows,
        p_rows,
    ) in rows:
        evidence = []
        if o_rows:
            evidence.append(Evidence(file=files[Role.ORDERS], rows=o_rows, ids=order_ids or []))
        if p_rows:
            evidence.append(Evidence(file=files[Role.PAYMENTS], rows=p_rows, ids=payment_ids or []))
        found.append(
            Finding(
                category=category_,
                reason=reason,
                order_ids=order_ids or [],
                payment_ids=payment_ids or [],
                currency=currency,
                expected=expected,
                actual=actual,
                evidence=evidence,
            )
        )
    return found
