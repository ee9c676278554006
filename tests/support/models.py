"""Models for tests that need the agent's turn to fail in a given way."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from agent.models.offline import OfflineModel


class DyingModel(OfflineModel):
    """A model whose process 'dies' at its first turn (an error that is not reconbot's)."""

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise RuntimeError("the process was killed")
        yield  # pragma: no cover
