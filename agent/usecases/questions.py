"""Questions: a person asks about a case; the agent answers from the evidence.

After an outcome the agent reads the files that were reconciled, not newer ones. A question
never creates, supersedes or reopens a request, whoever asks it: "reconcile this now" from
anyone in the thread is answered in words; requests come only from uploads and edits, which
name their makers (four-eyes).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agent.dependencies import Dependencies
from agent.domain import ApprovalRequest
from agent.runtime.prompts import question_prompt
from agent.runtime.turns import AgentTurns
from agent.usecases.common import investigation_in

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    """The agent's answer to a question. `request` is always None: kept so callers need not
    change if answers ever carry one again (they must then say who made it)."""

    text: str
    request: ApprovalRequest | None = None


class Questions:
    """Answer questions about an investigation with the evidence and policy tools."""

    def __init__(self, deps: Dependencies, turns: AgentTurns) -> None:
        self.deps = deps
        self.turns = turns

    def ask(self, investigation_id: str, question: str, *, actor: str) -> Answer:
        """Answer a question about an investigation with the evidence and policy tools."""
        with self.deps.uow() as uow:
            investigation = investigation_in(uow, investigation_id)
            revisions = uow.investigations.revisions(investigation_id)
            outcome = uow.outcomes.latest(investigation_id)
        revision = revisions[-1]
        context = self.turns.context(
            investigation_id, revision, "answer", channel=investigation.channel
        )
        context.outcome = outcome
        if outcome is not None:
            done = next(r for r in revisions if r.number == outcome.revision)
            context.files = dict(done.files)
        text = self.turns.invoke(context, question_prompt(actor, question))
        if context.pause is not None:
            logger.info(
                "investigation=%s actor=%s | a question asked for a decision; none was made",
                investigation.id,
                actor,
            )
        return Answer(text)
