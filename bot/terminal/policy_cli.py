"""`reconbot policy propose KEY=VALUE ...`: ask a channel to approve a change to its policy,
and `reconbot decide` on such a request (approve puts it in force; edit is a new proposal).

A change is a request like any other: it is decided by someone other than its proposer, from
any shell, with the authorization identity printed with it. Approving it supersedes the
channel's pending requests made under the old version and makes them again under the new one.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from agent.domain import ApprovalRequest, Approver
from agent.usecases import UseCases
from bot.composition import build_runtime
from bot.config import Settings
from bot.presentation.policy_words import parse_changes
from bot.terminal.console import terminal_identity
from bot.terminal.printer import Printer

EXIT_OK = 0


def add_commands(commands: Any) -> None:
    """Register `reconbot policy propose` on the console script's parser."""
    policy = commands.add_parser("policy", help="propose a change to a channel's policy")
    verbs = policy.add_subparsers(dest="policy_command", required=True)
    propose = verbs.add_parser(
        "propose", help="ask for approval of new values of the policy's rules (KEY=VALUE ...)"
    )
    propose.add_argument(
        "changes",
        nargs="+",
        metavar="KEY=VALUE",
        help="a rule and its new value: a number, status words separated by commas, or "
        "word:meaning pairs (see `reconbot explain`)",
    )
    propose.add_argument("--channel", help="the Slack channel id (C…); default: the terminal's")
    propose.add_argument("--json", action="store_true")
    propose.set_defaults(handler=_propose)


def _propose(args: argparse.Namespace) -> int:
    changes = parse_changes(args.changes)  # the words first: a typo stops before the database
    runtime = build_runtime(Settings(), check_model=False, create=True, recover=False)
    service = runtime.service
    printer = Printer(args.json)
    request = service.policy_changes.propose(args.channel, changes, proposed_by=terminal_identity())
    printer.request(request)
    if not printer.as_json:
        print(f"Someone else decides it, from any shell, with `{decide_command(request)}`.")
    return EXIT_OK


def decide_command(request: ApprovalRequest) -> str:
    """The command that approves `request` from another shell."""
    return (
        f"reconbot decide {request.pause_id} approve "
        f"--authorization {shlex.quote(request.authorization_identity)}"
    )


def decide_policy_change(
    service: UseCases,
    printer: Printer,
    action: str,
    pause: tuple[str, str],
    approver: Approver,
    words: str,
) -> ApprovalRequest | int:
    """`reconbot decide` on a policy change: approve puts its version in force (and prints the
    channel's requests it made again), edit proposes the given values on top of it."""
    pause_id, authorization = pause
    if action == "edit":
        changes = parse_changes(shlex.split(words))
        request = service.policy_changes.edit(pause_id, authorization, approver, changes)
        printer.request(request)
        return request
    approved = service.policy_changes.approve(pause_id, authorization, approver)
    change = approved.request.policy_change
    assert change is not None
    document = {
        "type": "policy_in_force",
        "pause_id": pause_id,
        "channel": change.channel,
        "version": change.after_version,
        "superseded": approved.superseded,
        "reissued": [r.pause_id for r in approved.reissued],
        "not_reissued": approved.not_reissued,
    }
    text = [f"Policy {change.after_version} is in force in {change.channel}."]
    text.extend(
        f"{r.investigation_id}: its pending request was made again under it ({r.pause_id})."
        for r in approved.reissued
    )
    text.extend(
        f"{case}: its request was superseded, and its new one could not be made now (the log "
        f"says why); `reconbot status {case}` shows it waiting."
        for case in approved.not_reissued
    )
    printer.emit(document, "\n".join(text))
    return EXIT_OK
