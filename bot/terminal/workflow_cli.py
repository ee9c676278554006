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
from functools import partial
from pathlib import Path
from typing import Any

from agent.data.schema import READING_OPTIONS, SCHEMA, Role
from agent.domain import ApprovalRequest, Approver, PauseKind, PauseStatus
from agent.errors import ApprovalRefusedError, ReconbotError, WorkflowError
from agent.usecases import UseCases
from agent.usecases.common import Upload
from bot.composition import Runtime, build_runtime, migrate_database
from bot.config import Settings
from bot.presentation.text import printable
from bot.terminal.console import STEP_WORDS, TerminalProgress, terminal_identity
from bot.terminal.exceptions_file import locate_exceptions
from bot.terminal.paths import nonempty_file, output_file, readable_file
from bot.terminal.policy_cli import decide_policy_change
from bot.terminal.printer import Printer
from bot.terminal.status_text import render_status

EXIT_OK, EXIT_FAILED, EXIT_REFUSED, EXIT_REJECTED = 0, 1, 2, 3
PROMPT = "decision> approve | reject REASON | edit [ROLE.]FIELD=COLUMN ... | ask QUESTION\n"
AFTER_DECISION = "ask QUESTION, or end with Ctrl-D\n"


def add_commands(commands: Any) -> None:
    """Register the workflow subcommands on the console script's parser."""
    investigate = commands.add_parser(
        "investigate", help="investigate two files in the terminal, deciding on stdin"
    )
    investigate.add_argument("orders")
    investigate.add_argument("payments")
    investigate.add_argument("--json", action="store_true")
    investigate.add_argument(
        "--export", type=Path, metavar="FILE", help="write the exceptions CSV here on approval"
    )
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
    decide.add_argument(
        "--export", type=Path, metavar="FILE", help="write the exceptions CSV here on approval"
    )
    decide.set_defaults(handler=_decide)

    status = commands.add_parser("status", help="an investigation's saved state and outcome")
    status.add_argument("investigation_id", nargs="?", help="without it: where cases are kept")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=_status)

    migrate = commands.add_parser("migrate", help="apply database migrations")
    migrate.set_defaults(handler=_migrate)

    audit = commands.add_parser("audit", help="audit log commands")
    audit_commands = audit.add_subparsers(dest="audit_command", required=True)
    verify = audit_commands.add_parser("verify", help="check the audit log's hash chain")
    verify.set_defaults(handler=_audit_verify)


def _runtime(
    settings: Settings, *, agent: bool = True, create: bool = True, recover: bool = True
) -> Runtime:
    """The runtime; commands that never run the agent skip the model's start-up check,
    commands on existing cases (`create=False`) never create an empty database, and reading
    commands (`recover=False`) never resume an interrupted approval."""
    return build_runtime(settings, check_model=agent, create=create, recover=recover)


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
        raise WorkflowError(
            'edit what? e.g. edit payments.order_id=Description or orders.order_amount="Total"'
        )
    return answers


def _investigate(args: argparse.Namespace) -> int:
    return investigate_files(args.orders, args.payments, as_json=args.json, export=args.export)


def investigate_files(
    orders: str | Path, payments: str | Path, *, as_json: bool, export: Path | None = None
) -> int:
    """Investigate two files in this terminal, deciding on stdin; returns the exit code."""
    paths = [nonempty_file(readable_file(Path(path))) for path in (orders, payments)]
    settings = Settings()
    if export is not None:
        export = output_file(export, option="--export", keep=[*paths, *settings.state_paths()])
    service = _runtime(settings).service
    print(f"reconbot: {settings.describe_state()}", file=sys.stderr, flush=True)
    printer = Printer(as_json)
    printer.locate = partial(locate_exceptions, service, settings, export=export)
    user = terminal_identity()
    progress = TerminalProgress()
    with ExitStack() as stack, progress.step("reading the files…"):
        uploads = [
            Upload(stack.enter_context(open(path, "rb")), path.name, local=True) for path in paths
        ]
        started = service.intake.start(uploads, requested_by=user, progress=progress)
    request = started.request
    assert request is not None
    printer.request(request)
    try:
        return _decision_loop(service, printer, request, user)
    finally:
        service.close()  # a request left pending: its seal is not waited for at exit


