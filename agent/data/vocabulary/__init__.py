"""What every status and row-kind value means: the one vocabulary of the data engine.

An order status says whether the order is `paid`, `pending` (not paid yet), `voided`
(cancelled or failed: no money is owed), `refunded` or `partially_refunded`. A payment file's
status or type value says what its row is: a `capture`, a `failed` attempt, a `pending` or
`authorisation`-only row (no money taken yet), a `refund`, a `chargeback`, or a row that is no
payment of an order at all (`fee`, `payout`, `tax`, `shipping`, `adjustment`). Values that name
how a customer paid (`Credit card`, `Bank transfer`: a *tender*) say nothing of the kind.

Values are read folded (`fold`: lower case, accents off, any run of other characters one
space), first whole (platform codes: WooCommerce `wc-refunded`, Adyen `SettledBulk`, Stripe
`payout_reversal`, Authorize.Net `Captured/Pending Settlement`), then word by word in an order of
precedence (a denial outranks a capture: `not paid`; a fee outranks a refund: `refund fee`;
a refund outranks a capture: `payment refund`). Words are written in English, German, French,
Spanish, Italian, Dutch, Portuguese, Polish and Swedish. A value that is only a number is a
code that means nothing by itself (`code_proposal` proposes the one published set it knows).

The vocabulary proposes; the mapping binds: inference writes each value's meaning into the
reading a person approves, and the engine reads that, not this module. A team's policy file
overrides or extends it (`Policy.vocabulary()`); its digest (`BUILTIN_DIGEST`) is part of the
policy version, so a change of words here changes the version of every policy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, cast

from agent.data.vocabulary.words import (
    BUILTIN_DIGEST,
    NEGATIONS,
    NUMERIC_CODES,
    ORDER_CODES,
    ORDER_MEANINGS,
    ORDER_PRECEDENCE,
    ORDER_WORDS,
    PARTIAL,
    PAYMENT_CODES,
    PAYMENT_MEANINGS,
    PAYMENT_PRECEDENCE,
    PAYMENT_WORDS,
    REFUNDED_STATES,
    REVERSED_RETURNS,
    TENDER_PHRASES,
    TENDER_WORDS,
    OrderMeaning,
    PaymentMeaning,
    fold,
)

__all__ = [
    "BUILTIN",
    "BUILTIN_DIGEST",
    "DEFAULT_FAILED_PAYMENT_STATUSES",
    "DEFAULT_PAID_ORDER_STATUSES",
    "DEFAULT_REFUNDED_ORDER_STATUSES",
    "DEFAULT_REFUNDED_PAYMENT_STATUSES",
    "DEFAULT_VOIDED_ORDER_STATUSES",
    "ORDER_MEANINGS",
    "ORDER_MEANING_WORDS",
    "PAYMENT_MEANINGS",
    "PAYMENT_MEANING_WORDS",
    "ROW_KIND",
    "OrderMeaning",
    "PaymentMeaning",
    "RowKind",
    "Vocabulary",
    "code_proposal",
    "fold",
    "is_tender",
    "meaning_pairs",
]

RowKind = Literal["capture", "refund", "ignore"]
# What the engine does with a payment row of each meaning: a capture is matched, a refund or a
# chargeback returns money of a capture, every other row moved no money of an order.
ROW_KIND: Final[dict[PaymentMeaning, RowKind]] = {
    "capture": "capture",
    "refund": "refund",
    "chargeback": "refund",
    "failed": "ignore",
    "pending": "ignore",
    "authorisation": "ignore",
    "fee": "ignore",
    "payout": "ignore",
    "tax": "ignore",
    "shipping": "ignore",
    "adjustment": "ignore",
}

# What each meaning is, in words, for requests, questions and `reconbot explain`.
ORDER_MEANING_WORDS: Final[dict[OrderMeaning, str]] = {
    "paid": "paid: a capture is expected",
    "pending": "not paid yet: no payment is expected yet (one that came is matched)",
    "voided": "cancelled or failed: no money is owed; a capture kept is a finding",
    "refunded": "refunded in full: the capture must have been refunded",
    "partially_refunded": "refunded in part: some, not all, of the capture went back",
}
PAYMENT_MEANING_WORDS: Final[dict[PaymentMeaning, str]] = {
    "capture": "a capture: money taken for an order",
    "failed": "a failed attempt: no money taken",
    "pending": "pending: no money taken yet",
    "authorisation": "an authorisation only: no money taken",
    "refund": "a refund: money returned for a capture",
    "chargeback": "a chargeback or dispute: money taken back for a capture",
    "fee": "a fee: not an order's money",
    "payout": "a payout or deposit: not an order's money",
    "tax": "tax: not an order's capture",
    "shipping": "shipping: not an order's capture",
    "adjustment": "an adjustment: not an order's capture",
}


def _order_by_words(folded: str) -> OrderMeaning | None:
    """An order status by its words, when its whole value is no known phrase or code."""
    words = folded.split()
    tokens = set(words)
    refunded = ORDER_WORDS["refunded"]
    if tokens & PARTIAL and (tokens & refunded or any(w.endswith("erstattet") for w in words)):
        return "partially_refunded"
    undone = NEGATIONS | ORDER_WORDS["voided"] | ORDER_WORDS["pending"] | {"won", "pending"}
    if tokens & refunded and tokens & undone:
        return None  # `Refund failed`, `Awaiting refund`, `Chargeback won`: asked
    if tokens & NEGATIONS and tokens & ORDER_WORDS["paid"]:
        return "pending"  # `not paid`, `nicht bezahlt`
    for meaning in ORDER_PRECEDENCE:
        if tokens & ORDER_WORDS[meaning] or _contains_phrase(folded, ORDER_WORDS[meaning]):
            return meaning
    return None


def is_tender(value: str) -> bool:
    """Whether `value` names how a customer paid (`Credit card`, `Bank transfer`, `Visa`),
    which says nothing of what a row is."""
    folded = fold(value)
    return folded in TENDER_PHRASES or bool(set(folded.split()) & TENDER_WORDS)


def _contains_phrase(folded: str, phrases: frozenset[str]) -> bool:
    """Whether a phrase of several words occurs in `folded` as whole words."""
    padded = f" {folded} "
    return any(" " in p and f" {p} " in padded for p in phrases)


def _payment_by_words(folded: str) -> PaymentMeaning | None:
    """A payment value by its words, when its whole value is no known phrase or code."""
    tokens = set(folded.split())
    if tokens & NEGATIONS and tokens & PAYMENT_WORDS["capture"]:
        return "failed"  # `not paid`, `nicht bezahlt`
    for meaning in PAYMENT_PRECEDENCE:
        words = PAYMENT_WORDS[meaning]
        if tokens & words or _contains_phrase(folded, words):
            return meaning
    return None


def code_proposal(values: Iterable[str]) -> tuple[str, dict[str, PaymentMeaning]] | None:
    """For a column whose values are only numbers: the published code set they fit (its name
    and each value's meaning), to propose in a question; None when no set fits."""
    present = {v.strip() for v in values if v.strip()}
    if not present or not all(v.isdigit() for v in present):
        return None
    for name, codes in NUMERIC_CODES:
        if present <= set(codes):
            return name, {v: codes[v] for v in sorted(present)}
    return None


@dataclass(frozen=True)
class Vocabulary:
    """The built-in words with a policy's own on top: `orders` and `payments` map folded values
    to the meaning the policy gives them, and win over the built-in words. `BUILTIN` holds the
    built-in words alone, with the default policy's status lists (`Policy().vocabulary()`)."""

    orders: Mapping[str, OrderMeaning] = field(default_factory=dict)
    payments: Mapping[str, PaymentMeaning] = field(default_factory=dict)
    failed_statuses: tuple[str, ...] = ()
    """Payment statuses the engine reads as failed attempts by the policy (as `kind_word`)."""
    refunded_statuses: tuple[str, ...] = ()
    """Payment statuses the engine reads as a refunded capture by the policy (`kind_word`)."""

    @property
    def key(self) -> str:
        """What tells this vocabulary from another (a policy's own words and lists): what is
        inferred under one is never handed out under another."""
        return json.dumps(
            [
                sorted(self.orders.items()),
                sorted(self.payments.items()),
                self.failed_statuses,
                self.refunded_statuses,
            ],
            ensure_ascii=False,
        )

    def order_meaning(self, value: str) -> OrderMeaning | None:
        """What an order status value means, or None when no word of it is known."""
        folded = fold(value)
        if not folded:
            return None
        if folded in self.orders:
            return self.orders[folded]
        if folded in ORDER_CODES:
            return ORDER_CODES[folded]
        for meaning in ("partially_refunded", *ORDER_PRECEDENCE):
            if folded in ORDER_WORDS[meaning]:
                return meaning
        return _order_by_words(folded)

    def payment_meaning(self, value: str) -> PaymentMeaning | None:
        """What a payment status or type value says its row is, or None when no word of it is
        known; a tender (`Credit card`) is None too: it says how, not what."""
        folded = fold(value)
        if not folded:
            return None
        if folded in self.payments:
            return self.payments[folded]
        if folded in REVERSED_RETURNS or _contains_phrase(folded, REVERSED_RETURNS):
            return None  # money back to the merchant after a refund: asked, never guessed
        if folded in PAYMENT_CODES:
            return PAYMENT_CODES[folded]
        for meaning in PAYMENT_PRECEDENCE:
            if folded in PAYMENT_WORDS[meaning]:
                return meaning
        if is_tender(value):
            return None
        return _payment_by_words(folded)

    @classmethod
    def extended(
        cls,
        *,
        orders: Mapping[OrderMeaning, Iterable[str]],
        payments: Mapping[PaymentMeaning, Iterable[str]],
        order_words: Iterable[tuple[str, str]] = (),
        payment_words: Iterable[tuple[str, str]] = (),
    ) -> Vocabulary:
        """The built-in words with a policy's on top: its status lists by meaning, then its
        own (folded word, meaning) pairs, which win. The failed and refunded payment lists are
        also what the engine reads those statuses as."""
        by_order: dict[str, OrderMeaning] = {
            fold(w): meaning for meaning, found in orders.items() for w in found
        }
        by_payment: dict[str, PaymentMeaning] = {
            fold(w): meaning for meaning, found in payments.items() for w in found
        }
        by_order.update((w, cast(OrderMeaning, m)) for w, m in order_words)
        by_payment.update((w, cast(PaymentMeaning, m)) for w, m in payment_words)
        return cls(
            orders=by_order,
            payments=by_payment,
            failed_statuses=tuple(payments.get("failed", ())),
            refunded_statuses=tuple(payments.get("refund", ())),
        )

    def is_refunded_state(self, value: str) -> bool:
        """Whether a refund value is a capture's state (`refunded`, `Rimborsato`, a policy's
        refunded status) rather than a refund's own record (`refund`, `credit`)."""
        word = value.strip().lower().replace(" ", "_")
        folded = fold(value)
        tokens = set(folded.split())
        partly = bool(tokens & PARTIAL and tokens & REFUNDED_STATES)  # `Parzialmente rimborsato`
        return folded in REFUNDED_STATES or partly or word in self.refunded_statuses

    def row_kind(self, value: str) -> RowKind | None:
        """`capture`, `refund` or `ignore` for a payment value, or None when not known."""
        meaning = self.payment_meaning(value)
        return None if meaning is None else ROW_KIND[meaning]


# The default policy's status words (`Policy`'s defaults, `BUILTIN`'s lists): kept here once.
DEFAULT_FAILED_PAYMENT_STATUSES = (
    "failed",
    "declined",
    "canceled",
    "cancelled",
    "blocked",
    "error",
    "expired",
    "requires_payment_method",
    "incomplete",
    "uncaptured",
)
DEFAULT_REFUNDED_PAYMENT_STATUSES = ("refunded", "partially_refunded", "reversed")
DEFAULT_VOIDED_ORDER_STATUSES = ("voided", "void", "cancelled", "canceled")
DEFAULT_REFUNDED_ORDER_STATUSES = ("refunded",)
DEFAULT_PAID_ORDER_STATUSES = ("paid", "captured", "completed", "complete")

BUILTIN = Vocabulary.extended(
    orders={
        "paid": DEFAULT_PAID_ORDER_STATUSES,
        "voided": DEFAULT_VOIDED_ORDER_STATUSES,
        "refunded": DEFAULT_REFUNDED_ORDER_STATUSES,
    },
    payments={
        "refund": DEFAULT_REFUNDED_PAYMENT_STATUSES,
        "failed": DEFAULT_FAILED_PAYMENT_STATUSES,
    },
)
"""The built-in words with the default policy's status lists (a policy's own vocabulary is
`Policy.vocabulary()`; `tests/unit/data/test_vocabulary.py` keeps the two alike)."""


def meaning_pairs(value: object, *, orders: bool) -> tuple[tuple[str, str], ...]:
    """A policy's own words (`{"Closed" = "paid"}`) as sorted (folded word, meaning) pairs.

    Raises ValueError, in words, for a table that is not one, a word with no letters, or a
    meaning that is not one of the order (or payment) meanings.
    """
    if isinstance(value, tuple | list):  # pairs, as `model_copy` or a caller gives them
        value = dict(value)
    if not isinstance(value, dict):
        raise ValueError(
            f'must be a table of word = meaning, e.g. {{"Closed" = "paid"}} (got {value!r})'
        )
    known: tuple[str, ...] = ORDER_MEANINGS if orders else PAYMENT_MEANINGS
    words: dict[str, str] = {}
    for word, meaning in value.items():
        folded = fold(str(word))
        if not folded:
            raise ValueError(f"{word!r} has no letters or digits")
        if meaning not in known:
            raise ValueError(f'"{word}" means {meaning!r}, which is not one of: {", ".join(known)}')
        words[folded] = meaning
    return tuple(sorted(words.items()))
