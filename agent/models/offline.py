"""The offline model: a deterministic Strands `Model` that plans tool calls from the conversation.

It reads the last `Task:` message and the tool results that followed it, and either calls the
next tool or writes its answer from those results. It is the default model: tests, demos and
air-gapped use behave exactly like a live model, through the same agent loop, tools and hook.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec

from agent.data.currency import is_currency_code
from agent.data.money import format_amount, format_money
from agent.data.policy import CATEGORY_ORDER

T = TypeVar("T", bound=BaseModel)

_TASK = re.compile(r"^Task: (\w+)", re.MULTILINE)
_QUESTION = re.compile(r"^Question from [^:]*: (.*)$", re.MULTILINE | re.DOTALL)
_ID = re.compile(r"#?\b[A-Za-z]{0,6}_?[A-Za-z0-9]*\d[A-Za-z0-9_\-]*")
_POLICY_WORDS = ("rule", "policy", "tolerance", "window", "why", "explain", "mean")
_LIST_WORDS = ("list", "which", "show")
_CURRENCY = re.compile(r"\b[A-Z]{3}\b")
_NOT_CURRENCIES = ("ALL", "TOP", "TRY", "SOS", "CUP")  # ISO codes people write as words
MAX_LOOKUPS = 3
LIST_BUDGET = 2_600
"""The most characters of listed findings in one answer, so that it reads as one short chat
message; the first line says how many there are in all and where every one is."""

# The offline model's stand-in for understanding a question about a kind of finding: the
# category (policy.py's rules) that plain words mean, as a pattern of whole words (hyphens read
# as spaces); the first that matches wins, so the specific come before the general. A live
# model reads list_findings' docstring instead. NONE_SAID: what to say when there is none.
PLAIN_WORDS = {
    "capture_without_order": r"without an? order|for no order|no (matching )?order|unknown order",
    "order_without_capture": r"never paid|not paid|unpaid|no payments?|without (a )?payment",
    "duplicate_payment_row": r"duplicate (payment )?rows?|same payment id",
    "conflicting_duplicate_order": r"duplicate orders?",
    "duplicate_capture": r"paid twice|charged twice|charged more than once|duplicates?",
    "over_capture": r"over ?captured|over ?paid|paid too much",
    "partial_capture": r"partial(ly)?|paid in part|under ?paid|paid too little",
    "amount_mismatch": r"wrong amounts?",
    "currency_mismatch": r"wrong currency|(an)?other currency",
}
NONE_SAID = {
    "capture_without_order": "No payment is without an order",
    "order_without_capture": "No order is without a capture",
    "duplicate_payment_row": "No payment id is on more than one row",
    "duplicate_capture": "No order was charged more than once",
    "over_capture": "No order was over-captured",
    "partial_capture": "No order was captured only in part",
    "amount_mismatch": "No capture has a wrong amount",
    "currency_mismatch": "No payment is in another currency than its order",
}


@dataclass
class ToolCall:
    """The next step is a tool call."""

    name: str
    input: dict[str, Any]


@dataclass
class Reply:
    """The next step is the final text of the turn."""

    text: str


@dataclass
class Done:
    """A tool executed earlier in this turn, with its parsed JSON result."""

    name: str
    input: dict[str, Any]
    ok: bool
    data: dict[str, Any]


def _task(messages: Messages) -> tuple[str, str, list[Done]]:
    """The current task's name and text, and the tools executed since it was given."""
    start = 0
    name, text = "", ""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] != "user":
            continue
        texts = [block["text"] for block in message["content"] if "text" in block]
        match = next((m for m in (_TASK.search(t) for t in texts) if m), None)
        if match:
            start, name, text = index, match.group(1), "\n".join(texts)
            break
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    done = []
    for message in messages[start + 1 :]:
        for block in message["content"]:
            if "toolUse" in block:
                use = block["toolUse"]
                calls[use["toolUseId"]] = (use["name"], dict(use.get("input") or {}))
            elif "toolResult" in block:
                tool_result = block["toolResult"]
                tool_name, tool_input = calls.get(tool_result["toolUseId"], ("", {}))
                raw = "".join(c.get("text", "") for c in tool_result["content"])
                try:
                    data = json.loads(raw)
                except ValueError:
                    data = {"error": raw}
                ok = tool_result.get("status") == "success" and data.get("ok", True)
                done.append(Done(tool_name, tool_input, bool(ok), data))
    return name, text, done


def _last(done: list[Done], name: str) -> Done | None:
    return next((d for d in reversed(done) if d.name == name), None)


def plan(messages: Messages) -> ToolCall | Reply:
    """The next step of the conversation: which tool to call, or what to answer."""
    task, text, done = _task(messages)
    if task in ("investigate", "revise"):
        if task == "investigate" and _last(done, "inspect_datasets") is None:
            return ToolCall("inspect_datasets", {})
        validation = _last(done, "validate_mapping")
        if validation is None:
            return ToolCall("validate_mapping", {})
        return Reply(str(validation.data.get("message", "Waiting for a person's decision.")))
    if task == "reconcile":
        run = _last(done, "reconcile")
        if run is None:
            return ToolCall("reconcile", {})
        return Reply(reconcile_report(run))
    if task == "answer":
        return _answer(text, done)
    return Reply("I can investigate uploaded files, reconcile approved ones and answer questions.")


