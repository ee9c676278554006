"""The reconciliation engine: orders against captured payments, in DuckDB, with evidence.

Each unit (an order, or a payment) gets at most one category, the first that applies in
`policy.CATEGORY_ORDER`; legitimate cases (captures that add up, differences within tolerance,
failed attempts, normal refunds, voided orders without payment) are not findings. Every finding
carries its evidence: the file, the 1-based data rows and the ids, expected against actual.
Findings stay in DuckDB (table `findings`) so that a million-row run costs no Python objects;
`findings()` and `evidence()` turn the few that a person looks at into values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict

from agent.data.formats import known_currency_sql
from agent.data.gates import check_reading
from agent.data.ledger import FileLedger, account, build_ledger_rows
from agent.data.normalize import (
    ValidationReport,
    load_both,
    merge,
    minor_sql,
    reference_tokens_sql,
    sql_words,
    validate,
)
from agent.data.policy import CATEGORY_ORDER, Policy
from agent.data.profile import normalize_key
from agent.data.schema import Mapping, Role

MEMORY_LIMIT = "1GB"

# Rows that cannot be read as approved come first: until they are fixed, the rest is partial.
FINDING_CATEGORIES = CATEGORY_ORDER


class Evidence(BaseModel):
    """Where a finding is seen: a file, its 1-based data rows and the ids on them."""

    model_config = ConfigDict(frozen=True)

    file: str
    rows: list[int]
    ids: list[str]


class Finding(BaseModel):
    """One exception: its category, the amounts expected and found, and the evidence."""

    model_config = ConfigDict(frozen=True)

    category: str
    reason: str | None = None
    order_ids: list[str]
    payment_ids: list[str]
    currency: str | None
    expected: str | None
    actual: str | None
    evidence: list[Evidence]


class CategoryTotal(BaseModel):
    """How many findings of one category, and the money they concern per currency."""

    model_config = ConfigDict(frozen=True)

    category: str
    count: int
    difference_by_currency: dict[str, str]


class CurrencyTotals(BaseModel):
    """Totals of one currency: all orders, all captures, and those that matched cleanly."""

    model_config = ConfigDict(frozen=True)

    currency: str
    orders: int
    order_total: str
    captures: int
    captured_total: str
    matched_orders: int
    matched_total: str


class Summary(BaseModel):
    """The outcome of a reconciliation in numbers."""

    model_config = ConfigDict(frozen=True)

    policy_version: str
    orders: int
    order_rows: int
    payments: int
    payment_rows: int
    failed_attempts: int
    unreadable_orders: list[int]
    unreadable_payments: list[int]
    counts: dict[str, int]
    categories: list[CategoryTotal]
    currencies: list[CurrencyTotals]
    ledger: list[FileLedger]

    @property
    def total_findings(self) -> int:
        """All findings, every category."""
        return sum(self.counts.values())


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection set up for reconciling: UTC, bounded memory."""
    con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT})
    con.execute("SET TimeZone = 'UTC'")
    return con


