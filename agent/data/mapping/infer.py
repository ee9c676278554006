"""The entry point: `infer_mapping` runs every step of inference over two sampled files.

Roles first (`roles`, or a person's `orders_file`), then each file's sample read again with the
header on the line a person gave (`header_row`), then per file the candidates of every field
(`candidates`), raised or lowered by what the other file says (key overlap, amount agreement,
`evidence`), one proposal per file under the ambiguity rule (`dataset`, `ambiguity`), then the
decisions that need both files: major or minor units (`amounts`) and the currency of a file
without a currency column (`default_currency`). Every step is bounded (`bounds`): a file of
hundreds of columns costs about what an export of normal width does, and what cannot be
compared in time is asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from agent.data.ingest import CsvSample, reheaded
from agent.data.mapping.ambiguity import ROLE_MARGIN, role_question
from agent.data.mapping.amounts import decide_units
from agent.data.mapping.bounds import Budget, profiles_of
from agent.data.mapping.by_object import ByObjects
from agent.data.mapping.candidates import FieldCandidates, apply_key_overlap, score_columns
from agent.data.mapping.columns import SampleColumns
from agent.data.mapping.dataset import dataset_proposal
from agent.data.mapping.date_order import decide_date_order
from agent.data.mapping.default_currency import decide_currencies
from agent.data.mapping.evidence import Evidence, apply_amount_agreement
from agent.data.mapping.proposal import Clarification, DatasetProposal, Proposal
from agent.data.mapping.readings import header_row_answer
from agent.data.mapping.roles import role_fits, swap_from_answers
from agent.data.mapping.separators import decide_separators
from agent.data.schema import SCHEMA, Role
from agent.data.vocabulary import BUILTIN, Vocabulary


def infer_mapping(
    first: CsvSample,
    second: CsvSample,
    *,
    answers: dict[Role, dict[str, str]] | None = None,
    budget: Budget | None = None,
    memo: Comparisons | None = None,
    vocabulary: Vocabulary = BUILTIN,
    reheader: Reheader = reheaded,
) -> Proposal:
    """Propose which file holds orders and which payments, and a mapping for each.

    The two samples can come in either order: roles are decided from the content, unless a
    person answered `orders_file=NAME` (under either role). `answers` are a person's choices
    (role -> field -> column, or role -> reading option -> value, see `READING_OPTIONS`); a
    chosen column is taken as given, and for `currency` a three-letter code that is not a
    column becomes the file's default currency. Raises UnknownColumnError for an answer naming
    a column the file does not have, MappingError for an option value that cannot work.
    `budget` is the time inference may spend comparing values (`bounds.Budget`); once it is
    spent, the fields it left uncompared are asked.

    What the files' values say does not depend on the answers (the roles aside): with a
    `memo`, it is worked out once per pair of sample objects and roles, and an edit of the
    mapping only decides the fields again (`Comparisons`).

    Status and row-kind values take their meanings from `vocabulary` (the policy's in force,
    `Policy.vocabulary()`; the built-in words by default): inference only proposes them, and
    the mapping a person approves carries them.

    A `header_row` answer (`orders.header_row=5`) makes that file's sample be read again with
    the header on that line (`reheader`, by default `ingest.reheaded`; `SampleCache` gives one
    that keeps what it read), so its columns are that line's cells and `ReadingOptions.header_row`
    says so. It names the file by the role this proposal gives it without the answer, so the
    roles stay as they were unless the files were too alike to tell (then they are asked).
    Raises MappingError, naming the file, for a line that cannot be the header.
    """
    answers = answers or {}
    chosen = swap_from_answers(answers, (first.layout.file_name, second.layout.file_name))
    first, second, chosen = _with_headers(first, second, chosen, answers, reheader)
    if budget is not None or memo is None:  # a budget of the caller's: its own comparison
        compared = _compare(first, second, chosen, budget or Budget())
    else:
        compared = memo.compared(first, second, chosen)
    clarifications = list(compared.clarifications)
    datasets: dict[Role, DatasetProposal] = {}
    for role in Role:
        datasets[role] = dataset_proposal(
            role,
            compared.evidence[role],
            compared.scored[role],
            clarifications,
            answers.get(role, {}),
            vocabulary,
        )
    if compared.budget.spent:
        for role in Role:
            notes = [*datasets[role].notes, compared.budget.note]
            datasets[role] = datasets[role].model_copy(update={"notes": notes})
    decide_currencies(datasets, compared.evidence, clarifications)
    # Separators before units: units compare amounts, read under the settled separators.
    decide_separators(datasets, compared.columns, answers, clarifications)
    decide_units(datasets, compared.columns, answers)
    decide_date_order(datasets, compared.columns, compared.evidence, answers, clarifications)
    return Proposal(
        orders=datasets[Role.ORDERS],
        payments=datasets[Role.PAYMENTS],
        role_confidence=compared.role_confidence,
        clarifications=clarifications,
    )


Reheader = Callable[[CsvSample, int], CsvSample]
"""A sample read again with its header on a given line (1 is the first): `ingest.reheaded`."""


def _with_headers(
    first: CsvSample,
    second: CsvSample,
    chosen: bool | None,
    answers: dict[Role, dict[str, str]],
    reheader: Reheader,
) -> tuple[CsvSample, CsvSample, bool | None]:
    """The two samples, each read again with the header a person gave for its role, and the
    roles to compare them under (`chosen`: whether the second file is the orders export).

    Without an `orders_file` answer, the roles are those the samples as they were give (the
    roles the person saw the answer's role on), kept for the samples read again unless the
    two fits are too close to call (then the comparison asks which file is which).
    """
    given = {
        role: fields["header_row"] for role, fields in answers.items() if "header_row" in fields
    }
    if not given:
        return first, second, chosen
    keep = chosen
    if chosen is None:
        straight, crossed = role_fits(profiles_of(first), profiles_of(second))
        chosen = crossed > straight
        keep = chosen if abs(straight - crossed) >= ROLE_MARGIN else None
    order = (Role.PAYMENTS, Role.ORDERS) if chosen else (Role.ORDERS, Role.PAYMENTS)
    samples = dict(zip(order, (first, second), strict=True))
    for role, value in given.items():
        sample = samples[role]
        samples[role] = reheader(sample, header_row_answer(value, sample.layout.file_name))
    return samples[order[0]], samples[order[1]], keep


@dataclass(frozen=True)
class _Compared:
    """What two files' sampled values say, before any field is decided: the candidates of every
    field scored (after key overlap and amount agreement), each file's evidence and columns,
    the confidence in the roles and the question about them, the budget and the CPU seconds
    the comparison took."""

    columns: dict[Role, SampleColumns]
    scored: dict[Role, FieldCandidates]
    evidence: dict[Role, Evidence]
    role_confidence: float
    clarifications: tuple[Clarification, ...]
    budget: Budget
    used: float


class Comparisons:
    """What inference compared of the last few pairs of sample objects, by the objects and the
    roles a person chose: an edit of a case's mapping decides its fields again on what the
    upload compared (at the 1M benchmark files, an edit's inference 0.25-0.45 -> 0.04 s).

    A sample never changes once read, so what its values say stays true. A comparison keeps
    its samples and their columns read (about 25 MB for two 4 MiB heads): the owner bounds how
    many are kept (`SampleCache` keeps one case's, with its roles chosen either way).
    """

    def __init__(self, size: int = 2) -> None:
        self._kept: ByObjects[CsvSample, _Compared] = ByObjects(size)

    def compared(self, first: CsvSample, second: CsvSample, chosen: bool | None) -> _Compared:
        """The comparison of two samples under the roles a person chose (`chosen`, None:
        decided from the content), kept here once worked out.

        What is handed out is for one inference: its field decisions get a budget of their own
        on the calling thread, with what the comparison used taken off (`ambiguity` asks once
        it is spent), and copies of the candidates (deciding the fields adds to their
        reasons)."""
        found = self._kept.get((first, second), chosen)
        if found is None:
            found = _compare(first, second, chosen, Budget())
            self._kept.put((first, second), found, chosen)
        fresh = Budget(found.budget.seconds, used=found.used)
        fresh.spent = found.budget.spent
        evidence = {role: replace(found.evidence[role], budget=fresh) for role in Role}
        scored = {
            role: {name: [replace(c) for c in candidates] for name, candidates in fields.items()}
            for role, fields in found.scored.items()
        }
        return replace(found, scored=scored, evidence=evidence, budget=fresh)


def _compare(first: CsvSample, second: CsvSample, chosen: bool | None, budget: Budget) -> _Compared:
    """Roles first, then every field's candidates, raised or lowered by the other file."""
    started = time.thread_time()
    # Each file is read by column once, for every step below.
    views = [SampleColumns(first), SampleColumns(second)]
    profiles = [profiles_of(first, views[0]), profiles_of(second, views[1])]
    straight, crossed = role_fits(profiles[0], profiles[1])
    if crossed > straight if chosen is None else chosen:
        first, second = second, first
        profiles.reverse()
        views.reverse()
    role_confidence = 1.0 if chosen is not None else min(1.0, abs(straight - crossed) / 0.5)
    question = role_question(first, second, (straight, crossed), chosen)
    samples = {Role.ORDERS: first, Role.PAYMENTS: second}
    columns = {Role.ORDERS: views[0], Role.PAYMENTS: views[1]}
    by_role = {Role.ORDERS: profiles[0], Role.PAYMENTS: profiles[1]}
    scored = {
        role: {spec.name: score_columns(spec, by_role[role]) for spec in SCHEMA[role]}
        for role in Role
    }
    apply_key_overlap(scored, columns, budget)
    evidence = {
        role: Evidence.of(role, samples[role], by_role[role], scored[role], budget, columns[role])
        for role in Role
    }
    apply_amount_agreement(scored, evidence)
    return _Compared(
        columns=columns,
        scored=scored,
        evidence=evidence,
        role_confidence=round(role_confidence, 2),
        clarifications=(question,) if question is not None else (),
        budget=budget,
        used=time.thread_time() - started,
    )
