"""Bolt listeners, one module per kind of request: events, actions, views, commands.

Each listener is a module-level function: it acknowledges first, parses the payload, and hands
one call to the handlers (or the use cases, for quick reads), rendering the result. What it
reaches is one `ListenerDeps` (`deps`), bound when the listeners are registered, so a unit test
calls a listener directly with fakes.
"""

from __future__ import annotations

from slack_bolt import App

from bot.slack.listeners import actions, commands, events, views
from bot.slack.listeners.deps import ListenerDeps


def register(app: App, deps: ListenerDeps) -> None:
    """Register every listener of the bot. Bolt tries them in this order, each listener's
    matcher costing a click some CPU: the buttons, which fifty people may click at once,
    come first."""
    actions.register(app, deps)
    views.register(app, deps)
    events.register(app, deps)
    commands.register(app, deps)
