"""The workflow commands of the console script: investigate, decide, status, migrate, audit.

They drive the same service as the Slack bot, on the configured (by default embedded) storage,
so an investigation paused in a terminal can be decided later from another process, or in Slack.
A terminal acts as its operating-system account (`os:NAME`), never as USER or LOGNAME say.
With `--json` every step prints exactly one JSON document on one line.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TextIO

from agent.data.schema import READING_OPTIONS, SCHEMA, Role
from agent.domain import ApprovalRequest, Approver, Outcome
from agent.errors import ApprovalRefusedError, ReconbotError, WorkflowError
from agent.usecases import UseCases
from agent.usecases.common import Upload
from bot.composition import Runtime, build_runtime, migrate_database
from bot.config import Settings
from bot.readings import describe_reading
from bot.status_text import render_outcome, render_status
from bot.terminal import TerminalProgress, terminal_identity

EXIT_OK, EXIT_REFUSED, EXIT_REJECTED = 0, 2, 3
PROMPT = "decision> approve | reject REASON | edit [ROLE.]FIELD=COLUMN ... | ask QUESTION\n"


def add_commands(commands: Any) -> None:
    """Register the workflow subcommands on the console script's parser."""
    investigate = commands.add_parser(
        "investigate", help="investigate two files in the terminal, deciding on stdin"
    )
    investigate.add_argument("orders")
    investigate.add_argument("payments")
    investigate.add_argument("--json", action="store_true")
    investigate.set_defaults(handler=_investigate)

    decide = commands.add_parser("decide", help="decide a pending request from any process")
    decide.add_argument("pause_id")
    decide.add_argument("action", choices=["approve", "reject", "edit"])
    decide.add_argument(
        "reason",
        nargs="*",
        help="why (required to reject); for edit, [ROLE.]FIELD=COLUMN or ROLE.OPTION=VALUE ...",
    )
    decide.add_argument(
        "--authorization", help="required: the authorization identity printed with the request"
    )
    decide.add_argument("--json", action="store_true")
    decide.set_defaults(handler=_decide)

    status = commands.add_parser("status", help="an investigation's saved state and outcome")
    status.add_argument("investigation_id")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=_status)

    migrate = commands.add_parser("migrate", help="apply database migrations")
    migrate.set_defaults(handler=_migrate)

    audit = commands.add_parser("audit", help="audit log commands")
    audit_commands = audit.add_subparsers(dest="audit_command", required=True)
    verify = audit_commands.add_parser("verify", help="check the audit log's hash chain")
    verify.set_defaults(handler=_audit_verify)


def _runtime(*, agent: bool = True) -> Runtime:
    """The runtime; commands that never run the agent skip the model's start-up check."""
    return build_runtime(Settings(), check_model=agent)


class Printer:
    """Prints each step for a person, or as one JSON document per line."""

    def __init__(self, as_json: bool, out: TextIO = sys.stdout) -> None:
        self.as_json = as_json
        self.out = out

    def emit(self, document: dict[str, Any], text: str) -> None:
        """Print one step."""
        if self.as_json:
            print(json.dumps(document, ensure_ascii=False), file=self.out, flush=True)
        else:
            print(text, file=self.out, flush=True)

    def request(self, request: ApprovalRequest) -> None:
        """Print an approval request (or a clarification)."""
        self.emit(request_document(request), render_request(request))

    def outcome(self, outcome: Outcome) -> None:
        """Print an outcome."""
        self.emit(outcome_document(outcome), render_outcome(outcome))

    def refusal(self, error: ApprovalRefusedError) -> None:
        """Print a refused decision."""
        self.emit(
            {"type": "refusal", "reason": error.reason, "message": str(error)},
            f"Refused ({error.reason}): {error}",
        )


def request_document(request: ApprovalRequest) -> dict[str, Any]:
    """The JSON form of a request: ids, kind, mapping, inputs and the authorization identity."""
    return {
        "type": "request",
        "investigation_id": request.investigation_id,
        "pause_id": request.pause_id,
        "kind": request.kind.value,
        "revision": request.revision,
        "files": [f.model_dump(mode="json") for f in request.files],
        "input_identity": request.input_identity,
        "mapping": request.mapping.model_dump(mode="json") if request.mapping else None,
        "mapping_digest": request.mapping_digest,
        "policy_version": request.policy_version,
        "authorization_identity": request.authorization_identity,
        "expires_at": request.expires_at.isoformat(),
        "questions": [c.model_dump(mode="json") for c in request.clarifications],
        "problems": request.problems,
        "message": request.message,
    }


