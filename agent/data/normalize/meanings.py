"""Every status and row-kind value of the whole file accounted for, before anyone approves.

The mapping says what each value of the order status, payment status and row-kind columns
means (`OrderStatuses`, `RowKinds`, the policy's status lists). Here every distinct value of
the loaded file is looked at: each gets its meaning shown on the request with its rows (a
fact), and a value with no meaning stops the approval with a question that proposes one (an
error naming the edit). A word the mapping lists that the column never holds is refused with
the column's values: a typo in an edit would otherwise be approved as a meaning of nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from agent.data.normalize.columns import kinds_column
from agent.data.normalize.expressions import sql_words
from agent.data.normalize.load import table_name
from agent.data.normalize.report import ValidationReport
from agent.data.policy import Policy
from agent.data.schema import DatasetMapping, OrderStatuses, Role, RowKinds
from agent.data.schema.readings import ORDER_STATUS_LISTS
from agent.data.vocabulary import (
    ORDER_MEANING_WORDS,
    ORDER_MEANINGS,
    OrderMeaning,
    Vocabulary,
    code_proposal,
)

MAX_VALUES = 1000
"""More distinct values than this in a status or kind column: it is not one."""
_SHOWN = 12
"""Values named one by one in a fact or a question; the rest are counted, never cut silently."""

Counted = tuple[str, int, list[int]]
"""A value (as `kind_word` reads it), its rows, and its first rows (1-based)."""


def counted_values(
    con: duckdb.DuckDBPyConnection, role: Role, expression: str, where: str = "true"
) -> list[Counted] | None:
    """Each distinct non-empty value of `expression` on the rows `where`, most rows first, or
    None for a column of more than `MAX_VALUES` values."""
    rows = con.execute(
        # The first rows only (`min(x, n)`): a list of every row of a value would hold a
        # whole column of a large file in memory (10M rows: out of memory).
        f"SELECT {expression}, count(*), min(rowid + 1, 3) "
        f"FROM {table_name(role)} WHERE {expression} IS NOT NULL AND ({where}) "
        f"GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT {MAX_VALUES + 1}"
    ).fetchall()
    if len(rows) > MAX_VALUES:
        return None
    return [(str(v), int(n), list(r)) for v, n, r in rows]


def listed(values: Sequence[Counted], *, limit: int = _SHOWN) -> str:
    """`"value" (rows, e.g. rows 1, 2, 3)` for each value; past `limit`, how many more there are
    and how many rows they hold, so nothing is cut without a word."""
    shown = [
        f'"{value}" ({count:,}, e.g. rows {", ".join(str(r) for r in examples)})'
        for value, count, examples in values[:limit]
    ]
    rest = values[limit:]
    if rest:
        shown.append(
            f"and {len(rest):,} more values ({sum(n for _, n, _ in rest):,} rows: "
            + ", ".join(f'"{v}"' for v, _, _ in rest)
            + ")"
        )
    return ", ".join(shown)


def order_statuses_of(mapping: DatasetMapping, policy: Policy) -> OrderStatuses:
    """The order status meanings in force: the mapping's, else (a mapping approved before it
    carried them) the policy's paid, voided and refunded words."""
    if mapping.options.statuses is not None:
        return mapping.options.statuses
    return OrderStatuses(
        paid=policy.paid_order_statuses,
        voided=policy.voided_order_statuses,
        refunded=policy.refunded_order_statuses,
    )


