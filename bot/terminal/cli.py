"""The `reconbot` console script.

Commands (docs/design.md §10; the Slack commands arrive with the bot):

    reconbot investigate ORDERS PAYMENTS [--json]      decide on stdin: approve | reject REASON |
                                                       edit [ROLE.]FIELD=COLUMN | ask QUESTION
    reconbot decide PAUSE-ID approve|reject [REASON] [--json]
    reconbot status INV-ID [--json]
    reconbot migrate
    reconbot audit verify
    reconbot demo-data --rows N --out DIR [--seed S]
    reconbot inspect ORDERS PAYMENTS [--json] [--save-mapping FILE]
    reconbot reconcile ORDERS PAYMENTS --mapping FILE [--export FILE] [--json]
    reconbot explain [CATEGORY] [--channel C]
    reconbot policy propose KEY=VALUE ... [--channel C] [--json]

`inspect` proposes how to read the two files (roles, columns, formats) and checks the proposal
on every row; `reconcile` runs only under a mapping file that a person saved or edited, which
is the terminal form of an approval. Exit codes: 0 done, 1 internal error, 2 bad input or a
refusal, 3 rejected by the person.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent.casefiles import Reconciliation, inspect_files, reconcile_files, validate_files
from agent.data.demo import generate
from agent.data.mapping import Proposal
from agent.data.money import format_amount, format_money
from agent.data.normalize import ValidationReport
from agent.data.schema import Mapping, Role
from agent.data.wording import words_of
from agent.errors import CommandLineError, MappingError, ReconbotError
from bot.composition import build_runtime, configured_policy
from bot.config import Settings
from bot.presentation.text import cell, printable
from bot.terminal import policy_cli, slack_cli, workflow_cli
from bot.terminal.console import STEP_WORDS, TerminalProgress
from bot.terminal.paths import nonempty_file, output_file, output_folder, readable_file
from bot.terminal.policy_text import policy_lines

logger = logging.getLogger(__name__)

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the process exit code."""
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    args = _parser().parse_args(argv)
    as_json = bool(getattr(args, "json", False))
    try:
        code = int(args.handler(args))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        return _output_closed()
    except KeyboardInterrupt:
        print("reconbot: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ReconbotError as error:
        _say_error(str(error), type(error).__name__, as_json=as_json)
        return EXIT_BAD_INPUT
    except ValidationError as error:  # Settings(): a setting that cannot work
        _say_error(settings_problem(error), "ConfigurationError", as_json=as_json)
        return EXIT_BAD_INPUT
    except Exception:
        logger.exception("command=%s | internal error", args.command)
        _say_error("internal error (details are in the log)", "InternalError", as_json=as_json)
        return EXIT_INTERNAL


def settings_problem(error: ValidationError) -> str:
    """A settings error in one sentence naming each variable and what is wrong, never the
    value given (it may be a secret)."""
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "settings"
        problems.append(f"{name}: {str(item['msg']).removeprefix('Value error, ')}")
    return "a setting cannot be used: " + "; ".join(problems)


def _say_error(message: str, kind: str, *, as_json: bool) -> None:
    """One sentence on stderr; with --json also an `error` document on stdout, so a program
    reading one document per line learns why the command stopped."""
    try:
        print(f"reconbot: {message}", file=sys.stderr, flush=True)
        if as_json:
            document = {"type": "error", "error": kind, "message": message}
            print(json.dumps(document, ensure_ascii=False), flush=True)
    except BrokenPipeError:
        _output_closed()


def _output_closed() -> int:
    """The reader of stdout went away (`| head`): stop quietly. What was decided before
    stays decided; stdout is pointed at /dev/null so the interpreter's final flush is quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        os.dup2(devnull, stream.fileno())
    os.close(devnull)
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reconbot", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo-data", help="write realistic demo exports and truth.json")
    demo.add_argument("--rows", type=int, required=True, help="number of orders")
    demo.add_argument("--out", type=Path, required=True)
    demo.add_argument("--seed", type=int, default=7)
    demo.set_defaults(handler=_demo_data)

    inspect = commands.add_parser("inspect", help="propose and check a mapping for two files")
    inspect.add_argument("first", type=Path)
    inspect.add_argument("second", type=Path)
    inspect.add_argument("--json", action="store_true")
    inspect.add_argument("--save-mapping", type=Path)
    inspect.set_defaults(handler=_inspect)

    rec = commands.add_parser("reconcile", help="reconcile two files under a saved mapping")
    rec.add_argument("orders", type=Path)
    rec.add_argument("payments", type=Path)
    rec.add_argument("--mapping", type=Path, required=True)
    rec.add_argument("--export", type=Path, default=Path("exceptions.csv"))
    rec.add_argument("--json", action="store_true")
    rec.set_defaults(handler=_reconcile)

    explain = commands.add_parser("explain", help="explain the reconciliation rules")
    explain.add_argument("category", nargs="?")
    explain.add_argument(
        "--channel", help="the Slack channel (an id, C…) whose policy in force to show"
    )
    explain.set_defaults(handler=_explain)
    workflow_cli.add_commands(commands)
    policy_cli.add_commands(commands)
    slack_cli.add_commands(commands)
    return parser


def _demo_data(args: argparse.Namespace) -> int:
    if args.rows < 1:
        raise CommandLineError(f"--rows {args.rows}: write at least one order")
    out = output_folder(args.out, option="--out")
    with TerminalProgress().step(f"writing {args.rows:,} demo orders and their payments…"):
        truth = generate(args.rows, out, seed=args.seed)
    print(f"wrote {out / 'orders.csv'}, {out / 'payments.csv'}, {out / 'truth.json'}")
    print(json.dumps(truth["findings"], indent=2))
    return EXIT_OK


def _inspect(args: argparse.Namespace) -> int:
    inputs = [readable_file(path) for path in (args.first, args.second)]
    if args.save_mapping is not None:
        keep = [*inputs, *Settings().state_paths()]
        args.save_mapping = output_file(args.save_mapping, option="--save-mapping", keep=keep)
    policy = configured_policy(Settings())  # configuration first: a bad policy file stops here
    progress = TerminalProgress()
    with progress.step(STEP_WORDS["inspect_datasets"]):
        samples, proposal = inspect_files(inputs, policy)
    report: ValidationReport | None = None
    if proposal.mapping is not None:
        # The id reading the files show is taken as the bot takes it (`take_evident`).
        with progress.step(STEP_WORDS["validate_mapping"]):
            proposal, report = validate_files(inputs, samples, proposal, policy)
    mapping = proposal.mapping
    if report is not None and report.ok and args.save_mapping and mapping is not None:
        args.save_mapping.write_text(mapping.model_dump_json(indent=2) + "\n")
    complete = {s.layout.file_name for s in samples if s.complete}
    if args.json:
        print(json.dumps(_proposal_document(proposal, report), ensure_ascii=False))
    else:
        print(printable(render_proposal(proposal, report, complete=complete)))
        if args.save_mapping and report is not None and report.ok:
            print(f"\nmapping saved to {args.save_mapping}")
    return EXIT_OK if mapping is not None and report is not None and report.ok else EXIT_BAD_INPUT


def _reconcile(args: argparse.Namespace) -> int:
    settings = Settings()
    policy = configured_policy(settings)  # configuration first: a bad policy file stops here
    orders, payments = (nonempty_file(readable_file(p)) for p in (args.orders, args.payments))
    keep = [orders, payments, args.mapping, *settings.state_paths()]
    export = output_file(args.export, option="--export", keep=keep)
    mapping = _read_mapping(args.mapping)
    files = {
        Role.ORDERS: (orders, orders.name),
        Role.PAYMENTS: (payments, payments.name),
    }
    with TerminalProgress().step("reading both files and reconciling…"):
        result = reconcile_files(files, mapping, policy, export)
    if args.json:
        summary = result.reconciliation.summary()
        document = {
            "type": "outcome",
            "inputs": {role.value: digest for role, digest in result.digests.items()},
            "summary": summary.model_dump(mode="json"),
            "exceptions_csv": str(export),
            "export_rows": result.exported,
        }
        print(json.dumps(document, ensure_ascii=False))
    else:
        print(printable(render_outcome(result.reconciliation, result.digests)))
        print(f"\nExceptions CSV ({result.exported:,} rows: findings, then ignored rows): {export}")
    return EXIT_OK


def _read_mapping(path: Path) -> Mapping:
    """The approved mapping saved at `path`; a clear error when it is missing or not one."""
    try:
        return Mapping.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MappingError(
            f"no mapping file at {path}; save one with `reconbot inspect … --save-mapping`"
        ) from None
    except IsADirectoryError:
        raise MappingError(f"--mapping {path} is a folder, not a saved mapping") from None
    except (ValidationError, UnicodeDecodeError) as error:
        raise MappingError(f"{path} is not a saved reconbot mapping ({error})") from None


def _explain(args: argparse.Namespace) -> int:
    """The policy in force in a channel (`--channel`; else the terminal's cases'): its version
    and where it came from first, how it came to be in force there, then its values and its
    rules in words, or one category's rule. Until a change is approved in the channel, and
    where no database was made yet, that is the configured policy (RECONBOT_POLICY or the
    defaults)."""
    settings = Settings()
    policy = configured_policy(settings)
    shown = None
    if settings.sqlite_path is None or settings.sqlite_path.exists():
        service = build_runtime(settings, check_model=False, create=False, recover=False).service
        shown = service.policies.of_channel(args.channel)
        policy = shown.policy
    rules = policy.explanations()
    if args.category and args.category not in rules:
        raise CommandLineError(f"no such category {args.category!r}; one of {', '.join(rules)}")
    print(f"policy {policy.version}\nfrom {policy.source}\n")
    if shown is not None:
        print("\n".join(policy_lines(shown)))
    if args.category:
        print(rules[args.category])
        return EXIT_OK
    values = policy.rule_values()
    width = max(map(len, values))
    for key, value in values.items():
        print(f"  {key:<{width}}  {value}")
    print()
    for name, text in rules.items():
        print(f"{name}\n  {text}\n")
    return EXIT_OK


def _proposal_document(proposal: Proposal, report: ValidationReport | None) -> dict[str, Any]:
    document: dict[str, Any] = proposal.model_dump(mode="json")
    document["mapping"] = proposal.mapping.canonical() if proposal.mapping else None
    for dataset in (proposal.orders, proposal.payments):
        document[dataset.role.value]["notes"] = words_of(dataset.notes)
    document["validation"] = (
        None
        if report is None
        else {
            "ok": report.ok,
            "rows": report.rows,
            "errors": words_of(report.errors),
            "warnings": words_of(report.warnings),
            "facts": words_of(report.facts),
            "routine": words_of(report.routine),
        }
    )
    return document


def render_proposal(
    proposal: Proposal, report: ValidationReport | None, *, complete: Collection[str] = ()
) -> str:
    """The proposal as a person reads it in a terminal; `complete` names the files whose
    sample was the whole file."""
    lines = [f"Roles decided with confidence {proposal.role_confidence:.0%}"]
    for dataset in (proposal.orders, proposal.payments):
        total = report.rows.get(dataset.role.value) if report is not None else None
        lines.append(
            f"\n{dataset.role.value}: {dataset.file_name} "
            f"({_sampled(dataset.sampled_rows, total, dataset.file_name in complete)})"
        )
        for choice in dataset.choices:
            column = f'"{cell(choice.column)}"' if choice.column else "-"
            star = "*" if choice.required else " "
            sample = ", ".join(cell(value) for value in choice.samples[:2])
            lines.append(
                f"  {star}{choice.field:<16} <- {column:<28} {choice.confidence:>4.0%}  {sample}"
            )
        options = dataset.options
        lines.append(
            f"   read as {options.encoding}, {options.delimiter!r}-separated, header on line "
            f"{options.header_row}"
        )
        for field, reading in options.amounts.items():
            lines.append(
                f"   {field}: decimal {reading.decimal!r}, thousands {reading.thousands!r}, "
                f"{reading.unit} units"
            )
        lines.extend(f"   note: {note}" for note in words_of(dataset.notes))
    for question in proposal.clarifications:
        lines.append(f"\nQUESTION: {question.question} Choices: {', '.join(question.choices)}")
    if report is not None:
        lines.append("")
        lines.extend(f"checked: {fact}" for fact in words_of([*report.facts, *report.routine]))
        lines.extend(f"ERROR: {e}" for e in words_of(report.errors))
        lines.extend(f"warning: {w}" for w in words_of(report.warnings))
        if report.ok and not report.warnings:
            lines.append("Every mapped value reads under this mapping.")
        elif report.ok:
            lines.append("The mapping can be approved; read the warnings above first.")
    return "\n".join(lines)


def _sampled(sampled: int, total: int | None, complete: bool) -> str:
    """How much of a file the proposal was inferred from, in words."""
    if complete:
        return f"all {sampled:,} rows read"
    if total is not None:
        return f"first {sampled:,} of {total:,} rows sampled, every row checked"
    return f"first {sampled:,} rows sampled"


def render_outcome(run: Reconciliation, digests: dict[Role, str]) -> str:
    """The outcome as a person reads it in a terminal: summary and top findings."""
    summary = run.summary()
    lines = [
        f"Reconciled {summary.orders:,} orders ({summary.order_rows:,} rows) against "
        f"{summary.payments:,} payments ({summary.payment_rows:,} rows, "
        f"{summary.failed_attempts:,} failed attempts ignored); policy {summary.policy_version}",
    ]
    lines.extend(f"  {role.value}: {digest}" for role, digest in digests.items())
    lines.append("\nEvery row accounted for:")
    lines.extend(f"  {ledger.line()}" for ledger in summary.ledger)
    lines.append("\nFindings:")
    for total in summary.categories:
        money = ", ".join(
            format_money(a, c) for c, a in sorted(total.difference_by_currency.items())
        )
        lines.append(f"  {total.category:<28} {total.count:>8,}  {money}")
    lines.append("\nMatched per currency:")
    for cur in summary.currencies:
        lines.append(
            f"  {cur.currency}: {cur.matched_orders:,} of {cur.orders:,} orders matched "
            f"({format_amount(cur.matched_total)} of {format_amount(cur.order_total)}); "
            f"{cur.captures:,} captures, {format_amount(cur.captured_total)}"
        )
    top = run.examples(5)
    if top:
        lines.append("\nExamples (the largest of each category first; the exceptions CSV has all):")
        for finding in top:
            where = "; ".join(
                f"{e.file} rows {', '.join(map(str, e.rows[:5]))}"
                + (f" and {len(e.rows) - 5:,} more" if len(e.rows) > 5 else "")
                for e in finding.evidence
            )
            lines.append(
                f"  {finding.category}: orders {', '.join(finding.order_ids) or '-'}, "
                f"payments {', '.join(finding.payment_ids) or '-'}; expected "
                f"{format_money(finding.expected, finding.currency)}, found "
                f"{format_money(finding.actual, finding.currency)} ({where})"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
