"""What a decision leads to: the results of a reconciliation (its exceptions file, and how it
was computed), a failure with a retry button, a refusal for the clicker alone, and the
agent's answers. Amounts go through `agent.data.money.format_money`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    MarkdownTextObject,
    SectionBlock,
)

from agent.approval import approval_parties, parties_in_words
from agent.data.ledger import ledger_lines
from agent.data.money import format_money
from agent.domain import ApprovalRequest, ApproverPolicy, Outcome, ToolExecution, phase_runs
from bot.presentation.text import cell
from bot.slack.blocks.common import (
    MAX_BLOCKS,
    MAX_SECTION,
    Rendered,
    context,
    cut,
    dicts,
    escape,
    mention,
    packed,
    plain,
    section,
    short_digest,
    whole,
)
from bot.slack.blocks.trace import approval_words, computed_line
from bot.slack.ids import RETRY
from bot.slack.payloads import ButtonValue

MAY_NOT_DECIDE = "You may not decide this request."
MAX_FIELDS = 10
"""Slack's limit on the fields of one section block."""
_ROWS_SHOWN = 10
"""Rows of a finding's evidence named in its line; the rest are counted, and all are in the
exceptions file."""
_MORE_ROOM = 80
"""Room kept in the findings' section for the line that says how many more there are."""
INTERNAL_FAILURE = "an internal error"
RESTARTED_WHILE_RECONCILING = "the bot restarted while reconciling"
_SLACK_ID = re.compile(r"[UW][A-Z0-9]{2,20}")
"""A Slack user id: only such an id in a refusal's words becomes a mention (never the
system actor `reconbot`, never a value)."""


@dataclass(frozen=True)
class ExceptionsFile:
    """How the exceptions file of an outcome is named and introduced in the thread."""

    filename: str
    title: str
    comment: str


def _first(items: list[Any]) -> tuple[str, str]:
    """The first `_ROWS_SHOWN` of a finding's ids or rows, joined, and how many more there
    are, with where they all are ("" when none)."""
    more = len(items) - _ROWS_SHOWN
    said = f" and {more:,} more (in the exceptions file)" if more > 0 else ""
    return ", ".join(str(i) for i in items[:_ROWS_SHOWN]), said


def _ids(ids: list[Any]) -> str:
    """A finding's ids, each whole, the first `_ROWS_SHOWN` of them; the rest counted."""
    if not ids:
        return "`-`"
    shown, more = _first(ids)
    return whole(shown) + more


def _finding_line(finding: dict[str, Any]) -> str:
    """One finding as a line; every value in it (ids, amounts, currency, file names, even the
    category) comes from the files and is escaped."""
    orders = _ids(finding.get("order_ids") or [])
    payments = _ids(finding.get("payment_ids") or [])
    currency = cell(str(finding.get("currency") or ""))
    expected = escape(format_money(finding.get("expected"), currency))
    actual = escape(format_money(finding.get("actual"), currency))
    where = "; ".join(
        f"{e['file']} rows " + "".join(_first(e["rows"])) for e in finding.get("evidence") or []
    )
    return (
        f"• *{escape(str(finding.get('category')))}*: orders {orders}, "
        f"payments {payments};"
        f" expected {expected}, found {actual}" + (f" ({escape(where)})" if where else "")
    )


