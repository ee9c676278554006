"""The agent's tools over the data engine. Their docstrings are the model's specification.

Every tool reads the files and the confirmed mapping from the investigation context that the
workflow filled from the database; none trusts a file name, a mapping or an id from the model
beyond what it validates. Results are JSON text, and error results explain themselves, because
some models see a tool result's text but not its status.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from strands import tool
from strands.types.tools import ToolContext

from agent.casefiles import CsvSample
from agent.data.evidence import findings_for
from agent.data.mapping import Proposal
from agent.data.normalize import ValidationReport
from agent.data.policy import CATEGORY_ORDER
from agent.data.schema import READING_OPTIONS, Role
from agent.data.wording import words_of
from agent.domain import PauseKind
from agent.errors import MappingError, ReconbotError
from agent.identity import input_identity
from agent.runtime.context import (
    STATE_KEY,
    InvestigationContext,
    PauseSignal,
    ReconcileResult,
)
from agent.runtime.failures import said_failure
from agent.runtime.reading import proposal_for, samples_of, validate, validate_by_evidence
from agent.runtime.reconciling import BytesChangedError, reconciled

logger = logging.getLogger(__name__)

TOP_FINDINGS = 10
_FIELD_REF = re.compile(r"^(orders|payments)\.([a-z_]+)$")


def context_of(tool_context: ToolContext) -> InvestigationContext:
    """The case a tool runs for: the agent's invocation state carries it."""
    context = tool_context.invocation_state.get(STATE_KEY)
    if not isinstance(context, InvestigationContext):
        raise RuntimeError("the tool ran outside an investigation")
    return context


def tool_use_id(tool_context: ToolContext) -> str:
    """The id of the tool use running: the trace records what a tool says about it under it."""
    return str(tool_context.tool_use.get("toolUseId", ""))


def result(data: dict[str, Any], *, error: bool = False) -> dict[str, Any]:
    """A tool result whose text is JSON; an error result says `"ok": false` in its own text."""
    return {
        "status": "error" if error else "success",
        "content": [{"text": json.dumps({"ok": not error, **data}, ensure_ascii=False)}],
    }


def _dataset_view(proposal: Proposal, role: Role) -> dict[str, Any]:
    dataset = proposal.dataset(role)
    return {
        "file": dataset.file_name,
        "role": role.value,
        "columns": dataset.columns,
        "delimiter": dataset.options.delimiter,
        "encoding": dataset.options.encoding,
        "fields": {
            c.field: {
                "column": c.column,
                "confidence": c.confidence,
                "reason": c.reason,
                "alternatives": [a.column for a in c.alternatives],
            }
            for c in dataset.choices
        },
        "notes": words_of(dataset.notes),
    }


@tool(context=True)
def inspect_datasets(tool_context: ToolContext) -> dict[str, Any]:
    """Inspect the two uploaded CSV files of this investigation (orders and payments).

    Call this first. It reads each file's layout (encoding, delimiter, header row) and a sample
    of its rows, decides which file holds orders and which payments, and proposes a source column
    for every canonical field, with a confidence and alternatives. Orders fields: order_id,
    order_amount, currency, order_date, order_status, customer. Payments fields: payment_id,
    order_id (the reference to the order), captured_amount, currency, captured_at,
    payment_status, refunded_amount. It reports no reconciliation figures. Only the column names
    listed in `columns` exist; never invent one.

    Takes no arguments: the files are the two uploaded to this investigation.

    Returns:
        JSON with `orders` and `payments`, each giving the `file` name, its `role`, its
        `columns` (the only column names that exist), `delimiter`, `encoding`, `notes`, and
        `fields`: per canonical field the proposed `column`, its `confidence`, the `reason`
        and the `alternatives` (other plausible columns). Also `open_questions` (what a person
        must answer before the mapping can be approved) and `reading_options` (every option
        validate_mapping accepts, with what it does).
    """
    context = context_of(tool_context)
    try:
        samples = samples_of(context)
        proposal = proposal_for(context, samples)
    except ReconbotError as error:
        return result({"error": str(error)}, error=True)
    return result(
        {
            "orders": _dataset_view(proposal, Role.ORDERS),
            "payments": _dataset_view(proposal, Role.PAYMENTS),
            "open_questions": [c.question for c in proposal.clarifications],
            "reading_options": dict(READING_OPTIONS),
        }
    )


def _parse_changes(changes: dict[str, str] | None) -> tuple[dict[Role, dict[str, str]], list[str]]:
    answers: dict[Role, dict[str, str]] = {}
    problems = []
    for key, column in (changes or {}).items():
        match = _FIELD_REF.match(key.strip())
        if match is None or not isinstance(column, str):
            problems.append(
                f'"{key}" is not a field reference; write "orders.<field>" or "payments.<field>"'
            )
            continue
        answers.setdefault(Role(match.group(1)), {})[match.group(2)] = column
    return answers, problems


