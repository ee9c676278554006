"""The use cases of an investigation, one module per story, over one set of dependencies.

`intake` (start, add a file, investigate again), `decisions` (approve, reject, edit, expire),
`questions` (ask), `recovery` (interrupted approvals and inspections), `queries` (read-only),
`policies` (each channel's policy in force and its history), `policy_changes` (a change to
a channel's policy, itself a request a person approves).
Each decision goes through `agent.approval.check`, the one guard, inside one unit of work.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.dependencies import Dependencies
from agent.runtime.turns import AgentTurns
from agent.usecases.decisions import Decisions
from agent.usecases.intake import Intake
from agent.usecases.policies import Policies
from agent.usecases.policy_changes import PolicyChanges
from agent.usecases.queries import Queries
from agent.usecases.questions import Questions
from agent.usecases.recovery import Recovery
from agent.usecases.resumption import Resumption


@dataclass(frozen=True)
class UseCases:
    """Every use case, wired to the same dependencies (what the CLI and the bot are given)."""

    deps: Dependencies
    intake: Intake
    decisions: Decisions
    questions: Questions
    recovery: Recovery
    queries: Queries
    policies: Policies
    policy_changes: PolicyChanges

    def close(self) -> None:
        """Stop the background work on the cases' files (a request's sealed reconciliation),
        for a process that is ending: it does not wait for work whose result it would never
        publish. Pending requests are untouched; their approval reconciles then."""
        if "files" in vars(self.deps):  # the door was opened: it may be working
            self.deps.files.close()


def build_use_cases(deps: Dependencies) -> UseCases:
    """The use cases over `deps`, sharing one agent runtime and one resumed phase."""
    turns = AgentTurns(deps)
    resumption = Resumption(deps, turns)
    intake = Intake(deps, turns)
    decisions = Decisions(deps, turns, resumption)
    return UseCases(
        deps=deps,
        intake=intake,
        decisions=decisions,
        questions=Questions(deps, turns),
        recovery=Recovery(deps, resumption),
        queries=Queries(deps),
        policies=Policies(deps),
        policy_changes=PolicyChanges(deps, decisions, intake),
    )
