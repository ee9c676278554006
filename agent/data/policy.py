"""The reconciliation policy: tolerances, windows and status words, versioned and explained.

A policy is part of what a person approves (its version enters the authorization identity), so
every rule the engine applies lives here with a plain-words explanation that the agent can quote.

A team's policy is a TOML file (`RECONBOT_POLICY`, read by `load_policy`); every key is optional
and a missing key keeps its built-in default. The **version** is `sha256:` + the hex digest of the
policy's canonical content: every rule (defaults filled in) as canonical JSON (UTF-8, keys sorted,
no whitespace, no floats), with status words normalised and each list written as a sorted set.
So comments, key order, layout and the order of words in a list do not change the version; a
number or a word does. Where the policy came from (`source`: the file, or the built-in defaults)
is for messages only and is not part of the version.

Status words are compared as the engine reads status columns (trimmed, lower case, spaces as `_`):
`normalise_status_word` applies the same to the words of the policy.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator
from pydantic_core import ErrorDetails

from agent.data.vocabulary import (
    BUILTIN_DIGEST,
    DEFAULT_FAILED_PAYMENT_STATUSES,
    DEFAULT_PAID_ORDER_STATUSES,
    DEFAULT_REFUNDED_ORDER_STATUSES,
    DEFAULT_REFUNDED_PAYMENT_STATUSES,
    DEFAULT_VOIDED_ORDER_STATUSES,
    Vocabulary,
    meaning_pairs,
)
from agent.errors import PolicyError

logger = logging.getLogger(__name__)

CATEGORY_ORDER = (
    "unreadable_row",
    "conflicting_duplicate_order",
    "multi_order_payment",
    "capture_without_order",
    "duplicate_payment_row",
    "order_without_capture",
    "currency_mismatch",
    "status_mismatch",
    "duplicate_capture",
    "amount_mismatch",
    "partial_capture",
    "over_capture",
    "capture_outside_window",
)

DEFAULT_SOURCE = "built-in defaults"
DIGEST_PREFIX = "sha256:"

# Upper bounds keep every rule inside the engine's 64-bit arithmetic (windows are compared in
# microseconds): a hundred years of window, a trillion minor units of tolerance.
MAX_TOLERANCE_MINOR = 10**12
MAX_WINDOW_DAYS = 36_525
MAX_WINDOW_HOURS = 24 * MAX_WINDOW_DAYS

NUMBER_KEYS = ("amount_tolerance_minor", "window_days_after", "window_hours_before")
STATUS_KEYS = (
    "failed_payment_statuses",
    "refunded_payment_statuses",
    "voided_order_statuses",
    "refunded_order_statuses",
    "paid_order_statuses",
)
WORD_KEYS = ("order_status_words", "payment_value_words")
RULE_KEYS = NUMBER_KEYS + STATUS_KEYS + WORD_KEYS
"""The keys of a policy file; with the built-in vocabulary's digest, the version's content."""

# A word may not mean two contradictory things about one column: a payment is either a failed
# attempt (ignored) or a refund (money returned); an order that counts as paid is neither voided
# nor refunded. Each key lists the keys before it that it must not share a word with.
_CONFLICTS = {
    "refunded_payment_statuses": ("failed_payment_statuses",),
    "paid_order_statuses": ("voided_order_statuses", "refunded_order_statuses"),
}


def normalise_status_word(word: str) -> str:
    """A status word as the engine compares it: trimmed, lower-case, spaces as underscores.

    Status columns are read with `replace(lower(x), ' ', '_')` (agent/data/normalize/columns.py),
    so a policy word written `Requires Payment Method` must become `requires_payment_method`.
    """
    return word.strip().lower().replace(" ", "_")


def _words_in_text(words: tuple[str, ...]) -> str:
    quoted = [f'"{w}"' for w in words]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


Number = Annotated[int, Field(strict=True, ge=0)]


class Policy(BaseModel):
    """The rules of one reconciliation; `version` is the digest of the rules themselves.

    Two policies with the same rules have the same version wherever they came from; `source`
    says where this one came from (a file path, or the built-in defaults) for messages.
    """

    # Defaults are validated too, so a file's word that clashes with a default list is caught.
    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    source: str = Field(default=DEFAULT_SOURCE, exclude=True)
    amount_tolerance_minor: Number = Field(default=1, le=MAX_TOLERANCE_MINOR)
    window_days_after: Number = Field(default=30, le=MAX_WINDOW_DAYS)
    window_hours_before: Number = Field(default=24, le=MAX_WINDOW_HOURS)
    failed_payment_statuses: tuple[str, ...] = DEFAULT_FAILED_PAYMENT_STATUSES
    refunded_payment_statuses: tuple[str, ...] = DEFAULT_REFUNDED_PAYMENT_STATUSES
    voided_order_statuses: tuple[str, ...] = DEFAULT_VOIDED_ORDER_STATUSES
    refunded_order_statuses: tuple[str, ...] = DEFAULT_REFUNDED_ORDER_STATUSES
    paid_order_statuses: tuple[str, ...] = DEFAULT_PAID_ORDER_STATUSES
    # A team's own words (`"Closed" = "paid"`): they extend and override the vocabulary.
    # Pairs of (folded word, meaning), sorted: a tuple keeps the frozen policy hashable.
    order_status_words: tuple[tuple[str, str], ...] = ()
    payment_value_words: tuple[tuple[str, str], ...] = ()

    @field_validator(*WORD_KEYS, mode="before")
    @classmethod
    def _meaning_words(cls, value: object, info: ValidationInfo) -> tuple[tuple[str, str], ...]:
        """Each word folded as the vocabulary reads values; its meaning one of the known."""
        return meaning_pairs(value, orders=info.field_name == "order_status_words")

    @field_validator(*STATUS_KEYS, mode="before")
    @classmethod
    def _status_words(cls, value: object) -> tuple[str, ...]:
        """Normalise a list of status words the way status columns are read; none may be empty.

        A word listed twice (also after normalising) is kept once, in its first place.
        """
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise ValueError(
                f'must be a list of status words, e.g. ["failed", "declined"] (got {value!r})'
            )
        words: list[str] = []
        for position, item in enumerate(value, start=1):
            if not isinstance(item, str):
                raise ValueError(f"word {position} must be text in quotes (got {item!r})")
            word = normalise_status_word(item)
            if not word:
                raise ValueError(f"word {position} is empty")
            if word not in words:
                words.append(word)
        if not words:
            raise ValueError("is empty; list at least one status word")
        return tuple(words)

    @field_validator(*_CONFLICTS, mode="after")
    @classmethod
    def _no_conflicts(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        """Refuse a word that this list shares with a list of contradictory meaning."""
        assert info.field_name is not None
        for other in _CONFLICTS[info.field_name]:
            earlier = info.data.get(other)
            if earlier is None:  # that list was invalid and is reported on its own
                continue
            shared = tuple(w for w in value if w in earlier)
            if shared:
                raise ValueError(
                    f"{_words_in_text(shared)} is also in {other}; a status word can mean only "
                    "one of the two"
                )
        return value

    def canonical_content(self) -> dict[str, Any]:
        """The rules as the version digests them: every key, status lists as sorted sets.

        Only integers and strings: canonical JSON holds no floats.
        """
        content: dict[str, Any] = {key: getattr(self, key) for key in NUMBER_KEYS}
        content.update({key: sorted(set(getattr(self, key))) for key in STATUS_KEYS})
        content.update({key: dict(getattr(self, key)) for key in WORD_KEYS})
        content["vocabulary"] = BUILTIN_DIGEST
        return content

    def vocabulary(self) -> Vocabulary:
        """The vocabulary in force: the built-in words, this policy's status lists and its own
        words on top (its own words last: they win)."""
        return Vocabulary.extended(
            orders={
                "paid": self.paid_order_statuses,
                "voided": self.voided_order_statuses,
                "refunded": self.refunded_order_statuses,
            },
            payments={
                "refund": self.refunded_payment_statuses,
                "failed": self.failed_payment_statuses,
            },
            order_words=self.order_status_words,
            payment_words=self.payment_value_words,
        )

    def canonical_json(self) -> bytes:
        """The canonical bytes of the rules: UTF-8 JSON, keys sorted, no whitespace.

        The same form as `agent.identity.canonical_json`, computed here because `agent.data`
        imports nothing of the rest of `agent`.
        """
        return json.dumps(
            self.canonical_content(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")

    @property
    def version(self) -> str:
        """`sha256:` + the hex digest of the canonical rules; bound into every approval."""
        return DIGEST_PREFIX + hashlib.sha256(self.canonical_json()).hexdigest()

    def rule_values(self) -> dict[str, str]:
        """Each rule's value as a person reads it, by key (for `reconbot explain`)."""
        shown = {key: str(getattr(self, key)) for key in NUMBER_KEYS}
        shown.update({key: ", ".join(getattr(self, key)) for key in STATUS_KEYS})
        shown.update(
            {
                key: ", ".join(f"{w} = {m}" for w, m in getattr(self, key)) or "(none)"
                for key in WORD_KEYS
            }
        )
        return shown

    def explain(self, category: str) -> str:
        """The rule behind `category` in plain words, with this policy's numbers."""
        return self.explanations()[category]

    def explanations(self) -> dict[str, str]:
        """Every category's rule in plain words, with this policy's numbers and status words,
        in the order the engine applies them."""
        tol = self.amount_tolerance_minor
        voided = _words_in_text(self.voided_order_statuses)
        refunded_order = _words_in_text(self.refunded_order_statuses)
        paid = _words_in_text(self.paid_order_statuses)
        refunded_payment = _words_in_text(self.refunded_payment_statuses)
        failed = _words_in_text(self.failed_payment_statuses)
        return {
            "unreadable_row": (
                "A row whose required value does not read under the approved mapping: an empty "
                "or unreadable amount, a currency that is not an ISO 4217 code (or empty with no "
                "default currency), an empty order or payment id. The row is left out of "
                "matching and listed with its reason; the payments naming such an order are "
                "listed with it. Fix the file or the reading and reconcile again."
            ),
            "conflicting_duplicate_order": (
                "The same order id appears on rows with different totals, or with the same "
                "total on different order dates (not line items of one order, which repeat the "
                "total and date or leave them empty). Which order is meant cannot be decided, "
                "so the order and the payments naming it are listed for review."
            ),
            "multi_order_payment": (
                "One payment's order reference names two or more orders. The orders it names are "
                "reviewed together with that payment and are not reported again on their own; "
                "what payments naming one of those orders alone took adds to what it found, and "
                "an order another such payment names too is said (reason "
                "`order_in_another_multi_order_payment`: it may be paid twice)."
            ),
            "capture_without_order": (
                "A successful payment whose order reference is empty or names no order in the "
                "orders file; also a refund row (reason `refund`) whose payment id names no "
                "capture and whose reference names no order: money moved for an order the files "
                "do not show."
            ),
            "duplicate_payment_row": (
                "The same payment id appears on more than one row of the payments file. Rows "
                "that agree on the amount and the currency (a repeated webhook or export row, "
                "whatever its reference says) are counted once when matching; rows that "
                "differ (reason `rows_differ`) are each counted for the order they name, and "
                "the finding adds them up."
            ),
            "order_without_capture": (
                "An order with no successful payment referencing it. Voided or cancelled orders "
                f"(order status {voided}, or a status the approved mapping reads as voided) "
                "and orders whose status says they are not paid yet (pending, awaiting "
                "payment) without a payment are expected and not reported, and so are orders "
                "of 0.00 (nothing was owed) and credit notes (a negative total)."
            ),
            "currency_mismatch": (
                "A payment for the order is in a different currency than the order."
            ),
            "status_mismatch": (
                "The order and its payments disagree about money kept: the order is voided or "
                f"cancelled (status {voided}) while its capture was not refunded, the order is "
                f"refunded (status {refunded_order}) while no payment was, or every capture was "
                f"refunded (payment status {refunded_payment}, or the refunded amount) while the "
                f"order still counts as paid (status {paid}). Also, whatever the statuses say: "
                "more refunded than captured (reason `refunded_more_than_captured`: money went "
                "back that was never taken), and an order that says refunded while its known "
                "refunds returned only part of the capture (reason `refunded_in_part`)."
            ),
            "duplicate_capture": (
                "Two or more captures for one order where a single one of them already covers "
                "the order total: the customer was charged more than once."
            ),
            "amount_mismatch": (
                f"The order's single capture differs from the order total by more than {tol} "
                "minor unit(s) of the currency."
            ),
            "partial_capture": (
                f"The order's captures add up to less than the order total (by more than {tol} "
                "minor unit(s))."
            ),
            "over_capture": (
                f"The order's captures add up to more than the order total (by more than {tol} "
                "minor unit(s)) and no single capture covers the total alone."
            ),
            "capture_outside_window": (
                f"A capture happened more than {self.window_days_after} days after the order or "
                f"more than {self.window_hours_before} hours before it; amounts agree."
            ),
            "legitimate": (
                f"Not findings: several captures that add up to the order total; differences "
                f"of at most {tol} minor unit(s); failed payment attempts (payment status "
                f"{failed}), which are ignored; normal refunds, where the order and the payment "
                "both say refunded; and voided orders without a payment. Each unit (an order or "
                "a payment) gets at most one category, the first that applies in the order "
                "listed here."
            ),
        }


