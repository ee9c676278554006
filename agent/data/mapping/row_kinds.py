"""Row kinds of a payments file: which rows are captures, which refunds, which to ignore.

A status or type value means what the vocabulary in force says (`agent.data.vocabulary`:
`express_checkout_payment` is a capture, `payment_refund` a refund, `merchantpayout` a payout
to ignore). A refunded word such as `refunded` or `Rimborsato` is a capture's state in most
exports but a row of its own in others; the rows decide. The column is found by its values,
whatever its header; a column of tenders (`Credit card`, `Bank transfer`) is never one. A
person may name the column (`kinds_column`) and the lists (`kinds_capture`, ...).
"""

from __future__ import annotations

from collections import Counter
from typing import cast

from agent.data.ingest import CsvSample
from agent.data.keys import _first_error
from agent.data.mapping.bounds import CLOSE_CANDIDATES
from agent.data.mapping.headers import normalize_header
from agent.data.mapping.proposal import FieldChoice
from agent.data.mapping.wording import ProposalCode
from agent.data.notes import Note, note
from agent.data.profile import ColumnProfile, column_values
from agent.data.schema import RowKinds, kind_word
from agent.data.vocabulary import Vocabulary, is_tender
from agent.errors import MappingError, UnknownColumnError

# Header words of columns that say how a customer paid or where, never what a row is.
_NOT_KIND_HEADERS = frozenset("card instrument method tender entry channel order".split())
# Header words of columns that say what a row is, in the languages of the vocabulary: such a
# column is read before the others (`Type`, `Tipo`, `Typ`, `Art`, `Soort`, `reporting_category`).
_KIND_HEADERS = frozenset(
    "type kind category tipo typ art soort categorie categoria rodzaj".split()
)
_MAX_KINDS = 20
# Words in a value of a column taken as a kind column by its values alone (`Express Checkout
# Payment` has three); longer values are sentences.
_MAX_KIND_WORDS = 3


def _kind_values(sample: CsvSample, column: str) -> list[str]:
    """The distinct kind values of a column (as `kind_word` reads them), most frequent first."""
    counts: dict[str, int] = {}
    for value, count in Counter(column_values(sample, column)).items():  # each value read once
        if value.strip():
            word = kind_word(value)
            counts[word] = counts.get(word, 0) + count
    return sorted(counts, key=lambda w: (-counts[w], w))


def _separate_rows(sample: CsvSample, column: str, value: str, choices: list[FieldChoice]) -> bool:
    """Whether the rows of `value` are records of their own (a refund row), not a capture's state.

    A policy word such as `refunded` is the state of a capture in most exports (Stripe), but a
    row of its own in others (Adyen): there it shares its payment id with a row of another
    kind (the capture), or its captured amount is empty, zero or negative.
    """
    columns = sample.layout.columns
    at = columns.index(column)
    chosen = {c.field: c.column for c in choices if c.column}
    pay_at = columns.index(chosen["payment_id"]) if "payment_id" in chosen else None
    amount_at = columns.index(chosen["captured_amount"]) if "captured_amount" in chosen else None
    words = {v: kind_word(v) for v in set(column_values(sample, column))}  # each value once
    others: set[str] = set()  # payment ids on rows of another kind value
    if pay_at is not None:
        others = {
            row[pay_at].strip()
            for row in sample.rows
            if words[row[at]] != value and row[pay_at].strip()
        }
    rows = [row for row in sample.rows if words[row[at]] == value]
    for row in rows:
        shared = pay_at is not None and row[pay_at].strip() in others
        amount = row[amount_at].strip() if amount_at is not None else ""
        empty = not any(c in "123456789" for c in amount)
        negative = amount.startswith("(") or "-" in amount or "\u2212" in amount
        if not (shared or empty or negative):
            return False
    return bool(rows)


def _classify(
    sample: CsvSample,
    column: str,
    choices: list[FieldChoice],
    vocabulary: Vocabulary,
    *,
    status: bool,
) -> dict[str, tuple[str | None, bool]]:
    """Each value of `column` -> its kind by the vocabulary (None: unknown) and whether it is a
    capture whose state says refunded. The policy's failed statuses are left out of a status
    column, where the engine reads them as failed attempts."""
    found: dict[str, tuple[str | None, bool]] = {}
    for value in _kind_values(sample, column):
        if status and value in vocabulary.failed_statuses:
            continue
        kind = vocabulary.row_kind(value)
        refunded = False
        # A refunded state (`refunded`, `Rimborsato`) is a capture's state unless its rows are
        # records of their own: then the capture is kept as a capture that was refunded. A
        # refund record (`refund`, `credit`) stays a refund.
        if (
            kind == "refund"
            and vocabulary.is_refunded_state(value)
            and not _separate_rows(sample, column, value, choices)
        ):
            kind, refunded = "capture", True
        found[value] = (kind, refunded)
    return found


