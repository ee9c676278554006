"""Validation gates: a reading under which the files do not meet is a question, not a confirmation.

Checked on the whole loaded files (after `normalize.load_dataset`), these are facts about the
reading, never reconciliation figures: how many payment references name an order, and whether
the order id column really names one order per id. When (almost) nothing meets, the gate says
what it saw and proposes the likely fix as an edit a person can make (a prefix or suffix on one
side, the reference inside free text, leading zeros).
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from agent.data.keys import reference_keys
from agent.data.normalize import ValidationReport, reference_tokens_sql
from agent.data.normalize.expressions import sql_words
from agent.data.schema import IdReading, Mapping, Role

MIN_MATCH_SHARE = 0.5
CLEAR_SHARE = 0.9
"""A fix under which this share of sampled references name an order, with no other within
`CLOSE_SHARES`, is proposed (validated in place of the reading), not asked."""
CLOSE_SHARES = 0.1
TIED_SHARES = 0.01
"""Fixes this close name the same orders (zeros stripped on either side, `#(\\d+)` or
`(\\d{3,})` out of `Order #1042`): the first tried, the plainer, is taken."""
MAX_CONFLICT_SHARE = 0.1
MAX_ROWS_PER_ORDER = 20
SAMPLE_REFERENCES = 2_000
SAMPLE_KEYS = 200_000

_LEADING = re.compile(r"^([^\d]+)\d")
_TRAILING = re.compile(r"\d([^\d]+)$")


@dataclass(frozen=True)
class Fix:
    """A change to the reading that makes more references name an order, as an edit."""

    role: Role
    reading: IdReading
    share: float
    payments_too: IdReading | None = None  # an orders' fix that needs the references' too

    def answers(self) -> dict[str, dict[str, str]]:
        """The fix as a person's answers (role -> reading option -> value), as an edit gives."""
        found: dict[str, dict[str, str]] = {}
        for role, reading in ((self.role, self.reading), (Role.PAYMENTS, self.payments_too)):
            changed = {} if reading is None else reading.model_dump(exclude_defaults=True)
            for name, value in changed.items():
                found.setdefault(role.value, {})[f"id_{name}"] = (
                    "yes" if value is True else str(value)
                )
        return found

    def edit(self) -> str:
        """The edit a person types (`edit payments.id_prefix=WC-`), quoted for a shell-like line."""
        parts = []
        for role, reading in ((self.role, self.reading), (Role.PAYMENTS, self.payments_too)):
            changed = {} if reading is None else reading.model_dump(exclude_defaults=True)
            for name, value in changed.items():
                shown = "yes" if value is True else shlex.quote(str(value))
                parts.append(f"{role.value}.id_{name}={shown}")
        return " ".join(parts)


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
    report.facts.append(f"{name}: {keys:,} order ids on {rows:,} rows with a total")
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
    row = con.execute(
        f"""
        WITH keys AS (SELECT order_key FROM order_index),
        refs AS (SELECT rowid AS r, ref_key, several_refs, order_id FROM payments_rows
                 WHERE order_id IS NOT NULL AND {_named_rows(mapping)}),
        several AS (
            SELECT x.r, count(DISTINCT x.t) AS orders
            FROM (SELECT r, unnest({tokens}) AS t FROM refs WHERE several_refs) x
            LEFT JOIN keys k ON k.order_key = x.t
            GROUP BY x.r HAVING bool_and(k.order_key IS NOT NULL))
        SELECT (SELECT count(*) FROM refs),
               (SELECT count(*) FROM refs WHERE NOT coalesce(several_refs, false)
                  AND ref_key IN (SELECT order_key FROM keys))
             + (SELECT count(*) FROM several),
               (SELECT count(*) FROM several WHERE orders > 1),
               (SELECT list(r + 1 ORDER BY r)[1:5] FROM several WHERE orders > 1)
        """
    ).fetchone()
    assert row is not None
    total, named, multi = int(row[0]), int(row[1]), int(row[2])
    if not total:
        return
    orders_name, payments_name = names[Role.ORDERS], names[Role.PAYMENTS]
    fact = (
        f"{named:,} of {total:,} payment references in {payments_name} "
        f"name an order in {orders_name}"
    )
    if multi:
        fact += f" ({multi:,} of them name several orders)"
    report.facts.append(fact)
    if named / total >= MIN_MATCH_SHARE and multi / total >= MIN_MATCH_SHARE:
        where = ", ".join(str(r) for r in row[3])
        report.warnings.append(
            f"Under this reading {fact}, e.g. rows {where}: reconciling reports most payments "
            "as multi_order_payment. If a payment seldom pays several orders here, other "
            "numbers in the reference (item counts, dates) are read as order ids: give "
            "the reference's pattern (edit payments.id_pattern=REGEX with one capture group, "
            'e.g. payments.id_pattern="Order (\\d+)"), or map payments.order_id to another column.'
        )
        return
    if named / total >= MIN_MATCH_SHARE:
        return
    message = (
        f"Under this reading {fact}: the files do not meet, so reconciling would report "
        "nearly every order and payment as unmatched."
    )
    fixes = _likely_fixes(con, mapping, named / total)
    fix = fixes[0] if fixes else None
    close = [
        f
        for f in fixes[1:]
        if fix is not None
        and f.edit() != fix.edit()
        and TIED_SHARES < fix.share - f.share < CLOSE_SHARES
    ]
    if fix is not None and fix.share >= CLEAR_SHARE and not close:
        report.proposed = fix.answers()  # the files say it: validated in this one's place
    if fix is not None and close:
        message += (
            " Two readings come close: "
            + "; ".join(
                f"edit {f.edit()} ({f.share:.0%} of sampled references name an order)"
                for f in (fix, *close)
            )
            + ". Say which is right."
        )
    elif fix is not None:
        message += (
            f" Likely fix: edit {fix.edit()} (then {fix.share:.0%} of sampled references "
            "name an order)."
        )
    else:
        message += (
            " Check that payments.order_id is the column holding the order reference and "
            "orders.order_id the order's own id, or give the reference's pattern "
            "(edit payments.id_pattern=REGEX with one capture group)."
        )
    report.errors.append(message)


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


