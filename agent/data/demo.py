"""Realistic demo exports with every finding category injected, and the counts to expect.

The orders file imitates a Shopify orders export (one row per line item, order fields only on an
order's first row, timestamps with offsets, a UTF-8 BOM); the payments file imitates a Stripe
unified payments export (lower-case currencies, quoted amounts with thousands separators,
references written `#1042` or ` 1042 `, failed attempts, repeated webhook rows). `truth.json`
holds the per-category counts that a correct reconciliation reports, so the demo doubles as a
test oracle and a benchmark input.
"""

from __future__ import annotations

import csv
import itertools
import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

ORDER_COLUMNS = [
    "Name",
    "Email",
    "Financial Status",
    "Created at",
    "Currency",
    "Subtotal",
    "Shipping",
    "Total",
    "Lineitem quantity",
    "Lineitem name",
    "Lineitem price",
    "Id",
]
PAYMENT_COLUMNS = [
    "id",
    "Description",
    "Created date (UTC)",
    "Amount",
    "Amount Refunded",
    "Currency",
    "Captured",
    "Status",
    "Customer Email",
    "order_id (metadata)",
]

# (currency, exponent, weight, smallest and largest amount in minor units)
_CURRENCIES = [
    ("USD", 2, 50, 500, 300_000),
    ("EUR", 2, 20, 500, 300_000),
    ("GBP", 2, 15, 500, 300_000),
    ("JPY", 0, 10, 500, 300_000),
    ("KWD", 3, 5, 1_000, 900_000),
]
_OFFSETS = [UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5))]
_PRODUCTS = ["Linen shirt", "Wool scarf", "Ceramic mug", "Desk lamp", "Notebook, A5", "Tea set"]

# What happens to an order, with its weight. Findings use the category ids of
# docs/design.md §7.5; the `ok_*` cases are legitimate and must not be reported.
_CASES: list[tuple[str, int]] = [
    ("ok_single", 700),
    ("ok_split", 30),
    ("ok_within_tolerance", 20),
    ("ok_failed_then_paid", 30),
    ("ok_refunded", 20),
    ("ok_voided_unpaid", 10),
    ("order_without_capture", 25),
    ("amount_mismatch", 20),
    ("partial_capture", 15),
    ("over_capture", 10),
    ("duplicate_capture", 15),
    ("currency_mismatch", 10),
    ("status_mismatch", 10),
    ("capture_outside_window", 10),
    ("duplicate_payment_row", 20),
    ("multi_order_payment", 10),
]
# Stray captures name order numbers this far past the real ones: never a real order, at any
# size (9,000,000 + n did, once a file had nine million orders).
STRAY_BASE = 10**12
SHOP_PREFIX = "SH"
"""The shop's order-name prefix (Shopify's *Order ID format*): order names read `#SH1042`."""
_TYPED_BY_HAND = 0.03
"""The share of references typed by hand, in lower case between spaces (` sh1042 `): the bot
proposes ids compared in any case from the files, with the figure, and asks nothing."""
_CAPTURE_WITHOUT_ORDER_PER_1000 = 15

CATEGORY_IDS = [
    "unreadable_row",
    "conflicting_duplicate_order",
    "order_without_capture",
    "capture_without_order",
    "amount_mismatch",
    "partial_capture",
    "over_capture",
    "duplicate_capture",
    "duplicate_payment_row",
    "multi_order_payment",
    "currency_mismatch",
    "status_mismatch",
    "capture_outside_window",
]


@dataclass
class _Writer:
    rng: random.Random
    orders: list[list[str]] = field(default_factory=list)
    payments: list[list[str]] = field(default_factory=list)
    next_payment: int = 0

    def payment_id(self) -> str:
        """A new Stripe-like charge id, unique within the file."""
        self.next_payment += 1
        return f"ch_3Q{self.next_payment:010d}{self.rng.choice('ABCDEFGH')}"


@dataclass
class _Payer:
    """Writes payments for one order, with that order's defaults."""

    writer: _Writer
    ref: str
    exp: int
    currency: str
    when: datetime
    email: str

    def pay(
        self,
        amount: int,
        *,
        when: datetime | None = None,
        currency: str | None = None,
        exp: int | None = None,
        status: str = "Paid",
        captured: str = "true",
        refunded: int = 0,
    ) -> str:
        """Write one payment row for this order (its defaults unless overridden)."""
        return _write_payment(
            self.writer,
            self.ref,
            amount,
            self.exp if exp is None else exp,
            currency or self.currency,
            when or self.when,
            self.email,
            status=status,
            captured=captured,
            refunded=refunded,
        )