def load_policy(path: Path) -> Policy:
    """The policy written in the TOML file at `path`; keys it leaves out keep their defaults.

    Raises `PolicyError`, naming the file and the key, for a file that cannot be read or is not
    TOML, an unknown key, a value of the wrong type, a negative or too large number, an empty
    list of status words, or a word in two lists of contradictory meaning.
    """
    source = str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise PolicyError("there is no such file", source=source) from None
    except IsADirectoryError:
        raise PolicyError("is a directory, not a policy file", source=source) from None
    except OSError as error:
        raise PolicyError(f"cannot be read ({error.strerror})", source=source) from None
    except UnicodeDecodeError:
        raise PolicyError("is not UTF-8 text", source=source) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PolicyError(f"is not valid TOML: {error}", source=source) from None
    unknown = [key for key in data if key not in RULE_KEYS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], RULE_KEYS, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise PolicyError(
            f"unknown key; {hint}the keys of a policy file are {', '.join(RULE_KEYS)}",
            source=source,
            key=unknown[0],
        )
    try:
        policy = Policy.model_validate({**data, "source": source})
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        key = str(first["loc"][0]) if first["loc"] else None
        raise PolicyError(_message(first), source=source, key=key) from None
    logger.info("policy=%s source=%s | policy loaded", policy.version, source)
    return policy


def _message(error: ErrorDetails) -> str:
    """A pydantic error about one key in words that follow `FILE: KEY: `."""
    kind = error["type"]
    got = error.get("input")
    limit: dict[str, Any] = error.get("ctx", {})
    if kind == "value_error":
        return str(limit["error"])
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be a whole number (got {got!r})"
    if kind == "greater_than_equal":
        return f"must be {limit['ge']} or more (got {got!r})"
    if kind == "less_than_equal":
        return f"must be at most {limit['le']} (got {got!r})"
    return f"{error['msg']} (got {got!r})"