def outcome_document(outcome: Outcome) -> dict[str, Any]:
    """The JSON form of an outcome: counts per category id, and where the exceptions are."""
    return {
        "type": "outcome",
        "investigation_id": outcome.investigation_id,
        "pause_id": outcome.pause_id,
        "revision": outcome.revision,
        "counts": outcome.counts,
        "total_findings": sum(outcome.counts.values()),
        "export_digest": outcome.export_digest,
        "export_rows": outcome.export_rows,
        "ledger": outcome.summary.get("ledger", []),
        "report": outcome.report,
    }


def render_request(request: ApprovalRequest) -> str:
    """A request as a person reads it in a terminal."""
    title = {
        "confirmation": "Approval needed",
        "clarification": "A question before approval",
        "blocked_reconcile": "Reconciling is blocked until the mapping is approved",
    }[request.kind.value]
    lines = [
        f"{title}: {request.investigation_id}, revision {request.revision}",
        f"  request {request.pause_id}, expires {request.expires_at:%Y-%m-%d %H:%M} UTC",
    ]
    for ref in request.files:
        rows = request.rows.get(ref.role.value)
        shown = f", {rows:,} rows" if rows is not None else ""
        lines.append(
            f"  {ref.role.value}: {ref.name} ({ref.size:,} bytes{shown}) {ref.digest[:19]}…"
        )
    if request.fields:
        lines.append("  mapping:")
        for reading in request.fields:
            if reading.column is None:
                continue
            samples = ", ".join(reading.samples[:3])
            lines.append(
                f"    {reading.role.value}.{reading.field:<16} <- {reading.column!r:<28} "
                f"{reading.confidence_percent:>3}%  e.g. {samples}"
            )
    if request.mapping is not None:
        for role in Role:
            lines.append(
                f"    {role.value} read as: {describe_reading(request.mapping.for_role(role))}"
            )
    if request.mapping_digest:
        lines.append(f"  mapping digest {request.mapping_digest}")
    lines.append(f"  policy {request.policy_version}")
    lines.append(f"  authorization {request.authorization_identity}")
    lines.extend(f"  problem: {p}" for p in request.problems)
    for question in request.clarifications:
        lines.append(f"  question: {question.question}")
        if question.choices:
            lines.append(f"    choices: {', '.join(question.choices)}")
    lines.extend(f"  note: {w}" for w in request.warnings)
    lines.append(f"  {request.message}")
    return "\n".join(lines)


def parse_edit(text: str) -> dict[Role, dict[str, str]]:
    """`[ROLE.]FIELD=COLUMN ...` and `ROLE.OPTION=VALUE ...` as answers.

    Quote columns and values with spaces (or let them run on), and patterns with backslashes
    in single quotes (`payments.id_pattern='#\\s*(\\d+)'`).
    """
    answers: dict[Role, dict[str, str]] = {}
    last: tuple[Role, str] | None = None
    for token in shlex.split(text):
        if "=" not in token:
            if last is None:
                raise WorkflowError(f'"{token}" is not FIELD=COLUMN')
            role, name = last
            answers[role][name] += " " + token
            continue
        key, _, column = token.partition("=")
        role_name, _, field_name = key.rpartition(".")
        if role_name:
            try:
                role = Role(role_name)
            except ValueError:
                raise WorkflowError(
                    f'"{role_name}" is not a role; use orders or payments'
                ) from None
        else:
            roles = [
                r
                for r in Role
                if field_name in READING_OPTIONS or any(s.name == field_name for s in SCHEMA[r])
            ]
            if len(roles) != 1:
                raise WorkflowError(
                    f'say which file "{field_name}" is for: orders.{field_name} or '
                    f"payments.{field_name}"
                    if roles
                    else f'no file has a field "{field_name}"'
                )
            role = roles[0]
        answers.setdefault(role, {})[field_name] = column
        last = (role, field_name)
    if not answers:
        raise WorkflowError('edit what? e.g. edit payments.captured_amount="Amount Captured"')
    return answers


def _investigate(args: argparse.Namespace) -> int:
    return investigate_files(args.orders, args.payments, as_json=args.json)


