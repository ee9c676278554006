"""Block Kit for every message, modal and tab the bot shows: pure functions, no I/O.

Each builder returns a `Rendered` (a top-level `text` for notifications and screen readers,
and the blocks) or a view dict. They keep within Block Kit's limits whatever the files hold:
at most 50 blocks a message, 3000 characters a section, 10 fields, 100 options a select;
long names and values are cut with an ellipsis, long lists end in "and N more".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    InputBlock,
    MarkdownTextObject,
    Option,
    PlainTextInputElement,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from agent.data.ledger import ledger_lines
from agent.data.schema import READING_OPTIONS, SCHEMA, Role
from agent.domain import (
    ApprovalRequest,
    Investigation,
    InvestigationStatusReport,
    Outcome,
    PauseKind,
    PauseState,
)
from bot.readings import describe_reading
from bot.slack.payloads import ButtonValue, ModalMetadata

MAX_BLOCKS = 50
MAX_SECTION = 3000
MAX_HEADER = 150
MAX_OPTIONS = 100
MAX_OPTION_TEXT = 75
MAX_OPTION_VALUE = 150
MAX_LIST_ITEMS = 8

APPROVE, EDIT, REJECT, RETRY, ANSWER = "approve", "edit_mapping", "reject", "retry", "answer"
INVESTIGATE_AGAIN = "investigate_again"
EDIT_VIEW, REJECT_VIEW = "edit_mapping_view", "reject_view"
REASON_BLOCK, REASON_INPUT = "reason", "reason_input"

TITLES = {
    PauseKind.CONFIRMATION: "Approval needed",
    PauseKind.CLARIFICATION: "A question before approval",
    PauseKind.BLOCKED_RECONCILE: "Reconciling is blocked until the mapping is approved",
}


@dataclass(frozen=True)
class Rendered:
    """A message: its notification text and its blocks (as dicts ready for the Web API)."""

    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)


def cut(text: str, limit: int) -> str:
    """`text` shortened to `limit` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def escape(text: str) -> str:
    """Text from a file made safe for mrkdwn (no mentions, links or formatting injected)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code(text: str, limit: int = 80) -> str:
    """Text from a file shown as inline code."""
    return "`" + escape(cut(text, limit)).replace("`", "'") + "`"


def mention(user: str) -> str:
    """A person (or a user group, `S…`) as Slack shows it."""
    return f"<!subteam^{user}>" if user.startswith("S") else f"<@{user}>"


def short_digest(digest: str) -> str:
    """`sha256:1a2b3c4d5e6f` from a full digest."""
    return digest[:19]


def when(moment: datetime) -> str:
    """A time as people read it, in UTC."""
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=cut(text, MAX_SECTION)))


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=cut(text, MAX_SECTION))])


def _listed(items: Sequence[str], limit: int = MAX_LIST_ITEMS) -> list[str]:
    shown = list(items[:limit])
    if len(items) > limit:
        shown.append(f"…and {len(items) - limit} more")
    return shown


def _dicts(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    rendered = [block.to_dict() for block in blocks]
    assert len(rendered) <= MAX_BLOCKS
    return rendered


# -- the approval request -----------------------------------------------------------------


def _files(request: ApprovalRequest) -> SectionBlock:
    lines = []
    for ref in request.files:
        rows = request.rows.get(ref.role.value)
        shown = f" · {rows:,} rows" if rows is not None else ""
        lines.append(
            f"*{ref.role.value}*: {code(ref.name)}{shown} · {ref.size:,} bytes · "
            f"`{short_digest(ref.digest)}`"
        )
    return _section("\n".join(lines))


def _mapping(request: ApprovalRequest) -> list[Block]:
    blocks: list[Block] = []
    for role in Role:
        readings = [r for r in request.fields if r.role is role]
        if not readings:
            continue
        lines = [f"*{role.value}*"]
        for reading in readings:
            if reading.column is None:
                if reading.required:
                    lines.append(f"• `{reading.field}` ← _no column found_ (required)")
                continue
            samples = ", ".join(code(s, 24) for s in reading.samples[:3])
            lines.append(
                f"• `{reading.field}` ← {code(reading.column, 60)} "
                f"({reading.confidence_percent}%)" + (f" e.g. {samples}" if samples else "")
            )
        if request.mapping is not None:
            words = escape(describe_reading(request.mapping.for_role(role)))
            lines.append(f"_Reading: {cut(words, 1500)}_")
        blocks.append(_section("\n".join(lines)))
    return blocks


def _coverage(request: ApprovalRequest) -> ContextBlock:
    mapping = (
        f" · mapping `{short_digest(request.mapping_digest)}`" if request.mapping_digest else ""
    )
    return _context(
        f"{request.investigation_id} · revision {request.revision} · request {request.pause_id}"
        f" · inputs `{short_digest(request.input_identity)}`{mapping}"
        f" · policy `{short_digest(request.policy_version)}`"
        f" · requested by {mention(request.requested_by)}"
        f" · expires {when(request.expires_at)}"
    )


def _clarifications(request: ApprovalRequest) -> list[Block]:
    blocks: list[Block] = []
    for number, question in enumerate(request.clarifications[:5]):
        text = f":question: {escape(question.question)}"
        choices = [c for c in question.choices if len(c) <= MAX_OPTION_VALUE][:MAX_OPTIONS]
        # The one question without a field asks which file is the orders export.
        role, field = question.role, question.field
        if role is None and field is None and choices:
            role, field = Role.ORDERS, "orders_file"
        if role is None or field is None or not choices:
            if question.choices:
                text += "\nChoices: " + ", ".join(code(c, 40) for c in _listed(question.choices))
            blocks.append(_section(text))
            continue
        select = StaticSelectElement(
            action_id=f"{ANSWER}:{number}",
            placeholder="Choose a file" if field == "orders_file" else "Choose a column",
            options=[
                Option(
                    value=f"{role.value}.{field}={c}"[:MAX_OPTION_VALUE],
                    label=cut(c, MAX_OPTION_TEXT),
                )
                for c in choices
            ],
        )
        blocks.append(
            SectionBlock(
                block_id=f"{ANSWER}:{number}",
                text=MarkdownTextObject(text=cut(text, MAX_SECTION)),
                accessory=select,
            )
        )
    return blocks


def _buttons(request: ApprovalRequest) -> ActionsBlock:
    value = ButtonValue(request.pause_id, request.authorization_identity).encode()
    elements = []
    if request.approvable:
        elements.append(
            ButtonElement(
                text="Approve",
                action_id=APPROVE,
                value=value,
                style="primary",
                confirm=ConfirmObject(
                    title="Approve this mapping?",
                    text=cut(
                        f"Reconcile revision {request.revision} of {request.investigation_id} "
                        "with the mapping shown. The approval covers exactly these files and "
                        "this mapping.",
                        300,
                    ),
                    confirm="Approve",
                    deny="Cancel",
                ),
            )
        )
    elements.append(ButtonElement(text="Edit mapping", action_id=EDIT, value=value))
    elements.append(ButtonElement(text="Reject", action_id=REJECT, value=value, style="danger"))
    return ActionsBlock(block_id="decision", elements=elements)


def request_body(request: ApprovalRequest) -> list[Block]:
    """The blocks that describe a request (shared by the live message and its final states)."""
    blocks: list[Block] = [
        HeaderBlock(text=cut(f"{TITLES[request.kind]} · {request.investigation_id}", MAX_HEADER)),
        _section(escape(request.message)),
        _files(request),
        *_mapping(request),
    ]
    if request.problems:
        blocks.append(
            _section(
                "*Problems*\n"
                + "\n".join(f"• {escape(cut(p, 300))}" for p in _listed(request.problems))
            )
        )
    if request.warnings:
        blocks.append(
            _section(
                "*Notes*\n"
                + "\n".join(f"• {escape(cut(w, 300))}" for w in _listed(request.warnings))
            )
        )
    blocks.append(_coverage(request))
    return blocks


def approval_message(request: ApprovalRequest) -> Rendered:
    """The request as posted: what it covers, and Approve / Edit mapping / Reject."""
    blocks = request_body(request)
    blocks.extend(_clarifications(request))
    blocks.append(_buttons(request))
    verb = "approve" if request.approvable else "answer"
    return Rendered(
        f"{TITLES[request.kind]} for {request.investigation_id} (revision {request.revision}): "
        f"please {verb} how the files are read.",
        _dicts(blocks),
    )


def decided_message(request: ApprovalRequest, line: str) -> Rendered:
    """The request after a decision or a change: the same description, a status line, no buttons."""
    blocks = request_body(request)
    blocks.append(DividerBlock())
    blocks.append(_section(line))
    return Rendered(f"{request.investigation_id}: {_plain(line)}", _dicts(blocks))


def _plain(line: str) -> str:
    """A mrkdwn line as notification text (bold marks dropped; emoji and codes kept)."""
    return line.replace("*", "")


def approved_line(user: str) -> str:
    """The status line of a request being reconciled."""
    return f":hourglass_flowing_sand: *Approved by {mention(user)}*, reconciling…"


def state_line(state: PauseState, *, newest_revision: int | None = None) -> str:
    """The status line of a request in a terminal state, in words."""
    who = mention(state.decided_by) if state.decided_by and state.decided_by != "reconbot" else ""
    at = f" at {when(state.decided_at)}" if state.decided_at else ""
    status = state.status.value
    if status == "consumed":
        return f":white_check_mark: *Approved by {who}*{at}; reconciled (results below)."
    if status == "claimed":
        return approved_line(state.decided_by or "reconbot")
    if status == "rejected":
        reason = f": {escape(state.reason)}" if state.reason else ""
        return f":x: *Rejected by {who}*{at}{reason}"
    if status == "superseded":
        revision = f"revision {newest_revision}" if newest_revision else "a newer request"
        return (
            f":arrows_counterclockwise: *Superseded by {revision}*; decide on the newest request."
        )
    if status == "expired":
        return (
            ":hourglass: *Expired* without a decision; upload the files again for a fresh request."
        )
    if status == "failed":
        return f":warning: *Approved by {who}*, but the reconciliation failed; retry below."
    return f"Status: {status}"


def edited_line(user: str) -> str:
    """The status line of a request replaced by an edit."""
    return f":pencil2: *Edited by {mention(user)}*; the new proposal is below."


# -- progress, results, failures, refusals -------------------------------------------------

TOOL_WORDS = {
    "inspect_datasets": "inspected the files",
    "validate_mapping": "checked the proposed mapping on every row",
    "reconcile": "reconciled",
    "get_evidence": "looked up the evidence",
    "explain_policy": "read the policy",
}


def progress_message(names: Sequence[str], done: Sequence[str]) -> Rendered:
    """The one progress message of a thread: what the agent has done so far."""
    files = ", ".join(code(n, 60) for n in names)
    steps = [TOOL_WORDS.get(d, d.replace("_", " ")) for d in done]
    status = ("; ".join(steps[-4:]) + "…") if steps else "reading the files…"
    text = f":mag: Investigating {files}: {status}"
    return Rendered(_plain(text), _dicts([_section(text)]))


def note(text: str) -> Rendered:
    """A plain message in the thread (already written for people)."""
    return Rendered(_plain(text), _dicts([_section(text)]))


def problem_message(text: str, *, retry: str | None = None) -> Rendered:
    """A file or workflow problem, in words, in the thread; with `retry` (an investigation
    id), a button to investigate it again (the model was busy or did not answer)."""
    rendered = note(f":warning: {escape(text)}")
    if retry is None:
        return rendered
    button = ActionsBlock(
        block_id="again",
        elements=[ButtonElement(text="Try again", action_id=INVESTIGATE_AGAIN, value=retry[:2000])],
    )
    return Rendered(rendered.text, [*rendered.blocks, button.to_dict()])


def _finding_line(finding: dict[str, Any]) -> str:
    orders = ", ".join(finding.get("order_ids") or []) or "-"
    payments = ", ".join(finding.get("payment_ids") or []) or "-"
    currency = finding.get("currency") or ""
    expected = finding.get("expected") or "nothing"
    actual = finding.get("actual") or "nothing"
    where = "; ".join(
        f"{e['file']} rows {', '.join(str(r) for r in e['rows'][:10])}"
        + (" …" if len(e["rows"]) > 10 else "")
        for e in finding.get("evidence") or []
    )
    return (
        f"• *{finding.get('category')}*: orders {code(orders, 120)}, "
        f"payments {code(payments, 120)};"
        f" expected {escape(expected)} {currency}, found {escape(actual)} {currency}"
        + (f" ({escape(where)})" if where else "")
    )


def results_message(outcome: Outcome, user: str) -> Rendered:
    """The outcome in the thread: counts per category, the first findings with evidence."""
    total = sum(outcome.counts.values())
    summary = outcome.summary
    head = (
        f":white_check_mark: *Reconciled* revision {outcome.revision} of "
        f"{outcome.investigation_id}, approved by {mention(user)}: "
        f"{summary.get('orders', '?')} orders against {summary.get('payments', '?')} payments, "
        f"*{total} exceptions*."
    )
    counts = [f"{name}: *{count}*" for name, count in sorted(outcome.counts.items()) if count]
    blocks: list[Block] = [_section(head)]
    if counts:
        blocks.append(SectionBlock(fields=[MarkdownTextObject(text=c) for c in counts[:10]]))
    lines = [_finding_line(f) for f in outcome.top_findings[:10]]
    if lines:
        text = "*First findings, with where they are in your files*\n"
        body = ""
        for line in lines:
            if len(text) + len(body) + len(line) + 1 > MAX_SECTION:
                break
            body += line + "\n"
        blocks.append(_section(text + body))
    ledger = ledger_lines(summary)
    if ledger:
        blocks.append(
            _section(
                "*Every row accounted for*\n" + "\n".join(f"• {escape(line)}" for line in ledger)
            )
        )
    blocks.append(
        _context(
            f"The exceptions file lists all {outcome.export_rows} rows · mapping "
            f"`{short_digest(outcome.mapping_digest)}` · inputs "
            f"`{short_digest(outcome.input_identity)}` · ask me about any finding in this thread"
        )
    )
    return Rendered(f"Reconciled {outcome.investigation_id}: {total} exceptions.", _dicts(blocks))


def failure_message(request: ApprovalRequest, error: str) -> Rendered:
    """A failed resumed phase: what happened, and a button to try again."""
    value = ButtonValue(request.pause_id, request.authorization_identity).encode()
    text = (
        f":warning: The reconciliation of {request.investigation_id} failed: "
        f"{escape(cut(error, 500))}"
        "\nThe approval is still recorded; retry when ready."
    )
    return Rendered(
        _plain(text),
        _dicts(
            [
                _section(text),
                ActionsBlock(
                    block_id="retry",
                    elements=[
                        ButtonElement(text="Retry", action_id=RETRY, value=value, style="primary")
                    ],
                ),
            ]
        ),
    )


def refusal_message(
    reason: str, words: str, *, who_may: str = "", people: Sequence[str] = ()
) -> Rendered:
    """A refused click, for the clicker alone: why, in words, and the reason code.

    `people` are the user ids the words may name (who decided, who asked), shown as mentions.
    """
    text = f":no_entry: {escape(words)}"
    for person in people:
        text = re.sub(rf"\b{re.escape(person)}\b", mention(person), text)
    if who_may:
        text += f"\nWho may approve: {who_may}"
    text += f"\n_Reason: {reason}_"
    return Rendered(_plain(text), _dicts([_section(text)]))


def who_may_approve(approvers: Sequence[str], requester: str, self_approval: bool) -> str:
    """The approver policy as Slack mentions."""
    who = ", ".join(mention(a) for a in approvers) if approvers else "anyone in the channel"
    return who if self_approval else f"{who}, except the requester ({mention(requester)})"


def answer_message(text: str) -> Rendered:
    """The agent's answer to a question in the thread."""
    return Rendered(cut(text, 3000), _dicts([_section(escape(text))]))


