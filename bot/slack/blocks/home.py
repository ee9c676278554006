"""`/recon status`, `/recon list`, `/recon policy`, `/recon help` and the App Home tab."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import Block, DividerBlock, HeaderBlock
from slack_sdk.models.views import View

from agent.domain import Investigation, InvestigationStatusReport
from agent.usecases.policies import ChannelPolicy
from bot.slack.blocks.common import (
    MAX_HEADER,
    MAX_SECTION,
    Rendered,
    code,
    context,
    cut,
    dicts,
    escape,
    mention,
    note,
    preformatted,
    section,
    short_digest,
    when,
    whole,
)
from bot.slack.blocks.requests import state_line
from bot.slack.blocks.trace import trace_blocks

HELP = (
    "*reconbot* reconciles an orders export against a captured-payments export.\n"
    "1. Drop both CSVs into a channel (one message, or one after the other in my thread).\n"
    "2. I propose how to read them and ask for approval: *Approve*, *Edit mapping* or *Reject*.\n"
    "3. After approval I reconcile and post the exceptions, with rows and ids, in the thread.\n"
    "Ask me about any finding in the thread. Commands: `/recon status INV-…`, `/recon list`, "
    "`/recon policy` (a form to propose new values of this channel's rules; `/recon policy "
    "show` shows them), `/recon help`."
)


def status_message(report: InvestigationStatusReport) -> Rendered:
    """`/recon status`: the saved state, each request as written, decisions, the outcome, and
    how it was computed (the agent's trace and the approval that bound the reconciliation)."""
    inv = report.investigation
    blocks: list[Block] = [
        HeaderBlock(text=cut(f"{inv.id} · {inv.status.value.replace('_', ' ')}", MAX_HEADER)),
        context(
            f"requested by {mention(inv.requested_by)} · {when(inv.created_at)} · "
            f"revision {inv.revision}"
        ),
    ]
    for revision in report.revisions[-3:]:
        files = ", ".join(
            f"{role.value} {code(ref.name, 60)} `{short_digest(ref.digest)}`"
            for role, ref in sorted(revision.files.items())
        )
        blocks.append(section(f"*Revision {revision.number}*: {files}"))
    for state in report.pauses[-5:]:
        request = state.request
        blocks.append(
            section(
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
        blocks.append(section("*Refused decisions*\n" + "\n".join(lines)))
    if report.outcome is not None:
        outcome = report.outcome
        counts = ", ".join(f"{escape(k)} {v}" for k, v in sorted(outcome.counts.items()) if v)
        blocks.append(
            section(
                f"*Outcome* of {outcome.pause_id}: {sum(outcome.counts.values())} exceptions"
                + (f" ({counts})" if counts else "")
            )
        )
    blocks.extend(trace_blocks(report.trace, report.trace_phases, report.bound_approval))
    return Rendered(f"{inv.id}: {inv.status.value}", dicts(blocks))


HISTORY_SHOWN = 10
"""How many of a channel's newest policy versions `/recon policy show` lists (a section holds
them whatever their words); the rest are counted and `reconbot explain` lists them all."""


def policy_message(shown: ChannelPolicy, *, where: str) -> Rendered:
    """`/recon policy`: the policy in force in a channel (its version, where it came from,
    each rule's value, whole) and every version put in force there, newest first."""
    policy = shown.policy
    blocks: list[Block] = [
        HeaderBlock(text=cut(f"Policy in force {where}", MAX_HEADER)),
        section(f"Version `{short_digest(policy.version)}` · from {escape(policy.source)}"),
    ]
    if shown.seeded:
        blocks.append(context("The configured policy: no change was approved in this channel."))
    else:
        lines = [
            f"• `{short_digest(r.version)}` since {when(r.since)}, by {mention(r.by)}"
            + (f" ({escape(r.pause_id)})" if r.pause_id else f" ({escape(r.source)})")
            for r in reversed(shown.history[-HISTORY_SHOWN:])
        ]
        earlier = len(shown.history) - HISTORY_SHOWN
        if earlier > 0:  # said, with where to read them all
            lines.append(
                f"… and {earlier:,} earlier: `reconbot explain --channel {escape(shown.channel)}` "
                "lists every version"
            )
        blocks.append(section("*Versions put in force here*\n" + "\n".join(lines)))
    # Each rule its own sections, a long value over several: no value is ever cut.
    for key, value in policy.rule_values().items():
        line = f"• {escape(key)}: {whole(value)}"
        if len(line) <= MAX_SECTION:
            blocks.append(section(line))
            continue
        first, *more = preformatted(value)
        blocks.append(section(f"• {escape(key)}:\n{first}"))
        blocks.extend(section(piece) for piece in more)
    return Rendered(f"Policy in force {where}: {short_digest(policy.version)}", dicts(blocks))


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
        dicts([section(f"*Recent investigations {where}*\n" + "\n".join(lines))]),
    )


def help_message() -> Rendered:
    """`/recon help` and a mention outside any investigation."""
    return note(HELP)


def home_view(investigations: Sequence[Investigation]) -> dict[str, Any]:
    """The App Home tab: what reconbot does and the recent investigations."""
    blocks: list[Block] = [HeaderBlock(text="reconbot"), section(HELP), DividerBlock()]
    if investigations:
        for inv in investigations[:20]:
            where = f" in <#{inv.channel}>" if inv.channel else ""
            blocks.append(
                section(
                    f"*{inv.id}* · {inv.status.value.replace('_', ' ')} · revision "
                    f"{inv.revision}{where} · {mention(inv.requested_by)} · {when(inv.created_at)}"
                )
            )
    else:
        blocks.append(section("No investigations yet."))
    return View(type="home", blocks=blocks[:100]).to_dict()
