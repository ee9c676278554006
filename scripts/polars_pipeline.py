"""A peer for the benchmark: the job of scripts/pandas_pipeline.py written with polars.

Why: pandas is single-threaded and eager, so beating it says little. This is how a capable
engineer would write the job for speed with polars: scan both `reconbot demo-data` files lazily
(every column a string, converted in expressions), reconcile under the same rules as reconbot's
policy defaults with the same categories as the pandas pipeline, and let one lazy plan, collected
once on polars' own thread pool, produce the exceptions; write them to a CSV and print one JSON
line of per-category counts.

Unlike the pandas pipeline it does not hash the files: the peer's job is "read, reconcile,
count". `--hash` also sha256-hashes both files first, for a like-for-like figure. Usage:

    python scripts/polars_pipeline.py ORDERS PAYMENTS OUT [--hash]
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
from straight_job import command_line

TOL = 1
"""Amounts within this many minor units agree (the policy default)."""
EARLY_S = 24 * 3600
"""A capture more than this long before its order is outside the window."""
LATE_S = 30 * 86400
"""A capture more than this long after its order is outside the window."""

FAILED = ["failed", "declined", "canceled", "cancelled", "blocked", "error", "expired"]
REFUNDED = ["refunded", "partially_refunded", "reversed"]
VOIDED = ["voided", "void", "cancelled", "canceled"]
SCALES = {"USD": 100.0, "EUR": 100.0, "GBP": 100.0, "JPY": 1.0, "KWD": 1000.0}
"""Minor units per major unit, by currency (10 ** the currency's exponent)."""
TOKEN = r"[^\s,;|/&+]*[0-9][^\s,;|/&+]*"
"""An order reference in a payment: a run between separators that holds a digit."""


def text(column: str) -> pl.Expr:
    """The column trimmed, an empty field read as the empty string."""
    return pl.col(column).fill_null("").str.strip_chars()


def minor(amount: str, currency: pl.Expr) -> pl.Expr:
    """The text `amount` (thousands separators allowed) in minor units of `currency`."""
    value = pl.col(amount).str.replace_all(",", "", literal=True).cast(pl.Float64, strict=False)
    scale = currency.replace_strict(SCALES, default=None, return_dtype=pl.Float64)
    return (value * scale).round().cast(pl.Int64)


def key(expr: pl.Expr) -> pl.Expr:
    """An order reference compared as reconbot compares ids (no `#`, trimmed, lower case)."""
    return expr.str.replace_all("#", "", literal=True).str.strip_chars().str.to_lowercase()


def scan(path: Path) -> pl.LazyFrame:
    """The file as strings, with its 1-based data row number in `row`."""
    return pl.scan_csv(path, infer_schema=False, row_index_name="row", row_index_offset=1)


def orders_frame(path: Path) -> pl.LazyFrame:
    """One row per order (its first row: the others are its further line items)."""
    currency = text("Currency").str.to_uppercase()
    return (
        scan(path)
        .select(
            "row",
            pl.col("Name").fill_null("").alias("name"),
            key(pl.col("Name").fill_null("")).alias("key"),
            text("Financial Status").str.to_lowercase().alias("status"),
            currency.alias("currency"),
            minor("Total", currency).alias("amount"),
            pl.col("Created at").str.to_datetime("%Y-%m-%d %H:%M:%S %z").dt.epoch("s").alias("t"),
        )
        .unique("key", keep="first", maintain_order=True)
    )


def payments_frame(path: Path) -> pl.LazyFrame:
    """Payments that went through, each id once, with how many copies of it the file has."""
    currency = text("Currency").str.to_uppercase()
    refs = (
        pl.col("order_id (metadata)")
        .fill_null("")
        .str.extract_all(TOKEN)
        .list.eval(key(pl.element()))
        .list.unique(maintain_order=True)
    )
    return (
        scan(path)
        .with_columns(text("Status").str.to_lowercase().alias("status"))
        .filter(~pl.col("status").is_in(FAILED))
        .with_columns(pl.len().over("id").alias("copies"))
        .unique("id", keep="first", maintain_order=True)
        .select(
            "row",
            "id",
            "copies",
            currency.alias("currency"),
            minor("Amount", currency).alias("amount"),
            minor("Amount Refunded", currency).fill_null(0).alias("refunded"),
            pl.col("Created date (UTC)")
            .str.to_datetime("%Y-%m-%d %H:%M:%S")
            .dt.epoch("s")
            .alias("t"),
            pl.col("status").is_in(REFUNDED).alias("refunded_status"),
            refs.alias("refs"),
        )
        .with_columns(
            pl.col("refs").list.len().alias("n_refs"), pl.col("refs").list.first().alias("ref")
        )
    )


def exceptions(orders: pl.DataFrame, pay: pl.DataFrame) -> pl.DataFrame:
    """The findings, one row per exception, in the order the pandas pipeline writes them
    (flagged orders, then multi-order payments, payments without a reference, payments whose
    reference names no order, and repeated payment rows, each in file order)."""
    multi = pay.filter(pl.col("n_refs") > 1)["refs"].explode().unique()
    order_keys = orders["key"]
    single = pay.lazy().filter(pl.col("n_refs") == 1)
    matched = single.join(
        orders.lazy().select("key", "amount", "currency", "t"),
        left_on="ref",
        right_on="key",
        how="inner",
        suffix="_order",
    )
    covers = (pl.col("amount") - pl.col("amount_order")).abs() <= TOL
    outside = (pl.col("t") < pl.col("t_order") - EARLY_S) | (
        pl.col("t") > pl.col("t_order") + LATE_S
    )
    agg = matched.group_by(pl.col("ref").alias("key")).agg(
        pl.len().alias("n"),
        pl.col("amount").sum().alias("captured"),
        pl.col("refunded").sum().alias("refunded"),
        (pl.col("currency") != pl.col("currency_order")).any().alias("currency_differs"),
        ((pl.col("refunded") >= pl.col("amount")) | pl.col("refunded_status"))
        .all()
        .alias("all_refunded"),
        pl.col("refunded_status").any().alias("any_refunded"),
        covers.any().alias("one_covers"),
        outside.any().alias("outside"),
    )
    n, amount, captured, status = (pl.col(c) for c in ("n", "amount", "captured", "status"))
    voided = status.is_in(VOIDED)
    status_mismatch = (
        (voided & (captured - pl.col("refunded") > TOL))
        | ((status == "refunded") & (pl.col("refunded") == 0) & ~pl.col("any_refunded"))
        | (pl.col("all_refunded") & (status == "paid"))
    )
    category = (
        pl.when(pl.col("key").is_in(multi.implode()))
        .then(None)
        .when(n.is_null() & voided)
        .then(None)
        .when(n.is_null())
        .then(pl.lit("order_without_capture"))
        .when(pl.col("currency_differs"))
        .then(pl.lit("currency_mismatch"))
        .when(status_mismatch)
        .then(pl.lit("status_mismatch"))
        .when((n >= 2) & pl.col("one_covers") & (captured > amount + TOL))
        .then(pl.lit("duplicate_capture"))
        .when((captured - amount).abs() <= TOL)
        .then(pl.when(pl.col("outside")).then(pl.lit("capture_outside_window")))
        .when(n == 1)
        .then(pl.lit("amount_mismatch"))
        .when(captured < amount)
        .then(pl.lit("partial_capture"))
        .otherwise(pl.lit("over_capture"))
    )
    flagged = (
        orders.lazy()
        .join(agg, on="key", how="left")
        .select(
            category.alias("category"),
            pl.col("name").alias("id"),
            "row",
            "currency",
            pl.col("amount").alias("expected"),
            pl.col("captured").alias("actual"),
            pl.lit(0).alias("rank"),
        )
        .filter(pl.col("category").is_not_null())
    )
    rank = (
        pl.when(pl.col("n_refs") > 1)
        .then(1)
        .when(pl.col("n_refs") == 0)
        .then(2)
        .when(~pl.col("ref").is_in(order_keys.implode()))
        .then(3)
        .when(pl.col("copies") > 1)
        .then(4)
    )
    payment_findings = (
        pay.lazy()
        .with_columns(rank.alias("rank"))
        .filter(pl.col("rank").is_not_null())
        .select(
            pl.col("rank")
            .replace_strict(
                {1: "multi_order_payment", 4: "duplicate_payment_row"},
                default="capture_without_order",
                return_dtype=pl.String,
            )
            .alias("category"),
            "id",
            "row",
            "currency",
            pl.lit(None, dtype=pl.Int64).alias("expected"),
            pl.col("amount").alias("actual"),
            "rank",
        )
    )
    both = pl.concat([flagged, payment_findings], how="vertical_relaxed")
    return both.sort("rank", "row").collect()


def reconcile(orders: Path, payments: Path, out: Path) -> dict[str, int]:
    """Reconcile `orders` against `payments`, write the exceptions CSV to `out` and return the
    per-category counts (most frequent first)."""
    order_rows, pay_rows = pl.collect_all([orders_frame(orders), payments_frame(payments)])
    export = exceptions(order_rows, pay_rows)
    export.drop("rank").write_csv(out)
    counts = (
        export.group_by("category")
        .len()
        .sort(["len", "category"], descending=[True, False])
        .iter_rows()
    )
    return {str(category): int(n) for category, n in counts}


if __name__ == "__main__":
    command_line(reconcile, __doc__ or "")
