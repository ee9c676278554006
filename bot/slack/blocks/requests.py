"""The approval request: the message with Approve / Edit mapping / Reject (and a select per
clarification), and the same description with a status line once it is decided or replaced."""

from __future__ import annotations

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    Option,
    SectionBlock,
    StaticSelectElement,
)

from agent.approval import approval_parties, requesters_of
from agent.data.schema import Role
from agent.domain import ApprovalRequest, PauseKind, PauseState
from bot.presentation.readings import ASKED, asked_of, describe_reading, routine_line, shown_reading
from bot.presentation.request_text import TITLES
from bot.presentation.text import cell
from bot.slack.blocks.common import (
    MAX_BLOCK_ID,
    MAX_BLOCKS,
    MAX_HEADER,
    MAX_OPTION_TEXT,
    MAX_OPTION_VALUE,
    MAX_OPTIONS,
    MAX_SECTION,
    Rendered,
    code,
    context,
    cut,
    cut_middle,
    dicts,
    escape,
    mention,
    packed,
    person,
    plain,
    preformatted,
    section,
    short_digest,
    when,
    whole,
)
from bot.slack.blocks.policy import policy_change_body, policy_change_message
from bot.slack.ids import ANSWER, APPROVE, EDIT, REJECT
from bot.slack.payloads import AnswerBlockId, ButtonValue

_SECTIONS = 6
"""Sections one part of a request may take (each up to Block Kit's 3,000 characters): the
whole message stays within Slack's 50 blocks."""
_QUESTIONS = 8
"""Questions a message shows, each with its menu."""


def request_file_name(request: ApprovalRequest) -> str:
    """The name of the text file that holds the whole request when its message cannot."""
    return f"request-{request.pause_id}.txt"


class _Cuts(list[str]):
    """The parts of a request its message could not hold whole, and where they all are."""

    def __init__(self, request: ApprovalRequest, *, posted: bool = True) -> None:
        super().__init__()
        self.where = (
            f"every one is in the file `{request_file_name(request)}` posted in this thread"
            if posted
            else f"they could not be posted as a file here; `reconbot status "
            f"{request.investigation_id} --json` shows every one"
        )


def request_overflows(request: ApprovalRequest) -> bool:
    """Whether the message leaves out part of the request (a long reading, many notes, many
    questions or choices): then the whole request goes with it as a text file, and the
    message says so where it stops. A policy change never does (a dozen rules at most)."""
    if request.kind is PauseKind.POLICY_CHANGE:
        return False
    cuts = _Cuts(request)
    body = _described(request, cuts)
    _clarifications(request, cuts, MAX_BLOCKS - len(body) - 1)
    return bool(cuts)


def _files(request: ApprovalRequest) -> SectionBlock:
    lines = []
    for ref in request.files:
        rows = request.rows.get(ref.role.value)
        shown = f" · {rows:,} rows" if rows is not None else ""
        lines.append(
            f"*{ref.role.value}*: {whole(ref.name)}{shown} · {ref.size:,} bytes · "
            f"`{short_digest(ref.digest)}`"
        )
    return section("\n".join(lines))


def _packed(
    request: ApprovalRequest, title: str, lines: list[str], budget: int, cuts: _Cuts
) -> list[Block]:
    """`packed` for a part of the request, noting in `cuts` when it did not fit."""
    return packed(title, lines, budget, cuts.where, cuts)


def _mapping(request: ApprovalRequest, cuts: _Cuts) -> list[Block]:
    """A section per file: each field's column (what a question asks marked so, the question
    itself below) and how the file is read; a request with no mapping to approve shows the
    reading proposed so far, said to be so."""
    blocks: list[Block] = []
    for role in Role:
        readings = [r for r in request.fields if r.role is role]
        shown = shown_reading(request, role)
        if not readings and shown is None:
            continue
        asked = asked_of(shown)
        lines = [f"*{role.value}*" + ("" if request.approvable else " (proposed so far)")]
        for reading in readings:
            if reading.field in asked:
                lines.append(f"• `{reading.field}` ← *{ASKED}*")
                continue
            if reading.column is None:
                if reading.required:
                    lines.append(f"• `{reading.field}` ← _no column found_ (required)")
                continue
            samples = ", ".join(code(s, 24) for s in reading.samples[:3])
            lines.append(
                f"• `{reading.field}` ← {whole(reading.column)} "
                f"({reading.confidence_percent}%)" + (f" e.g. {samples}" if samples else "")
            )
        if shown is not None:  # every option, word and meaning bound: never cut, shown literally
            lines.extend(["Reading:", *preformatted(describe_reading(shown))])
        blocks.extend(_packed(request, "", lines, _SECTIONS, cuts))
    if not blocks and request.kind is PauseKind.CLARIFICATION:
        blocks.append(section("_No reading could be proposed yet: the problem below comes first._"))
    return blocks


