"""The invocation's view of its case's files: proposals and validations of the current files,
through the one door to them (`CaseFiles`), with the progress and answers of this invocation.

When the gates find an id reading that clearly makes more references name an order
(`ValidationReport.proposed`), it is validated in the proposed one's place and proposed as a
confirmation with the figure (`data.evident_reading`), instead of asking a person to type what
the files already say.
"""

from __future__ import annotations

from agent.casefiles import CsvSample
from agent.data.mapping import Proposal
from agent.data.normalize import ValidationReport
from agent.data.schema import Mapping, Role
from agent.runtime.context import InvestigationContext, answered_header


def samples_of(context: InvestigationContext) -> dict[Role, CsvSample]:
    """Each file's head sample (fetched only the first time a process inspects the file), read
    from the header line a person gave, if any."""
    door = context.case_files
    return {
        role: door.sample(ref, header_row=answered_header(context, role))
        for role, ref in context.files.items()
    }


def proposal_for(
    context: InvestigationContext,
    samples: dict[Role, CsvSample],
    answers: dict[Role, dict[str, str]] | None = None,
) -> Proposal:
    """The proposal for the two files under `answers`, status and kind values read by the
    words of the policy in force in the case's channel (inferred once per process)."""
    return context.case_files.propose(context.files, samples, answers, context.policy)


def validate(context: InvestigationContext, mapping: Mapping) -> ValidationReport:
    """`mapping` checked on every row of the case's files, under the policy in force in the
    case's channel (`context.policy`)."""
    return context.case_files.validate(context.files, mapping, context.on_rows, context.policy)


def validate_by_evidence(
    context: InvestigationContext,
    samples: dict[Role, CsvSample],
    answers: dict[Role, dict[str, str]],
    proposal: Proposal,
    report: ValidationReport,
) -> tuple[Proposal, ValidationReport]:
    """The reading the files show in place of `proposal`'s when its validation found one that
    does better and no answer of a person's contradicts (`evident_reading.take_evident`)."""
    return context.case_files.validate_by_evidence(
        context.files, samples, answers, proposal, report, context.on_rows, context.policy
    )