# -- modals -------------------------------------------------------------------------------


def reject_modal(request: ApprovalRequest, metadata: ModalMetadata) -> dict[str, Any]:
    """The Reject modal: a required reason."""
    view = View(
        type="modal",
        callback_id=REJECT_VIEW,
        title="Reject the request",
        submit="Reject",
        close="Cancel",
        private_metadata=metadata.encode(),
        blocks=[
            _section(
                f"Reject revision {request.revision} of {request.investigation_id}? "
                "Nothing will be reconciled; the reason is recorded."
            ),
            InputBlock(
                block_id=REASON_BLOCK,
                label="Reason",
                element=PlainTextInputElement(
                    action_id=REASON_INPUT, multiline=True, min_length=1, max_length=500
                ),
            ),
        ],
    )
    return view.to_dict()


def loading_modal(title: str) -> dict[str, Any]:
    """A modal shown at once while the real one is prepared (trigger ids last 3 s)."""
    return View(
        type="modal",
        title=cut(title, 24),
        close="Cancel",
        blocks=[_section(":hourglass_flowing_sand: Reading the files…")],
    ).to_dict()


def message_modal(title: str, text: str) -> dict[str, Any]:
    """A modal that only says something (a problem preparing a form)."""
    return View(
        type="modal", title=cut(title, 24), close="Close", blocks=[_section(escape(text))]
    ).to_dict()


