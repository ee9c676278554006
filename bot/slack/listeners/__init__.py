"""Bolt listeners, one module per kind of request: events, actions, views, commands.

Each listener acknowledges first, parses the payload, and hands one call to the
investigation threads (or the service, for quick reads), rendering the result.
"""

from __future__ import annotations

from slack_bolt import App

from agent.workflow import InvestigationService
from bot.slack.listeners import actions, commands, events, views
from bot.slack.threads import InvestigationThreads


def register(app: App, service: InvestigationService, threads: InvestigationThreads) -> None:
    """Register every listener of the bot."""
    events.register(app, service, threads)
    actions.register(app, service, threads)
    views.register(app, threads)
    commands.register(app, service)