def _candidate_columns(
    sample: CsvSample,
    choices: list[FieldChoice],
    profiles: dict[str, ColumnProfile],
    status: str | None,
) -> tuple[list[str], list[str]]:
    """The columns that may say each row's kind, in the order they are tried: those whose
    header says a kind (`Type`, `Tipo`, `Category`) first (the status column first of them),
    then the status column; and apart, any other column of few values that is no other
    field's (a `Event` column of `Payment` and `Refund`), which must read as kinds whole."""
    taken = {c.column for c in choices if c.column and c.field != "payment_status"}
    headed: list[str] = []
    others: list[str] = []
    for name in sample.layout.columns:
        if name in taken or name == status:
            continue
        words = set(normalize_header(name).split())
        if words & _NOT_KIND_HEADERS:
            continue
        profile = profiles.get(name)
        if profile is not None and (
            not profile.filled
            or profile.distinct > _MAX_KINDS
            or profile.is_numeric()
            or profile.timestamp_share >= 0.5
        ):
            continue
        (headed if words & _KIND_HEADERS else others).append(name)
    order = headed[:CLOSE_CANDIDATES]
    if status is not None:  # first when its header says a kind too (Shopify's `Type`)
        status_words = set(normalize_header(status).split())
        order.insert(0 if status_words & _KIND_HEADERS else len(order), status)
    return order, others[:CLOSE_CANDIDATES]


def _is_tender_column(values: list[str]) -> bool:
    """Whether most values of a column name how a customer paid."""
    return sum(map(is_tender, values)) * 2 > len(values)


def _kind_column(
    sample: CsvSample,
    choices: list[FieldChoice],
    profiles: dict[str, ColumnProfile],
    vocabulary: Vocabulary,
) -> tuple[str, dict[str, tuple[str, bool]]] | None:
    """The column that says each payment row's kind, and its values' kinds, when one does.

    Candidates are found by their values (`_candidate_columns`). The first whose every value
    has a known kind, with captures and at least one refund or row to ignore, is taken;
    failing that, the first where most values are known that way: its other values stay in no
    list, so validation asks what they are instead of reading a fee as a capture. A column of
    tenders is never taken. A file whose rows are all captures (and failed attempts) needs no
    row kinds.
    """
    status = next((c.column for c in choices if c.field == "payment_status"), None)
    partial: tuple[str, dict[str, tuple[str, bool]]] | None = None
    named, unnamed = _candidate_columns(sample, choices, profiles, status)
    for column in [*named, *unnamed]:
        values = _kind_values(sample, column)
        if not values or len(values) > _MAX_KINDS or _is_tender_column(values):
            continue
        if column in unnamed and any(len(v.split("_")) > _MAX_KIND_WORDS for v in values):
            continue  # free text (a message, a description) is no kind, whatever it mentions
        found = _classify(sample, column, choices, vocabulary, status=column == status)
        kinds = {v: (k, r) for v, (k, r) in found.items() if k is not None}
        said = {k for k, _ in kinds.values()}
        # A refunded state the policy names (`refunded`) is read without row kinds.
        refunded = any(r and v not in vocabulary.refunded_statuses for v, (_, r) in kinds.items())
        if not ("capture" in said and ({"refund", "ignore"} & said or refunded)):
            continue
        if len(kinds) == len(found):
            return column, kinds
        if partial is None and column in named and len(kinds) > len(found) - len(kinds):
            partial = column, kinds
    return partial


def _remembered_kind_column(
    sample: CsvSample,
    choices: list[FieldChoice],
    profiles: dict[str, ColumnProfile],
    vocabulary: Vocabulary,
    memo: dict[tuple[object, ...], object] | None,
) -> tuple[str, dict[str, tuple[str, bool]]] | None:
    """`_kind_column`, kept in `memo` (the sample's `SampleColumns.derived`) under the columns
    chosen: an edit's inference with the same choices does not look for it again."""
    if memo is None:
        return _kind_column(sample, choices, profiles, vocabulary)
    # By the words' content: a policy's vocabulary is built anew for each use, and one memo
    # entry a vocabulary and choices is all there is to keep.
    key = ("kind_column", vocabulary.key, *((c.field, c.column) for c in choices))
    if key not in memo:
        memo[key] = _kind_column(sample, choices, profiles, vocabulary)
    return cast(tuple[str, dict[str, tuple[str, bool]]] | None, memo[key])