def _made_by(request: ApprovalRequest, cuts: _Cuts) -> list[Block]:
    """Who uploaded each revision and what each edit changed, word for word: an edit of the
    reading is what the approver must weigh, whoever made it."""
    if not request.provenance:
        return []
    people = sorted(set(request.requesters), key=len, reverse=True)
    lines = []
    for line in request.provenance:
        shown = escape(cell(line))
        for maker in people:
            shown = shown.replace(f"by {escape(maker)}", f"by {person(maker)}")
        lines.append(f"• {shown}")
    return _packed(request, "*Made by*", lines, 2, cuts)


def _coverage(request: ApprovalRequest) -> ContextBlock:
    mapping = (
        f" · mapping `{short_digest(request.mapping_digest)}`" if request.mapping_digest else ""
    )
    return context(
        f"{request.investigation_id} · revision {request.revision} · request {request.pause_id}"
        f" · inputs `{short_digest(request.input_identity)}`{mapping}"
        f" · policy `{short_digest(request.policy_version)}`"
        f" · requested by {person(request.requested_by)}"
        f"{_makers(request)}"
        f" · expires {when(request.expires_at)}"
    )


def _makers(request: ApprovalRequest) -> str:
    """Who else made this request (replaced a file, edited the reading): four-eyes excludes
    them all, so the request says who they are."""
    others = [u for u in request.requesters if u != request.requested_by]
    if not others:
        return ""
    edited = {who for who, _ in request.edits}
    words = [f"{person(u)} ({'edited' if u in edited else 'uploaded'})" for u in others]
    return " · also made by " + ", ".join(words)


def _clarifications(request: ApprovalRequest, cuts: _Cuts, room: int) -> list[Block]:
    """A section per question; a question about one field is answered with a select whose
    block id says which request it answers (`AnswerBlockId`) and whose option values are
    `role.field=column`. A choice no menu can hold is listed whole in the question's text;
    questions past the message's `room` (blocks) are counted, with where they all are."""
    button = ButtonValue(request.pause_id, request.authorization_identity)
    blocks: list[Block] = []
    shown = 0
    for number, question in enumerate(request.clarifications[:_QUESTIONS]):
        if len(blocks) + 3 > room:  # two sections at most, and the line saying what is left
            break
        shown += 1
        text = f":question: {escape(question.question)}"
        # The one question without a field asks which file is the orders export.
        role, field = question.role, question.field
        if role is None and field is None and question.choices:
            role, field = Role.ORDERS, "orders_file"
        prefix = f"{role.value if role else ''}.{field}="
        fits = [c for c in question.choices if len(prefix + c) <= MAX_OPTION_VALUE]
        choices = fits[:MAX_OPTIONS]
        unlisted = [c for c in question.choices if c not in choices]
        block_id = AnswerBlockId(number, button).encode()
        if role is None or field is None or not choices or len(block_id) > MAX_BLOCK_ID:
            if question.choices:
                text += "\nChoices: " + ", ".join(whole(c) for c in question.choices)
            blocks.extend(_packed(request, "", [text], 2, cuts))
            continue
        if unlisted:
            text += "\nAlso (type it in *Edit mapping*): " + ", ".join(whole(c) for c in unlisted)
        if any(len(c) > MAX_OPTION_TEXT for c in choices):  # the menu shows them cut: in full
            text += "\nIn full: " + ", ".join(whole(c) for c in choices)
        if len(text) > MAX_SECTION:  # the menu's section holds the start; the file, all
            cuts.append("question")
            more = f"\n…the rest of this question: {cuts.where}"
            text = cut(text, MAX_SECTION - len(more)) + more
        select = StaticSelectElement(
            action_id=f"{ANSWER}:{number}",
            placeholder="Choose a file" if field == "orders_file" else "Choose a column",
            options=[
                Option(
                    value=prefix + c,
                    label=cut_middle(cell(c), MAX_OPTION_TEXT),
                )
                for c in choices
            ],
        )
        blocks.append(
            SectionBlock(
                block_id=block_id,
                text=MarkdownTextObject(text=cut(text, MAX_SECTION)),
                accessory=select,
            )
        )
    left = len(request.clarifications) - shown
    if left > 0:
        cuts.append("questions")
        blocks.append(section(f"…and {left:,} more questions: {cuts.where}"))
    return blocks


