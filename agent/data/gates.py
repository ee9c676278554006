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
from agent.data.normalize.expressions import sql_words
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
    report.routine.append(f"{name}: {keys:,} order ids on {rows:,} rows with a total")
    many_rows = rows >= 100 and rows / keys > MAX_ROWS_PER_ORDER
    conflicts = conflicting > 5 and conflicting / keys > MAX_CONFLICT_SHARE
    if many_rows or conflicts:
        why = (
            f"{conflicting:,} of its {keys:,} ids carry different totals on different rows"
            if conflicts
            else f"it has only {keys:,} different values on {rows:,} rows with a total"
        )
        report.errors.append(
            f'{name}: column "{column}" does not look like the order id: {why}. '
            "An order id names one order; choose the column that holds each order's own id "
            "(edit orders.order_id=COLUMN)."
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
        SELECT count(*), list(r + 1 ORDER BY r)[1:5] FROM several
        """
    ).fetchone()
    assert row is not None
    multi = int(row[0])
    orders_name, payments_name = names[Role.ORDERS], names[Role.PAYMENTS]
    fact = (
        f"{named:,} of {total:,} payment references in {payments_name} "
        f"name an order in {orders_name}"
    )
    if multi:
        fact += f" ({multi:,} of them name several orders)"
    report.routine.append(fact)
    report.references = [named, total]
    report.references_line = fact
    if named / total >= MIN_MATCH_SHARE and multi / total >= MIN_MATCH_SHARE:
        where = ", ".join(str(r) for r in row[1])
        report.warnings.append(
            f"Under this reading {fact}, e.g. rows {where}: reconciling reports most payments "
            "as multi_order_payment. If a payment seldom pays several orders here, other "
            "numbers in the reference (item counts, dates) are read as order ids: give "
            "the reference's pattern (edit payments.id_pattern=REGEX with one capture group, "
            'e.g. payments.id_pattern="Order (\\d+)"), or map payments.order_id to another column.'
        )
        return
    if named < total:
        _weigh_readings(con, mapping, met, fact, report)


def _weigh_readings(
    con: duckdb.DuckDBPyConnection,
    mapping: Mapping,
    met: Fix,
    fact: str,
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
            report.proposed_reading = (
                f"{fix.named:,} of {fix.total:,} payment references name an order under: "
                f"{fix.describe(mapping)} (edit {fix.edit(mapping)})"
            )
    if fix is not None and close:
        said = "; ".join(
            f"edit {f.edit(mapping)} ({f.named:,} of {f.total:,} references name an order)"
            for f in (fix, *close)
        )
        advice = f" Two readings come close: {said}. Say which is right."
    elif fix is not None:
        why = ""
        if fix.merged:
            why = f"; it would read {fix.merged:,} order ids as another order's, so it is not"
            why += " proposed"
        elif several:
            why = (
                f"; {fix.several:,} of them would name several orders (other numbers read as "
                "order ids), so it is not proposed"
            )
        advice = (
            f" Under {fix.describe(mapping)}, {fix.named:,} of {fix.total:,} would "
            f"(edit {fix.edit(mapping)}){why}."
        )
    elif failing:
        advice = (
            " Check that payments.order_id is the column holding the order reference and "
            "orders.order_id the order's own id, or give the reference's pattern "
            "(edit payments.id_pattern=REGEX with one capture group)."
        )
    else:
        return
    if failing:
        report.errors.append(
            f"Under this reading {fact}: the files do not meet, so reconciling would report "
            f"nearly every order and payment as unmatched.{advice}"
        )
    elif not report.proposed:
        report.warnings.append(f"Under this reading {fact}.{advice}")


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