def check_order_statuses(
    con: duckdb.DuckDBPyConnection,
    report: ValidationReport,
    file_name: str,
    mapping: DatasetMapping,
    policy: Policy,
) -> None:
    """Every order status of the file with its meaning (a fact), or an error that proposes a
    meaning for the values that have none, as payments' statuses are checked."""
    column = mapping.columns.get("order_status")
    if column is None:
        return
    values = counted_values(con, Role.ORDERS, "order_status")
    if values is None:
        report.errors.append(
            f'{file_name}: column "{column}" holds more than {MAX_VALUES:,} different values, '
            "too many to say which orders are paid: it does not read as an order status; map "
            "another column to orders.order_status, or none"
        )
        return
    statuses = order_statuses_of(mapping, policy)
    vocabulary = policy.vocabulary()
    _refuse_absent(report, file_name, column, statuses.values(), values, "orders.statuses_")
    known = [(v, n, r) for v, n, r in values if statuses.meaning_of(v) is not None]
    unknown = [(v, n, r) for v, n, r in values if statuses.meaning_of(v) is None]
    if known:
        by_meaning = {
            name: [c for c in known if statuses.meaning_of(c[0]) == name]
            for name in ORDER_STATUS_LISTS
        }
        report.facts.append(
            f'{file_name}: order statuses in "{column}": '
            + "; ".join(
                f"{name.replace('_', ' ')}: " + _value_rows(found)
                for name, found in by_meaning.items()
                if found
            )
        )
    if not unknown:
        return
    proposed: dict[OrderMeaning, list[str]] = {}
    strangers: list[str] = []
    for value, _, _ in unknown:
        meaning = vocabulary.order_meaning(value)
        if meaning is None:
            strangers.append(value)
        else:
            proposed.setdefault(meaning, []).append(value)
    edits = [
        f'orders.statuses_{meaning}="{", ".join([*getattr(statuses, meaning), *words])}"'
        for meaning, words in proposed.items()
    ]
    guess = ""
    if strangers:
        guess = (
            f" For {', '.join(repr(w) for w in strangers)} no word is known: say which of "
            + ", ".join(f"statuses_{m} ({ORDER_MEANING_WORDS[m]})" for m in ORDER_MEANINGS)
            + " they are"
        )
    proposal = f" Proposed: edit {' '.join(edits)}." if edits else ""
    report.errors.append(
        f"{file_name}: {sum(n for _, n, _ in unknown):,} orders have a status in column "
        f'"{column}" with no meaning yet: {listed(unknown)}. Read as paid they could hide a '
        f"cancelled or refunded order whose money was kept.{proposal}{guess}"
    )


def _value_rows(found: Sequence[Counted]) -> str:
    """`value (rows)` for each value, every one of them."""
    return ", ".join(f"{value} ({count:,})" for value, count, _ in found)


def _refuse_absent(
    report: ValidationReport,
    file_name: str,
    column: str,
    words: dict[str, str],
    values: Sequence[Counted],
    option: str,
) -> None:
    """An error for each listed word the column never holds (a typo, or another file's)."""
    present = {value for value, _, _ in values}
    absent = {word: meaning for word, meaning in words.items() if word not in present}
    if not absent:
        return
    names = ", ".join(f'"{word}" ({option}{meaning})' for word, meaning in sorted(absent.items()))
    report.errors.append(
        f'{file_name}: column "{column}" never holds {names}; its values are: '
        + ", ".join(f'"{value}"' for value, _, _ in values)
        + ". Name values the column holds (compared trimmed, in any case)"
    )