def _proposed_lists(
    sample: CsvSample,
    choices: list[FieldChoice],
    answers: dict[str, str],
    status: str | None,
    profiles: dict[str, ColumnProfile],
    vocabulary: Vocabulary,
    memo: dict[tuple[object, ...], object] | None = None,
) -> tuple[str | None, dict[str, list[str]]]:
    """The kinds column (a person's `kinds_column`, else the one found) and its values' kinds,
    with `refunded`: the capture values whose state says the capture was refunded."""
    column = answers.get("kinds_column", "").strip() or None
    lists: dict[str, list[str]] = {"capture": [], "refund": [], "ignore": [], "refunded": []}
    found: dict[str, tuple[str, bool]] = {}
    if column is not None:
        if column not in sample.layout.columns:
            raise UnknownColumnError(
                f'{sample.layout.file_name} has no column "{column}" (kinds_column); '
                f"its columns are: {', '.join(sample.layout.columns)}"
            )
        classified = _classify(sample, column, choices, vocabulary, status=column == status)
        found = {v: (k, r) for v, (k, r) in classified.items() if k is not None}
    else:
        kind_column = _remembered_kind_column(sample, choices, profiles, vocabulary, memo)
        if kind_column is not None:
            column, found = kind_column
    for value, (kind, refunded) in found.items():
        lists[kind].append(value)
        if refunded and value not in vocabulary.refunded_statuses:
            lists["refunded"].append(value)
    if column is not None and column != status and status is not None:
        # The status column still says which rows to leave out (pending memos, denied
        # attempts) and which captures were refunded (`Erstattet` beside a `Typ`).
        by_status = _classify(sample, status, choices, vocabulary, status=True)
        for value, (other, refunded) in by_status.items():
            if value in lists["capture"] + lists["refund"]:
                continue
            if other == "ignore":
                lists["ignore"].append(value)
            elif refunded and value not in vocabulary.refunded_statuses:
                lists["refunded"].append(value)
    return column, lists


def _apply_answered_lists(lists: dict[str, list[str]], answers: dict[str, str]) -> dict[str, str]:
    """Replace each list a person answered (`kinds_capture=...`), taking its values out of the
    lists not answered; returns the answers applied. A refunded capture stays a capture."""
    given = {name: answers[f"kinds_{name}"] for name in lists if f"kinds_{name}" in answers}
    for name, text in given.items():
        words = [kind_word(w) for w in text.split(",") if w.strip()]
        lists[name] = words
        for other in lists:
            if other != name and other not in given and {name, other} != {"capture", "refunded"}:
                lists[other] = [w for w in lists[other] if w not in words]
    moved = {*lists["refund"], *lists["ignore"]}
    lists["refunded"] = [w for w in lists["refunded"] if w not in moved]
    return given


def row_kinds(
    sample: CsvSample,
    choices: list[FieldChoice],
    answers: dict[str, str],
    notes: list[Note],
    vocabulary: Vocabulary,
    profiles: dict[str, ColumnProfile] | None = None,
    memo: dict[tuple[object, ...], object] | None = None,
) -> RowKinds | None:
    """The row kinds of a payments file: proposed from its values, then a person's answers.

    Values mean what `vocabulary` says; a person's `kinds_column` is read by the same words;
    each answered list replaces the proposed one and takes its values out of the other lists.
    Raises UnknownColumnError for a kinds column the file does not have and MappingError, in
    words, for lists that cannot work.
    """
    status = next((c.column for c in choices if c.field == "payment_status"), None)
    column, lists = _proposed_lists(
        sample, choices, answers, status, profiles or {}, vocabulary, memo
    )
    given = _apply_answered_lists(lists, answers)
    if not any(lists.values()):
        return None
    if column is None and status is None:
        raise MappingError(
            "row kinds need a column to read: map payments.payment_status or set "
            "payments.kinds_column"
        )
    try:
        kinds = RowKinds(
            column=None if column == status else column,
            capture=tuple(lists["capture"]),
            refund=tuple(lists["refund"]),
            ignore=tuple(lists["ignore"]),
            refunded=tuple(lists["refunded"]),
        )
    except ValueError as error:
        raise MappingError(f"row kinds: {_first_error(error)}") from None
    if not given and "kinds_column" not in answers:
        notes.append(
            note(
                ProposalCode.ROW_KINDS,
                column=column or status,
                capture=list(kinds.capture),
                refunded=list(kinds.refunded),
                refund=list(kinds.refund),
                ignore=list(kinds.ignore),
            )
        )
    return kinds
