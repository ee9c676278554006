"""The reading the files show, taken in place of the proposed one: a person is not asked to
type what the files already say.

When a validation finds an id reading that clearly makes more references name an order
(`ValidationReport.proposed`, weighed over the whole files by `gates`), the proposal is made
again with it and validated; it is kept when it does better (fewer problems, or more references
that meet), and the request says what was proposed and the figure without it. A person's own
answer for a role's id options is never overridden.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from agent.data.ingest import CsvSample
from agent.data.mapping import Proposal, infer_mapping
from agent.data.normalize import ValidationReport
from agent.data.normalize.codes import Code
from agent.data.notes import note, with_code
from agent.data.schema import Mapping, Role
from agent.data.vocabulary import BUILTIN, Vocabulary

logger = logging.getLogger(__name__)

MAX_EVIDENT_ROUNDS = 3
"""Readings the files show are taken one after another (ids in any case, then leading zeros)
while each makes more references meet; never more than this many."""


def propose_by_evidence(
    samples: tuple[CsvSample, CsvSample],
    validate: Callable[[Mapping], ValidationReport],
    answers: dict[Role, dict[str, str]] | None = None,
    vocabulary: Vocabulary = BUILTIN,
) -> tuple[Proposal, ValidationReport | None]:
    """The proposal for two sampled files as the bot makes it, and its validation: inferred,
    validated on the whole files (`validate`), and with the id reading the files show taken
    (`take_evident`). No validation while a question is open (no mapping to validate)."""
    given = answers or {}
    proposal = infer_mapping(*samples, answers=given, vocabulary=vocabulary)
    if proposal.mapping is None:
        return proposal, None
    return take_evident(
        lambda more: infer_mapping(*samples, answers=more, vocabulary=vocabulary),
        validate,
        given,
        proposal,
        validate(proposal.mapping),
    )


def take_evident(
    propose: Callable[[dict[Role, dict[str, str]]], Proposal],
    validate: Callable[[Mapping], ValidationReport],
    answers: dict[Role, dict[str, str]],
    proposal: Proposal,
    report: ValidationReport,
) -> tuple[Proposal, ValidationReport]:
    """The reading the files show in place of `proposal`'s when its validation found one
    (`report.proposed`) that no answer of a person's contradicts and that does better (fewer
    problems, or more references that name an order; anything else is still said); else
    `proposal` and `report` as they were."""
    given = {role: dict(fields) for role, fields in answers.items()}
    taken: list[dict[str, object]] = []
    without = _references(report)
    for _ in range(MAX_EVIDENT_ROUNDS):
        if not report.proposed or _answered_ids(answers, report.proposed):
            break
        trying = {role: dict(fields) for role, fields in given.items()}
        for role_name, options in report.proposed.items():
            trying.setdefault(Role(role_name), {}).update(options)
        evident = propose(trying)
        if evident.mapping is None:
            break
        found = validate(evident.mapping)
        if not _does_better(found, report):
            logger.info("| the reading the files show does no better: not proposed")
            break
        if report.proposed_reading is not None:
            taken.append(dict(report.proposed_reading.params))
        given, proposal, report = trying, evident, found
    if taken:
        report.facts.insert(0, note(Code.EVIDENT_TAKEN, taken=taken, without=without))
    return proposal, report


def _references(report: ValidationReport) -> dict[str, object] | None:
    """The parameters of `report`'s references line (how many references name an order), or
    None when the gates did not count them."""
    found = with_code(report.routine, Code.REFERENCES)
    return dict(found[0].params) if found else None


def _answered_ids(answers: dict[Role, dict[str, str]], proposed: dict[str, dict[str, str]]) -> bool:
    """True when a person said how the ids of a role the proposal changes read: their answer
    stands."""
    return any(name.startswith("id_") for role in proposed for name in answers.get(Role(role), {}))


def _does_better(found: ValidationReport, before: ValidationReport) -> bool:
    """True when `found` has fewer problems than `before`, or as few and more references that
    name an order."""
    if len(found.errors) != len(before.errors):
        return len(found.errors) < len(before.errors)
    named = found.references[0] if found.references else 0
    return named > (before.references[0] if before.references else 0)
