"""The entry point: `infer_mapping` runs every step of inference over two sampled files.

Roles first (`roles`, or a person's `orders_file`), then per file the candidates of every field
(`candidates`), raised or lowered by what the other file says (key overlap, amount agreement,
`evidence`), one proposal per file under the ambiguity rule (`dataset`, `ambiguity`), then the
decisions that need both files: major or minor units (`amounts`) and the currency of a file
without a currency column (`default_currency`). Every step is bounded (`bounds`): a file of
hundreds of columns costs about what an export of normal width does, and what cannot be
compared in time is asked.
"""

from __future__ import annotations

from agent.data.ingest import CsvSample
from agent.data.mapping.ambiguity import role_question
from agent.data.mapping.amounts import decide_units
from agent.data.mapping.bounds import Budget, profiles_of
from agent.data.mapping.candidates import apply_key_overlap, score_columns
from agent.data.mapping.columns import SampleColumns
from agent.data.mapping.dataset import dataset_proposal
from agent.data.mapping.default_currency import decide_currencies
from agent.data.mapping.evidence import Evidence, apply_amount_agreement
from agent.data.mapping.proposal import Clarification, DatasetProposal, Proposal
from agent.data.mapping.roles import role_fits, swap_from_answers
from agent.data.schema import SCHEMA, Role


def infer_mapping(
    first: CsvSample,
    second: CsvSample,
    *,
    answers: dict[Role, dict[str, str]] | None = None,
    budget: Budget | None = None,
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
    """
    answers = answers or {}
    budget = budget or Budget()
    # Each file is read by column once, for every step below.
    views = [SampleColumns(first), SampleColumns(second)]
    profiles = [profiles_of(first, views[0]), profiles_of(second, views[1])]
    straight, crossed = role_fits(profiles[0], profiles[1])
    clarifications: list[Clarification] = []
    chosen = swap_from_answers(answers, (first.layout.file_name, second.layout.file_name))
    if crossed > straight if chosen is None else chosen:
        first, second = second, first
        profiles.reverse()
        views.reverse()
    role_confidence = 1.0 if chosen is not None else min(1.0, abs(straight - crossed) / 0.5)
    question = role_question(first, second, (straight, crossed), chosen)
    if question is not None:
        clarifications.append(question)
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
    datasets: dict[Role, DatasetProposal] = {}
    for role in Role:
        datasets[role] = dataset_proposal(
            role, evidence[role], scored[role], clarifications, answers.get(role, {})
        )
    if budget.spent:
        for role in Role:
            notes = [*datasets[role].notes, budget.note]
            datasets[role] = datasets[role].model_copy(update={"notes": notes})
    decide_units(datasets, columns, answers)
    decide_currencies(datasets, evidence, clarifications)
    return Proposal(
        orders=datasets[Role.ORDERS],
        payments=datasets[Role.PAYMENTS],
        role_confidence=round(role_confidence, 2),
        clarifications=clarifications,
    )
