"""One file's proposal: the column of every canonical field, and how its values are read.

A person's answers come first (a chosen column is taken as given; for `currency`, a
three-letter code that is not a column becomes the file's default currency; for a payment id,
no column, `payments.payment_id=`, names each payment by its data row). Every other field
takes its candidates' verdict under the ambiguity rule (`ambiguity.decide_field`), with its
confidence and up to three alternatives. The reading options follow (`readings`), and for
payments the row kinds (`row_kinds`).
"""

from __future__ import annotations

from agent.data.currency import is_currency_code
from agent.data.keys import id_reading_from_answers
from agent.data.mapping.ambiguity import BY_ROW, decide_field
from agent.data.mapping.candidates import FieldCandidates, Scored
from agent.data.mapping.evidence import Evidence
from agent.data.mapping.order_statuses import order_statuses
from agent.data.mapping.proposal import Candidate, Clarification, DatasetProposal, FieldChoice
from agent.data.mapping.readings import reading_from_answers, reading_options
from agent.data.mapping.row_kinds import row_kinds
from agent.data.mapping.wording import ProposalCode
from agent.data.notes import Note
from agent.data.profile import ColumnProfile
from agent.data.schema import READING_OPTIONS, SCHEMA, FieldSpec, Role
from agent.data.schema import spec as spec_of
from agent.data.vocabulary import Vocabulary
from agent.errors import UnknownColumnError


def dataset_proposal(
    role: Role,
    evidence: Evidence,
    scored: FieldCandidates,
    clarifications: list[Clarification],
    answers: dict[str, str],
    vocabulary: Vocabulary,
) -> DatasetProposal:
    """The proposal for the file playing `role`; its open questions go to `clarifications`.
    Status and row-kind values take their meanings from `vocabulary`.

    Raises UnknownColumnError for an answer naming a column the file does not have (or, for
    `currency`, neither a column nor a currency code), KeyError for a field the role does not
    have, and MappingError for an option value that cannot work.
    """
    sample, by_name = evidence.sample, evidence.profiles
    ids = id_reading_from_answers(answers, None)
    answered, default_currency = _answered_columns(role, evidence, answers)
    used: set[str] = set(answered.values())
    notes: list[Note] = list(sample.layout.notes)
    choices: list[FieldChoice] = []
    for spec in SCHEMA[role]:
        if spec.name in answered and not answered[spec.name]:  # no column: named by row
            choices.append(_by_row_choice(spec))
        elif spec.name in answered:
            choices.append(_given_choice(spec, answered[spec.name], by_name))
        elif spec.name == "currency" and default_currency is not None:
            choices.append(_default_currency_choice(spec, default_currency))
        else:
            found = [c for c in scored[spec.name] if c.column not in used]
            choice = _inferred_choice(role, spec, found, evidence, clarifications)
            if choice.column is not None:
                used.add(choice.column)
            choices.append(choice)
    options = reading_options(sample, by_name, choices, notes)
    options = reading_from_answers(role, options, choices, sample, answers, clarifications)
    notes = [n for n in notes if not _answered_note(n, answers)]
    if role is Role.PAYMENTS:
        kinds = row_kinds(
            sample, choices, answers, notes, vocabulary, by_name, evidence.columns.derived
        )
        if kinds is not None:
            options = options.model_copy(update={"kinds": kinds})
    else:
        statuses = order_statuses(sample, choices, answers, vocabulary)
        if statuses is not None:
            options = options.model_copy(update={"statuses": statuses})
    if default_currency is not None:
        options = options.model_copy(update={"default_currency": default_currency})
    if ids is not None:
        options = options.model_copy(update={"ids": ids})
    return DatasetProposal(
        role=role,
        file_name=sample.layout.file_name,
        columns=list(sample.layout.columns),
        sampled_rows=len(sample.rows),
        choices=choices,
        options=options,
        notes=notes,
    )


