"""The `/recon` slash command: `status INV-…`, `list`, `policy`, `help`. Answered to the
caller alone, about the investigations and the policy of channels the caller is a member of
(`bot.slack.visibility`), by a lazy listener after the ack (the answer reads Slack and the
database)."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from agent.errors import ReconbotError
from agent.usecases import UseCases
from agent.usecases.common import unknown_investigation
from bot.presentation.policy_words import parse_changes
from bot.slack import blocks
from bot.slack.blocks import Rendered
from bot.slack.listeners.deps import ListenerDeps, bound
from bot.slack.visibility import ChannelVisibility


def register(app: App, deps: ListenerDeps) -> None:
    """Register the slash command listener."""
    app.command("/recon")(ack=acknowledge, lazy=[bound(on_recon, deps)])


def acknowledge(ack: Ack) -> None:
    """Acknowledge at once; the answer is the lazy listener's."""
    ack()


def on_recon(
    deps: ListenerDeps, command: dict[str, Any], respond: Respond, client: WebClient
) -> None:
    """`/recon status INV-…`, `/recon list`, `/recon policy` or help, answered to the caller
    alone (a channel's list and policy to its members only)."""
    service, visibility = deps.service, deps.visibility
    words = str(command.get("text") or "").split()
    verb = words[0].lower() if words else "help"
    user = str(command.get("user_id") or "")
    rendered = blocks.help_message()
    if verb == "status" and len(words) > 1:
        rendered = _status(service, visibility, user, words[1].upper())
    elif verb == "status":
        rendered = blocks.problem_message("Which investigation? `/recon status INV-…`")
    elif verb == "list":
        channel = str(command.get("channel_id"))
        listed = []
        if channel in visibility.channels_of(user):
            listed = visibility.visible(user, service.queries.recent(channel=channel, limit=10))
        rendered = blocks.list_message(listed, where=f"in <#{channel}>")
    elif verb == "policy":
        channel = str(command.get("channel_id"))
        if channel not in visibility.channels_of(user):
            rendered = blocks.problem_message("Ask in a channel you are a member of.")
        elif len(words) > 1 and words[1].lower() == "propose":
            rendered = _propose(deps, channel, user, words[2:], command.get("team_id"))
        elif len(words) == 1 and command.get("trigger_id"):  # the form, with today's values
            shown = service.policies.of_channel(channel)
            team = str(command.get("team_id") or "") or None
            client.views_open(
                trigger_id=str(command["trigger_id"]),
                view=blocks.policy_modal(shown, channel, team),
            )
            return
        else:  # `/recon policy show`
            shown = service.policies.of_channel(channel)
            rendered = blocks.policy_message(shown, where=f"in <#{channel}>")
    respond(text=rendered.text, blocks=rendered.blocks, response_type="ephemeral")


def _propose(
    deps: ListenerDeps, channel: str, user: str, words: list[str], command_team: object
) -> Rendered:
    """`/recon policy propose KEY=VALUE ...`: the proposal is made and posted by a job (it
    reconciles the channel's last approved inputs again, to show the change's effect)."""
    try:
        changes = parse_changes(words)
    except ReconbotError as error:
        return blocks.problem_message(str(error))
    if not changes:
        return blocks.problem_message(
            "Which rules? `/recon policy propose window_days_after=7` (see `/recon policy`)."
        )
    team = str(command_team or "") or None
    deps.handlers.jobs.propose_policy(channel, user, changes, team)
    return blocks.note("Proposing the change; the request follows in this channel.")


def _status(
    service: UseCases, visibility: ChannelVisibility, user: str, investigation_id: str
) -> Rendered:
    """The status of an investigation the caller may see; for one they may not, the words for
    an id that does not exist. Membership is read first, whatever the id, so that both take
    the same path to Slack."""
    channels = visibility.channels_of(user)
    try:
        report = service.queries.status(investigation_id)
    except ReconbotError as error:
        return blocks.problem_message(str(error))
    channel = report.investigation.channel
    if not channel or channel not in channels:
        return blocks.problem_message(str(unknown_investigation(investigation_id)))
    return blocks.status_message(report)