def investigate_files(orders: str | Path, payments: str | Path, *, as_json: bool) -> int:
    """Investigate two files in this terminal, deciding on stdin; returns the exit code."""
    service = _runtime().service
    printer = Printer(as_json)
    user = terminal_identity()
    with ExitStack() as stack:
        uploads = [
            Upload(stack.enter_context(open(path, "rb")), Path(path).name, local=True)
            for path in (orders, payments)
        ]
        started = service.intake.start(uploads, requested_by=user, progress=TerminalProgress())
    request = started.request
    assert request is not None
    printer.request(request)
    return _decision_loop(service, printer, request, user)


def _decision_loop(service: UseCases, printer: Printer, request: ApprovalRequest, user: str) -> int:
    interactive = sys.stdin.isatty()
    while True:
        if interactive and not printer.as_json:
            print(PROMPT, end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            ids = {"pause_id": request.pause_id, "investigation_id": request.investigation_id}
            printer.emit(
                {"type": "pending", **ids},
                f"No decision given: request {request.pause_id} stays pending. Decide later with "
                f"`reconbot decide {request.pause_id} approve --authorization "
                f"{request.authorization_identity}` (or reject REASON).",
            )
            return EXIT_OK
        command, _, rest = line.strip().partition(" ")
        try:
            if command in ("approve", "reject", "edit"):
                pause = (request.pause_id, request.authorization_identity)
                done = _apply(service, printer, command, pause, user, rest)
                if isinstance(done, int):
                    return done
                request = done
            elif command == "ask":
                answer = service.questions.ask(request.investigation_id, rest, actor=user)
                printer.emit({"type": "answer", "text": answer.text}, answer.text)
                if answer.request is not None:
                    request = answer.request
                    printer.request(request)
            elif command:
                printer.emit(
                    {"type": "error", "message": f"unknown decision {command!r}"},
                    f"Unknown decision {command!r}. {PROMPT.strip()}",
                )
        except ApprovalRefusedError as error:
            printer.refusal(error)
        except ReconbotError as error:
            printer.emit({"type": "error", "message": str(error)}, f"reconbot: {error}")


def _apply(
    service: UseCases, printer: Printer, action: str, pause: tuple[str, str], user: str, words: str
) -> ApprovalRequest | int:
    """Decide `pause` (id, authorization) as `user`, printing the result: exit code, or edit."""
    pause_id, authorization = pause
    approver = Approver(user=user)
    if action == "approve":
        printer.outcome(service.decisions.confirm(pause_id, authorization, approver))
        return EXIT_OK
    if action == "reject":
        state = service.decisions.reject(pause_id, authorization, approver, words)
        document = {"type": "rejected", "pause_id": pause_id, "reason": state.reason}
        printer.emit(document, f"Rejected: {state.reason}")
        return EXIT_REJECTED
    request = service.decisions.edit(
        pause_id, authorization, approver, parse_edit(words), progress=TerminalProgress()
    )
    printer.request(request)
    return request


def _decide(args: argparse.Namespace) -> int:
    if not args.authorization:  # never looked up: a decision names the request it was shown
        raise WorkflowError(
            "decide needs --authorization ID: the authorization identity printed with the "
            "request, and by `reconbot status INV-…` for each pending request"
        )
    service = _runtime().service
    printer = Printer(args.json)
    # The shell already split the words: for edit, quote them again so parse_edit sees them whole.
    words = (shlex.join if args.action == "edit" else " ".join)(args.reason)
    try:
        pause = (args.pause_id, args.authorization)
        done = _apply(service, printer, args.action, pause, terminal_identity(), words)
        return done if isinstance(done, int) else EXIT_OK
    except ApprovalRefusedError as error:
        printer.refusal(error)
        return EXIT_REFUSED


def _status(args: argparse.Namespace) -> int:
    service = _runtime(agent=False).service
    report = service.queries.status(args.investigation_id)
    if args.json:
        print(report.model_dump_json())
        return EXIT_OK
    print(render_status(report))
    return EXIT_OK


def _migrate(_: argparse.Namespace) -> int:
    revision = migrate_database(Settings())
    print(f"database at revision {revision}")
    return EXIT_OK


def _audit_verify(_: argparse.Namespace) -> int:
    runtime = build_runtime(Settings(), recover=False, check_model=False)
    with runtime.uow() as uow:
        checked, broken = uow.audit.verify()
    if broken is None:
        print(f"audit log verified: {checked} entries, chain intact")
        return EXIT_OK
    print(
        f"audit log BROKEN at entry {broken}: it or the entry before it was changed "
        f"({checked} entries verified before it)"
    )
    return EXIT_REFUSED
