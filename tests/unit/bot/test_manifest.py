"""The app manifest is valid for Slack and asks for exactly what the bot uses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = ROOT / "tests" / "fixtures" / "slack" / "manifest.schema.json"

# The scope each Web API method the bot calls needs (docs.slack.dev/reference/methods).
METHOD_SCOPES: dict[str, str | tuple[str, ...] | None] = {
    "chat_postMessage": "chat:write",
    "chat_update": "chat:write",
    "chat_postEphemeral": "chat:write",
    "reactions_add": "reactions:write",
    "files_info": "files:read",
    "files_upload_v2": "files:write",
    "usergroups_users_list": "usergroups:read",
    "users_conversations": ("channels:read", "groups:read"),
    "views_open": None,
    "views_update": None,
    "views_publish": None,
}
# The scope each subscribed event needs.
EVENT_SCOPES = {
    "app_mention": "app_mentions:read",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "app_home_opened": None,
}


def _manifest() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((ROOT / "manifest.yml").read_text())


def _bot_sources() -> str:
    return "\n".join(p.read_text() for p in (ROOT / "bot").rglob("*.py"))


def test_the_manifest_validates_against_slacks_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    errors = sorted(Draft7Validator(schema).iter_errors(_manifest()), key=str)
    assert not errors, "\n".join(e.message for e in errors)


def test_the_scopes_are_exactly_those_the_bot_uses() -> None:
    source = _bot_sources()
    called = set(re.findall(r"client\.([a-z]+_[A-Za-z_0-9]+)\(", source))
    assert called == set(METHOD_SCOPES), "a Web API method without a known scope"
    manifest = _manifest()
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    needed = {
        scope for s in METHOD_SCOPES.values() if s for scope in ((s,) if isinstance(s, str) else s)
    } | {s for e in events if (s := EVENT_SCOPES[e])}
    needed.add("commands")
    assert sorted(manifest["oauth_config"]["scopes"]["bot"]) == sorted(needed)


def test_the_events_and_command_match_the_listeners() -> None:
    source = _bot_sources()
    manifest = _manifest()
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    listened = set(re.findall(r'@?app\.event\("([a-z_]+)"\)', source))
    assert {e.split(".")[0] for e in events} <= listened | {"message"}
    assert {"app_mention", "app_home_opened", "message"} <= listened
    commands = [c["command"] for c in manifest["features"]["slash_commands"]]
    assert commands == re.findall(r'@?app\.command\("([^"]+)"\)', source)
    paths = {
        manifest["settings"]["event_subscriptions"]["request_url"],
        manifest["settings"]["interactivity"]["request_url"],
        manifest["features"]["slash_commands"][0]["url"],
    }
    assert len(paths) == 1 and paths.pop().endswith("/slack/events")