def decide_later(request: ApprovalRequest) -> str:
    """The command that decides `request` from another shell: approve a confirmation; answer
    a clarification's first question with an edit (its field and first candidate column)."""
    action = "approve"
    if request.kind is PauseKind.CLARIFICATION:
        action = "edit [ROLE.]FIELD=COLUMN ..."  # a problem above says which
        question = request.clarifications[0] if request.clarifications else None
        if question is not None and question.field and question.choices:
            role = f"{question.role.value}." if question.role else ""
            action = "edit " + shlex.quote(f"{role}{question.field}={question.choices[0]}")
    return (
        f"reconbot decide {request.pause_id} {action} "
        f"--authorization {request.authorization_identity}"
    )


def _decision_loop(service: UseCases, printer: Printer, request: ApprovalRequest, user: str) -> int:
    """Read decisions on stdin until one ends the case, then questions until end of input;
    returns the decision's exit code (pending: 0)."""
    interactive = sys.stdin.isatty()
    decided: int | None = None
    failed = False
    while True:
        if interactive and not printer.as_json:
            print(PROMPT if decided is None else AFTER_DECISION, end="", flush=True)
        line = sys.stdin.readline()
        if not line and decided is not None:
            return decided
        if not line and failed:
            later = decide_later(request)
            printer.emit(
                {"type": "failed", "pause_id": request.pause_id, "decide": later},
                f"The reconciliation of request {request.pause_id} failed (said above); nothing "
                f"was reported. Approving again retries it: `{later}`.",
            )
            return EXIT_FAILED
        if not line:
            ids = {"pause_id": request.pause_id, "investigation_id": request.investigation_id}
            later = decide_later(request)
            printer.emit(
                {"type": "pending", **ids, "decide": later},
                f"No decision given: request {request.pause_id} stays pending. Decide later, "
                f"from any shell, with `{later}` (or reject REASON).",
            )
            return EXIT_OK
        command, _, rest = line.strip().partition(" ")
        try:
            if command in ("approve", "reject", "edit") and decided is not None:
                printer.emit(
                    {"type": "error", "error": "WorkflowError", "message": "already decided"},
                    f"Request {request.pause_id} is decided. {AFTER_DECISION.strip()}",
                )
            elif command in ("approve", "reject", "edit"):
                pause = (request.pause_id, request.authorization_identity)
                done = _apply(service, printer, command, pause, user, rest)
                if isinstance(done, int):
                    decided = done
                else:
                    request = done
            elif command == "ask":
                with TerminalProgress().step("answering the question…"):
                    answer = service.questions.ask(request.investigation_id, rest, actor=user)
                printer.emit({"type": "answer", "text": answer.text}, answer.text)
                if answer.request is not None:
                    request = answer.request
                    printer.request(request)
            elif command:
                printer.emit(
                    {
                        "type": "error",
                        "error": "WorkflowError",
                        "message": f"unknown decision {command!r}",
                    },
                    f"Unknown decision {command!r}. {PROMPT.strip()}",
                )
        except ApprovalRefusedError as error:
            printer.refusal(error)
        except ReconbotError as error:
            document = {"type": "error", "error": type(error).__name__, "message": str(error)}
            printer.emit(document, f"reconbot: {error}")
            state = service.queries.pause(request.pause_id) if command == "approve" else None
            failed = state is not None and state.status is PauseStatus.FAILED


