"""The row ledger: every data row of both files ends in exactly one bucket, or nothing is reported.

Buckets: `matched` (an order, a capture or a refund of one that reconciles cleanly), `finding`
(the row is evidence of a finding), `ignored` (with a reason: a failed attempt, a line-item
continuation, a zero capture, a fee row, a voided order nobody paid, ...) and `unreadable`
(with a reason: a required value that does not read, an unknown row kind). The engine's tables
say which bucket a row is in; the total must equal the number of data records that the ingest
reader counted on its own (`ingest.count_records`). A row in no bucket, or a total that
differs, raises LedgerError: a result that cannot account for every row is not a result.
"""

from __future__ import annotations

from typing import Literal

import duckdb
from pydantic import BaseModel, ConfigDict

from agent.data.schema import Role
from agent.errors import LedgerError

Bucket = Literal["matched", "finding", "ignored", "unreadable"]

# Reasons in words, for people: the ids are stable (they are in the exceptions CSV).
REASONS: dict[str, str] = {
    "failed_attempt": "a failed payment attempt (status says it captured nothing)",
    "zero_capture": "a payment row whose captured amount is zero captured nothing",
    "line_item_continuation": "a further line item of an order already read from its first row",
    "no_order_id": "a row with neither an order id nor an amount (line-item detail)",
    "voided_without_payment": "a voided or cancelled order with no payment, as expected",
    "nothing_to_pay": "an order of 0.00 with no payment: nothing was owed",
    "credit_note": "a credit note (a negative order total) with no payment: nothing to capture",
    "awaiting_payment": (
        "an order whose status says it is not paid yet (pending, awaiting payment), with no "
        "payment: as its status says"
    ),
    "empty_order_id": "the order id is empty",
    "empty_payment_id": "the payment id is empty",
    "empty_amount": "the amount is empty",
    "unreadable_amount": "the amount does not read under the approved number format",
    "missing_currency": "the currency is empty and the mapping gives no default currency",
    "unreadable_currency": "the currency is not an ISO 4217 code",
    "another_amount_under_this_id": (
        "the same order id appears with a different total (or the same total on another date)"
    ),
    "row_kind": "a row the approved row kinds ignore (a fee, a payout, a pending memo, ...)",
    "unknown_row_kind": "the row's kind value is in none of the approved row-kind lists",
}


class FileLedger(BaseModel):
    """Where every data row of one file went; `records` is the ingest reader's own count."""

    model_config = ConfigDict(frozen=True)

    role: Role
    file: str
    records: int
    matched: int
    findings: int
    ignored: dict[str, int]
    unreadable: dict[str, int]

    @property
    def accounted(self) -> int:
        """Rows in some bucket: equals `records` in every ledger that is reported."""
        return (
            self.matched
            + self.findings
            + sum(self.ignored.values())
            + sum(self.unreadable.values())
        )

    def line(self) -> str:
        """The ledger in one line of words, for the terminal and the thread."""
        parts = [f"{self.matched:,} matched", f"{self.findings:,} in findings"]
        ignored = sum(self.ignored.values())
        unreadable = sum(self.unreadable.values())
        if ignored:
            why = ", ".join(f"{n:,} {reason}" for reason, n in sorted(self.ignored.items()))
            parts.append(f"{ignored:,} ignored ({why})")
        if unreadable:
            why = ", ".join(f"{n:,} {reason}" for reason, n in sorted(self.unreadable.items()))
            parts.append(f"{unreadable:,} unreadable ({why})")
        return f"{self.file}: {self.records:,} rows = " + " + ".join(parts)


