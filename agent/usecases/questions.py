"""Questions: a person asks about a case; the agent answers from the evidence.

After an outcome the agent reads the files that were reconciled, not newer ones. An answer
that needs a decision (the agent found the reading must change) ends on a new request.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.dependencies import Dependencies
from agent.domain import ApprovalRequest
from agent.runtime.prompts import question_prompt
from agent.runtime.turns import AgentTurns
from agent.usecases.common import investigation_in


@dataclass(frozen=True)
class Answer:
    """The agent's answer to a question, and a request if answering needed one."""

    text: str
    request: ApprovalRequest | None


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
        context = self.turns.context(investigation_id, revision, "answer")
        context.outcome = outcome
        if outcome is not None:
            done = next(r for r in revisions if r.number == outcome.revision)
            context.files = dict(done.files)
        text = self.turns.invoke(context, question_prompt(actor, question))
        request = None
        if context.pause is not None and revision.complete:
            request = self.turns.record_pause(investigation, revision, context, {})
        return Answer(text, request)
