"""One Web API call as the stand-in answers it: the call, and Slack's `{"ok": false}` answers."""

from __future__ import annotations

import json
from typing import Any

from workspace.slack.workspace import Message, Workspace


class Call:
    """One Web API call: the workspace, where it is served, its arguments, and what to echo."""

    def __init__(self, workspace: Workspace, base_url: str, args: dict[str, Any]) -> None:
        self.workspace = workspace
        self.base_url = base_url
        self.args = args
        self.echo: list[Message] = []


class ApiError(Exception):
    """A Slack `{"ok": false, "error": ...}` answer."""

    def __init__(self, error: str, detail: str = "", **fields: str) -> None:
        super().__init__(error)
        self.error = error
        self.detail = detail
        self.fields = fields


def json_arg(value: Any) -> Any:
    """An argument that may arrive JSON-encoded (form posts) or as it is (JSON bodies)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as error:
            raise ApiError("invalid_arguments", f"not JSON: {error}") from None
    return value