class Reconciliation:
    """A finished reconciliation of two files under one mapping and policy."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        files: dict[Role, str],
        policy: Policy,
        ledger: list[FileLedger],
    ) -> None:
        self._con = con
        self.files = files
        self.policy = policy
        self.ledger = ledger

    def summary(self) -> Summary:
        """Counts and amounts per category, and matched totals per currency and side."""
        con = self._con
        counts = dict.fromkeys(FINDING_CATEGORIES, 0)
        diffs: dict[str, dict[str, str]] = {c: {} for c in FINDING_CATEGORIES}
        for category, currency, count, diff in con.execute(_CATEGORY_TOTALS).fetchall():
            counts[category] += count
            if currency is not None and diff is not None:
                diffs[category][currency] = diff
        currencies = [
            CurrencyTotals(
                currency=row[0],
                orders=row[1],
                order_total=row[2],
                captures=row[3],
                captured_total=row[4],
                matched_orders=row[5],
                matched_total=row[6],
            )
            for row in con.execute(_CURRENCY_TOTALS).fetchall()
        ]
        stats = con.execute(_STATS).fetchone()
        assert stats is not None
        return Summary(
            policy_version=self.policy.version,
            orders=stats[0],
            order_rows=stats[1],
            payments=stats[2],
            payment_rows=stats[3],
            failed_attempts=stats[4],
            unreadable_orders=list(stats[5] or []),
            unreadable_payments=list(stats[6] or []),
            counts=counts,
            categories=[
                CategoryTotal(category=c, count=counts[c], difference_by_currency=diffs[c])
                for c in FINDING_CATEGORIES
            ],
            currencies=currencies,
            ledger=self.ledger,
        )

    def findings(self, category: str | None = None, limit: int | None = 50) -> list[Finding]:
        """Findings in category order then file order; `limit=None` for all of them."""
        where = "WHERE category = ?" if category else ""
        params: list[Any] = [category] if category else []
        clause = f"LIMIT {int(limit)}" if limit is not None else ""
        return self._fetch(f"{where} ORDER BY category_rank, sort_row {clause}", params)

    def evidence(self, identifier: str) -> list[Finding]:
        """The findings that concern an order id or a payment id (`#1042`, `1042`, `ch_…`).

        A person's question is matched leniently (any case), unlike the ids between files.
        """
        key = normalize_key(identifier).lower()
        return self._fetch(
            "WHERE list_contains(list_transform(order_keys, lambda x: lower(x)), ?) "
            "OR list_contains(payment_keys, ?) "
            "ORDER BY category_rank, sort_row",
            [key, key],
        )

    def export_csv(self, path: Path) -> int:
        """Write every finding, then every ignored row, to a CSV file; returns the lines written.

        Unreadable rows are findings (`unreadable_row`) and ignored rows are listed with their
        reason (category `ignored`), so the file accounts for every row that did not match.
        Cells that come from the uploaded files are neutralised so that a spreadsheet never
        runs them as formulas (a leading `= + - @`, tab or carriage return gets a `'`).
        """
        self._con.execute(
            f"COPY ({_EXPORT}) TO '{str(path).replace(chr(39), chr(39) * 2)}' "
            "(HEADER, DELIMITER ',')"
        )
        row = self._con.execute(
            "SELECT (SELECT count(*) FROM findings) + "
            "(SELECT count(*) FROM ledger_rows WHERE bucket = 'ignored')"
        ).fetchone()
        return int(row[0]) if row else 0

    def _fetch(self, tail: str, params: list[Any]) -> list[Finding]:
        rows = self._con.execute(
            "SELECT category, reason, order_ids, payment_ids, currency, "
            "fmt_minor(expected, exponent), fmt_minor(actual, exponent), order_rows, payment_rows "
            f"FROM findings {tail}",
            params,
        ).fetchall()
        found = []
        for (
            category,
            reason,
            order_ids,
            payment_ids,
            currency,
            expected,
            actual,
            o_rows,
            p_rows,
        ) in rows:
            evidence = []
            if o_rows:
                evidence.append(
                    Evidence(file=self.files[Role.ORDERS], rows=o_rows, ids=order_ids or [])
                )
            if p_rows:
                evidence.append(
                    Evidence(file=self.files[Role.PAYMENTS], rows=p_rows, ids=payment_ids or [])
                )
            found.append(
                Finding(
                    category=category,
                    reason=reason,
                    order_ids=order_ids or [],
                    payment_ids=payment_ids or [],
                    currency=currency,
                    expected=expected,
                    actual=actual,
                    evidence=evidence,
                )
            )
        return found


def load_and_validate(
    con: duckdb.DuckDBPyConnection,
    files: dict[Role, tuple[Path, str]],
    mapping: Mapping,
    workdir: Path | None = None,
) -> ValidationReport:
    """Read both files into `con` under `mapping` and check every mapped field on every row.

    Then the gates: a reading under which the files do not meet (few references name an order,
    an order id column that names no single order) is an error with the likely fix. The report's
    facts (rows per file, how many references name an order) are shown on the request.
    """
    layouts = load_both(con, files, mapping, workdir, keep_raw=True)
    first, second = (validate(con, role, files[role][1], mapping.for_role(role)) for role in Role)
    report = merge(first, second)
    facts = [f"{files[role][1]}: {layouts[role].records:,} rows read" for role in Role]
    gates = check_reading(con, {role: files[role][1] for role in Role}, mapping)
    report = merge(report, gates)
    report.facts[:0] = facts
    return report


def reconcile(
    files: dict[Role, tuple[Path, str]],
    mapping: Mapping,
    policy: Policy,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    workdir: Path | None = None,
) -> Reconciliation:
    """Reconcile the orders file against the payments file, read exactly as `mapping` says.

    `files` maps each role to (path on disk, the uploader's file name). Raises the typed input
    errors of `ingest` for a file that cannot be read as approved, and LedgerError when the rows
    do not add up to the records of each file (nothing is reported then).
    """
    con = con or connect()
    layouts = load_both(con, files, mapping, workdir)
    run_engine(con, mapping, policy)
    build_ledger_rows(con, _in(policy.voided_order_statuses))
    ledger = []
    for role in Role:
        records = layouts[role].records
        assert records is not None, "load_both counts every file's records"
        ledger.append(account(con, role, files[role][1], records))
    return Reconciliation(con, {role: files[role][1] for role in Role}, policy, ledger)


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + ")"


def run_engine(con: duckdb.DuckDBPyConnection, mapping: Mapping, policy: Policy) -> None:
    """Build the `findings` table from the loaded `orders_rows` and `payments_rows` tables."""
    tol = int(policy.amount_tolerance_minor)
    failed = _in(policy.failed_payment_statuses)
    refunded = _in(policy.refunded_payment_statuses)
    voided = _in(policy.voided_order_statuses)
    rank = " ".join(f"WHEN '{c}' THEN {i}" for i, c in enumerate(FINDING_CATEGORIES))
    # Timestamps are compared as microseconds since the epoch (UTC): plain integers.
    before = int(policy.window_hours_before) * 3_600_000_000
    after = int(policy.window_days_after) * 86_400_000_000
    units = {
        name: reading.unit
        for options in (mapping.orders.options, mapping.payments.options)
        for name, reading in options.amounts.items()
    }
    ids = mapping.payments.options.ids
    kinds = mapping.payments.options.kinds
    kinds_on = "false" if kinds is None else "true"
    k_ignore = sql_words(kinds.ignore if kinds else ())
    k_refund = sql_words(kinds.refund if kinds else ())
    k_known = sql_words([*kinds.capture, *kinds.refund, *kinds.ignore] if kinds else ())
    units.setdefault("order_amount", "major")
    units.setdefault("captured_amount", "major")
    units.setdefault("refunded_amount", units["captured_amount"])
    script = f"""
    SET preserve_insertion_order = false;
    CREATE OR REPLACE TABLE currency_exponents AS SELECT * FROM {known_currency_sql()};
    CREATE OR REPLACE MACRO fmt_minor(m, x) AS CASE x
        WHEN 2 THEN CAST(CAST(m AS DECIMAL(18, 0)) * 0.01 AS VARCHAR)
        WHEN 0 THEN CAST(m AS VARCHAR)
        WHEN 3 THEN CAST(CAST(m AS DECIMAL(18, 0)) * 0.001 AS VARCHAR)
        WHEN 4 THEN CAST(CAST(m AS DECIMAL(18, 0)) * 0.0001 AS VARCHAR) END;

    -- Every order row gets a kind: the head of its order (the first row of the id that carries
    -- an amount), a continuation (no amount, or the head's amount again), a conflict (another
    -- amount under the same id), ignored or unreadable, each with a reason.
    CREATE OR REPLACE TABLE order_heads AS
    SELECT order_key, coalesce(min(rowid) FILTER (WHERE order_amount_filled), min(rowid)) AS r
    FROM orders_rows WHERE order_key IS NOT NULL GROUP BY 1;

    CREATE OR REPLACE TABLE order_row_kinds AS
    WITH rows AS (
        SELECT o.rowid AS r, o.order_key, h.r AS head, o.order_amount_filled AS filled,
               o.order_amount AS amount, o.currency_code, o.currency,
               e.exponent IS NOT NULL AS known_currency
        FROM orders_rows o LEFT JOIN order_heads h ON h.order_key = o.order_key
        LEFT JOIN currency_exponents e ON e.code = o.currency_code
    )
    SELECT r.r, r.order_key, r.head,
      CASE
        WHEN r.order_key IS NULL THEN CASE WHEN r.filled THEN 'unreadable' ELSE 'ignored' END
        WHEN r.r = r.head THEN
            CASE WHEN NOT r.filled OR r.amount IS NULL OR NOT r.known_currency
                 THEN 'unreadable' ELSE 'head' END
        WHEN NOT r.filled THEN 'ignored'
        WHEN r.amount = h.amount AND r.currency_code IS NOT DISTINCT FROM h.currency_code
             AND h.amount IS NOT NULL THEN 'ignored'
        ELSE 'conflict'
      END AS kind,
      CASE
        WHEN r.order_key IS NULL THEN
            CASE WHEN r.filled THEN 'empty_order_id' ELSE 'no_order_id' END
        WHEN r.r = r.head THEN
            CASE WHEN NOT r.filled THEN 'empty_amount'
                 WHEN r.amount IS NULL THEN 'unreadable_amount'
                 WHEN r.currency_code IS NULL THEN 'missing_currency'
                 WHEN NOT r.known_currency THEN 'unreadable_currency' END
        WHEN NOT r.filled THEN 'line_item_continuation'
        WHEN r.amount = h.amount AND r.currency_code IS NOT DISTINCT FROM h.currency_code
             AND h.amount IS NOT NULL THEN 'line_item_continuation'
        ELSE 'another_amount_under_this_id'
      END AS reason
    FROM rows r LEFT JOIN rows h ON h.r = r.head;

    -- Ids whose rows disagree about the order total, or whose head row does not read.
    CREATE OR REPLACE TABLE bad_orders AS
    SELECT k.order_key, h.r, h.kind = 'unreadable' AS unreadable, h.reason,
           list(k.r + 1 ORDER BY k.r) FILTER (WHERE k.kind IN ('head', 'unreadable', 'conflict'))
               AS rows
    FROM order_row_kinds k JOIN order_heads h0 ON h0.order_key = k.order_key
    JOIN order_row_kinds h ON h.r = h0.r
    WHERE k.order_key IN (SELECT order_key FROM order_row_kinds WHERE kind = 'conflict')
       OR h.kind = 'unreadable'
    GROUP BY k.order_key, h.r, h.kind, h.reason;

    -- Orders the engine classifies: one per id, read from its head row.
    CREATE OR REPLACE TABLE order_first AS
    SELECT order_key, r FROM order_row_kinds
    WHERE kind = 'head' AND order_key NOT IN (SELECT order_key FROM bad_orders);

    -- Every payment row: a payment to match, a refund of one, or ignored or unreadable with a
    -- reason. With row kinds approved, the kind column says which rows are captures.
    CREATE OR REPLACE TABLE payment_row_kinds AS
    SELECT p.rowid AS r,
      CASE
        WHEN p.payment_status IN {failed} THEN 'ignored'
        WHEN {kinds_on} AND (p.row_kind IN {k_ignore} OR p.payment_status IN {k_ignore})
          THEN 'ignored'
        WHEN {kinds_on} AND coalesce(p.row_kind NOT IN {k_known}, true) THEN 'unreadable'
        WHEN p.row_kind IN {k_refund} THEN 'refund'
        WHEN p.payment_id IS NULL OR NOT p.captured_amount_filled OR p.captured_amount IS NULL
          OR e.exponent IS NULL THEN 'unreadable'
        WHEN p.captured_amount = 0 THEN 'ignored'
        ELSE 'payment'
      END AS kind,
      CASE
        WHEN p.payment_status IN {failed} THEN 'failed_attempt'
        WHEN {kinds_on} AND (p.row_kind IN {k_ignore} OR p.payment_status IN {k_ignore})
          THEN 'row_kind'
        WHEN {kinds_on} AND coalesce(p.row_kind NOT IN {k_known}, true) THEN 'unknown_row_kind'
        WHEN p.row_kind IN {k_refund} THEN NULL
        WHEN p.payment_id IS NULL THEN 'empty_payment_id'
        WHEN NOT p.captured_amount_filled THEN 'empty_amount'
        WHEN p.captured_amount IS NULL THEN 'unreadable_amount'
        WHEN p.currency_code IS NULL THEN 'missing_currency'
        WHEN e.exponent IS NULL THEN 'unreadable_currency'
        WHEN p.captured_amount = 0 THEN 'zero_capture'
      END AS reason,
      -- The value that decided an ignored or unknown kind, for the exceptions CSV.
      CASE WHEN p.row_kind IN {k_ignore} OR NOT {kinds_on} THEN p.row_kind
           WHEN p.payment_status IN {k_ignore} THEN p.payment_status
           ELSE p.row_kind END AS value
    FROM payments_rows p LEFT JOIN currency_exponents e ON e.code = p.currency_code;

    -- Payments: repeated rows of one payment id counted once.
    CREATE OR REPLACE TABLE payment_copies AS
    WITH matchable AS (
        SELECT p.rowid AS r, p.payment_id FROM payments_rows p
        SEMI JOIN payment_row_kinds k ON k.r = p.rowid AND k.kind = 'payment'
    ), repeated AS (
        SELECT payment_id FROM matchable GROUP BY 1 HAVING count(*) > 1
    )
    SELECT min(r) AS r, list(r + 1 ORDER BY r) AS rows
    FROM matchable WHERE payment_id IN (SELECT payment_id FROM repeated)
    GROUP BY payment_id;

    -- A payment naming exactly one order carries that order's first row (order_r): the only
    -- join on text; everything after it matches integers.
    CREATE OR REPLACE TABLE payments AS
    SELECT p.r, p.payment_id, p.ref_key, p.refs, p.currency, e.exponent,
           {minor_sql("p.captured_amount", units["captured_amount"], "e.exponent")}
               AS amount_minor,
           coalesce({minor_sql("p.refunded_amount", units["refunded_amount"], "e.exponent")}, 0)
               AS refunded_minor,
           p.captured_at, p.refunded_status,
           CASE WHEN p.refs = 1 THEN f.r END AS order_r
    FROM (SELECT rowid AS r, payment_id,
                 CASE WHEN several_refs THEN {reference_tokens_sql("order_id", ids)}[1]
                      ELSE ref_key END AS ref_key,
                 CASE WHEN order_id IS NULL THEN 0
                      WHEN several_refs THEN len({reference_tokens_sql("order_id", ids)})
                      ELSE 1 END AS refs,
                 currency_code AS currency, captured_amount,
                 refunded_amount, epoch_us(captured_at) AS captured_at,
                 payment_status IN {refunded} AS refunded_status
          FROM payments_rows
          WHERE rowid IN (SELECT r FROM payment_row_kinds WHERE kind = 'payment')
            AND rowid NOT IN (SELECT unnest(rows[2:]) - 1 FROM payment_copies)) p
    LEFT JOIN currency_exponents e ON e.code = p.currency
    LEFT JOIN order_heads f ON f.order_key = p.ref_key;

    -- Refund rows: each returns money of the capture with the same payment id, or else of the
    -- order its reference names. Its amount is the captured amount's or the refunded amount's
    -- size (exports write refunds negative or positive); none readable: the whole capture.
    CREATE OR REPLACE TABLE refunds AS
    SELECT p.r, p.payment_id, coalesce(c.order_r, f.r) AS order_r, c.r AS capture_r,
           abs(coalesce(
               {minor_sql("p.captured_amount", units["captured_amount"], "e.exponent")},
               {minor_sql("p.refunded_amount", units["refunded_amount"], "e.exponent")}))
               AS amount_minor
    FROM (SELECT rowid AS r, payment_id, ref_key, currency_code, captured_amount,
                 refunded_amount
          FROM payments_rows
          WHERE rowid IN (SELECT r FROM payment_row_kinds WHERE kind = 'refund')) p
    LEFT JOIN currency_exponents e ON e.code = p.currency_code
    LEFT JOIN (SELECT payment_id, any_value(r) AS r, any_value(order_r) AS order_r
               FROM payments WHERE payment_id IS NOT NULL GROUP BY 1) c
           ON c.payment_id = p.payment_id
    LEFT JOIN order_heads f ON f.order_key = p.ref_key;

    -- What the refund rows of each order returned (amount unknown: the whole capture).
    CREATE OR REPLACE TABLE order_refunds AS
    SELECT order_r, coalesce(sum(amount_minor), 0) AS refunded,
           bool_or(amount_minor IS NULL) AS whole
    FROM refunds WHERE order_r IS NOT NULL GROUP BY 1;

    -- Orders that more than one payment names.
    CREATE OR REPLACE TABLE shared_orders AS
    SELECT order_r FROM payments WHERE order_r IS NOT NULL AND amount_minor IS NOT NULL
    GROUP BY 1 HAVING count(*) > 1;

    -- Classification of every order: the first category that applies (CATEGORY_ORDER), from
    -- what the payments naming exactly that order add up to.
    CREATE OR REPLACE TABLE order_findings AS
    WITH orders AS (
        SELECT f.r, f.order_key, o.order_id, o.currency_code AS currency, e.exponent,
               {minor_sql("o.order_amount", units["order_amount"], "e.exponent")} AS amount_minor,
               epoch_us(o.order_date) AS order_at, o.order_status
        FROM order_first f JOIN orders_rows o ON o.rowid = f.r
        LEFT JOIN currency_exponents e ON e.code = o.currency_code
    ), by_payment AS (
        SELECT order_r, 1 AS n, amount_minor AS captured, refunded_minor AS refunded,
               currency AS currency_low, currency AS currency_high,
               captured_at AS first_capture, captured_at AS last_capture,
               amount_minor AS smallest, amount_minor AS largest,
               refunded_minor >= amount_minor OR refunded_status AS all_refunded,
               refunded_status AS any_refunded
        FROM payments
        WHERE order_r IS NOT NULL AND amount_minor IS NOT NULL
          AND order_r NOT IN (SELECT order_r FROM shared_orders)
        UNION ALL
        SELECT order_r, count(*), sum(amount_minor), sum(refunded_minor), min(currency),
               max(currency), min(captured_at), max(captured_at), min(amount_minor),
               max(amount_minor), bool_and(refunded_minor >= amount_minor OR refunded_status),
               bool_or(refunded_status)
        FROM payments
        WHERE order_r IN (SELECT order_r FROM shared_orders) AND amount_minor IS NOT NULL
        GROUP BY 1
    ), by_order AS (
        -- Refund rows add to what the order's captures say was refunded.
        SELECT b.order_r, b.n, b.captured, b.refunded + coalesce(x.refunded, 0) AS refunded,
               b.currency_low, b.currency_high, b.first_capture, b.last_capture, b.smallest,
               b.largest,
               b.all_refunded OR coalesce(x.whole, false)
                   OR (x.order_r IS NOT NULL AND b.refunded + x.refunded >= b.captured)
                   AS all_refunded,
               b.any_refunded OR x.order_r IS NOT NULL AS any_refunded
        FROM by_payment b LEFT JOIN order_refunds x ON x.order_r = b.order_r
    )
    SELECT o.r, o.order_id, o.order_key, o.currency, o.exponent, o.amount_minor, b.n,
           b.captured,
      CASE
        WHEN o.amount_minor IS NULL THEN 'unreadable_row'
        WHEN b.n IS NULL THEN
            CASE WHEN o.order_status IN {voided} THEN NULL ELSE 'order_without_capture' END
        WHEN b.currency_low IS DISTINCT FROM o.currency
          OR b.currency_high IS DISTINCT FROM o.currency THEN 'currency_mismatch'
        WHEN (o.order_status IN {voided} AND b.captured - b.refunded > {tol})
          OR (o.order_status IN {_in(policy.refunded_order_statuses)}
              AND b.refunded = 0 AND NOT b.any_refunded)
          OR (b.all_refunded AND o.order_status IN {_in(policy.paid_order_statuses)})
          THEN 'status_mismatch'
        WHEN b.n >= 2 AND b.captured > o.amount_minor + {tol}
             AND (abs(b.smallest - o.amount_minor) <= {tol}
                  OR abs(b.largest - o.amount_minor) <= {tol} OR b.n >= 3)
          THEN 'duplicate_capture?'
        WHEN abs(b.captured - o.amount_minor) <= {tol} THEN
            CASE WHEN b.first_capture < o.order_at - {before}
                   OR b.last_capture > o.order_at + {after}
                 THEN 'capture_outside_window' END
        WHEN b.n = 1 THEN 'amount_mismatch'
        WHEN b.captured < o.amount_minor THEN 'partial_capture'
        ELSE 'over_capture'
      END AS category
    FROM orders o LEFT JOIN by_order b ON b.order_r = o.r;

    -- Payments naming several orders, and the orders they name.
    CREATE OR REPLACE TABLE multi_links AS
    SELECT p.r AS payment_r, f.r AS order_r
    FROM (SELECT rowid AS r, unnest({reference_tokens_sql("order_id", ids)}) AS token
          FROM payments_rows WHERE rowid IN (SELECT r FROM payments WHERE refs > 1)) p
    JOIN order_first f ON f.order_key = p.token;

    -- Orders named by a multi-order payment are reviewed with that payment, not on their own.
    UPDATE order_findings SET category = NULL
    WHERE category IS NOT NULL AND r IN (SELECT order_r FROM multi_links);

    CREATE OR REPLACE TABLE flagged_orders AS
    SELECT r, category,
           CASE WHEN category = 'unreadable_row' THEN 'unreadable_amount' END AS reason,
           [r + 1] AS rows, captured, currency, exponent,
           amount_minor, order_id, order_key
    FROM order_findings WHERE category IS NOT NULL
    UNION ALL
    -- Ids that cannot be read as one order: every row of them with an amount is evidence,
    -- with the payments that name them.
    SELECT b.r, CASE WHEN b.unreadable THEN 'unreadable_row' ELSE 'conflicting_duplicate_order' END,
           b.reason, b.rows,
           (SELECT sum(amount_minor) FROM payments p WHERE p.order_r = b.r), o.currency_code,
           e.exponent,
           CASE WHEN NOT b.unreadable THEN
               {minor_sql("o.order_amount", units["order_amount"], "e.exponent")} END,
           o.order_id, b.order_key
    FROM bad_orders b JOIN orders_rows o ON o.rowid = b.r
    LEFT JOIN currency_exponents e ON e.code = o.currency_code;

    -- The payment rows behind each flagged order: its captures, and its refunds (no amount
    -- here: a refund never covers an order).
    CREATE OR REPLACE TABLE finding_payments AS
    SELECT order_r, r, payment_id, amount_minor FROM payments
    WHERE order_r IN (SELECT r FROM flagged_orders)
    UNION ALL
    SELECT order_r, r, payment_id, NULL FROM refunds
    WHERE order_r IN (SELECT r FROM flagged_orders);

    -- With three or more captures, whether a single one covers the order needs each capture.
    UPDATE flagged_orders SET category = CASE WHEN r IN (
            SELECT f.r FROM flagged_orders f JOIN finding_payments p ON p.order_r = f.r
            WHERE f.category = 'duplicate_capture?'
              AND abs(p.amount_minor - f.amount_minor) <= {tol})
        THEN 'duplicate_capture'
        WHEN captured < amount_minor THEN 'partial_capture' ELSE 'over_capture' END
    WHERE category = 'duplicate_capture?';

    CREATE OR REPLACE TABLE payment_findings AS
    SELECT r FROM payments
    WHERE refs <> 1 OR order_r IS NULL
    UNION SELECT r FROM payment_copies;

    CREATE OR REPLACE TABLE findings AS
    WITH flagged_payments AS (
        SELECT order_r AS r, list(payment_id ORDER BY r) AS payment_ids,
               list(r + 1 ORDER BY r) AS payment_rows
        FROM finding_payments GROUP BY 1
    ), flagged_copies AS (
        -- The few flagged orders whose payments were repeated get every row of each payment.
        SELECT f.order_r AS r, list(c.row ORDER BY c.row) AS payment_rows
        FROM finding_payments f
        JOIN (SELECT r, unnest(rows) AS row FROM payment_copies) c ON c.r = f.r
        GROUP BY 1
    ), multi AS (
        SELECT m.payment_r, list(f.order_id ORDER BY m.order_r) AS order_ids,
               list(f.order_key ORDER BY m.order_r) AS order_keys,
               list(m.order_r + 1 ORDER BY m.order_r) AS order_rows,
               sum(f.amount_minor) AS expected
        FROM multi_links m JOIN order_findings f ON f.r = m.order_r
        GROUP BY 1
    )
    SELECT category, CASE category {rank} END AS category_rank, reason, sort_row, order_ids,
           order_keys, order_rows, payment_ids,
           list_transform(payment_ids, lambda x: lower(x)) AS payment_keys,
           payment_rows, currency, exponent, expected, actual
    FROM (
        SELECT category, reason, o.r + 1 AS sort_row, [order_id] AS order_ids,
               [order_key] AS order_keys, o.rows AS order_rows,
               coalesce(fp.payment_ids, []) AS payment_ids,
               coalesce(
                   CASE WHEN fc.r IS NULL THEN fp.payment_rows
                        ELSE list_sort(list_distinct(fp.payment_rows || fc.payment_rows)) END,
                   []) AS payment_rows,
               currency, exponent,
               amount_minor AS expected,
               CASE WHEN category = 'order_without_capture' THEN 0 ELSE captured END AS actual
        FROM flagged_orders o LEFT JOIN flagged_payments fp ON fp.r = o.r
        LEFT JOIN flagged_copies fc ON fc.r = o.r
        UNION ALL
        SELECT CASE
                 WHEN p.refs > 1 THEN 'multi_order_payment'
                 WHEN p.refs = 0 OR p.order_r IS NULL THEN 'capture_without_order'
                 ELSE 'duplicate_payment_row'
               END, NULL,
               p.r + 1, coalesce(m.order_ids, []), coalesce(m.order_keys, []),
               coalesce(m.order_rows, []), [p.payment_id], coalesce(pc.rows, [p.r + 1]),
               p.currency, p.exponent, m.expected, p.amount_minor
        FROM payments p SEMI JOIN payment_findings pf ON pf.r = p.r
        LEFT JOIN payment_copies pc ON pc.r = p.r
        LEFT JOIN multi m ON m.payment_r = p.r
        UNION ALL
        -- Refunds of a capture and an order that neither file has: money moved, unexplained.
        SELECT 'capture_without_order', 'refund', rf.r + 1, [], [], [],
               list_filter([rf.payment_id], lambda x: x IS NOT NULL), [rf.r + 1],
               p.currency_code, e.exponent, NULL, rf.amount_minor
        FROM refunds rf JOIN payments_rows p ON p.rowid = rf.r
        LEFT JOIN currency_exponents e ON e.code = p.currency_code
        WHERE rf.order_r IS NULL
        UNION ALL
        -- Rows whose required values do not read: findings of their own.
        SELECT 'unreadable_row', k.reason, k.r + 1,
               list_filter([o.order_id], lambda x: x IS NOT NULL), [], [k.r + 1],
               [], [], o.currency_code, NULL, NULL, NULL
        FROM order_row_kinds k JOIN orders_rows o ON o.rowid = k.r
        WHERE k.kind = 'unreadable' AND k.order_key IS NULL
        UNION ALL
        SELECT 'unreadable_row',
               CASE WHEN k.reason = 'unknown_row_kind'
                    THEN k.reason || ':' || coalesce(k.value, '') ELSE k.reason END,
               k.r + 1, [], [],
               [], list_filter([p.payment_id], lambda x: x IS NOT NULL), [k.r + 1],
               p.currency_code, NULL, NULL, NULL
        FROM payment_row_kinds k JOIN payments_rows p ON p.rowid = k.r
        WHERE k.kind = 'unreadable'
    );
    """
    con.execute(script)


_STATS = """
SELECT (SELECT count(*) FROM order_first), (SELECT count(*) FROM orders_rows),
       (SELECT count(*) FROM payments), (SELECT count(*) FROM payments_rows),
       (SELECT count(*) FROM payment_row_kinds WHERE reason = 'failed_attempt'),
       (SELECT list(r + 1 ORDER BY r) FROM ledger_rows
        WHERE role = 'orders' AND bucket = 'unreadable'),
       (SELECT list(r + 1 ORDER BY r) FROM ledger_rows
        WHERE role = 'payments' AND bucket = 'unreadable')
"""

# The money a category concerns, per currency: the gap between expected and found (for a
# currency mismatch the two amounts are in different currencies, so no gap is given).
_CATEGORY_TOTALS = """
SELECT category, currency, count(*),
       CASE WHEN category <> 'currency_mismatch'
             AND sum(abs(coalesce(actual, 0) - coalesce(expected, 0))) <> 0
            THEN fmt_minor(sum(abs(coalesce(actual, 0) - coalesce(expected, 0))),
                           any_value(exponent)) END
FROM findings GROUP BY category, currency
"""

_CURRENCY_TOTALS = """
WITH o AS (
    SELECT currency, any_value(exponent) AS exponent, count(*) AS orders,
           sum(amount_minor) AS total,
           count(*) FILTER (WHERE category IS NULL AND n IS NOT NULL) AS matched,
           sum(amount_minor) FILTER (WHERE category IS NULL AND n IS NOT NULL) AS matched_total
    FROM order_findings GROUP BY 1
), p AS (
    SELECT currency, any_value(exponent) AS exponent, count(*) AS captures,
           sum(amount_minor) AS total
    FROM payments GROUP BY 1
)
SELECT coalesce(o.currency, p.currency, '?') AS currency, coalesce(o.orders, 0),
       coalesce(fmt_minor(o.total, coalesce(o.exponent, p.exponent)), '0'),
       coalesce(p.captures, 0), coalesce(fmt_minor(p.total, coalesce(p.exponent, o.exponent)), '0'),
       coalesce(o.matched, 0), coalesce(fmt_minor(o.matched_total, o.exponent), '0')
FROM o FULL OUTER JOIN p USING (currency)
ORDER BY 1
"""

_NEUTRAL = "CASE WHEN regexp_matches({0}, '^[=+\\-@\\t\\r]') THEN chr(39) || {0} ELSE {0} END"

_EXPORT = f"""
SELECT category, reason,
       {_NEUTRAL.format("array_to_string(order_ids, '; ')")} AS order_ids,
       array_to_string(order_rows, ' ') AS orders_rows,
       {_NEUTRAL.format("array_to_string(payment_ids, '; ')")} AS payment_ids,
       array_to_string(payment_rows, ' ') AS payments_rows,
       {_NEUTRAL.format("coalesce(currency, '')")} AS currency,
       expected, actual, difference
FROM (
    SELECT category_rank AS rank, sort_row, category, reason, order_ids, order_rows,
           payment_ids, payment_rows, currency,
           fmt_minor(expected, exponent) AS expected,
           fmt_minor(actual, exponent) AS actual,
           fmt_minor(actual - expected, exponent) AS difference
    FROM findings
    UNION ALL
    SELECT 1000, l.r + 1, 'ignored',
           CASE WHEN l.reason = 'row_kind' THEN l.reason || ':' || coalesce(k.value, '')
                ELSE l.reason END,
           CASE WHEN l.role = 'orders' THEN list_filter([o.order_id], lambda x: x IS NOT NULL)
                ELSE [] END,
           CASE WHEN l.role = 'orders' THEN [l.r + 1] ELSE [] END,
           CASE WHEN l.role = 'payments' THEN list_filter([p.payment_id], lambda x: x IS NOT NULL)
                ELSE [] END,
           CASE WHEN l.role = 'payments' THEN [l.r + 1] ELSE [] END,
           CASE WHEN l.role = 'orders' THEN o.currency_code ELSE p.currency_code END,
           NULL, NULL, NULL
    FROM ledger_rows l
    LEFT JOIN orders_rows o ON l.role = 'orders' AND o.rowid = l.r
    LEFT JOIN payments_rows p ON l.role = 'payments' AND p.rowid = l.r
    LEFT JOIN payment_row_kinds k ON l.role = 'payments' AND k.r = l.r
    WHERE l.bucket = 'ignored'
)
ORDER BY rank, sort_row
"""
