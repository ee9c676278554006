"""Bolt listeners, one module per kind of request: events, actions, views, commands.

Each listener acknowledges first, parses the payload, and hands one call to the
handlers (or the use cases, for quick reads), rendering the result.
"""

from __future__ import annotations

from slack_bolt import App

from agent.usecases import UseCases
from bot.slack.handlers import Handlers
from bot.slack.listeners import actions, commands, events, views


def register(app: App, service: UseCases, handlers: Handlers) -> None:
    """Register every listener of the bot. Bolt tries them in this order, each listener's
    matcher costing a click some CPU: the buttons, which fifty people may click at once,
    come first."""
    actions.register(app, service, handlers)
    views.register(app, handlers)
    events.register(app, service, handlers)
    commands.register(app, service)
