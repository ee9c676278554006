"""A stand-in for Slack: a stateful workspace served over real HTTP on a loopback address.

It answers the Web API methods reconbot calls, hosts files behind a bearer-token check, takes
uploads and response-URL posts, returns 429s on demand, and signs and delivers events, block
actions, view submissions and slash commands to an app's request URL exactly as Slack does.
Tests (and the local workspace's web page) drive it as people would (`post_files`, `click`,
`submit_view`, `command`) and read back what the app did (`thread`, `ephemerals`, `calls`).
"""

from workspace.slack.server import SlackStandIn
from workspace.slack.workspace import Message, StoredFile, Workspace

__all__ = ["Message", "SlackStandIn", "StoredFile", "Workspace"]
