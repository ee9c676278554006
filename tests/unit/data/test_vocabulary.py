"""The vocabulary: what a status or row-kind value means, in nine languages and platform codes."""

from __future__ import annotations

import pytest

from agent.data.policy import Policy
from agent.data.vocabulary import BUILTIN, code_proposal, fold, is_tender


def test_the_built_in_vocabulary_reads_as_the_default_policy_does() -> None:
    # `BUILTIN` is the default for inference without a policy: it must be the default policy's.
    assert Policy().vocabulary() == BUILTIN


@pytest.mark.parametrize(
    ("value", "meaning"),
    [
        ("Closed", "refunded"),  # Magento: a credit memo closed it
        ("wc-refunded", "refunded"),
        ("wc-on-hold", "pending"),
        ("Teilweise erstattet", "partially_refunded"),
        ("Remboursé", "refunded"),
        ("Annulée", "voided"),
        ("Anulowane", "voided"),
        ("Återbetald", "refunded"),
        ("Opłacone", "paid"),
        ("not paid", "pending"),
        ("Error en el pago", "voided"),  # a payment error outranks the word for payment
        ("Awaiting Fulfillment", "paid"),  # BigCommerce: paid, not yet shipped
        ("Holded", None),  # Magento's hold says nothing of the money: asked
    ],
)
def test_order_statuses(value: str, meaning: str | None) -> None:
    assert BUILTIN.order_meaning(value) == meaning


@pytest.mark.parametrize(
    ("value", "meaning"),
    [
        ("SettledBulk", "capture"),
        ("Captured/Pending Settlement", "capture"),  # Authorize.Net: the money was taken
        ("payout_reversal", "payout"),
        ("refund_failure", None),  # money back after a refund: no kind says it, asked
        ("Chargeback Reversal", None),
        ("charge_failure", "chargeback"),  # a debit that bounced took the money back
        ("Payment Refund", "refund"),  # a refund word outranks a capture word
        ("refund fee", "fee"),  # a fee outranks a refund
        ("nicht bezahlt", "failed"),  # a denial outranks a capture
        ("Rückzahlung", "refund"),
        ("dispute", "chargeback"),
        ("Credit card", None),  # a tender says how, not what
        ("approved", None),  # Square's approved is an authorisation: asked
    ],
)
def test_payment_values(value: str, meaning: str | None) -> None:
    assert BUILTIN.payment_meaning(value) == meaning


def test_refunded_states_are_told_from_refund_records() -> None:
    assert BUILTIN.is_refunded_state("Rimborsato")
    assert BUILTIN.is_refunded_state("Parzialmente rimborsato")
    assert not BUILTIN.is_refunded_state("refund")
    assert not BUILTIN.is_refunded_state("credit")


def test_folding_and_tenders_and_numeric_codes() -> None:
    assert fold("  Zahlung-Eingegangen ") == "zahlung eingegangen"
    assert fold("Opłacone") == "oplacone"
    assert is_tender("Bank transfer") and is_tender("VISA") and not is_tender("Transfer")
    assert code_proposal(["1", "2", "4"]) == (
        "Authorize.Net response codes",
        {"1": "capture", "2": "failed", "4": "pending"},
    )
    assert code_proposal(["1", "9"]) is None
    assert code_proposal(["paid"]) is None


def test_a_policy_s_own_words_win() -> None:
    policy = Policy(order_status_words={"Closed": "paid"}, payment_value_words={"FOO": "fee"})
    vocabulary = policy.vocabulary()
    assert vocabulary.order_meaning("closed") == "paid"
    assert vocabulary.payment_meaning("foo") == "fee"
    with pytest.raises(ValueError, match="not one of"):
        Policy(order_status_words={"Closed": "archived"})