def build_ledger_rows(con: duckdb.DuckDBPyConnection) -> None:
    """Create `ledger_rows(role, r, bucket, reason)`: one row per data row of both files.

    Needs the loaded `orders_rows` and the engine's tables (`order_findings`, `bad_orders`,
    `order_lines`, `order_conflicts`, `payment_row_kinds`, `refunds`, `findings`); a head row's
    `voided` (its order status is one of the policy's voided words) is the engine's. The role,
    the bucket and the reason are words of the engine's ENUM types (`role_word`, `bucket_word`,
    `reason_word`: setup.sql), read as text; the statement writes them as typed constants, so
    no row's word is looked up by its text.
    """
    con.execute(
        """
        CREATE OR REPLACE TABLE ledger_rows AS
        WITH order_evidence AS (SELECT DISTINCT unnest(order_rows) - 1 AS r FROM findings),
        payment_evidence AS (SELECT DISTINCT unnest(payment_rows) - 1 AS r FROM findings),
        order_kinds AS (
            -- Every order row once, with its kind: the head row of an id, of a classified
            -- order (`order_findings`) or of another id (`bad_orders`: its head row does not
            -- read, or its rows conflict); any other row of an id, a conflict or a
            -- continuation (`order_lines`); a row without an order id, ignored (no amount
            -- either) or unreadable. A head row carries whether its order status is a voided
            -- word (the status decides on head rows only).
            SELECT r, 'head' AS kind, NULL::reason_word AS reason, category, n, voided,
                   amount_minor = 0 AS free, amount_minor < 0 AS credit, pending,
                   -- A credit note that refunds of its size paid out (no finding of it).
                   amount_minor < 0 AND r IN (SELECT order_r FROM refunds) AS settled
            FROM order_findings
            UNION ALL
            SELECT r, CASE WHEN unreadable THEN 'unreadable' ELSE 'head' END,
                   CAST(reason AS reason_word), NULL, NULL, voided, false, false, false, false
            FROM bad_orders
            UNION ALL
            SELECT l.r, CASE WHEN c.r IS NULL THEN 'ignored' ELSE 'conflict' END,
                   CASE WHEN c.r IS NULL THEN 'line_item_continuation'::reason_word
                        ELSE 'another_amount_under_this_id'::reason_word END, NULL, NULL, false,
                   false, false, false, false
            FROM order_lines l LEFT JOIN order_conflicts c ON c.r = l.r
            UNION ALL
            SELECT rowid, CASE WHEN order_amount_filled THEN 'unreadable' ELSE 'ignored' END,
                   CASE WHEN order_amount_filled THEN 'empty_order_id'::reason_word
                        ELSE 'no_order_id'::reason_word END,
                   NULL, NULL, false, false, false, false, false
            FROM orders_rows WHERE order_key IS NULL
        ),
        orders AS (
            SELECT k.r, k.kind, k.reason, e.r IS NOT NULL AS evidence, k.category, k.n, k.voided,
                   k.free, k.credit, k.pending, k.settled
            FROM order_kinds k
            LEFT JOIN order_evidence e ON e.r = k.r
        ),
        payments_classified AS (
            -- A payment row is matched with the order it names (`order_r`; a repeated row
            -- of a payment is always evidence of its finding), a refund row with the order
            -- whose capture it returns.
            SELECT k.r, k.kind, k.reason, e.r IS NOT NULL AS evidence,
                   c.r IS NOT NULL AS clean_order
            FROM payment_row_kinds k
            LEFT JOIN payment_evidence e ON e.r = k.r
            LEFT JOIN refunds rf ON rf.r = k.r
            LEFT JOIN (SELECT r FROM order_findings WHERE category IS NULL) c
                   ON c.r = CASE WHEN k.kind = 'refund' THEN rf.order_r
                                 WHEN k.kind = 'payment' THEN k.order_r END
        )
        SELECT 'orders'::role_word AS role, r,
          CASE
            WHEN kind = 'ignored' THEN 'ignored'::bucket_word
            WHEN kind = 'unreadable' THEN 'unreadable'::bucket_word
            WHEN evidence THEN 'finding'::bucket_word
            WHEN kind = 'head' AND category IS NULL AND (n IS NOT NULL OR settled)
                 THEN 'matched'::bucket_word
            WHEN kind = 'head' AND category IS NULL AND n IS NULL
                 AND (voided OR free OR credit OR pending)
                 THEN 'ignored'::bucket_word
          END AS bucket,
          CASE
            WHEN kind IN ('ignored', 'unreadable') THEN reason
            WHEN evidence THEN NULL
            WHEN kind = 'head' AND category IS NULL AND n IS NULL AND voided
                 THEN 'voided_without_payment'::reason_word
            WHEN kind = 'head' AND category IS NULL AND n IS NULL AND free
                 THEN 'nothing_to_pay'::reason_word
            WHEN kind = 'head' AND category IS NULL AND n IS NULL AND credit
                 THEN 'credit_note'::reason_word
            WHEN kind = 'head' AND category IS NULL AND n IS NULL AND pending
                 THEN 'awaiting_payment'::reason_word
          END AS reason
        FROM orders
        UNION ALL
        SELECT 'payments'::role_word, r,
          CASE
            WHEN kind = 'ignored' THEN 'ignored'::bucket_word
            WHEN kind = 'unreadable' THEN 'unreadable'::bucket_word
            WHEN evidence THEN 'finding'::bucket_word
            WHEN clean_order THEN 'matched'::bucket_word
          END,
          CASE WHEN kind IN ('ignored', 'unreadable') THEN reason END
        FROM payments_classified
        """
    )


def account(con: duckdb.DuckDBPyConnection, role: Role, file_name: str, records: int) -> FileLedger:
    """The ledger of one file from `ledger_rows`; raises LedgerError unless it adds up.

    `records` is the number of data records the ingest reader counted in the file.
    """
    rows = con.execute(
        # The first rows only (`min(x, n)`): never a list of every row of a large file.
        "SELECT bucket, reason, count(*), min(r + 1, 5) FROM ledger_rows "
        "WHERE role = ? GROUP BY ALL",
        [role.value],
    ).fetchall()
    buckets: dict[str, int] = {"matched": 0, "finding": 0}
    ignored: dict[str, int] = {}
    unreadable: dict[str, int] = {}
    for bucket, reason, count, examples in rows:
        if bucket is None:
            listed = ", ".join(str(r) for r in examples)
            raise LedgerError(
                f"{file_name}: {count:,} rows fall in no ledger bucket (e.g. rows {listed}); "
                "nothing is reported from a result that cannot account for every row"
            )
        if bucket == "ignored":
            ignored[reason] = ignored.get(reason, 0) + count
        elif bucket == "unreadable":
            unreadable[reason] = unreadable.get(reason, 0) + count
        else:
            buckets[bucket] += count
    ledger = FileLedger(
        role=role,
        file=file_name,
        records=records,
        matched=buckets["matched"],
        findings=buckets["finding"],
        ignored=ignored,
        unreadable=unreadable,
    )
    if ledger.accounted != records:
        raise LedgerError(
            f"{file_name}: the ledger holds {ledger.accounted:,} rows but the file has "
            f"{records:,} data records; nothing is reported from a result that does not add up"
        )
    return ledger


def ledger_lines(summary: dict[str, object]) -> list[str]:
    """The ledger lines of a saved summary (a `Summary` dumped to JSON), one per file.

    Outcomes saved before the ledger existed have none: they give no lines.
    """
    saved = summary.get("ledger")
    if not isinstance(saved, list):
        return []
    return [FileLedger.model_validate(item).line() for item in saved]
