"""The Slack stand-in the tests drive, shipped with the product as `workspace.slack`: a
stateful workspace served over real HTTP on 127.0.0.1 that answers the Web API, hosts files
and signs and delivers events, block actions, view submissions and slash commands.
"""

from workspace.slack import Message, SlackStandIn, StoredFile, Workspace

__all__ = ["Message", "SlackStandIn", "StoredFile", "Workspace"]
