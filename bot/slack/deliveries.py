"""The bot's own bookkeeping of Slack deliveries: which events it has seen, which uploads it
has not finished, and which message shows each request.

This is Slack's concern, not the investigation's, so it is a port of the bot's; `storage`
implements it and the composition root wires it in.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol


class Deliveries(Protocol):
    """Deliveries seen and work resumable after a crash, and the message of each request."""

    def first(
        self,
        delivery_id: str,
        work: dict[str, Any] | None = None,
        hold_until: datetime | None = None,
    ) -> bool:
        """Record a delivery (an event id); False if it was seen before (Slack's retry).

        With `work` (an upload's event), the delivery is resumable: if this process dies
        before `done`, `take_unfinished` hands it out again once `hold_until` has passed.
        """
        ...

    def done(self, delivery_id: str) -> None:
        """The delivery's work is done (or its problem was reported): never resume it."""
        ...

    def take_unfinished(
        self, now: datetime, hold_until: datetime
    ) -> list[tuple[str, dict[str, Any]]]:
        """Resumable deliveries whose process died before finishing them, each taken by one
        caller only and held until `hold_until`."""
        ...

    def finished(self, delivery_id: str) -> bool:
        """Whether the delivery's work was done (a job run again must not do it twice)."""
        ...

    def remember_progress(self, delivery_id: str, message_ts: str | None) -> None:
        """The progress message the delivery's current run shows (None: no message to fix if
        the run is cut off), so a later run can say the earlier one was cut off."""
        ...

    def progress_of(self, delivery_id: str) -> str | None:
        """The progress message of the delivery's last run, if it may have been cut off."""
        ...

    def remember_message(self, pause_id: str, message_ts: str) -> None:
        """Remember which chat message shows a request, so later states can edit it."""
        ...