def _answer(text: str, done: list[Done]) -> ToolCall | Reply:
    match = _QUESTION.search(text)
    question = match.group(1).strip() if match else text
    lowered = question.lower()
    if "reconcile" in lowered and _last(done, "reconcile") is None:
        return ToolCall("reconcile", {})
    identifiers = list(dict.fromkeys(_ID.findall(question)))[:MAX_LOOKUPS]
    looked_up = {d.input.get("identifier") for d in done if d.name == "get_evidence"}
    for identifier in identifiers:
        if identifier not in looked_up:
            return ToolCall("get_evidence", {"identifier": identifier})
    categories = [c for c in (*CATEGORY_ORDER, "legitimate") if c in lowered]
    wants_rule = any(word in lowered for word in _POLICY_WORDS)
    listing = _listed_category(question, categories, identifiers, wants_rule)
    if listing is not None and _last(done, "list_findings") is None:
        return ToolCall("list_findings", listing)
    for d in done:
        if d.name == "get_evidence":
            categories += [f.get("category") for f in d.data.get("findings", []) if not _ignored(f)]
    if listing is not None:  # the list is the answer; its rule too if the question asks why
        categories = [listing["category"]] if wants_rule else []
    explained = {d.input.get("category") for d in done if d.name == "explain_policy"}
    for category in dict.fromkeys(c for c in categories if c):
        if category not in explained and (wants_rule or category in lowered):
            return ToolCall("explain_policy", {"category": category})
    if not done and not identifiers:
        return ToolCall("explain_policy", {})
    return Reply(answer_from(done))


def plain_category(question: str) -> str | None:
    """The category a question names in plain words ("which orders were never paid?" ->
    order_without_capture), by PLAIN_WORDS; None when it names none."""
    words = " ".join(question.lower().replace("-", " ").split())
    return next((c for c, p in PLAIN_WORDS.items() if re.search(rf"\b(?:{p})\b", words)), None)


def _listed_category(
    question: str, named: list[str], identifiers: list[str], wants_rule: bool
) -> dict[str, Any] | None:
    """The list_findings call a question asks for, or None: a question with no id about a kind
    of finding in plain words, or naming one category and asking for a list ("list the
    over_capture findings"); one about a rule only ("explain over_capture") is not a list."""
    real = [c for c in named if c in CATEGORY_ORDER]
    asks_list = any(re.search(rf"\b{w}\b", question.lower()) for w in _LIST_WORDS)
    if real:
        category = real[0] if len(real) == 1 and asks_list and not wants_rule else None
    else:
        category = None if named else plain_category(question)
    if category is None or identifiers:
        return None
    codes = [c for c in _CURRENCY.findall(question) if c not in _NOT_CURRENCIES]
    currency = next((c for c in codes if is_currency_code(c)), None)
    return {"category": category, **({"currency": currency} if currency else {})}


def _money(value: Any, currency: Any) -> str:
    return format_money(value, currency)


def _ignored(finding: dict[str, Any]) -> bool:
    """A row of the exceptions file that is not a finding: a row ignored, with its reason."""
    return finding.get("category") == "ignored"


def _evidence(f: dict[str, Any], files: dict[str, str]) -> str:
    """One finding's evidence in words: its ids with their rows in each file, the amounts."""
    found = _money(f["actual"], f["currency"])
    if f["category"] == "currency_mismatch" and f.get("actual"):
        found = f"{format_amount(f['actual'])} in the payment's own currency"
    sides = []
    for role, ids in (("orders", f.get("order_ids")), ("payments", f.get("payment_ids"))):
        rows = str(f.get(f"{role}_rows") or "").split()
        if ids or rows:
            where = f"{files.get(role, role)} row{'s' if len(rows) > 1 else ''}"
            sides.append(f"{role} {ids or '-'} ({where} {', '.join(rows) or '-'})")
    return (
        f"{', '.join(sides) or 'no id'}; expected {_money(f['expected'], f['currency'])}, "
        f"found {found}" + (f" ({f['reason']})" if f.get("reason") else "")
    )


def _list_lines(listed: Done) -> list[str]:
    """What list_findings returned, in words: first how many there are in all and, when not all
    are listed, how many of them and where every one is (first, so that a message cut to its
    channel's size still says it), then each listed finding with its ids and rows."""
    data = listed.data
    category, total = str(data.get("category")), int(data.get("total", 0))
    where = f" in {data['currency']}" if data.get("currency") else ""
    name = data.get("exceptions_file", "the exceptions file")
    if total == 0:
        lead = NONE_SAID.get(category, f"No finding is {category}")
        return [f"{lead}{where}: the exceptions file {name} has no {category} finding{where}."]
    items: list[str] = []
    for finding in data.get("findings", []):
        item = f"- {_evidence(finding, data.get('files', {}))}."
        if items and sum(map(len, items)) + len(items) + len(item) > LIST_BUDGET:
            break
        items.append(item)
    lead = f"{total:,} {category} finding{'s' if total != 1 else ''}{where}"
    if len(items) < total:
        lead += (
            f"; {len(items):,} of {total:,} listed, largest difference first; every one is "
            f"in the exceptions file {name} (category {category}):"
        )
    else:
        lead += ", largest difference first:" if total > 1 else ":"
    return [lead, *items]