def _proposal_or_fallback(
    context: InvestigationContext,
    samples: dict[Role, CsvSample],
    answers: dict[Role, dict[str, str]],
    problems: list[str],
) -> Proposal | None:
    """The proposal under `answers`; when an answer cannot work (a column the file does not
    have, an option value that cannot be read, a field the role does not have), the proposal
    under the columns a person chose without their reading options, else under no answer, so
    the request still shows what was chosen beside the problem. What failed is added to
    `problems` (a request with a problem is never a confirmation). None when even the files
    alone give no proposal (the problem says why)."""
    columns_only = {
        role: {k: v for k, v in fields.items() if k not in READING_OPTIONS}
        for role, fields in answers.items()
    }
    attempts = [answers, {role: fields for role, fields in columns_only.items() if fields}, {}]
    tried: list[dict[Role, dict[str, str]]] = []
    for given in attempts:
        if given in tried:
            continue
        tried.append(given)
        try:
            return proposal_for(context, samples, given or None)
        except (MappingError, KeyError) as error:  # a KeyError's text is its quoted repr
            said = str(error).strip("'\"") if isinstance(error, KeyError) else str(error)
            if said not in problems:
                problems.append(said)
    return None


@tool(context=True)
def validate_mapping(
    tool_context: ToolContext, changes: dict[str, str] | None = None
) -> dict[str, Any]:
    """Validate the proposed mapping over every row of both files, then pause for a person.

    Call this after inspect_datasets. Answers a person already gave are applied first, then
    `changes`. The result is always a pause: a "confirmation" request when the mapping reads
    both files, or a "clarification" naming the open question (two plausible columns, a missing
    required field, a column that does not exist, values that do not read). After this tool,
    stop and wait: a person decides. Never reconcile in the same turn.

    Args:
        changes: Overrides of the proposal for some fields, as an object of text keys to text
            values; leave it empty to validate the proposal as it is. A key is
            "orders.<field>" or "payments.<field>" (a canonical field, e.g. "orders.order_id"),
            its value a column name exactly as inspect_datasets listed it in `columns` (for a
            currency field, a three-letter code such as "EUR" sets a default currency instead).
            A key may also name a reading option, "orders.<option>" or "payments.<option>",
            with its value as text: the options are listed in inspect_datasets'
            `reading_options` (e.g. "payments.id_pattern": "#\\s*(\\d+)" reads the order id
            out of "Order #1042 - 2 items"; "orders.id_prefix": "WC-"). When a problem says
            "Likely fix: edit X=V", that is the change to propose.

    Returns:
        JSON with `pause` ("confirmation" or "clarification"), the `message` the person sees,
        `problems` (what blocks approval), `questions` (open questions), `warnings` (what
        does not block, e.g. a few unreadable values, whose rows are left out of matching) and
        `rows` (the data rows read per file).
    """
    context = context_of(tool_context)
    answers = {role: dict(fields) for role, fields in context.answers.items()}
    model_answers, problems = _parse_changes(changes)
    for role, fields in model_answers.items():
        answers.setdefault(role, {}).update(fields)
    report: ValidationReport | None = None
    proposal: Proposal | None = None
    try:
        samples = samples_of(context)
        proposal = _proposal_or_fallback(context, samples, answers, problems)
        mapping = proposal.mapping if proposal is not None else None
        if proposal is not None and mapping is not None and not problems:
            report = validate(context, mapping)
            proposal, report = validate_by_evidence(context, samples, answers, proposal, report)
            problems.extend(words_of(report.errors))
    except ReconbotError as error:
        problems.append(str(error))
    except Exception as error:  # the bot's fault, not the files': say what failed
        problems.append(said_failure("Validating the mapping", error))
    questions = [c.question for c in proposal.clarifications] if proposal else []
    if proposal is None or proposal.mapping is None or problems:
        kind = PauseKind.CLARIFICATION
        message = "The mapping needs an answer before it can be approved: " + " ".join(
            [*problems, *questions]
        )
    else:
        kind = PauseKind.CONFIRMATION
        message = "The mapping reads both files. A person must approve it before reconciling."
    context.pause = PauseSignal(kind, proposal, report, problems, message)
    return result(
        {
            "pause": kind.value,
            "message": message,
            "problems": problems,
            "questions": questions,
            "warnings": words_of(report.warnings) if report else [],
            "rows": report.rows if report else {},
        }
    )


