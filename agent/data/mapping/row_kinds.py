"""Row kinds of a payments file: which rows are captures, which refunds, which to ignore.

A status or type value is read by the words it is made of (`express_checkout_payment` is a
capture, `payment_refund` a refund, `merchantpayout` a row to ignore). A policy word such as
`refunded` is a capture's state in most exports but a row of its own in others; the rows
decide. A person may name the column (`kinds_column`) and the lists (`kinds_capture`, ...).
"""

from __future__ import annotations

from collections import Counter

from agent.data.ingest import CsvSample
from agent.data.keys import _first_error
from agent.data.mapping.bounds import CLOSE_CANDIDATES
from agent.data.mapping.headers import normalize_header
from agent.data.mapping.proposal import FieldChoice
from agent.data.policy import Policy
from agent.data.profile import column_values
from agent.data.schema import RowKinds, kind_word
from agent.errors import MappingError, UnknownColumnError

# Words in a status or type value that say what a payment row is. A value is read in words
# (`express_checkout_payment`) and as a whole (`merchantpayout`); a word to ignore outranks a
# refund word, which outranks a capture word (`payment_refund` is a refund).
# English, then the words of German, French, Spanish, Italian, Dutch and Portuguese exports.
_CAPTURE_WORDS = frozenset(
    "settled settle settling settlement completed complete succeeded success successful paid "
    "captured capture sale sales charge charged payment purchase disputed "
    "abgeschlossen erfolgreich bezahlt gebucht zahlung payé réussi terminé accepté paiement "
    "completado pagado aprobado pago completato pagato riuscito pagamento betaald voltooid "
    "geslaagd betaling concluído concluido aprovado".split()
)
_REFUND_WORDS = frozenset(
    "refund refunded refunds credit return returned returns chargeback chargebacks reversal "
    "reversed charged_back chargedback erstattet erstattung rückerstattung remboursé "
    "remboursement reembolso "
    "reembolsado rimborso rimborsato terugbetaling terugbetaald".split()
)
_IGNORE_WORDS = frozenset(
    "fee fees payout payouts merchantpayout withdrawal transfer deposit pending authorization "
    "authorisation authorized authorised auth memo denied open declined rejected voided void "
    "hold failed failure canceled cancelled error expired blocked incomplete uncaptured unpaid "
    "processing requires awaiting waiting initiated scheduled created refused unsuccessful "
    "abandoned uncleared unclaimed not no non nicht niet não nao "
    "ausstehend offen fehlgeschlagen abgelehnt storniert abgebrochen en_attente attente échoué "
    "refusé annulé pendiente fallido rechazado cancelado in_attesa attesa fallito rifiutato "
    "annullato mislukt geweigerd geannuleerd aguardando pendente falhou recusado".split()
)
# `requires_capture` and `processing` (Stripe) are money not yet taken, `payment_failed` an
# attempt, `not_paid` a denial: a capture word in them does not make them captures. English
# `approved` is asked about (Square's is authorised, not captured); Mercado Pago's `aprobado`
# and `aprovado` are paid.
# Header words of columns that say something else than the row's kind.
_NOT_KIND_HEADERS = frozenset("card instrument method tender entry channel order".split())
_MAX_KINDS = 20


def kind_by_words(value: str) -> str | None:
    """`capture`, `refund` or `ignore` for a status/type value by the words it is made of."""
    word = kind_word(value)
    tokens = {word, *word.split("_")}
    if tokens & _IGNORE_WORDS:
        return "ignore"
    if tokens & _REFUND_WORDS:
        return "refund"
    if tokens & _CAPTURE_WORDS:
        return "capture"
    return None


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
    sample: CsvSample, column: str, choices: list[FieldChoice], *, status: bool
) -> dict[str, str | None]:
    """Each value of `column` -> its kind by words (None: unknown); failed words are left out
    of a status column, where the policy already reads them."""
    policy = Policy()
    found: dict[str, str | None] = {}
    for value in _kind_values(sample, column):
        if status and value in policy.failed_payment_statuses:
            continue
        kind = kind_by_words(value)
        # A policy word (`refunded`) is a capture's state unless its rows are records of their
        # own. Another refund word stays a refund: read as a capture, the engine would not know
        # the money went back (`charged_back` would count as kept).
        if value in policy.refunded_payment_statuses:
            kind = "refund" if _separate_rows(sample, column, value, choices) else "capture"
        found[value] = kind
    return found