def check_row_kinds(
    con: duckdb.DuckDBPyConnection,
    report: ValidationReport,
    file_name: str,
    mapping: DatasetMapping,
    policy: Policy,
) -> None:
    """Every row-kind value with its kind (a fact); an error naming every value in no list,
    with the edit that classifies them; an error for a listed value the column never holds.

    Rows whose status is a failed attempt (the policy's words) or a value to ignore are not
    asked about: they are ignored whatever their kind.
    """
    kinds = mapping.options.kinds
    column = kinds_column(mapping)
    if kinds is None or column is None:
        return
    values = counted_values(con, Role.PAYMENTS, "row_kind")
    if values is None:
        report.errors.append(
            f'{file_name}: column "{column}" holds more than {MAX_VALUES:,} different values: '
            "it does not say what each row is; set payments.kinds_column to another column"
        )
        return
    lists = {"capture": kinds.capture, "refund": kinds.refund, "ignore": kinds.ignore}
    words = {word: name for name, found in lists.items() for word in found}
    failed = [w for w in (*kinds.capture, *kinds.refund) if w in policy.failed_payment_statuses]
    if failed and kinds.column is None:
        # The engine reads the policy's failed statuses first: listed as a capture or a
        # refund, the request would say what reconciling does not do.
        report.errors.append(
            f"{file_name}: "
            + ", ".join(f'"{w}" (payments.kinds_{words[w]})' for w in failed)
            + " is a failed attempt under the policy in force (failed_payment_statuses), "
            "which reconciling ignores whatever a list says; take it out of that list, or "
            "change the policy"
        )
    status = mapping.columns.get("payment_status")
    if kinds.column is not None and status is not None:
        # Ignored words may name the status column's values (`Pending` beside a `Type`).
        statuses = counted_values(con, Role.PAYMENTS, "payment_status") or []
        _refuse_absent(report, file_name, column, words, [*values, *statuses], "payments.kinds_")
    else:
        _refuse_absent(report, file_name, column, words, values, "payments.kinds_")
    by_kind = {name: [c for c in values if c[0] in found] for name, found in lists.items()}
    if any(by_kind.values()):
        report.facts.append(
            f'{file_name}: row kinds in "{column}": '
            + "; ".join(
                f"{_KIND_WORDS[name]}: "
                + ", ".join(
                    f"{v}{' (refunded)' if v in kinds.refunded else ''} ({n:,})"
                    for v, n, _ in found
                )
                for name, found in by_kind.items()
                if found
            )
        )
    known = sql_words([*kinds.capture, *kinds.refund, *kinds.ignore])
    skipped = sql_words([*policy.failed_payment_statuses, *kinds.ignore])
    rows = con.execute(
        f"SELECT coalesce(row_kind, ''), count(*), min(rowid + 1, 3) "
        f"FROM {table_name(Role.PAYMENTS)} "
        f"WHERE (row_kind IS NULL OR row_kind NOT IN {known}) "
        f"AND coalesce(payment_status NOT IN {skipped}, true) "
        "GROUP BY 1 ORDER BY 2 DESC, 1"
    ).fetchall()
    if not rows:
        return
    unknown: list[Counted] = [(str(v or "(empty)"), int(n), list(r)) for v, n, r in rows]
    unknown_values = [value for value, _, _ in rows if value]
    vocabulary = policy.vocabulary()
    proposal = _kinds_proposal(kinds.ignore, unknown_values, vocabulary.row_kind)
    report.errors.append(
        f"{file_name}: {sum(n for _, n, _ in unknown):,} rows have a row kind in column "
        f'"{column}" that is in no list: {listed(unknown)}. Say what they are, e.g. '
        f"edit {proposal} (or kinds_capture / kinds_refund)"
    )


_KIND_WORDS = {"capture": "captures", "refund": "refunds", "ignore": "ignored"}


def _kinds_proposal(ignore: Sequence[str], unknown: Sequence[str], row_kind: object) -> str:
    """The edit that gives unknown values the kind the vocabulary says (to ignore when it
    says nothing: never silently a capture)."""
    assert callable(row_kind)
    by_kind: dict[str, list[str]] = {"ignore": list(ignore)}
    for value in unknown:
        by_kind.setdefault(row_kind(value) or "ignore", []).append(value)
    return " ".join(
        f'payments.kinds_{name}="{", ".join(words)}"' for name, words in by_kind.items() if words
    )


def _refund_hint(unknown: Sequence[Counted], vocabulary: Vocabulary) -> str:
    """The values the vocabulary reads as money going back, with the edit that says so."""
    refunds = [value for value, _, _ in unknown if vocabulary.row_kind(value) == "refund"]
    if not refunds:
        return ""
    return (
        f". {', '.join(repr(v) for v in refunds)} read as money going back: edit "
        f'payments.kinds_refund="{", ".join(refunds)}" if so'
    )


_FAILED = "failed attempt"


def _status_reading(
    value: str, kinds: RowKinds | None, policy: Policy, vocabulary: Vocabulary
) -> str | None:
    """What reconciling reads a payment status as (the engine's order: a failed attempt, a
    row to ignore, a refund row, a capture refunded, a capture), or None when nothing says."""
    if value in policy.failed_payment_statuses:
        return _FAILED
    if kinds is not None and value in kinds.ignore:
        return "ignored"
    if kinds is not None and kinds.column is None and value in kinds.refund:
        return "refund"
    if value in policy.refunded_payment_statuses or (kinds is not None and value in kinds.refunded):
        return "capture, refunded"
    if (kinds is not None and value in kinds.capture) or vocabulary.row_kind(value) == "capture":
        return "capture"
    return None


