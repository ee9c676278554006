"""One turn of the agent: run it over the saved conversation, then save what it concluded.

A turn reads the conversation, runs the Strands agent with the investigation's context (which
the tools fill: a pause signal, a reconciliation result), and appends its messages. The use
cases make the request a person decides of a turn's pause (`agent.usecases.requests`). No unit
of work is held open while the model works.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from agent.data.policy import Policy
from agent.data.schema import Role
from agent.dependencies import Dependencies, Progress
from agent.domain import (
    DatasetRef,
    Investigation,
    Revision,
    ToolExecution,
)
from agent.errors import ReconbotError
from agent.runtime.context import (
    STATE_KEY,
    InvestigationContext,
)
from agent.runtime.factory import build_agent

logger = logging.getLogger(__name__)

PAUSED_NOTE = "Paused: waiting for a person's decision before going on."


class AgentTurns:
    """Runs the agent's turns for the use cases and records the pauses they end on."""

    def __init__(self, deps: Dependencies) -> None:
        self.deps = deps

    def prefetch(
        self,
        files: dict[Role, DatasetRef],
        progress: Progress | None = None,
        answers: dict[Role, dict[str, str]] | None = None,
        policy: Policy | None = None,
    ) -> None:
        """Start reading the files while the agent inspects them (`CaseFiles.start_reading`,
        checked under `policy`, the case's channel's): the validation that follows finds them
        read or being read."""
        rows = progress.rows_read if progress is not None else None
        self.deps.files.start_reading(files, rows, answers, policy)

    def context(
        self,
        investigation_id: str,
        revision: Revision,
        phase: str,
        progress: Progress | None = None,
        *,
        channel: str | None,
        policy: Policy | None = None,
    ) -> InvestigationContext:
        """The context of one invocation on `revision`: its files, the policy in force in the
        case's `channel` (`policy` when the caller read it already), the trace."""
        workdir = self.deps.settings.workdir
        workdir.mkdir(parents=True, exist_ok=True)

        def executed(execution: ToolExecution) -> None:
            with self.deps.uow() as uow:
                uow.traces.add([execution])
            if progress is not None:
                progress.tool_done(execution.name)

        return InvestigationContext(
            investigation_id=investigation_id,
            files=dict(revision.files),
            blobs=self.deps.blobs,
            policy=policy if policy is not None else self.deps.policy_for(channel),
            workdir=workdir,
            case_files=self.deps.files,
            on_rows=progress.rows_read if progress is not None else None,
            on_tool_executed=executed,
            on_tool_started=progress.tool_started if progress is not None else None,
            phase=phase,
            invocation_id=uuid.uuid4().hex,
        )

    def invoke(self, context: InvestigationContext, prompt: str) -> str:
        """Run one agent invocation over the saved conversation and append its turn.

        A failed invocation saves nothing: the conversation stays as it was before the turn,
        so trying again starts from the same place. Reconbot errors raised inside the agent
        (a busy model, a timeout) reach the caller as themselves.
        """
        with self.deps.uow() as uow:
            stored = uow.conversations.load(context.investigation_id)
        base = len(stored)  # the agent extends the list it is given, in place
        agent = build_agent(self.deps.model, alternating(list(stored)))
        try:
            result = agent(prompt, invocation_state={STATE_KEY: context})
        except Exception as error:
            cause = reconbot_cause(error)
            if cause is not None and cause is not error:
                raise cause from None
            raise
        # This turn's messages (a user task first, an assistant message last) are appended,
        # so a turn taken meanwhile by another process is kept, and turns still alternate.
        turn = alternating(list(agent.messages)[base:])  # type: ignore[arg-type]
        with self.deps.uow() as uow:
            uow.conversations.append(context.investigation_id, turn)
        return str(result).strip()

    def investigate(
        self,
        investigation: Investigation,
        revision: Revision,
        prompt: str,
        answers: dict[Role, dict[str, str]],
        phase: str = "investigate",
        progress: Progress | None = None,
    ) -> InvestigationContext:
        """A turn that inspects and validates `revision` and ends on a pause: its context, with
        the pause signal the tools left (`agent.usecases.requests` makes the request of it)."""
        policy = self.deps.policy_for(investigation.channel)
        self.prefetch(revision.files, progress, answers, policy)
        context = self.context(
            investigation.id,
            revision,
            phase,
            progress,
            channel=investigation.channel,
            policy=policy,
        )
        context.answers = answers
        self.invoke(context, prompt)
        return context


def alternating(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with user and assistant turns alternating, as Bedrock requires.

    A turn that ended on a pause ends with the user's tool results; the next task would be a
    second user turn in a row. A short assistant note closes the paused turn instead.
    """
    if messages and messages[-1].get("role") == "user":
        return [*messages, {"role": "assistant", "content": [{"text": PAUSED_NOTE}]}]
    return messages


def reconbot_cause(error: BaseException) -> ReconbotError | None:
    """The reconbot error behind an agent failure (Strands wraps what a model raises)."""
    seen: BaseException | None = error
    for _ in range(10):
        if seen is None:
            return None
        if isinstance(seen, ReconbotError):
            return seen
        seen = seen.__cause__ or getattr(seen, "original_exception", None)
    return None