def results_message(outcome: Outcome, user: str, trace: Sequence[ToolExecution] = ()) -> Rendered:
    """The outcome in the thread: counts per category, examples with evidence (the largest of
    each category first: `Reconciliation.examples`), and
    how it was computed: `trace` (the agent's recorded tool executions of the case) summed up
    per phase run, with the approval by `user` that bound the reconciliation."""
    total = sum(outcome.counts.values())
    summary = outcome.summary
    orders = escape(_count(summary.get("orders", "?")))
    payments = escape(_count(summary.get("payments", "?")))
    head = (
        f":white_check_mark: *Reconciled* revision {outcome.revision} of "
        f"{outcome.investigation_id}, approved by {mention(user)}: "
        f"{orders} orders against {payments} payments, *{total:,} findings*."
    )
    blocks: list[Block] = [section(head), *category_sections(outcome.counts)]
    lines = [_finding_line(f) for f in outcome.top_findings]
    if lines or total:
        text = (
            "*Examples, the largest of each category first, with where they are in your files*\n"
            if lines
            else ""
        )
        body = ""
        shown = 0
        for line in lines:
            if len(text) + len(body) + len(line) + 1 > MAX_SECTION - _MORE_ROOM:
                break
            body += line + "\n"
            shown += 1
        if total > shown:
            body += f"…and {total - shown:,} more findings, every one in the exceptions file."
        body = body or "Every finding is in the exceptions file."
        blocks.append(section(text + body))
    ledger = ledger_lines(summary)
    if ledger:
        blocks.append(
            section(
                "*Every row accounted for*\n" + "\n".join(f"• {escape(line)}" for line in ledger)
            )
        )
    blocks.append(
        context(
            f"The exceptions file lists all {outcome.export_rows:,} rows · mapping "
            f"`{short_digest(outcome.mapping_digest)}` · inputs "
            f"`{short_digest(outcome.input_identity)}` · ask me about any finding in this thread"
        )
    )
    approval = approval_words(
        user, outcome.pause_id, outcome.input_identity, outcome.mapping_digest
    )
    blocks.append(context(computed_line(outcome.investigation_id, phase_runs(trace), approval)))
    return Rendered(f"Reconciled {outcome.investigation_id}: {total:,} findings.", dicts(blocks))


def category_sections(counts: dict[str, int]) -> list[Block]:
    """Every category with findings and its count, as sections of fields (Slack shows at most
    `MAX_FIELDS` fields in one section): none is left out, whatever their number."""
    fields = [f"{escape(name)}: *{count:,}*" for name, count in sorted(counts.items()) if count]
    return [
        SectionBlock(fields=[MarkdownTextObject(text=c) for c in fields[at : at + MAX_FIELDS]])
        for at in range(0, len(fields), MAX_FIELDS)
    ]


def _count(value: object) -> str:
    """A count of rows as people read it (`2,612`); anything else as it is."""
    return f"{value:,}" if isinstance(value, int) else str(value)


def exceptions_file(outcome: Outcome) -> ExceptionsFile:
    """The exceptions file uploaded after the results."""
    return ExceptionsFile(
        filename=outcome.exceptions_file_name,
        title=f"Exceptions of {outcome.investigation_id}, revision {outcome.revision}",
        comment=(
            f"Every finding, then the rows ignored with their reasons ({outcome.export_rows:,} "
            "rows), with file rows and ids."
        ),
    )


def failure_message(request: ApprovalRequest, error: str) -> Rendered:
    """A failed resumed phase: what happened, and a button to try again."""
    value = ButtonValue(request.pause_id, request.authorization_identity).encode()
    text = (
        f":warning: The reconciliation of {request.investigation_id} failed: "
        f"{escape(cut(error, 500))}"
        "\nThe approval is still recorded; retry when ready."
    )
    return Rendered(
        plain(text),
        dicts(
            [
                section(text),
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

    `people` are the user ids the words may name (who decided, who asked): the guard's
    "by U…" naming one is shown as a mention, once; the same id anywhere else in the words (a
    rejection's reason, written by a person) stays text.
    """
    text = f":no_entry: {escape(words)}"
    for person in dict.fromkeys(people):
        if _SLACK_ID.fullmatch(person):
            # `person` is [UW][A-Z0-9]+: its mention holds no backslash for re.sub to read
            text = re.sub(rf"\bby {person}\b", f"by {mention(person)}", text, count=1)
    if who_may:
        text += f"\nWho may approve: {who_may}"
    text += f"\n_Reason: {reason}_"
    return Rendered(plain(text), dicts([section(text)]))


def who_may_approve(approvers: Sequence[str], makers: Sequence[str], self_approval: bool) -> str:
    """The approver policy as Slack mentions, each person once (`approval_parties`)."""
    policy = ApproverPolicy(approvers=tuple(approvers), self_approval=self_approval)
    allowed, excluded = approval_parties(policy, makers)
    return parties_in_words(allowed, excluded, mention)


def answer_message(text: str) -> Rendered:
    """The agent's answer to a question in the thread (the model's words, escaped in the
    blocks and in the notification text alike), in as many sections as it takes: a long
    answer (a list of findings) is never cut without saying so."""
    safe = escape(text)
    where = "every finding is in the exceptions file of the results above"
    return Rendered(cut(safe, 3000), dicts(packed("", safe.split("\n"), MAX_BLOCKS, where)))
