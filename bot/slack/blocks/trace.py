"""How an outcome was computed, as Slack shows it: the agent's trace (every tool execution,
per phase run) and the approval the reconciliation ran under.

`/recon status` shows the whole trace, cut to Block Kit's limits; the results message shows a
one-line summary of it. Both read the trace as recorded (`agent.runtime.hooks`), never a fixed
list, so a tool replayed or run twice would show. Tool names come from the model: escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import Block

from agent.domain import BoundApproval, PhaseRun, ToolExecution
from bot.slack.blocks.common import (
    MAX_SECTION,
    context,
    cut,
    escape,
    mention,
    section,
    short_digest,
    when,
)

SHORT_ID = 8
"""Characters of an invocation id shown (enough to tell one case's invocations apart)."""
MAX_RUNS_IN_RESULTS = 6
"""Phase runs named in the results' one-line summary; earlier ones are counted, not named."""


def person(user: str) -> str:
    """Who approved, as people read it: a Slack mention, or a terminal account (`os:alice`)."""
    return f"`{escape(user)}`" if user.startswith("os:") else mention(user)


def fitted(title: str, lines: Sequence[str], limit: int = MAX_SECTION) -> str:
    """`title` and as many `lines` as fit in `limit` characters, then "…and N more"; so a long
    trace is cut visibly instead of by Slack (which refuses a section over its limit)."""
    text = title
    for shown, line in enumerate(lines):
        rest = len(lines) - shown
        tail = f"\n…and {rest - 1} more" if rest > 1 else ""
        if len(text) + 1 + len(line) + len(tail) > limit:
            return text + f"\n…and {rest} more"
        text += "\n" + line
    return text


def run_summary(run: PhaseRun) -> str:
    """One phase run in words: `inspect_datasets ×1, validate_mapping ×1 (investigate)`."""
    tools = ", ".join(f"{escape(cut(t.name, 60))} ×{t.count}" for t in run.tools)
    return f"{tools} ({escape(run.phase)})"


def approval_words(
    approved_by: str | None, pause_id: str, input_identity: str, mapping_digest: str
) -> str:
    """The approval a reconciliation ran under, in words: by whom, of which request, over
    which inputs and mapping."""
    who = f" by {person(approved_by)}" if approved_by else ""
    return (
        f"approval{who} of request {escape(pause_id)}, inputs "
        f"`{short_digest(input_identity)}`, mapping `{short_digest(mapping_digest)}`"
    )


def trace_blocks(
    trace: Sequence[ToolExecution], runs: Sequence[PhaseRun], bound: BoundApproval | None
) -> list[Block]:
    """`/recon status`'s "How this was computed": each execution (phase, invocation, tool,
    status, duration), the count of each tool per phase run, and the approval that bound the
    reconciliation; at most three blocks, each within Block Kit's limits."""
    if not trace:
        blocks: list[Block] = [section("*How this was computed*: no tool executions recorded yet.")]
    else:
        lines = [
            f"{n}. `{escape(e.phase)}` `{escape(e.invocation_id[:SHORT_ID])}` "
            f"{escape(cut(e.name, 60))} · {escape(cut(e.status, 20))} · {e.duration_ms:,} ms"
            + (f" · {escape(e.detail)}" if e.detail else "")
            for n, e in enumerate(trace, start=1)
        ]
        per_phase = [
            f"• *{escape(r.phase)}* `{escape(r.invocation_id[:SHORT_ID])}`: "
            + ", ".join(f"{escape(cut(t.name, 60))} {t.count}" for t in r.tools)
            for r in runs
        ]
        blocks = [
            section(fitted("*How this was computed* (every tool the agent ran, in order)", lines)),
            section(fitted("*Executions per phase*", per_phase)),
        ]
    if bound is not None:
        at = f" at {when(bound.approved_at)}" if bound.approved_at else ""
        words = approval_words(
            bound.approved_by, bound.pause_id, bound.input_identity, bound.mapping_digest
        )
        blocks.append(context(f"Reconciled under the {words}{at}"))
    return blocks


def computed_line(investigation_id: str, runs: Sequence[PhaseRun], approval: str) -> str:
    """The results' "How was this computed?": each phase run's tools and counts, from the
    recorded trace, then `approval` (`approval_words`) and where the full trace is."""
    shown = list(runs[-MAX_RUNS_IN_RESULTS:])
    earlier = len(runs) - len(shown)
    steps = "; ".join(run_summary(run) for run in shown) or "no tool executions recorded"
    if earlier:
        steps = f"{earlier} earlier runs; {steps}"
    return (
        f"*How was this computed?* {steps}; after the {approval}. "
        f"`/recon status {escape(investigation_id)}` for the full trace."
    )
