"""The stand-in's signing helpers, where tests and scripts import them from."""

from workspace.slack.server import SlackStandIn
from workspace.slack.signing import Delivery, form_body, sign

__all__ = ["Delivery", "SlackStandIn", "form_body", "sign"]