def stray_reference(order_number: int) -> str:
    """The reference of a capture without an order, written beside order `order_number`: an
    order number no demo file reaches, whatever its size."""
    return f"#{STRAY_BASE + order_number}"


def _money(minor: int, exponent: int, *, thousands: bool) -> str:
    sign = "-" if minor < 0 else ""
    whole, frac = divmod(abs(minor), 10**exponent)
    whole_text = f"{whole:,}" if thousands else str(whole)
    return f"{sign}{whole_text}.{frac:0{exponent}d}" if exponent else f"{sign}{whole_text}"


def order_name(number: int) -> str:
    """The name of order `number` as the shop writes it: Shopify's `#` and the shop's prefix."""
    return f"#{SHOP_PREFIX}{number}"


def _reference(rng: random.Random, number: int) -> str:
    """A payment's reference to order `number`, written as references are: mostly the order's
    name, sometimes without its `#` or between spaces, and a few typed by hand in lower case."""
    style = rng.random()
    name = order_name(number)
    if style < 0.6:
        return name
    if style < 0.8:
        return f" {name[1:]} "
    if style < 1 - _TYPED_BY_HAND:
        return name[1:]
    return f" {name[1:].lower()} "


def generate(rows: int, out: Path, seed: int = 7) -> dict[str, object]:
    """Write `orders.csv`, `payments.csv` and `truth.json` for `rows` orders into `out`.

    The same `rows` and `seed` always give byte-identical files. Returns the truth document.
    """
    rng = random.Random(seed)  # noqa: S311 - demo data, not secrets
    out.mkdir(parents=True, exist_ok=True)
    writer = _Writer(rng)
    counts = dict.fromkeys(CATEGORY_IDS, 0)
    legit: dict[str, int] = {}
    names = [name for name, _ in _CASES]
    case_cum = list(itertools.accumulate(weight for _, weight in _CASES))
    cur_cum = list(itertools.accumulate(c[2] for c in _CURRENCIES))
    start = datetime(2025, 9, 1, tzinfo=UTC)
    order_number = 1000
    pending_multi: tuple[int, str, int, int, datetime, str] | None = None
    produced = 0
    while produced < rows:
        order_number += 1
        produced += 1
        case = rng.choices(names, cum_weights=case_cum)[0]
        code, exp, _, low, high = rng.choices(_CURRENCIES, cum_weights=cur_cum)[0]
        if case == "multi_order_payment" and pending_multi is not None and pending_multi[1] != code:
            case = "ok_single"
        total = rng.randint(low, high)
        created = start + timedelta(seconds=rng.randint(0, 60 * 86400))
        email = f"customer{rng.randint(1, rows * 3)}@example.com"
        status = {"ok_refunded": "refunded", "ok_voided_unpaid": "voided"}.get(case, "paid")
        if case == "status_mismatch":
            status = rng.choice(["voided", "refunded"])
        _write_order(writer, order_number, email, status, created, code, exp, total)
        paid_at = created + timedelta(minutes=rng.randint(1, 2 * 24 * 60))
        ref = _reference(rng, order_number)

        pay = _Payer(writer, ref, exp, code, paid_at, email).pay

        if case in ("ok_single", "status_mismatch"):
            pay(total)
        elif case == "ok_split":
            first = rng.randint(1, total - 1)
            pay(first)
            pay(total - first, when=paid_at + timedelta(hours=3))
        elif case == "ok_within_tolerance":
            pay(total + rng.choice([-1, 1]))
        elif case == "ok_failed_then_paid":
            pay(total, status="Failed", captured="false", when=paid_at - timedelta(minutes=5))
            pay(total)
        elif case == "ok_refunded":
            pay(total, status="Refunded", refunded=total)
        elif case in ("ok_voided_unpaid", "order_without_capture"):
            pass
        elif case == "amount_mismatch":
            pay(total + max(1, total // rng.randint(4, 20)) * rng.choice([-1, 1]))
        elif case == "partial_capture":
            pay(total // 3)
            pay(total // 3, when=paid_at + timedelta(days=1))
        elif case == "over_capture":
            pay(total // 2 + 1 + rng.randint(1, 50))
            pay(total // 2 + 1 + rng.randint(1, 50), when=paid_at + timedelta(hours=1))
        elif case == "duplicate_capture":
            pay(total)
            pay(total, when=paid_at + timedelta(minutes=rng.randint(1, 90)))
        elif case == "currency_mismatch":
            # Captured in another currency (two decimals), written as its exports write it.
            pay(
                total // 10 ** max(exp - 2, 0),
                currency="EUR" if code != "EUR" else "USD",
                exp=min(exp, 2),
            )
        elif case == "capture_outside_window":
            pay(total, when=created + timedelta(days=rng.randint(40, 90)))
        elif case == "duplicate_payment_row":
            pay(total)
            for _ in range(rng.randint(1, 2)):  # the same webhook row delivered again
                writer.payments.append(list(writer.payments[-1]))
        elif case == "multi_order_payment":
            if pending_multi is None:
                pending_multi = (order_number, code, exp, total, paid_at, email)
                continue
            first_number, _, _, first_total, _, _ = pending_multi
            pending_multi = None
            both = f"{order_name(first_number)}, {order_name(order_number)}"
            _write_payment(writer, both, first_total + total, exp, code, paid_at, email)
            counts["multi_order_payment"] += 1
            continue
        if case.startswith("ok_"):
            legit[case] = legit.get(case, 0) + 1
        else:
            counts[case] += 1
        if rng.random() * 1000 < _CAPTURE_WITHOUT_ORDER_PER_1000:
            stray = rng.choice([stray_reference(order_number), ""])
            _write_payment(writer, stray, rng.randint(low, high), exp, code, paid_at, email)
            counts["capture_without_order"] += 1
    if pending_multi is not None:  # an unpaired half: pay it alone, as an ordinary order
        number, code, exp, total, paid_at, email = pending_multi
        _write_payment(writer, order_name(number), total, exp, code, paid_at, email)
        legit["ok_single"] = legit.get("ok_single", 0) + 1
    _write_csv(out / "orders.csv", ORDER_COLUMNS, writer.orders, encoding="utf-8-sig")
    _write_csv(out / "payments.csv", PAYMENT_COLUMNS, writer.payments, encoding="utf-8")
    truth: dict[str, object] = {
        "seed": seed,
        "orders": rows,
        "order_rows": len(writer.orders),
        "payment_rows": len(writer.payments),
        "findings": counts,
        "legitimate": dict(sorted(legit.items())),
    }
    (out / "truth.json").write_text(json.dumps(truth, indent=2, sort_keys=True) + "\n")
    return truth


def _write_order(
    writer: _Writer,
    number: int,
    email: str,
    status: str,
    created: datetime,
    code: str,
    exp: int,
    total: int,
) -> None:
    rng = writer.rng
    local = created.astimezone(rng.choice(_OFFSETS))
    shipping = min(total // 10, 10 ** (exp + 1))
    subtotal = total - shipping
    items = 1 if rng.random() < 0.8 else rng.randint(2, 3)
    order_id = str(5_100_000_000_000 + number * 7)
    for index in range(items):
        item = [
            str(rng.randint(1, 3)),
            rng.choice(_PRODUCTS),
            _money(subtotal // items, exp, thousands=False),
        ]
        if index == 0:
            writer.orders.append(
                [
                    order_name(number),
                    email,
                    status,
                    local.strftime("%Y-%m-%d %H:%M:%S %z"),
                    code,
                    _money(subtotal, exp, thousands=False),
                    _money(shipping, exp, thousands=False),
                    _money(total, exp, thousands=False),
                    *item,
                    order_id,
                ]
            )
        else:
            writer.orders.append([order_name(number), email, "", "", "", "", "", "", *item, ""])


def _write_payment(
    writer: _Writer,
    ref: str,
    amount: int,
    exp: int,
    currency: str,
    when: datetime,
    email: str,
    *,
    status: str = "Paid",
    captured: str = "true",
    refunded: int = 0,
) -> str:
    pid = writer.payment_id()
    writer.payments.append(
        [
            pid,
            f"Payment for {ref.strip()}" if ref.strip() else "Payment",
            when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            _money(amount, exp, thousands=True),
            _money(refunded, exp, thousands=True),
            currency.lower(),
            captured,
            status,
            email,
            ref,
        ]
    )
    return pid


def _write_csv(path: Path, header: list[str], rows: list[list[str]], *, encoding: str) -> None:
    with path.open("w", encoding=encoding, newline="") as handle:
        out = csv.writer(handle, lineterminator="\r\n" if encoding == "utf-8-sig" else "\n")
        out.writerow(header)
        out.writerows(rows)