def _buttons(request: ApprovalRequest, *, approvable: bool) -> ActionsBlock:
    value = ButtonValue(request.pause_id, request.authorization_identity).encode()
    elements = []
    if approvable:
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
    if request.kind is PauseKind.POLICY_CHANGE:
        return policy_change_body(request)
    return _described(request, _Cuts(request))


def _described(request: ApprovalRequest, cuts: _Cuts) -> list[Block]:
    """`request_body`, noting in `cuts` each part the message could not hold whole. The
    order is what a person must weigh first: problems, warnings, then the notes on how
    values are read, then the routine counts in one line."""
    blocks: list[Block] = [
        HeaderBlock(text=cut(f"{TITLES[request.kind]} · {request.investigation_id}", MAX_HEADER)),
        *_packed(request, "", [escape(request.message)], 2, cuts),
        _files(request),
        *_mapping(request, cuts),
        *_made_by(request, cuts),
    ]
    parts = (
        ("*Problems*", request.problems),
        (":warning: *Warnings*", request.warnings),
        ("*Notes*", request.notes),
    )
    for title, lines in parts:
        if lines:
            bullets = [f"• {escape(line)}" for line in lines]
            blocks.extend(_packed(request, title, bullets, _SECTIONS, cuts))
    if request.routine:
        blocks.extend(_packed(request, "", [f"_{escape(routine_line(request))}_"], 2, cuts))
    stuck = _nobody_may_approve(request)
    if stuck:
        blocks.append(section(stuck))
    blocks.append(_coverage(request))
    return blocks


def _nobody_may_approve(request: ApprovalRequest) -> str:
    """What to do when every approver named made this request (four-eyes leaves nobody), in
    words (`approval_parties`, the guard's rule); "" when someone may approve."""
    allowed, _ = approval_parties(request.approver_policy, requesters_of(request))
    if allowed != []:
        return ""
    people = ", ".join(mention(a) for a in dict.fromkeys(request.approver_policy.approvers))
    return (
        f":warning: *Nobody may approve this request*: every approver named ({people}) made "
        "it, and nobody approves their own. Ask an admin to add an approver (the "
        "`RECONBOT_APPROVERS` setting), or withdraw it (Reject) and have someone else upload "
        "the files."
    )


NOT_WHOLE = (
    ":warning: *Approve is held back*: this request is longer than one message, and its whole "
    "text could not be posted in this thread, so not everything it would approve can be shown "
    "here. Edit the mapping, or reject it and upload the files again, for a new request; "
    "`reconbot status {investigation} --json` shows all of it."
)


def approval_message(request: ApprovalRequest, *, whole_shown: bool = True) -> Rendered:
    """The request as posted: what it covers, and Approve / Edit mapping / Reject; with
    `whole_shown` False (a request its message cannot hold, whose whole text could not be
    posted beside it) without Approve, saying why: nobody approves what they cannot see. A
    policy change: `policy.policy_change_message`."""
    if request.kind is PauseKind.POLICY_CHANGE:
        return policy_change_message(request)
    cuts = _Cuts(request, posted=whole_shown)
    blocks = _described(request, cuts)
    if not whole_shown:
        blocks.append(section(NOT_WHOLE.format(investigation=request.investigation_id)))
    blocks.extend(_clarifications(request, cuts, MAX_BLOCKS - len(blocks) - 1))
    blocks.append(_buttons(request, approvable=request.approvable and whole_shown))
    verb = "approve" if request.approvable else "answer"
    return Rendered(
        f"{TITLES[request.kind]} for {request.investigation_id} (revision {request.revision}): "
        f"please {verb} how the files are read.",
        dicts(blocks),
    )


def decided_message(request: ApprovalRequest, line: str) -> Rendered:
    """The request after a decision or a change: the same description, a status line, no buttons."""
    blocks = request_body(request)
    blocks.append(DividerBlock())
    blocks.append(section(line))
    return Rendered(f"{request.investigation_id}: {plain(line)}", dicts(blocks))


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
