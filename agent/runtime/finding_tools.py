"""The agent's tool that lists the findings of one kind, from the reconciled case's exceptions file.

Beside `tools.py` (at its size cap), with the same contract: the docstring is the model's
specification, the result is JSON text with `ok`, and an error says why in words. It reads only
the exceptions file that the case's saved outcome stored, so it works after a restart.
"""

from __future__ import annotations

import logging
from typing import Any

from strands import tool
from strands.types.tools import ToolContext

from agent.data.currency import is_currency_code
from agent.data.evidence import LIST_LIMIT, MAX_LIST_LIMIT, findings_of
from agent.data.policy import CATEGORY_ORDER
from agent.errors import ReconbotError
from agent.runtime.tools import context_of, result

logger = logging.getLogger(__name__)

NOT_RECONCILED = (
    "This investigation has not been reconciled yet; there are no findings to list. A person "
    "approves the mapping first, then the reconciliation writes the exceptions file."
)


def _note(category: str, currency: str | None, total: int, listed: int, file_name: str) -> str:
    """What the list is of, in one sentence: all of them, or how many of how many and where the
    rest are (a list is never cut silently)."""
    kind = f"{category} findings" + (f" in {currency}" if currency else "")
    if total == 0:
        return f"No {kind}: the exceptions file {file_name} lists none."
    if listed == total:
        return f"All {total:,} {kind} listed."
    return (
        f"{listed:,} of {total:,} {kind} listed (largest difference first); every one is in "
        f"the exceptions file {file_name} (category {category})."
    )


@tool(context=True)
def list_findings(
    tool_context: ToolContext,
    category: str,
    currency: str | None = None,
    limit: int = LIST_LIMIT,
) -> dict[str, Any]:
    """List the findings of one kind, with their ids and rows, from the reconciled case.

    Use it for questions about a kind of finding rather than one id: "which orders were never
    paid?" (order_without_capture), "what was over-captured?" (over_capture), "list the
    duplicates" (duplicate_capture: an order charged more than once; duplicate_payment_row:
    one payment id on several rows), "payments with no order" (capture_without_order),
    "underpaid orders" (partial_capture), "wrong amount" (amount_mismatch), "wrong currency"
    (currency_mismatch). Answer with the ids and row numbers it returns, and say how many
    there are in all (`total`) and, when not all are listed, that every one is in the
    exceptions file it names. For one order or payment id, use get_evidence; for what a
    category means, explain_policy. Only works once the investigation has been reconciled.

    Args:
        category: One finding category, spelled exactly as listed: unreadable_row,
            conflicting_duplicate_order, multi_order_payment, capture_without_order,
            duplicate_payment_row, order_without_capture, currency_mismatch, status_mismatch,
            duplicate_capture, amount_mismatch, partial_capture, over_capture,
            capture_outside_window.
        currency: Optional three-letter ISO 4217 code ("EUR") to list only findings in that
            currency. Leave it empty for every currency: amounts are then ranked by their
            number as written (1,000 JPY above 900 USD), so pass a currency to rank within one.
        limit: How many findings to list, largest first (default 20, at most 100).

    Returns:
        JSON with the `category`, the `currency` asked for, `total` (how many findings of the
        category there are in all, in that currency if one was asked), `listed` (how many are
        in `findings`), `by_currency` (the category's count per currency), `note` (one sentence
        saying whether all are listed or how many of how many, and where the rest are),
        `exceptions_file` (its name), `files` (the uploaded file name of each role) and
        `findings`: each with the category, the reason, the order ids and payment ids, the
        1-based data row numbers in each uploaded file (`orders_rows`, `payments_rows`), the
        currency, the `expected` and `actual` amounts and their `difference`, ordered by the
        size of the difference, largest first. An unknown category or currency gives an error
        that says what is accepted.
    """
    context = context_of(tool_context)
    outcome = context.outcome
    if outcome is None or outcome.export_digest is None:
        return result({"error": NOT_RECONCILED}, error=True)
    if category not in CATEGORY_ORDER:
        return result(
            {
                "error": f'No category "{category}"; the categories are: '
                + ", ".join(CATEGORY_ORDER)
            },
            error=True,
        )
    if currency and currency.strip() and not is_currency_code(currency):
        return result(
            {"error": f'"{currency}" is not a three-letter ISO 4217 currency code, e.g. EUR.'},
            error=True,
        )
    asked = max(1, min(int(limit), MAX_LIST_LIMIT))
    files = {ref.role.value: ref.name for ref in context.files.values()}
    file_name = outcome.exceptions_file_name
    try:
        with context.blobs.local_copy(outcome.export_digest) as export:
            found = findings_of(export, category, currency=currency, limit=asked)
    except ReconbotError as error:
        return result({"error": str(error)}, error=True)
    listed = len(found.findings)
    logger.info(
        "investigation=%s category=%s total=%s listed=%s | findings listed",
        context.investigation_id,
        category,
        found.total,
        listed,
    )
    note = _note(category, found.currency, found.total, listed, file_name)
    if int(limit) > MAX_LIST_LIMIT:
        note += f" At most {MAX_LIST_LIMIT} are listed at a time."
    return result(
        {
            "category": category,
            "currency": found.currency,
            "total": found.total,
            "listed": listed,
            "limit": asked,
            "by_currency": found.by_currency,
            "note": note,
            "exceptions_file": file_name,
            "exceptions_file_rows": outcome.export_rows,
            "files": files,
            "findings": found.findings,
        }
    )


FINDING_TOOLS = [list_findings]