def _finding_lines(
    identifier: str, findings: list[dict[str, Any]], files: dict[str, str]
) -> list[str]:
    """What the exceptions file says of one id: each finding, then the rows ignored (by
    reason), which are listed there too but are not findings."""
    lines = [
        f"{identifier} is flagged as {f['category']}: {_evidence(f, files)}."
        for f in findings
        if not _ignored(f)
    ]
    ignored: dict[str, list[str]] = {}
    for f in filter(_ignored, findings):
        for role in ("orders", "payments"):
            rows = str(f.get(f"{role}_rows") or "").split()
            key = f"{files.get(role, role)} rows" if rows else ""
            if key:
                ignored.setdefault(f"{key}|{f.get('reason') or 'ignored'}", []).extend(rows)
    for key, rows in ignored.items():
        where, reason = key.split("|", 1)
        lines.append(
            f"{where} {', '.join(rows[:10])} with {identifier} are not findings: they are "
            f"ignored ({reason})."
        )
    return lines


def answer_from(done: list[Done]) -> str:
    """An answer written from the results of the tools called for a question."""
    lines: list[str] = []
    for d in done:
        if d.name == "reconcile" and not d.ok:
            lines.append(str(d.data.get("error", "Reconciling was refused.")))
        elif d.name == "get_evidence":
            identifier = d.input.get("identifier", "")
            if not d.ok:
                lines.append(str(d.data.get("error")))
                continue
            findings = d.data.get("findings", [])
            if not [f for f in findings if not _ignored(f)]:
                lines.append(f"{identifier} is in no finding: it reconciled cleanly or is unknown.")
            files = d.data.get("files", {})
            lines.extend(_finding_lines(identifier, findings, files))
        elif d.name == "list_findings" and d.ok:
            lines.extend(_list_lines(d))
        elif d.name == "explain_policy" and d.ok:
            for category, rule in d.data.get("rules", {}).items():
                lines.append(f"Rule {category} (policy {d.data.get('policy_version')}): {rule}")
        elif not d.ok:
            lines.append(str(d.data.get("error")))
    return "\n".join(lines) or "I found nothing to answer that with."


def reconcile_report(run: Done) -> str:
    """The summary of a reconciliation, written from the reconcile tool's result only."""
    if not run.ok:
        return str(run.data.get("error", "Reconciling was refused."))
    data = run.data
    counts = {k: v for k, v in data.get("counts", {}).items() if v}
    lines = [
        f"Reconciled {data.get('orders', 0):,} orders against {data.get('payments', 0):,} "
        f"payments ({data.get('failed_attempts', 0):,} failed attempts ignored): "
        f"{data.get('total_findings', 0):,} findings."
    ]
    lines.extend(f"- {category}: {count:,}" for category, count in counts.items())
    for finding in data.get("first_findings", [])[:5]:
        where = "; ".join(
            f"{e['file']} rows {', '.join(map(str, e['rows'][:5]))}" for e in finding["evidence"]
        )
        lines.append(
            f"  e.g. {finding['category']}: orders {', '.join(finding['order_ids']) or '-'}, "
            f"payments {', '.join(finding['payment_ids']) or '-'}; expected "
            f"{_money(finding['expected'], finding['currency'])}, found "
            f"{_money(finding['actual'], finding['currency'])} ({where})"
        )
    lines.append(
        f"The exceptions file ({data.get('exceptions_file_rows', 0):,} rows) lists every "
        "finding, then the rows ignored, each with its reason."
    )
    return "\n".join(lines)


class OfflineModel(Model):
    """A deterministic model for tests, demos and air-gapped use; no network, no randomness."""

    def __init__(self) -> None:
        self._config: dict[str, Any] = {"model_id": "reconbot-offline"}

    def update_config(self, **model_config: Any) -> None:
        """Merge configuration (kept for the Model interface; nothing in it changes the plan)."""
        self._config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """The configuration."""
        return self._config

    async def structured_output(
        self,
        output_model: type[T],
        prompt: Messages,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Not used by reconbot: its outcomes are tool results, not structured output."""
        raise NotImplementedError("the offline model plans tool calls; it has no structured output")
        yield {}  # pragma: no cover

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        """Stream the next step as Converse-style events: one tool call, or the final text."""
        step = plan(messages)
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(step, ToolCall):
            tool_use_id = f"offline-{len(messages)}-{step.name}"
            yield {
                "contentBlockStart": {
                    "start": {"toolUse": {"toolUseId": tool_use_id, "name": step.name}}
                }
            }
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(step.input)}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": step.text}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        yield {
            "metadata": {
                "usage": {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
                "metrics": {"latencyMs": 0},
            }
        }