def _answered_columns(
    role: Role, evidence: Evidence, answers: dict[str, str]
) -> tuple[dict[str, str], str | None]:
    """The columns a person chose (field -> column), checked, and the default currency they gave.

    An empty answer for a field whose rows may be named by number (`by_row`: the payment id)
    says that no column holds it; it stays in the answers as "".
    """
    sample, by_name = evidence.sample, evidence.profiles
    default_currency: str | None = None
    answered = {k: v for k, v in answers.items() if k not in READING_OPTIONS}
    if "currency" in answered and answered["currency"] not in by_name:
        code = answered.pop("currency").strip().upper()
        if not is_currency_code(code):
            raise UnknownColumnError(
                f'{sample.layout.file_name} has no column "{code}", and it is not a currency code'
            )
        default_currency = code
    for field, answer in list(answered.items()):
        spec = spec_of(role, field)  # raises KeyError for a field the role does not have
        if spec.by_row and not answer.strip():
            answered[field] = ""
            continue
        if answer not in by_name:
            raise UnknownColumnError(
                f'{sample.layout.file_name} has no column "{answer}" (chosen for {field}); '
                f"its columns are: {', '.join(sample.layout.columns)}"
            )
    return answered, default_currency


def _given_choice(spec: FieldSpec, column: str, by_name: dict[str, ColumnProfile]) -> FieldChoice:
    return FieldChoice(
        field=spec.name,
        required=spec.required or spec.kind == "currency",
        column=column,
        confidence=1.0,
        reason="chosen by a person",
        alternatives=[],
        samples=list(by_name[column].samples),
    )


def _by_row_choice(spec: FieldSpec) -> FieldChoice:
    return FieldChoice(
        field=spec.name,
        required=False,
        column=None,
        confidence=1.0,
        reason=BY_ROW.replace("no column holds it", "no column (chosen by a person)"),
        alternatives=[],
        samples=[],
    )


def _default_currency_choice(spec: FieldSpec, code: str) -> FieldChoice:
    return FieldChoice(
        field=spec.name,
        required=True,
        column=None,
        confidence=1.0,
        reason=f"every row is in {code} (chosen by a person)",
        alternatives=[],
        samples=[],
    )


def _inferred_choice(
    role: Role,
    spec: FieldSpec,
    found: list[Scored],
    evidence: Evidence,
    clarifications: list[Clarification],
) -> FieldChoice:
    """The choice for `spec` from its candidates; the rule's question joins `clarifications`."""
    verdict = decide_field(role, spec, found, evidence)
    if verdict.question is not None:
        clarifications.append(verdict.question)
    column = verdict.column
    return FieldChoice(
        field=spec.name,
        required=spec.required or spec.kind == "currency",
        column=column,
        confidence=verdict.confidence,
        reason=verdict.reason,
        alternatives=[
            Candidate(column=c.column, confidence=round(min(1.0, c.score), 2), reason=c.reason)
            for c in found
            if c.column != column
        ][:3],
        samples=list(evidence.profiles[column].samples) if column else [],
    )


_ANSWERED_BY: dict[str, frozenset[str]] = {
    ProposalCode.DAY_MONTH_GUESSED: frozenset({"date_order", "timestamp_pattern"}),
    ProposalCode.DAY_MONTH_SETTLED: frozenset({"date_order", "timestamp_pattern"}),
    ProposalCode.NO_TIME_ZONE: frozenset({"timezone", "timezone_column"}),
}
"""The notes that say what a person's answer settles, by code: the guessed day/month order,
the time zone assumed, and the answers that settle each."""


def _answered_note(note: Note, answers: dict[str, str]) -> bool:
    """Whether `note` says what a person has since answered: the guessed day/month order
    (date_order, timestamp_pattern), the time zone assumed (timezone, timezone_column)."""
    return bool(_ANSWERED_BY.get(note.code, frozenset()) & answers.keys())