def field_block_id(role: Role, name: str) -> str:
    """The block id of a field's select in the edit modal."""
    return f"{role.value}.{name}"


OPTIONS_BLOCK_PREFIX = "options."
OPTIONS_INPUT = "options"


def options_block_id(role: Role) -> str:
    """The block id of a file's reading-options text input in the edit modal."""
    return f"{OPTIONS_BLOCK_PREFIX}{role.value}"


def options_hint() -> str:
    """What a person may write in the reading-options input: one `name=value` per line."""
    names = "; ".join(f"{name}: {help_text}" for name, help_text in READING_OPTIONS.items())
    return cut(f"One per line, name=value. {names}", 2000)


def edit_modal(
    request: ApprovalRequest, columns: dict[Role, list[str]], metadata: ModalMetadata
) -> dict[str, Any]:
    """The Edit mapping modal: a select per canonical field, preset to the proposed column, and
    per file a text input for reading options (`id_prefix=WC-`, one per line).

    Option values are column positions, so any header fits; a file with more than 100
    columns offers the proposed and alternative columns first.
    """
    current = {(r.role, r.field): r for r in request.fields}
    blocks: list[Block] = [
        _section(
            f"Choose the column for each field of revision {request.revision}. The edited "
            "mapping is validated on every row and comes back as a new request to approve."
        )
    ]
    for role in Role:
        header = columns.get(role, [])
        blocks.append(
            HeaderBlock(text=cut(f"{role.value} · {_file_name(request, role)}", MAX_HEADER))
        )
        for spec in SCHEMA[role]:
            reading = current.get((role, spec.name))
            preferred = [reading.column] if reading and reading.column else []
            preferred += reading.alternatives if reading else []
            order = [c for c in preferred if c in header]
            order += [c for c in header if c not in order]
            options = [
                Option(value=str(header.index(c)), label=cut(c, MAX_OPTION_TEXT))
                for c in order[:MAX_OPTIONS]
            ]
            if not options:
                continue
            chosen = reading.column if reading and reading.column in header else None
            select = StaticSelectElement(
                action_id="column",
                placeholder="Choose a column",
                options=options,
                initial_option=next(
                    (o for o in options if chosen and o.value == str(header.index(chosen))), None
                ),
            )
            blocks.append(
                InputBlock(
                    block_id=field_block_id(role, spec.name),
                    label=cut(f"{spec.name}{' (required)' if spec.required else ''}", 2000),
                    element=select,
                    optional=True,
                    hint=cut(spec.description, 2000) if spec.description else None,
                )
            )
        blocks.append(
            InputBlock(
                block_id=options_block_id(role),
                label=f"Reading options for {role.value}",
                element=PlainTextInputElement(
                    action_id=OPTIONS_INPUT,
                    multiline=True,
                    placeholder=cut("e.g. " + next(iter(READING_OPTIONS), "name") + "=value", 150),
                ),
                optional=True,
                hint=options_hint(),
            )
        )
    return View(
        type="modal",
        callback_id=EDIT_VIEW,
        title="Edit the mapping",
        submit="Propose",
        close="Cancel",
        private_metadata=metadata.encode(),
        blocks=blocks[:100],
    ).to_dict()