def _likely_fixes(con: duckdb.DuckDBPyConnection, mapping: Mapping, current: float) -> list[Fix]:
    """The id readings, on one side, under which most sampled references name an order, the
    best first.

    References are sampled; order keys are all read (as the engine compares them), so that a
    fix is judged against every order. An orders-side prefix P is tried as "P + reference is
    an order key", which needs no second pass over the orders.
    """
    raw_refs = _texts(
        con,
        f"SELECT order_id FROM payments_rows WHERE order_id IS NOT NULL AND {_named_rows(mapping)} "
        f"USING SAMPLE {SAMPLE_REFERENCES} ROWS",
    )
    keys = set(_texts(con, "SELECT order_key FROM order_index"))
    if not raw_refs or not keys:
        return []
    pay_base = mapping.payments.options.ids or IdReading()
    ord_base = mapping.orders.options.ids or IdReading()
    tried: list[tuple[Fix, float]] = []
    refs = [v.strip().lstrip("#").strip() for v in raw_refs]
    for regex, option in ((_LEADING, "prefix"), (_TRAILING, "suffix")):
        common = _most_common(regex, refs)
        if common:
            reading = pay_base.model_copy(update={option: common})
            share = _named_share(raw_refs, reading, keys.__contains__)
            tried.append((Fix(Role.PAYMENTS, reading, share), share))
        common = _most_common(regex, list(keys)[:SAMPLE_REFERENCES])
        if common:

            def has(key: str, text: str = common, where: str = option) -> bool:
                return (text + key if where == "prefix" else key + text) in keys

            reading = ord_base.model_copy(update={option: common})
            share = _named_share(raw_refs, pay_base, has)
            tried.append((Fix(Role.ORDERS, reading, share), share))
    for pattern in (r"#\s*(\d+)", r"(\d{3,})"):
        reading = pay_base.model_copy(update={"pattern": pattern})
        share = _named_share(raw_refs, reading, keys.__contains__)
        tried.append((Fix(Role.PAYMENTS, reading, share), share))
    zeros = {k.lstrip("0") or "0" for k in keys}
    reading = pay_base.model_copy(update={"strip_zeros": True})
    share = _named_share(raw_refs, reading, keys.__contains__)
    tried.append((Fix(Role.PAYMENTS, reading, share), share))
    # Zeros on the orders' side (`001001` for `1001`): the orders are read without them, and
    # the references too where both sides have some.
    orders = ord_base.model_copy(update={"strip_zeros": True})
    share = _named_share(raw_refs, pay_base, zeros.__contains__)
    tried.append((Fix(Role.ORDERS, orders, share), share))
    share = _named_share(raw_refs, reading, zeros.__contains__)
    tried.append((Fix(Role.ORDERS, orders, share, payments_too=reading), share))
    good = [fix for fix, share in tried if share >= MIN_MATCH_SHARE and share > current]
    return sorted(good, key=lambda fix: -fix.share)


def _texts(con: duckdb.DuckDBPyConnection, sql: str) -> list[str]:
    return [str(row[0]) for row in con.execute(sql).fetchall()]


def _named_share(
    references: list[str], reading: IdReading, is_order: Callable[[str], bool]
) -> float:
    """The share of references every id of which names an order (as the SQL gate counts)."""
    named = 0
    for value in references:
        found = reference_keys(value, reading)
        if found and all(is_order(k) for k in found):
            named += 1
    return named / len(references)


def _most_common(regex: re.Pattern[str], values: list[str]) -> str | None:
    """The non-digit prefix (or suffix) that most values share, if at least half of them do."""
    found = Counter(m.group(1) for v in values if (m := regex.search(v)))
    if not found:
        return None
    text, count = found.most_common(1)[0]
    return text if count * 2 >= len(values) else None
