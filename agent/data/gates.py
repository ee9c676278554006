"""Validation gates: a reading under which the files do not meet is a question, not a confirmation.

Checked on the whole loaded files (after `normalize.load_dataset`), these are facts about the
reading, never reconciliation figures: how many payment references name an order, and whether
the order id column really names one order per id. Other id readings are weighed over the whole
files (`id_evidence`): one that clearly makes the files meet better is proposed in this one's
place; two close ones are asked; a better one that cannot be proposed is named with its edit,
at any rate, not only when (almost) nothing meets.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import duckdb

from agent.data.id_evidence import (
    TIED_SHARES,
    Fix,
    better_readings,
    differing_share,
    merged_orders,
    references_met,
)
from agent.data.normalize import ValidationReport, reference_tokens_sql
from agent.data.normalize.codes import Code
from agent.data.normalize.expressions import sql_words
from agent.data.notes import note
from agent.data.schema import Mapping, Role

MIN_MATCH_SHARE = 0.5
CLEAR_SHARE = 0.9
"""A reading under which this share of references name an order, with no other within
`CLOSE_SHARES`, is proposed (validated in place of the reading), not asked."""
CLOSE_SHARES = 0.1
MAX_CONFLICT_SHARE = 0.1
MAX_ROWS_PER_ORDER = 20


def check_reading(
    con: duckdb.DuckDBPyConnection, names: dict[Role, str], mapping: Mapping
) -> ValidationReport:
    """The gates' facts and errors for two loaded files (`orders_rows`, `payments_rows`)."""
    report = ValidationReport()
    _check_order_ids(con, names[Role.ORDERS], mapping, report)
    _check_references(con, names, mapping, report)
    return report


def _check_order_ids(
    con: duckdb.DuckDBPyConnection, name: str, mapping: Mapping, report: ValidationReport
) -> None:
    column = mapping.orders.columns.get("order_id")
    row = con.execute(
        # Each id with a total: its rows with a total, and whether those totals differ.
        "SELECT count(*), coalesce(sum(n_filled), 0), count(*) FILTER (WHERE differ) "
        "FROM order_index WHERE n_filled > 0"
    ).fetchone()
    assert row is not None
    keys, rows, conflicting = (int(v) for v in row)
    if not keys:
        return
    report.routine.append(note(Code.ORDER_IDS, file=name, keys=keys, rows=rows))
    many_rows = rows >= 100 and rows / keys > MAX_ROWS_PER_ORDER
    conflicts = conflicting > 5 and conflicting / keys > MAX_CONFLICT_SHARE
    if many_rows or conflicts:
        report.errors.append(
            note(
                Code.NOT_ORDER_ID,
                file=name,
                column=column,
                keys=keys,
                rows=rows,
                conflicting=conflicting,
                conflicts=conflicts,
            )
        )


def _check_references(
    con: duckdb.DuckDBPyConnection,
    names: dict[Role, str],
    mapping: Mapping,
    report: ValidationReport,
) -> None:
    ids = mapping.payments.options.ids
    tokens = reference_tokens_sql("order_id", ids)
    met = references_met(con, mapping, _named_rows(mapping))
    total, named = met.total, met.named
    if not total:
        return
    # Of the references that name orders, those that name several (as the engine reads them).
    row = con.execute(
        f"""
        WITH several AS (
            SELECT x.r, count(DISTINCT x.t) AS orders
            FROM (SELECT rowid AS r, unnest({tokens}) AS t FROM payments_rows
                  WHERE several_refs AND order_id IS NOT NULL AND {_named_rows(mapping)}) x
            LEFT JOIN order_index k ON k.order_key = x.t
            GROUP BY x.r HAVING bool_and(k.order_key IS NOT NULL) AND count(DISTINCT x.t) > 1)
        -- The first rows only (`min(x, n)`): a list of every such reference would grow
        -- with the file (every payment of a batch file names several orders).
        SELECT count(*), min(r + 1, 5) FROM several
        """
    ).fetchone()
    assert row is not None
    multi = int(row[0])
    fact: dict[str, Any] = {
        "named": named,
        "total": total,
        "payments": names[Role.PAYMENTS],
        "orders": names[Role.ORDERS],
        "several": multi,
    }
    report.routine.append(note(Code.REFERENCES, **fact))
    report.references = [named, total]
    if named / total >= MIN_MATCH_SHARE and multi / total >= MIN_MATCH_SHARE:
        report.warnings.append(note(Code.MULTI_ORDER_READING, **fact, rows=list(row[1])))
        return
    if named < total:
        _weigh_readings(con, mapping, met, fact, report)


def _weigh_readings(
    con: duckdb.DuckDBPyConnection,
    mapping: Mapping,
    met: Fix,
    fact: dict[str, Any],
    report: ValidationReport,
) -> None:
    """Weigh the other id readings over the whole files: the one that clearly makes more
    references name an order is proposed (`report.proposed`, validated in this one's place);
    two close ones are asked; a better one that cannot be proposed (it merges order ids, or
    meets too little) is named with its edit, as a warning above the gate, in the error below."""
    failing = met.share < MIN_MATCH_SHARE
    fixes = better_readings(con, mapping, met, _named_rows(mapping), everywhere=failing)
    fix = fixes[0] if fixes else None
    close = [
        f
        for f in fixes[1:]
        if fix is not None
        and f.edit(mapping) != fix.edit(mapping)
        and fix.named - f.named < CLOSE_SHARES * f.total
        and (
            fix.named - f.named > TIED_SHARES * f.total
            # As many meet under both: one reading only if they name the same orders.
            or differing_share(con, _named_rows(mapping), fix, f, met) > TIED_SHARES
        )
    ]
    several = fix is not None and fix.several > TIED_SHARES * fix.total
    if fix is not None and fix.share >= CLEAR_SHARE and not close and not several:
        fix = replace(fix, merged=merged_orders(con, met, fix))
        if not fix.merged:  # the files say it: validated in this one's place
            report.proposed = fix.answers(mapping)
            report.proposed_reading = note(
                Code.PROPOSED_READING,
                named=fix.named,
                total=fix.total,
                reading=fix.describe(mapping),
                edit=fix.edit(mapping),
            )
    advice: dict[str, Any]
    if fix is not None and close:
        readings = [[f.edit(mapping), f.named, f.total] for f in (fix, *close)]
        advice = {"kind": "close", "readings": readings}
    elif fix is not None:
        advice = {
            "kind": "better",
            "reading": fix.describe(mapping),
            "named": fix.named,
            "total": fix.total,
            "edit": fix.edit(mapping),
            "merged": fix.merged,
            "several": fix.several if several else 0,
        }
    elif failing:
        advice = {"kind": "check"}
    else:
        return
    if failing:
        report.errors.append(note(Code.READING_FAILS, **fact, advice=advice))
    elif not report.proposed:
        report.warnings.append(note(Code.READING_WEAK, **fact, advice=advice))


def _named_rows(mapping: Mapping) -> str:
    """The payment rows whose reference should name an order: not the rows the approved row
    kinds ignore (a fee's or a deposit's text names no order, and would make files that meet
    look as if they did not)."""
    kinds = mapping.payments.options.kinds
    if kinds is None or not kinds.ignore:
        return "true"
    ignore = sql_words(kinds.ignore)
    return (
        f"NOT coalesce(row_kind IN {ignore}, false) "
        f"AND NOT coalesce(payment_status IN {ignore}, false)"
    )
