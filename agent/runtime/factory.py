"""Build the Strands agent of one invocation from the saved conversation and the shared model."""

from __future__ import annotations

from typing import Any

from strands import Agent
from strands.agent.conversation_manager import NullConversationManager
from strands.models import Model

from agent.runtime.finding_tools import FINDING_TOOLS
from agent.runtime.hooks import PauseAndTraceHook
from agent.runtime.prompts import SYSTEM_PROMPT
from agent.runtime.tools import TOOLS

AGENT_TOOLS = [*TOOLS, *FINDING_TOOLS]
"""Every tool an agent gets, whatever its task: the task message says which to use."""


def build_agent(model: Model, messages: list[dict[str, Any]]) -> Agent:
    """A fresh agent over `messages` (the saved conversation), with reconbot's tools and hook.

    No callback handler (nothing is printed), a conversation manager that never drops
    history (what the model saw is what is saved), and no retry loop of Strands' own: the
    model's client retries with backoff, and stacking both would retry for many minutes.
    """
    return Agent(
        model=model,
        messages=messages,  # type: ignore[arg-type]
        tools=list(AGENT_TOOLS),
        system_prompt=SYSTEM_PROMPT,
        callback_handler=None,
        conversation_manager=NullConversationManager(),
        hooks=[PauseAndTraceHook()],
        retry_strategy=None,
    )