def check_payment_statuses(
    con: duckdb.DuckDBPyConnection,
    report: ValidationReport,
    file_name: str,
    mapping: DatasetMapping,
    policy: Policy,
) -> None:
    """Every payment status with what reconciling reads it as (a fact, with its rows), and an
    error naming every status that is neither a capture, a refunded capture nor a failed
    attempt, where no row kinds say it, with the edit that says what they are.

    Without row kinds every other status is read as a capture: `processing`, Stripe's
    `requires_capture` or a `Payment Failed` anywhere in the file would count money nobody
    took. Statuses mean what the policy's vocabulary says. A column of numeric codes
    (Authorize.Net's 1/2/3/4) is asked about with the published meanings proposed.
    """
    column = mapping.columns.get("payment_status")
    if column is None:
        return
    kinds = mapping.options.kinds
    every = counted_values(con, Role.PAYMENTS, "payment_status")
    if every is None:  # the rarest were not looked at: never read them as captures
        report.errors.append(
            f'{file_name}: column "{column}" holds more than {MAX_VALUES:,} different '
            "statuses, too many to say which took money: it does not read as a payment status; "
            "map another column to payments.payment_status, or none"
        )
        return
    vocabulary = policy.vocabulary()
    read = {value: _status_reading(value, kinds, policy, vocabulary) for value, _, _ in every}
    shown = [(v, n, r) for v, n, r in every if read[v] is not None]
    if shown:
        report.facts.append(
            f'{file_name}: payment statuses in "{column}": '
            + ", ".join(f"{v} = {read[v]} ({n:,})" for v, n, _ in shown)
        )
    if kinds is not None and kinds.column is None:  # the statuses are the kinds: asked there
        return
    rows = [(v, n, r) for v, n, r in every if read[v] != _FAILED]
    captures = [v for v, _, _ in rows if read[v] is not None]
    unknown = [(v, n, r) for v, n, r in rows if read[v] is None]
    if not unknown:
        return
    kept = ", ".join(captures) or "succeeded"
    codes = code_proposal(value for value, _, _ in unknown)
    if codes is not None:
        name, meanings = codes
        # The lists as they would be: what the mapping lists already, and the codes.
        paid = [
            *(kinds.capture if kinds else ()),
            *(v for v, m in meanings.items() if m == "capture"),
        ]
        rest = [
            *(kinds.ignore if kinds else ()),
            *(v for v, m in meanings.items() if m != "capture"),
        ]
        report.errors.append(
            f'{file_name}: column "{column}" holds codes that are only numbers: '
            f"{listed(unknown)}. They look like {name} ("
            + ", ".join(f"{v} = {m}" for v, m in meanings.items())
            + "). If so, edit "
            + f'payments.kinds_capture="{", ".join(dict.fromkeys(paid)) or kept}"'
            + (f' payments.kinds_ignore="{", ".join(dict.fromkeys(rest))}"' if rest else "")
        )
        return
    ignored = ", ".join([*(kinds.ignore if kinds else ()), *(value for value, _, _ in unknown)])
    took = ", ".join([*captures, *(value for value, _, _ in unknown)])
    edit = f'payments.kinds_ignore="{ignored}" if they took none'
    if kinds is None:
        edit = (
            f'payments.kinds_capture="{took}" if they took money, or '
            f'payments.kinds_capture="{kept}" payments.kinds_ignore="{ignored}" if they did not'
        )
    report.errors.append(
        f"{file_name}: {sum(n for _, n, _ in unknown):,} rows have a status in column "
        f'"{column}" that says neither a capture nor a failed attempt: {listed(unknown)}. '
        "Read as captures they would count money that may not have been taken. Say what "
        f"they are: edit {edit} (or kinds_refund)" + _refund_hint(unknown, vocabulary)
    )
