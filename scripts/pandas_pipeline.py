"""The baseline for the benchmark: the same job done the straightforward way with pandas.

Hash both files, read them, reconcile under the same rules as reconbot (policy defaults), and
export the exceptions CSV. Column names are those of `reconbot demo-data` files. Prints one JSON
line with the per-category counts so the benchmark can check both pipelines agree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from straight_job import sha256

FAILED = {"failed", "declined", "canceled", "cancelled", "blocked", "error", "expired"}
REFUNDED = {"refunded", "partially_refunded", "reversed"}
VOIDED = {"voided", "void", "cancelled", "canceled"}
EXPONENTS = {"USD": 2, "EUR": 2, "GBP": 2, "JPY": 0, "KWD": 3}
TOL = 1


def minor(amount: pd.Series, currency: pd.Series) -> pd.Series:
    values = pd.to_numeric(amount.str.replace(",", "", regex=False), errors="coerce")
    scale = 10.0 ** currency.map(EXPONENTS)
    return (values * scale).round().astype("Int64")


def key(series: pd.Series) -> pd.Series:
    return series.str.replace("#", "", regex=False).str.strip().str.lower()


def main(orders_path: Path, payments_path: Path, out: Path) -> None:
    sha256(orders_path)
    sha256(payments_path)
    orders = pd.read_csv(orders_path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    payments = pd.read_csv(payments_path, dtype=str, keep_default_na=False)
    orders["row"] = np.arange(1, len(orders) + 1)
    orders["key"] = key(orders["Name"])
    orders = orders.drop_duplicates("key", keep="first")
    orders["currency"] = orders["Currency"].str.strip().str.upper()
    orders["amount"] = minor(orders["Total"], orders["currency"])
    orders["date"] = pd.to_datetime(orders["Created at"], format="%Y-%m-%d %H:%M:%S %z", utc=True)
    orders["status"] = orders["Financial Status"].str.strip().str.lower()

    payments["row"] = np.arange(1, len(payments) + 1)
    payments["status"] = payments["Status"].str.strip().str.lower()
    payments = payments[~payments["status"].isin(FAILED)]
    copies = payments.groupby("id")["row"].transform("size")
    payments = payments.assign(copies=copies).drop_duplicates("id", keep="first")
    payments["currency"] = payments["Currency"].str.strip().str.upper()
    payments["amount"] = minor(payments["Amount"], payments["currency"])
    payments["refunded"] = minor(payments["Amount Refunded"], payments["currency"]).fillna(0)
    payments["at"] = pd.to_datetime(payments["Created date (UTC)"], utc=True)
    tokens = payments["order_id (metadata)"].str.split(r"[\s,;|/&+]+", regex=True)
    tokens = tokens.apply(
        lambda ts: list(
            dict.fromkeys(
                t.replace("#", "").strip().lower() for t in ts if any(c.isdigit() for c in t)
            )
        )
    )
    payments["refs"] = tokens.str.len()
    payments["ref"] = tokens.str[0]
    payments["refunded_status"] = payments["status"].isin(REFUNDED)

    multi = payments[payments["refs"] > 1].explode("ref")
    multi_orders = set(tokens[payments["refs"] > 1].explode())
    single = payments[payments["refs"] == 1].merge(
        orders[["key", "amount", "currency", "date"]],
        left_on="ref",
        right_on="key",
        how="left",
        suffixes=("", "_order"),
    )
    orphan = single[single["key"].isna()]
    single = single[single["key"].notna()].copy()
    single["fully_refunded"] = (single["refunded"] >= single["amount"]) | single["refunded_status"]
    single["covers"] = (single["amount"] - single["amount_order"]).abs() <= TOL
    single["currency_differs"] = single["currency"] != single["currency_order"]
    single["outside"] = (single["at"] < single["date"] - pd.Timedelta(hours=24)) | (
        single["at"] > single["date"] + pd.Timedelta(days=30)
    )
    agg = single.groupby("key").agg(
        n=("amount", "size"),
        captured=("amount", "sum"),
        refunded=("refunded", "sum"),
        currency_differs=("currency_differs", "any"),
        all_refunded=("fully_refunded", "all"),
        any_refunded=("refunded_status", "any"),
        one_covers=("covers", "any"),
        outside=("outside", "any"),
    )
    o = orders.merge(agg, left_on="key", right_index=True, how="left")
    amount, captured, n = o["amount"], o["captured"], o["n"]
    conditions = [
        o["key"].isin(multi_orders),
        n.isna() & o["status"].isin(VOIDED),
        n.isna(),
        o["currency_differs"].fillna(False).astype(bool),
        (o["status"].isin(VOIDED) & (captured - o["refunded"] > TOL))
        | (
            (o["status"] == "refunded")
            & (o["refunded"] == 0)
            & ~o["any_refunded"].fillna(False).astype(bool)
        )
        | (o["all_refunded"].fillna(False).astype(bool) & (o["status"] == "paid")),
        (n >= 2) & o["one_covers"].fillna(False).astype(bool) & (captured > amount + TOL),
        (captured - amount).abs() <= TOL,
        n == 1,
        captured < amount,
    ]
    choices = [
        "",
        "",
        "order_without_capture",
        "currency_mismatch",
        "status_mismatch",
        "duplicate_capture",
        "ok",
        "amount_mismatch",
        "partial_capture",
    ]
    o["category"] = np.select(
        [c.fillna(False).astype(bool) for c in conditions], choices, "over_capture"
    )
    ok = o["category"] == "ok"
    o.loc[ok, "category"] = np.where(
        o.loc[ok, "outside"].fillna(False).astype(bool), "capture_outside_window", ""
    )
    flagged = o[o["category"] != ""]

    payment_findings = pd.concat(
        [
            payments[payments["refs"] > 1].assign(category="multi_order_payment"),
            payments[payments["refs"] == 0].assign(category="capture_without_order"),
            payments[payments["id"].isin(orphan["id"])].assign(category="capture_without_order"),
        ]
    )
    dup = payments[(payments["copies"] > 1) & ~payments["id"].isin(payment_findings["id"])]
    payment_findings = pd.concat([payment_findings, dup.assign(category="duplicate_payment_row")])
    del multi
    export = pd.concat(
        [
            flagged[["category", "Name", "row", "currency", "amount", "captured"]].rename(
                columns={"Name": "id", "amount": "expected", "captured": "actual"}
            ),
            payment_findings[["category", "id", "row", "currency", "amount"]].rename(
                columns={"amount": "actual"}
            ),
        ]
    )
    export.to_csv(out, index=False)
    counts = export["category"].value_counts().to_dict()
    print(json.dumps({k: int(v) for k, v in counts.items()}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