@tool(context=True)
def reconcile(tool_context: ToolContext) -> dict[str, Any]:
    """Reconcile the orders file against the payments file under the approved mapping.

    Takes no arguments: the mapping is the one a person approved for exactly these files, read
    from the investigation's saved state. Without an approval it refuses and the investigation
    pauses for one (a "blocked_reconcile" request); never retry it in the same turn.

    Returns:
        On success, JSON with `counts` (findings per category), `total_findings`, `orders` and
        `payments` (how many of each were read), `failed_attempts` (failed payment attempts),
        `currencies` (totals per currency), `row_ledger` (one line per file: every row matched,
        in a finding, ignored with a reason or unreadable with a reason: quote it),
        `first_findings` (examples with their evidence: file, row numbers, ids; the largest of
        each category, then the largest left; the exceptions file has them all) and
        `exceptions_file_rows` (the rows of the exceptions file it stored). Otherwise `ok` is
        false and `error` says why (and `pause` is "blocked_reconcile" when no approval exists).
    """
    context = context_of(tool_context)
    bound = context.bound
    if bound is None:
        message = (
            "Reconciling needs a person's approval of the mapping for these files; "
            "none is confirmed. The investigation pauses for it."
        )
        context.pause = PauseSignal(PauseKind.BLOCKED_RECONCILE, None, None, [], message)
        return result({"pause": PauseKind.BLOCKED_RECONCILE.value, "error": message}, error=True)
    if bound.policy_version != context.policy.version:
        return result(
            {"error": "The policy changed after the approval; this approval no longer applies."},
            error=True,
        )
    current = input_identity({role: ref.digest for role, ref in context.files.items()})
    if current != bound.input_identity:
        return result(
            {"error": "The files changed after the approval; this approval no longer applies."},
            error=True,
        )
    try:
        done = reconciled(context, bound, TOP_FINDINGS)
    except BytesChangedError:
        return result(
            {"error": "The bytes read differ from the approved files; nothing reported."},
            error=True,
        )
    except ReconbotError as error:
        return result({"error": str(error)}, error=True)
    except Exception as error:  # the bot's fault, not the files': say what failed
        return result({"error": said_failure("Reconciling", error)}, error=True)
    summary, top = done.summary, [finding.model_dump(mode="json") for finding in done.examples]
    if done.sealed_at is not None:
        context.details[tool_use_id(tool_context)] = (
            f"published the result sealed at {done.sealed_at:%Y-%m-%d %H:%M:%S} UTC"
        )
    context.result = ReconcileResult(
        counts=dict(summary.counts),
        summary=summary.model_dump(mode="json"),
        top_findings=top,
        export_digest=done.stored.digest,
        export_rows=done.exported,
    )
    return result(
        {
            "counts": summary.counts,
            "total_findings": summary.total_findings,
            "orders": summary.orders,
            "payments": summary.payments,
            "failed_attempts": summary.failed_attempts,
            "row_ledger": [ledger.line() for ledger in summary.ledger],
            "currencies": [c.model_dump(mode="json") for c in summary.currencies],
            "first_findings": top,
            "exceptions_file_rows": done.exported,
        }
    )


@tool(context=True)
def get_evidence(tool_context: ToolContext, identifier: str) -> dict[str, Any]:
    """Look up the findings that concern one order id or payment id, with their evidence.

    Only works once the investigation has been reconciled; answer questions about findings from
    this tool's results only.

    Args:
        identifier: One order id or payment id, as people write it ("#1042", "1042",
            "ch_3Nx…"); a leading "#" and the case of letters do not matter.

    Returns:
        JSON with the `identifier`, `files` (the uploaded file name of each role) and
        `findings`: each finding with its category, the order and payment ids, the 1-based
        data row numbers in each uploaded file, the currency and the expected and actual
        amounts. An empty list means no finding concerns that id.
    """
    context = context_of(tool_context)
    outcome = context.outcome
    if outcome is None or outcome.export_digest is None:
        return result(
            {"error": "This investigation has not been reconciled yet; there are no findings."},
            error=True,
        )
    files = {ref.role.value: ref.name for ref in context.files.values()}
    try:
        with context.blobs.local_copy(outcome.export_digest) as export:
            found = findings_for(export, identifier)
    except ReconbotError as error:
        return result({"error": str(error)}, error=True)
    return result({"identifier": identifier, "files": files, "findings": found})


@tool(context=True)
def explain_policy(tool_context: ToolContext, category: str | None = None) -> dict[str, Any]:
    """Explain in plain words the rule behind a finding category, or every rule.

    Quote the rules it returns, in their own words, when answering.

    Args:
        category: One finding category, spelled exactly as listed: unreadable_row,
            conflicting_duplicate_order, multi_order_payment, capture_without_order,
            duplicate_payment_row, order_without_capture, currency_mismatch, status_mismatch,
            duplicate_capture, amount_mismatch, partial_capture, over_capture,
            capture_outside_window, or "legitimate" for what is not a finding. Leave it empty
            for all rules.

    Returns:
        JSON with the `policy_version` and `rules` (each category's rule in plain words). An
        unknown category gives an error that lists the categories.
    """
    policy = context_of(tool_context).policy
    rules = policy.explanations()
    if category:
        if category not in rules:
            return result(
                {
                    "error": f'No category "{category}"; the categories are: '
                    + ", ".join([*CATEGORY_ORDER, "legitimate"])
                },
                error=True,
            )
        rules = {category: rules[category]}
    return result({"policy_version": policy.version, "rules": rules})


TOOLS = [inspect_datasets, validate_mapping, reconcile, get_evidence, explain_policy]
