"""Validating a reading of a case's files, and the reading the files themselves show.

When the gates find an id reading that clearly makes more references name an order
(`ValidationReport.proposed`), it is validated in the proposed one's place and proposed as a
confirmation with the figure (`data.evident_reading`), instead of asking a person to type what
the files already say.
"""

from __future__ import annotations

from agent.data.evident_reading import take_evident
from agent.data.ingest import CsvSample
from agent.data.mapping import Proposal
from agent.data.normalize import ValidationReport
from agent.data.normalize.memo import ValidationMemo
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import Mapping, Role
from agent.runtime.context import InvestigationContext, file_sources


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
    """The reading the files show in place of `proposal`'s when its validation found one that
    does better and no answer of a person's contradicts (`evident_reading.take_evident`)."""
    return take_evident(
        lambda given: proposal_for(context, samples, given),
        lambda mapping: validate(context, mapping),
        answers,
        proposal,
        report,
    )