def _file_name(request: ApprovalRequest, role: Role) -> str:
    return next((ref.name for ref in request.files if ref.role is role), "")


# -- status, list, help, home --------------------------------------------------------------


def status_message(report: InvestigationStatusReport) -> Rendered:
    """`/recon status`: the saved state, each request as written, decisions and the outcome."""
    inv = report.investigation
    blocks: list[Block] = [
        HeaderBlock(text=cut(f"{inv.id} · {inv.status.value.replace('_', ' ')}", MAX_HEADER)),
        _context(
            f"requested by {mention(inv.requested_by)} · {when(inv.created_at)} · "
            f"revision {inv.revision}"
        ),
    ]
    for revision in report.revisions[-3:]:
        files = ", ".join(
            f"{role.value} {code(ref.name, 60)} `{short_digest(ref.digest)}`"
            for role, ref in sorted(revision.files.items())
        )
        blocks.append(_section(f"*Revision {revision.number}*: {files}"))
    for state in report.pauses[-5:]:
        request = state.request
        blocks.append(
            _section(
                f"*{request.pause_id}* ({request.kind.value}, revision {request.revision}): "
                f"{state_line(state)}"
            )
        )
    refused = [d for d in report.decisions if not d.accepted]
    if refused:
        lines = [
            f"• {mention(d.actor)} {d.action} {d.pause_id}: {d.refusal} at {when(d.at)}"
            for d in refused[-5:]
        ]
        blocks.append(_section("*Refused decisions*\n" + "\n".join(lines)))
    if report.outcome is not None:
        outcome = report.outcome
        counts = ", ".join(f"{k} {v}" for k, v in sorted(outcome.counts.items()) if v)
        blocks.append(
            _section(
                f"*Outcome* of {outcome.pause_id}: {sum(outcome.counts.values())} exceptions"
                + (f" ({counts})" if counts else "")
            )
        )
    return Rendered(f"{inv.id}: {inv.status.value}", _dicts(blocks))


