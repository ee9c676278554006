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

from agent.data.normalize.answers import TableAnswers
from agent.data.normalize.codes import Code
from agent.data.normalize.columns import kinds_column
from agent.data.normalize.expressions import sql_words
from agent.data.normalize.load import table_name
from agent.data.normalize.report import ValidationReport
from agent.data.notes import note
from agent.data.policy import Policy
from agent.data.schema import DatasetMapping, OrderStatuses, Role, RowKinds
from agent.data.schema.readings import ORDER_STATUS_LISTS
from agent.data.vocabulary import OrderMeaning, Vocabulary, code_proposal

MAX_VALUES = 1000
"""More distinct values than this in a status or kind column: it is not one."""

Counted = tuple[str, int, list[int]]
"""A value (as `kind_word` reads it), its rows, and its first rows (1-based)."""


def counted_values(
    con: duckdb.DuckDBPyConnection,
    role: Role,
    expression: str,
    where: str = "true",
    answers: TableAnswers | None = None,
) -> list[Counted] | None:
    """Each distinct non-empty value of `expression` on the rows `where`, most rows first, or
    None for a column of more than `MAX_VALUES` values (with `answers`, as counted before on
    columns read the same way)."""
    query = (
        # The first rows only (`min(x, n)`): a list of every row of a value would hold a
        # whole column of a large file in memory (10M rows: out of memory).
        f"SELECT {expression}, count(*), min(rowid + 1, 3) "
        f"FROM {table_name(role)} WHERE {expression} IS NOT NULL AND ({where}) "
        f"GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT {MAX_VALUES + 1}"
    )
    key = answers.key(query) if answers is not None else None
    kept = answers.recall(key) if answers is not None else None
    rows = list(kept) if kept is not None else con.execute(query).fetchall()
    if answers is not None and kept is None:
        answers.remember(key, tuple(rows))
    if len(rows) > MAX_VALUES:
        return None
    return [(str(v), int(n), list(r)) for v, n, r in rows]


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
    answers: TableAnswers | None = None,
) -> None:
    """Every order status of the file with its meaning (a fact), or an error that proposes a
    meaning for the values that have none, as payments' statuses are checked."""
    column = mapping.columns.get("order_status")
    if column is None:
        return
    values = counted_values(con, Role.ORDERS, "order_status", answers=answers)
    if values is None:
        report.errors.append(
            note(Code.TOO_MANY_ORDER_STATUSES, file=file_name, column=column, limit=MAX_VALUES)
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
        meanings = [
            [name, [[value, count] for value, count, _ in found]]
            for name, found in by_meaning.items()
            if found
        ]
        report.facts.append(
            note(Code.ORDER_STATUSES, file=file_name, column=column, meanings=meanings)
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
        [meaning, [*getattr(statuses, meaning), *words]] for meaning, words in proposed.items()
    ]
    report.errors.append(
        note(
            Code.UNKNOWN_ORDER_STATUSES,
            file=file_name,
            column=column,
            values=_plain(unknown),
            edits=edits,
            strangers=strangers,
        )
    )


def _plain(values: Sequence[Counted]) -> list[list[object]]:
    """`values` as JSON keeps them (lists, not tuples), for a note's parameters."""
    return [[value, count, list(rows)] for value, count, rows in values]


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
    report.errors.append(
        note(
            Code.ABSENT_WORDS,
            file=file_name,
            column=column,
            absent=[[word, meaning] for word, meaning in sorted(absent.items())],
            option=option,
            values=[value for value, _, _ in values],
        )
    )


def check_row_kinds(
    con: duckdb.DuckDBPyConnection,
    report: ValidationReport,
    file_name: str,
    mapping: DatasetMapping,
    policy: Policy,
    answers: TableAnswers | None = None,
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
    values = counted_values(con, Role.PAYMENTS, "row_kind", answers=answers)
    if values is None:
        report.errors.append(
            note(Code.TOO_MANY_KINDS, file=file_name, column=column, limit=MAX_VALUES)
        )
        return
    lists = {"capture": kinds.capture, "refund": kinds.refund, "ignore": kinds.ignore}
    words = {word: name for name, found in lists.items() for word in found}
    failed = [w for w in (*kinds.capture, *kinds.refund) if w in policy.failed_payment_statuses]
    if failed and kinds.column is None:
        # The engine reads the policy's failed statuses first: listed as a capture or a
        # refund, the request would say what reconciling does not do.
        listed = [[w, words[w]] for w in failed]
        report.errors.append(note(Code.FAILED_IN_KIND_LIST, file=file_name, failed=listed))
    status = mapping.columns.get("payment_status")
    if kinds.column is not None and status is not None:
        # Ignored words may name the status column's values (`Pending` beside a `Type`).
        statuses = counted_values(con, Role.PAYMENTS, "payment_status", answers=answers) or []
        _refuse_absent(report, file_name, column, words, [*values, *statuses], "payments.kinds_")
    else:
        _refuse_absent(report, file_name, column, words, values, "payments.kinds_")
    by_kind = {name: [c for c in values if c[0] in found] for name, found in lists.items()}
    if any(by_kind.values()):
        said = [
            [name, [[v, v in kinds.refunded, n] for v, n, _ in found]]
            for name, found in by_kind.items()
            if found
        ]
        report.facts.append(note(Code.ROW_KINDS, file=file_name, column=column, kinds=said))
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
        note(
            Code.UNKNOWN_ROW_KINDS,
            file=file_name,
            column=column,
            values=_plain(unknown),
            edits=proposal,
        )
    )


def _kinds_proposal(
    ignore: Sequence[str], unknown: Sequence[str], row_kind: object
) -> list[list[object]]:
    """The edit that gives unknown values the kind the vocabulary says (to ignore when it
    says nothing: never silently a capture), as `[kind, [word, ...]]` for each kind."""
    assert callable(row_kind)
    by_kind: dict[str, list[str]] = {"ignore": list(ignore)}
    for value in unknown:
        by_kind.setdefault(row_kind(value) or "ignore", []).append(value)
    return [[name, words] for name, words in by_kind.items() if words]


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
    answers: TableAnswers | None = None,
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
    every = counted_values(con, Role.PAYMENTS, "payment_status", answers=answers)
    if every is None:  # the rarest were not looked at: never read them as captures
        report.errors.append(
            note(Code.TOO_MANY_PAYMENT_STATUSES, file=file_name, column=column, limit=MAX_VALUES)
        )
        return
    vocabulary = policy.vocabulary()
    read = {value: _status_reading(value, kinds, policy, vocabulary) for value, _, _ in every}
    shown = [(v, n, r) for v, n, r in every if read[v] is not None]
    if shown:
        said = [[v, read[v], n] for v, n, _ in shown]
        report.facts.append(
            note(Code.PAYMENT_STATUSES, file=file_name, column=column, statuses=said)
        )
    if kinds is not None and kinds.column is None:  # the statuses are the kinds: asked there
        return
    rows = [(v, n, r) for v, n, r in every if read[v] != _FAILED]
    captures = [v for v, _, _ in rows if read[v] is not None]
    unknown = [(v, n, r) for v, n, r in rows if read[v] is None]
    if not unknown:
        return
    kept = captures or ["succeeded"]
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
            note(
                Code.STATUS_CODES,
                file=file_name,
                column=column,
                values=_plain(unknown),
                name=name,
                meanings=[[v, m] for v, m in meanings.items()],
                capture=list(dict.fromkeys(paid)) or kept,
                ignore=list(dict.fromkeys(rest)),
            )
        )
        return
    values = [value for value, _, _ in unknown]
    report.errors.append(
        note(
            Code.UNKNOWN_PAYMENT_STATUSES,
            file=file_name,
            column=column,
            values=_plain(unknown),
            kinds=kinds is not None,
            ignore=[*(kinds.ignore if kinds else ()), *values],
            took=[*captures, *values],
            kept=kept,
            refunds=[value for value in values if vocabulary.row_kind(value) == "refund"],
        )
    )
