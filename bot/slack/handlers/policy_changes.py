"""A policy change proposed and decided in Slack: approving it puts the rules in force in its
channel, shows so on its message, shows the channel's requests it superseded with the reason,
and posts each of them made again under the new rules in its own thread
(`PolicyChanges.approve`); editing it posts a new proposal on top of it (`PolicyChanges.edit`)."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

from agent.domain import ApprovalRequest, PauseState
from agent.errors import ApprovalRefusedError, PolicyProposalError
from agent.usecases import UseCases
from bot.slack import blocks
from bot.slack.approvers import ApproverDirectory
from bot.slack.payloads import ButtonValue, Click, ModalMetadata
from bot.slack.poster import ThreadPoster
from bot.slack.request_messages import RequestMessages

logger = logging.getLogger(__name__)

NOT_POSTED = (
    "Your change to this channel's policy was not proposed: Slack would not let reconbot post "
    "the request here ({error}). {what}"
)
NOT_A_MEMBER = frozenset({"not_in_channel", "channel_not_found", "is_archived"})
"""Slack's refusals that mean reconbot cannot post in the channel at all."""


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
    (its thread is the request's own); a change that cannot be made is told to `user` alone,
    and so is a failure on reconbot's side (with the log's reference), never silence."""
    try:
        request = service.policy_changes.propose(channel, changes, proposed_by=user, team=team)
    except PolicyProposalError as error:
        _tell(poster, channel, user, blocks.problem_message(str(error)))
        return
    except Exception:
        ref = messages.log_internal_error("proposing a policy change")
        _tell(poster, channel, user, blocks.internal_error_message(ref))
        return
    post_or_withdraw(service, messages, poster, request, user)


def post_or_withdraw(
    service: UseCases,
    messages: RequestMessages,
    poster: ThreadPoster,
    request: ApprovalRequest,
    user: str,
) -> None:
    """Post a policy-change request in its channel; when Slack will not show it, withdraw it
    (no request waits that nobody sees) and tell `user` why, in Slack's words."""
    channel = request.channel
    assert channel is not None
    try:
        messages.post(request)
        return
    except SlackApiError as error:
        said = str(error.response.get("error"))
    except Exception:
        ref = messages.log_internal_error("posting a policy change")
        _tell(poster, channel, user, blocks.internal_error_message(ref))
        return
    logger.warning("channel=%s error=%s | policy change not posted", channel, said)
    try:
        withdrawn = service.policy_changes.withdraw(
            request.pause_id, actor=user, reason=f"it could not be posted in the channel ({said})"
        )
    except Exception:
        ref = messages.log_internal_error("withdrawing a policy change not posted")
        _tell(poster, channel, user, blocks.internal_error_message(ref))
        return
    if not withdrawn:  # decided meanwhile (say, in a terminal): it stands as decided
        return
    what = (
        "Invite reconbot to the channel, then propose it again."
        if said in NOT_A_MEMBER
        else "Propose it again in a moment."
    )
    _tell(poster, channel, user, blocks.problem_message(NOT_POSTED.format(error=said, what=what)))


def _tell(poster: ThreadPoster, channel: str, user: str, rendered: blocks.Rendered) -> None:
    """Say `rendered` to `user` alone in `channel` (what fails here is logged: nothing else is
    left to tell them)."""
    try:
        poster.ephemeral(channel, user, None, rendered)
    except SlackApiError:
        logger.exception("channel=%s | could not tell the proposer", channel)


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
    except Exception:  # nothing was put in force (one unit of work); the clicker is told
        messages.internal_error(click.channel, click.thread_ts, "approve")
        return
    change = approved.request.policy_change
    assert change is not None
    done = service.queries.pause(button.pause_id)
    if done is not None:
        again = len(approved.reissued)
        made = f"; {again} pending request(s) made again under them" if again else ""
        if approved.not_reissued:  # never a case left without a word
            made += (
                f"; could not be made again now (the log says why): "
                f"{', '.join(approved.not_reissued)}"
            )
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


def edit_policy_change(
    service: UseCases,
    approvers: ApproverDirectory,
    messages: RequestMessages,
    poster: ThreadPoster,
    metadata: ModalMetadata,
    user: str,
    changes: dict[str, str],
) -> None:
    """Edit the policy change `metadata` names with `changes` (rule -> value, from its form)
    as `user`, through the guard: the new proposal is posted in the channel and the edited
    request shows it was edited. A refusal, a change that cannot be made and a failure on
    reconbot's side are told to `user` alone."""
    channel = metadata.channel
    try:
        new = service.policy_changes.edit(
            metadata.pause_id,
            metadata.authorization,
            approvers.approver(user),
            changes,
            origin=metadata.origin,
        )
    except ApprovalRefusedError as error:
        state = error.state if isinstance(error.state, PauseState) else None
        messages.refuse(channel, user, metadata.thread_ts or None, error, state)
        return
    except PolicyProposalError as error:  # checked before anything was written
        _tell(poster, channel, user, blocks.problem_message(f"Not edited: {error}"))
        return
    except Exception:
        ref = messages.log_internal_error("editing a policy change")
        _tell(poster, channel, user, blocks.internal_error_message(ref))
        return
    old = service.queries.pause(metadata.pause_id)
    if old is not None:
        messages.show(messages.with_message(old, metadata.message_ts), blocks.edited_line(user))
    post_or_withdraw(service, messages, poster, new, user)