def _kind_column(
    sample: CsvSample, choices: list[FieldChoice]
) -> tuple[str, dict[str, str]] | None:
    """The column that says each payment row's kind, and its values' kinds, when one does.

    Candidates are the status column and the columns whose header says `type` or `kind`
    (Shopify's transactions: a status column named `Type` first, then the other type columns,
    then the status column). The first whose
    every value has a known kind, with captures and at least one refund or row to ignore, is
    taken; failing that, the first where most values are known that way: its other values stay
    in no list, so validation asks what they are instead of reading a fee as a capture. A file
    whose rows are all captures (and failed attempts) needs no row kinds. The first
    `CLOSE_CANDIDATES` type columns are read (see `bounds`).
    """
    status = next((c.column for c in choices if c.field == "payment_status"), None)
    typed = []
    for name in sample.layout.columns:
        words = set(normalize_header(name).split())
        if words & {"type", "kind"} and not words & _NOT_KIND_HEADERS:
            typed.append(name)
    order = [c for c in typed if c == status] + [c for c in typed if c != status]
    order = order[:CLOSE_CANDIDATES]
    if status is not None and status not in order:
        order.append(status)
    partial: tuple[str, dict[str, str]] | None = None
    for column in order:
        values = _kind_values(sample, column)
        if not values or len(values) > _MAX_KINDS:
            continue
        found = _classify(sample, column, choices, status=column == status)
        kinds = {value: kind for value, kind in found.items() if kind is not None}
        if not ("capture" in kinds.values() and {"refund", "ignore"} & set(kinds.values())):
            continue
        if len(kinds) == len(found):
            return column, kinds
        if partial is None and len(kinds) > len(found) - len(kinds):
            partial = column, kinds
    return partial


def _proposed_lists(
    sample: CsvSample, choices: list[FieldChoice], answers: dict[str, str], status: str | None
) -> tuple[str | None, dict[str, list[str]]]:
    """The kinds column (a person's `kinds_column`, else the one found) and its values' kinds."""
    column = answers.get("kinds_column", "").strip() or None
    lists: dict[str, list[str]] = {"capture": [], "refund": [], "ignore": []}
    if column is not None:
        if column not in sample.layout.columns:
            raise UnknownColumnError(
                f'{sample.layout.file_name} has no column "{column}" (kinds_column); '
                f"its columns are: {', '.join(sample.layout.columns)}"
            )
        for value, kind in _classify(sample, column, choices, status=column == status).items():
            if kind is not None:
                lists[kind].append(value)
    else:
        found = _kind_column(sample, choices)
        if found is not None:
            column = found[0]
            for value, kind in found[1].items():
                lists[kind].append(value)
    if column is not None and column != status and status is not None:
        # The status column still says which rows to leave out: pending memos, denied attempts.
        for value, kind in _classify(sample, status, choices, status=True).items():
            if kind == "ignore" and value not in lists["capture"] + lists["refund"]:
                lists["ignore"].append(value)
    return column, lists


def _apply_answered_lists(lists: dict[str, list[str]], answers: dict[str, str]) -> dict[str, str]:
    """Replace each list a person answered (`kinds_capture=...`), taking its values out of the
    lists not answered; returns the answers applied."""
    given = {name: answers[f"kinds_{name}"] for name in lists if f"kinds_{name}" in answers}
    for name, text in given.items():
        words = [kind_word(w) for w in text.split(",") if w.strip()]
        lists[name] = words
        for other in lists:
            if other != name and other not in given:
                lists[other] = [w for w in lists[other] if w not in words]
    return given


def row_kinds(
    sample: CsvSample,
    choices: list[FieldChoice],
    answers: dict[str, str],
    notes: list[str],
) -> RowKinds | None:
    """The row kinds of a payments file: proposed from its values, then a person's answers.

    A person's `kinds_column` is read by the same known words; each answered list replaces the
    proposed one and takes its values out of the other lists. Raises UnknownColumnError for a
    kinds column the file does not have and MappingError, in words, for lists that cannot work.
    """
    status = next((c.column for c in choices if c.field == "payment_status"), None)
    column, lists = _proposed_lists(sample, choices, answers, status)
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
        )
    except ValueError as error:
        raise MappingError(f"row kinds: {_first_error(error)}") from None
    if not given and "kinds_column" not in answers:
        shown = column or status
        notes.append(
            f'row kinds from "{shown}": captures {", ".join(kinds.capture)}'
            + (f"; refunds {', '.join(kinds.refund)}" if kinds.refund else "")
            + (f"; ignored {', '.join(kinds.ignore)}" if kinds.ignore else "")
        )
    return kinds
