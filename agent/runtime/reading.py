"""Validating a reading of a case's files, and the reading the files themselves show.

When the proposed reading does not meet (few references name an order) and the gates find one
id reading that clearly makes them meet (`ValidationReport.proposed`: a prefix stripped,
leading zeros, the reference inside free text), that reading is validated in its place and
proposed as a confirmation, with the figure on the request, instead of asking a person to
type what the files already say. A person's own answer for an id option is never overridden.
"""

from __future__ import annotations

import logging

from agent.data.ingest import CsvSample
from agent.data.mapping import Proposal
from agent.data.normalize import ValidationReport
from agent.data.normalize.memo import ValidationMemo
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import Mapping, Role
from agent.runtime.context import InvestigationContext, file_sources

logger = logging.getLogger(__name__)


def proposal_for(
    context: InvestigationContext,
    samples: dict[Role, CsvSample],
    answers: dict[Role, dict[str, str]] | None = None,
) -> Proposal:
    """The proposal for the two files under `answers` (inferred once per process)."""
    digests = (context.files[Role.ORDERS].digest, context.files[Role.PAYMENTS].digest)
    pair = (samples[Role.ORDERS], samples[Role.PAYMENTS])
    return context.samples.proposal(pair, digests, answers)


def validate(context: InvestigationContext, mapping: Mapping) -> ValidationReport:
    """`mapping` checked on every row of the case's files, under the policy in force."""
    return load_and_validate(
        connect(context.workdir),
        file_sources(context.blobs, context.files),
        mapping,
        context.workdir,
        policy=context.policy,
        cache=context.cache,
        progress=context.on_rows,
        memo=ValidationMemo(context.cache.folder / "validations", max_age=context.cache.max_age),
    )


def validate_by_evidence(
    context: InvestigationContext,
    samples: dict[Role, CsvSample],
    answers: dict[Role, dict[str, str]],
    proposal: Proposal,
    report: ValidationReport,
) -> tuple[Proposal, ValidationReport]:
    """The reading the files show in place of `proposal`'s when its validation found one
    (`report.proposed`) that no answer of a person's contradicts and that leaves fewer
    problems (the files meet; anything else is still said); else `proposal` and `report` as
    they were."""
    if not report.proposed or not report.errors:
        return proposal, report
    given = {role: dict(fields) for role, fields in answers.items()}
    for role_name, options in report.proposed.items():
        role = Role(role_name)
        if any(name.startswith("id_") for name in given.get(role, {})):
            return proposal, report  # a person said how ids read: their answer stands
        given.setdefault(role, {}).update(options)
    evident = proposal_for(context, samples, given)
    if evident.mapping is None:
        return proposal, report
    found = validate(context, evident.mapping)
    if len(found.errors) >= len(report.errors):
        logger.info("| the reading the files show solves nothing: asked")
        return proposal, report
    edits = " ".join(
        f"{role}.{name}={value}"
        for role, options in report.proposed.items()
        for name, value in options.items()
    )
    found.facts.insert(
        0,
        f"Proposed from the files, not asked: {edits}. Without it, "
        + next((f for f in report.facts if "payment references" in f), "few references met"),
    )
    return evident, found
