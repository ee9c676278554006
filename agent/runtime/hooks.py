"""The one hook of an investigation's agent: record each tool execution, end the turn on a pause.

Only executions of the current invocation reach `AfterToolCallEvent`; tool results replayed
from the saved conversation are context for the model, never new executions in the trace.
"""

from __future__ import annotations

import logging
from typing import Any

from strands.hooks import (
    AfterToolCallEvent,
    AfterToolsEvent,
    BeforeToolCallEvent,
    HookProvider,
    HookRegistry,
)

from agent.domain import ToolExecution
from agent.runtime.context import STATE_KEY, InvestigationContext

logger = logging.getLogger(__name__)


class PauseAndTraceHook(HookProvider):
    """Records tool executions in the context's trace and stops the loop after a pause."""

    def register_hooks(self, registry: HookRegistry, **_: Any) -> None:
        """Subscribe to the start and end of each tool call and the end of each tool batch."""
        registry.add_callback(BeforeToolCallEvent, self.before_tool_call)
        registry.add_callback(AfterToolCallEvent, self.after_tool_call)
        registry.add_callback(AfterToolsEvent, self.after_tools)

    @staticmethod
    def _context(state: dict[str, Any]) -> InvestigationContext | None:
        context = state.get(STATE_KEY)
        return context if isinstance(context, InvestigationContext) else None

    def before_tool_call(self, event: BeforeToolCallEvent) -> None:
        """Tell whoever shows progress which tool starts (a display never stops a tool)."""
        context = self._context(event.invocation_state)
        if context is None or context.on_tool_started is None:
            return
        try:
            context.on_tool_started(str(event.tool_use.get("name", "")))
        except Exception:
            logger.exception("investigation=%s | progress display failed", context.investigation_id)

    def after_tool_call(self, event: AfterToolCallEvent) -> None:
        """Record one execution: tool use id, name, status and duration."""
        context = self._context(event.invocation_state)
        if context is None:
            return
        status = event.result.get("status", "error") if isinstance(event.result, dict) else "error"
        use_id = str(event.tool_use.get("toolUseId", ""))
        execution = ToolExecution(
            investigation_id=context.investigation_id,
            invocation_id=context.invocation_id,
            phase=context.phase,
            tool_use_id=use_id,
            name=str(event.tool_use.get("name", "")),
            status=str(status),
            duration_ms=round((event.duration or 0.0) * 1000),
            detail=context.details.pop(use_id, None),
        )
        logger.info(
            "investigation=%s tool=%s status=%s duration_ms=%s | tool executed",
            execution.investigation_id,
            execution.name,
            execution.status,
            execution.duration_ms,
        )
        if context.on_tool_executed is not None:
            context.on_tool_executed(execution)

    def after_tools(self, event: AfterToolsEvent) -> None:
        """End the turn when a tool of the batch concluded that a person must decide."""
        context = self._context(event.invocation_state)
        if context is not None and context.pause is not None:
            event.end_turn = context.pause.message