def list_message(investigations: Sequence[Investigation], *, where: str) -> Rendered:
    """`/recon list`: the recent investigations of a channel."""
    if not investigations:
        return note(f"No investigations {where} yet. Drop an orders and a payments CSV here.")
    lines = [
        f"• *{inv.id}* · {inv.status.value.replace('_', ' ')} · revision {inv.revision} · "
        f"{mention(inv.requested_by)} · {when(inv.created_at)}"
        for inv in investigations[:20]
    ]
    return Rendered(
        f"{len(investigations)} recent investigations",
        _dicts([_section(f"*Recent investigations {where}*\n" + "\n".join(lines))]),
    )


HELP = (
    "*reconbot* reconciles an orders export against a captured-payments export.\n"
    "1. Drop both CSVs into a channel (one message, or one after the other in my thread).\n"
    "2. I propose how to read them and ask for approval: *Approve*, *Edit mapping* or *Reject*.\n"
    "3. After approval I reconcile and post the exceptions, with rows and ids, in the thread.\n"
    "Ask me about any finding in the thread. Commands: `/recon status INV-…`, `/recon list`, "
    "`/recon help`."
)


def help_message() -> Rendered:
    """`/recon help` and a mention outside any investigation."""
    return note(HELP)


def home_view(investigations: Sequence[Investigation]) -> dict[str, Any]:
    """The App Home tab: what reconbot does and the recent investigations."""
    blocks: list[Block] = [HeaderBlock(text="reconbot"), _section(HELP), DividerBlock()]
    if investigations:
        for inv in investigations[:20]:
            where = f" in <#{inv.channel}>" if inv.channel else ""
            blocks.append(
                _section(
                    f"*{inv.id}* · {inv.status.value.replace('_', ' ')} · revision "
                    f"{inv.revision}{where} · {mention(inv.requested_by)} · {when(inv.created_at)}"
                )
            )
    else:
        blocks.append(_section("No investigations yet."))
    return View(type="home", blocks=blocks[:100]).to_dict()
