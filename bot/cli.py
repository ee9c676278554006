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
    reconbot explain [CATEGORY]

`inspect` proposes how to read the two files (roles, columns, formats) and checks the proposal
on every row; `reconcile` runs only under a mapping file that a person saved or edited, which
is the terminal form of an approval. Exit codes: 0 done, 1 internal error, 2 bad input or a
refusal, 3 rejected by the person.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent.data.demo import generate
from agent.data.ingest import inspect_csv
from agent.data.mapping import Proposal, infer_mapping
from agent.data.normalize import ValidationReport
from agent.data.pipeline import run_job
from agent.data.reconcile import Reconciliation, connect, load_and_validate
from agent.data.schema import Mapping, Role
from agent.errors import MappingError, ReconbotError
from bot import slack_cli, workflow_cli
from bot.composition import configured_policy
from bot.config import Settings

logger = logging.getLogger(__name__)

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT = 0, 1, 2


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the process exit code."""
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    args = _parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except ReconbotError as error:
        print(f"reconbot: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception:
        logger.exception("command=%s | internal error", args.command)
        print("reconbot: internal error (details are in the log above)", file=sys.stderr)
        return EXIT_INTERNAL


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
    explain.set_defaults(handler=_explain)
    workflow_cli.add_commands(commands)
    slack_cli.add_commands(commands)
    return parser


def _demo_data(args: argparse.Namespace) -> int:
    truth = generate(args.rows, args.out, seed=args.seed)
    print(
        f"wrote {args.out / 'orders.csv'}, {args.out / 'payments.csv'}, {args.out / 'truth.json'}"
    )
    print(json.dumps(truth["findings"], indent=2))
    return EXIT_OK


def _inspect(args: argparse.Namespace) -> int:
    samples = [inspect_csv(p, p.name) for p in (args.first, args.second)]
    proposal = infer_mapping(*samples)
    report: ValidationReport | None = None
    mapping = proposal.mapping
    if mapping is not None:
        paths = {
            s.layout.file_name: p for s, p in zip(samples, (args.first, args.second), strict=True)
        }
        files = {
            Role.ORDERS: (paths[proposal.orders.file_name], proposal.orders.file_name),
            Role.PAYMENTS: (paths[proposal.payments.file_name], proposal.payments.file_name),
        }
        report = load_and_validate(connect(), files, mapping)
        if args.save_mapping and report.ok:
            args.save_mapping.write_text(mapping.model_dump_json(indent=2) + "\n")
    if args.json:
        print(json.dumps(_proposal_document(proposal, report), indent=2))
    else:
        print(render_proposal(proposal, report))
        if args.save_mapping and report is not None and report.ok:
            print(f"\nmapping saved to {args.save_mapping}")
    return EXIT_OK if mapping is not None and report is not None and report.ok else EXIT_BAD_INPUT


def _reconcile(args: argparse.Namespace) -> int:
    policy = configured_policy(Settings())  # configuration first: a bad policy file stops here
    mapping = _read_mapping(args.mapping)
    files = {
        Role.ORDERS: (args.orders, args.orders.name),
        Role.PAYMENTS: (args.payments, args.payments.name),
    }
    result = run_job(files, mapping, policy, args.export)
    if args.json:
        summary = result.reconciliation.summary()
        document = {
            "inputs": {role.value: digest for role, digest in result.digests.items()},
            "summary": summary.model_dump(mode="json"),
            "exceptions_csv": str(args.export),
        }
        print(json.dumps(document, indent=2))
    else:
        print(render_outcome(result.reconciliation, result.digests))
        print(f"\n{result.exported} exceptions written to {args.export}")
    return EXIT_OK


def _read_mapping(path: Path) -> Mapping:
    """The approved mapping saved at `path`; a clear error when it is missing or not one."""
    try:
        return Mapping.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MappingError(
            f"no mapping file at {path}; save one with `reconbot inspect … --save-mapping`"
        ) from None
    except (ValidationError, UnicodeDecodeError) as error:
        raise MappingError(f"{path} is not a saved reconbot mapping ({error})") from None


def _explain(args: argparse.Namespace) -> int:
    """The configured policy (RECONBOT_POLICY or the defaults): its version and where it came
    from first, then its values and its rules in words, or one category's rule."""
    policy = configured_policy(Settings())
    rules = policy.explanations()
    if args.category and args.category not in rules:
        print(f"reconbot: no such category {args.category!r}; one of {', '.join(rules)}")
        return EXIT_BAD_INPUT
    print(f"policy {policy.version}\nfrom {policy.source}\n")
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
    document["validation"] = (
        None
        if report is None
        else {
            "ok": report.ok,
            "rows": report.rows,
            "errors": report.errors,
            "warnings": report.warnings,
            "facts": report.facts,
        }
    )
    return document


def render_proposal(proposal: Proposal, report: ValidationReport | None) -> str:
    """The proposal as a person reads it in a terminal."""
    lines = [f"Roles decided with confidence {proposal.role_confidence:.0%}"]
    for dataset in (proposal.orders, proposal.payments):
        lines.append(
            f"\n{dataset.role.value}: {dataset.file_name} ({dataset.sampled_rows} rows sampled)"
        )
        for choice in dataset.choices:
            column = f'"{choice.column}"' if choice.column else "-"
            star = "*" if choice.required else " "
            sample = ", ".join(choice.samples[:2])
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
        lines.extend(f"   note: {note}" for note in dataset.notes)
    for question in proposal.clarifications:
        lines.append(f"\nQUESTION: {question.question} Choices: {', '.join(question.choices)}")
    if report is not None:
        lines.append("")
        lines.extend(f"checked: {fact}" for fact in report.facts)
        lines.extend(f"ERROR: {e}" for e in report.errors)
        lines.extend(f"warning: {w}" for w in report.warnings)
        if report.ok:
            lines.append("Every mapped value reads under this mapping.")
    return "\n".join(lines)


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
        money = ", ".join(f"{c} {a}" for c, a in sorted(total.difference_by_currency.items()))
        lines.append(f"  {total.category:<28} {total.count:>8,}  {money}")
    lines.append("\nMatched per currency:")
    for cur in summary.currencies:
        lines.append(
            f"  {cur.currency}: {cur.matched_orders:,} of {cur.orders:,} orders matched "
            f"({cur.matched_total} of {cur.order_total}); {cur.captures:,} captures, "
            f"{cur.captured_total}"
        )
    top = run.findings(limit=5)
    if top:
        lines.append("\nFirst findings:")
        for finding in top:
            where = "; ".join(
                f"{e.file} rows {', '.join(map(str, e.rows[:5]))}" for e in finding.evidence
            )
            lines.append(
                f"  {finding.category}: orders {', '.join(finding.order_ids) or '-'}, "
                f"payments {', '.join(finding.payment_ids) or '-'}; expected {finding.expected} "
                f"{finding.currency}, found {finding.actual} ({where})"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
