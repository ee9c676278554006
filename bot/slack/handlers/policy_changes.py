"""A policy change decided in Slack: approving it puts the rules in force in its channel, shows
so on its message, shows the channel's requests it superseded with the reason, and posts each
of them made again under the new rules in its own thread (`PolicyChanges.approve`)."""

from __future__ import annotations

from agent.domain import PauseState
from agent.errors import ApprovalRefusedError, PolicyProposalError
from agent.usecases import UseCases
from bot.slack import blocks
from bot.slack.approvers import ApproverDirectory
from bot.slack.payloads import ButtonValue, Click
from bot.slack.poster import ThreadPoster
from bot.slack.request_messages import RequestMessages


def propose_policy_change(
    service: UseCases,
    messages: RequestMessages,
    poster: ThreadPoster,
    channel: str,
    user: str,
    changes: dict[str, str],
    team: str | None = None,
) -> None:
    """Propose `changes` to `channel`'s policy as `user`, posting the request in the channel
    (its thread is the request's own); a change that cannot be made is told to `user` alone."""
    try:
        request = service.policy_changes.propose(channel, changes, proposed_by=user, team=team)
    except PolicyProposalError as error:
        poster.ephemeral(channel, user, None, blocks.problem_message(str(error)))
        return
    messages.post(request)


def approve_policy_change(
    service: UseCases,
    approvers: ApproverDirectory,
    messages: RequestMessages,
    click: Click,
    button: ButtonValue,
) -> None:
    """Approve the policy change `button` names through the guard, as `click`'s user, and show
    what it did; a refusal is told to the clicker alone, as any request's."""
    user = click.user
    try:
        approved = service.policy_changes.approve(
            button.pause_id,
            button.authorization,
            approvers.approver(user),
            origin=click.origin,
        )
    except ApprovalRefusedError as error:
        state = error.state if isinstance(error.state, PauseState) else None
        if state is not None:
            state = messages.with_message(state, click.message_ts)
        messages.refuse(click.channel, user, click.thread_ts, error, state)
        return
    change = approved.request.policy_change
    assert change is not None
    done = service.queries.pause(button.pause_id)
    if done is not None:
        again = len(approved.reissued)
        made = f"; {again} pending request(s) made again under them" if again else ""
        line = (
            f":white_check_mark: *Approved by {blocks.mention(user)}*: version "
            f"`{blocks.short_digest(change.after_version)}` is in force in this channel{made}."
        )
        messages.show(messages.with_message(done, click.message_ts), line)
    for pause_id in approved.superseded_pauses:
        old = service.queries.pause(pause_id)
        if old is not None:
            messages.show(
                old, f":arrows_counterclockwise: *Superseded*: {blocks.escape(old.reason or '')}"
            )
    for request in approved.reissued:
        messages.post(request)
