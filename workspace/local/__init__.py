"""The local workspace: the Slack stand-in with a web page at its root, where people drop CSVs
(or use demo files), read the bot's thread, click its buttons, fill its modals and write in
the thread, acting as one of a few people. Every action reaches the app as Slack's signed
deliveries do.
"""

from workspace.local.app import DemoFiles, LocalWorkspace
from workspace.local.people import APPROVERS, CHANNEL, PEOPLE, Person

__all__ = ["APPROVERS", "CHANNEL", "PEOPLE", "DemoFiles", "LocalWorkspace", "Person"]