def _apply(
    service: UseCases, printer: Printer, action: str, pause: tuple[str, str], user: str, words: str
) -> ApprovalRequest | int:
    """Decide `pause` (id, authorization) as `user`, printing the result: exit code, or edit."""
    pause_id, authorization = pause
    approver = Approver(user=user)
    progress = TerminalProgress()
    state = service.queries.pause(pause_id)
    if state is not None and state.request.kind is PauseKind.POLICY_CHANGE and action != "reject":
        return decide_policy_change(service, printer, action, pause, approver, words)
    if action == "approve":
        with progress.step(STEP_WORDS["reconcile"]):
            outcome = service.decisions.confirm(pause_id, authorization, approver)
        printer.outcome(outcome)
        return EXIT_OK
    if action == "reject":
        state = service.decisions.reject(pause_id, authorization, approver, words)
        document = {"type": "rejected", "pause_id": pause_id, "reason": state.reason}
        printer.emit(document, f"Rejected: {state.reason}")
        return EXIT_REJECTED
    answers = parse_edit(words)
    with progress.step(STEP_WORDS["validate_mapping"]):
        request = service.decisions.edit(pause_id, authorization, approver, answers, progress)
    printer.request(request)
    return request


def _decide(args: argparse.Namespace) -> int:
    if not args.authorization:  # never looked up: a decision names the request it was shown
        raise WorkflowError(
            "decide needs --authorization ID: the authorization identity printed with the "
            "request, and by `reconbot status INV-…` for each pending request"
        )
    settings = Settings()
    export = args.export
    if export is not None:
        export = output_file(export, option="--export", keep=settings.state_paths())
    service = _runtime(settings, create=False).service
    printer = Printer(args.json)
    printer.locate = partial(locate_exceptions, service, settings, export=export)
    # The shell already split the words: for edit, quote them again so parse_edit sees them whole.
    words = (shlex.join if args.action == "edit" else " ".join)(args.reason)
    try:
        pause = (args.pause_id, args.authorization)
        done = _apply(service, printer, args.action, pause, terminal_identity(), words)
        if isinstance(done, int):
            return done
        if not printer.as_json:  # the new request: say how to decide it, as investigate does
            print(f"Decide it, from any shell, with `{decide_later(done)}`.")
        return EXIT_OK
    except ApprovalRefusedError as error:
        printer.refusal(error)
        return EXIT_REFUSED
    finally:
        service.close()  # an edit's new request left pending: its seal is not waited for


def _status(args: argparse.Namespace) -> int:
    settings = Settings()
    if args.investigation_id is None:
        return _where(settings, as_json=args.json)
    service = _runtime(settings, agent=False, create=False, recover=False).service
    report = service.queries.status(args.investigation_id)
    where = None
    if report.outcome is not None:  # the copy `investigate` printed, kept (or made) again
        where = locate_exceptions(service, settings, report.outcome, None)
    if args.json:
        document = json.loads(report.model_dump_json())
        print(json.dumps({**document, "exceptions_csv": where}, ensure_ascii=False))
        return EXIT_OK
    print(printable(render_status(report, where)))
    print(f"({settings.describe_state()})")
    return EXIT_OK


def _where(settings: Settings, *, as_json: bool) -> int:
    """`reconbot status` alone: where cases are kept, and the newest of them."""
    exists = settings.sqlite_path is None or settings.sqlite_path.exists()
    recent = []
    if exists:
        runtime = _runtime(settings, agent=False, create=False, recover=False)
        recent = runtime.service.queries.recent(limit=10)
    if as_json:
        document = {
            "type": "state",
            "home": str(settings.state_home),
            "database": settings.database_display,
            "database_exists": exists,
            "blobs": settings.blob_url,
            "investigations": [
                {"id": i.id, "status": i.status.value, "requested_by": i.requested_by}
                for i in recent
            ],
        }
        print(json.dumps(document, ensure_ascii=False))
        return EXIT_OK
    print(f"reconbot: {settings.describe_state()}")
    if not exists:
        print("  no database there yet: `reconbot investigate ORDERS PAYMENTS` starts one")
    for inv in recent:
        print(f"  {inv.id}: {inv.status.value}, requested by {inv.requested_by}")
    return EXIT_OK


def _migrate(_: argparse.Namespace) -> int:
    revision = migrate_database(Settings())
    print(f"database at revision {revision}")
    return EXIT_OK


def _audit_verify(_: argparse.Namespace) -> int:
    runtime = build_runtime(Settings(), recover=False, check_model=False, create=False)
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
