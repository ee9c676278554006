"""The `/recon` slash command: `status INV-…`, `list`, `help`. Answered to the caller alone."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, Respond

from agent.errors import ReconbotError
from agent.usecases import UseCases
from bot.slack import blocks


def register(app: App, service: UseCases) -> None:
    """Register the slash command listener."""

    @app.command("/recon")
    def on_recon(ack: Ack, command: dict[str, Any], respond: Respond) -> None:
        ack()
        words = str(command.get("text") or "").split()
        verb = words[0].lower() if words else "help"
        rendered = blocks.help_message()
        if verb == "status" and len(words) > 1:
            try:
                rendered = blocks.status_message(service.queries.status(words[1].upper()))
            except ReconbotError as error:
                rendered = blocks.problem_message(str(error))
        elif verb == "status":
            rendered = blocks.problem_message("Which investigation? `/recon status INV-…`")
        elif verb == "list":
            channel = str(command.get("channel_id"))
            rendered = blocks.list_message(
                service.queries.recent(channel=channel, limit=10), where=f"in <#{channel}>"
            )
        respond(text=rendered.text, blocks=rendered.blocks, response_type="ephemeral")
