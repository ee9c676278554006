"""The policy file: loading, defaults, the content-derived version, errors, status words."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from agent.data.policy import (
    DEFAULT_SOURCE,
    RULE_KEYS,
    Policy,
    load_policy,
    normalise_status_word,
)
from agent.data.reconcile import reconcile
from agent.data.schema import AmountReading, DatasetMapping, Mapping, ReadingOptions, Role
from agent.data.vocabulary import BUILTIN_DIGEST
from agent.errors import ConfigurationError, PolicyError, ReconbotError
from agent.identity import digest

A_POLICY = """\
# The finance team's policy, reviewed 2026-11.
amount_tolerance_minor = 5
window_days_after = 45
window_hours_before = 12

failed_payment_statuses = ["failed", "declined", "Requires Payment Method"]
refunded_payment_statuses = ["refunded", "reversed"]
voided_order_statuses = ["voided", "cancelled"]
refunded_order_statuses = ["refunded"]
paid_order_statuses = ["paid", "completed"]
"""

# The same rules: other key order, layout, comments, word order, case and a repeated word.
THE_SAME_REWRITTEN = """\
paid_order_statuses = [ "completed",
                        "PAID" ]   # as the shop writes them
refunded_order_statuses = ["refunded"]
voided_order_statuses = ["cancelled", "voided", "Voided"]
refunded_payment_statuses = ["reversed", "refunded"]
failed_payment_statuses = [
    "requires_payment_method",
    "Declined",
    "failed",
]


window_hours_before=12
window_days_after    = 45
amount_tolerance_minor = 5
"""


def _write(folder: Path, text: str, name: str = "policy.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_file_is_loaded_with_its_numbers_words_and_source(tmp_path: Path) -> None:
    path = _write(tmp_path, A_POLICY)
    policy = load_policy(path)
    assert policy.amount_tolerance_minor == 5
    assert policy.window_days_after == 45
    assert policy.window_hours_before == 12
    assert policy.failed_payment_statuses == ("failed", "declined", "requires_payment_method")
    assert policy.paid_order_statuses == ("paid", "completed")
    assert policy.source == str(path)
    assert policy.version.startswith("sha256:")
    assert policy.version != Policy().version


def test_the_defaults_are_todays_rules_with_a_content_derived_version() -> None:
    policy = Policy()
    assert policy.source == DEFAULT_SOURCE
    assert (policy.amount_tolerance_minor, policy.window_days_after) == (1, 30)
    assert policy.window_hours_before == 24
    assert "requires_payment_method" in policy.failed_payment_statuses
    assert policy.refunded_order_statuses == ("refunded",)
    content = policy.canonical_content()
    # Every key of a policy file, and the digest of the built-in vocabulary it extends.
    assert set(content) == {*RULE_KEYS, "vocabulary"}
    assert content["vocabulary"] == BUILTIN_DIGEST
    expected = json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
    assert policy.canonical_json() == expected
    assert b" " not in policy.canonical_json()
    assert policy.version == "sha256:" + hashlib.sha256(expected).hexdigest()
    # The same canonical form as every other digest of docs/design.md §3.
    assert policy.version == digest(content)


def test_an_empty_file_or_one_that_restates_the_defaults_is_the_default_version(
    tmp_path: Path,
) -> None:
    empty = load_policy(_write(tmp_path, "# nothing changed\n", "empty.toml"))
    restated = load_policy(_write(tmp_path, "amount_tolerance_minor = 1\n", "restated.toml"))
    assert empty.version == restated.version == Policy().version
    assert empty.source.endswith("empty.toml")  # where it came from is not in the version


def test_the_version_ignores_key_order_layout_comments_and_word_order(tmp_path: Path) -> None:
    first = load_policy(_write(tmp_path, A_POLICY, "a.toml"))
    second = load_policy(_write(tmp_path, THE_SAME_REWRITTEN, "b.toml"))
    assert second.version == first.version
    assert second.canonical_json() == first.canonical_json()


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("amount_tolerance_minor = 5", "amount_tolerance_minor = 6"),
        ("window_days_after = 45", "window_days_after = 44"),
        ("window_hours_before = 12", "window_hours_before = 0"),
        ('"declined", ', '"declined", "blocked", '),
        ('["paid", "completed"]', '["paid"]'),
        ('refunded_order_statuses = ["refunded"]', 'refunded_order_statuses = ["returned"]'),
    ],
)
def test_the_version_changes_when_a_number_or_a_word_changes(
    tmp_path: Path, before: str, after: str
) -> None:
    assert before in A_POLICY
    first = load_policy(_write(tmp_path, A_POLICY, "a.toml"))
    changed = load_policy(_write(tmp_path, A_POLICY.replace(before, after), "b.toml"))
    assert changed.version != first.version


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        (
            "amount_tolerance = 5\n",
            "amount_tolerance",
            "unknown key; did you mean amount_tolerance_minor?",
        ),
        ("tolerance = 5\n", "tolerance", "the keys of a policy file are amount_tolerance_minor"),
        ('version = "2026-11-30.1"\n', "version", "unknown key"),
        ('source = "mine"\n', "source", "unknown key"),
        ("amount_tolerance_minor = 1.5\n", "amount_tolerance_minor", "whole number"),
        ("amount_tolerance_minor = 1.0\n", "amount_tolerance_minor", "whole number"),
        ('window_days_after = "30"\n', "window_days_after", "whole number"),
        ("window_days_after = true\n", "window_days_after", "whole number"),
        ("amount_tolerance_minor = -1\n", "amount_tolerance_minor", "must be 0 or more"),
        ("window_hours_before = -24\n", "window_hours_before", "must be 0 or more"),
        ("window_days_after = 1000000\n", "window_days_after", "must be at most"),
        ("paid_order_statuses = []\n", "paid_order_statuses", "at least one status word"),
        ('paid_order_statuses = ["  "]\n', "paid_order_statuses", "word 1 is empty"),
        ('paid_order_statuses = "paid"\n', "paid_order_statuses", "must be a list"),
        ('paid_order_statuses = ["paid", 3]\n', "paid_order_statuses", "word 2 must be text"),
        ("[paid_order_statuses]\npaid = 1\n", "paid_order_statuses", "must be a list"),
        (
            'failed_payment_statuses = ["failed", "Refunded"]\n',
            "refunded_payment_statuses",
            '"refunded" is also in failed_payment_statuses',
        ),
        (
            'failed_payment_statuses = ["failed", "reversed"]\n'
            'refunded_payment_statuses = ["refunded", "reversed"]\n',
            "refunded_payment_statuses",
            '"reversed" is also in failed_payment_statuses',
        ),
        (
            'paid_order_statuses = ["paid", "Cancelled"]\n',
            "paid_order_statuses",
            '"cancelled" is also in voided_order_statuses',
        ),
        (
            'paid_order_statuses = ["paid", "refunded"]\n',
            "paid_order_statuses",
            '"refunded" is also in refunded_order_statuses',
        ),
    ],
)
def test_each_error_names_the_file_and_the_key(
    tmp_path: Path, text: str, key: str, words: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    error = caught.value
    assert (error.source, error.key) == (str(path), key)
    message = str(error)
    assert message.startswith(f"policy file {path}: {key}: "), message
    assert words in message
    assert "\n" not in message


def test_a_file_that_is_missing_or_not_toml_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    with pytest.raises(PolicyError, match=f"^policy file {missing}: there is no such file$"):
        load_policy(missing)
    broken = _write(tmp_path, "amount_tolerance_minor = \n", "broken.toml")
    with pytest.raises(PolicyError, match=f"^policy file {broken}: is not valid TOML"):
        load_policy(broken)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00policy")
    with pytest.raises(PolicyError, match="is not UTF-8 text"):
        load_policy(binary)
    with pytest.raises(PolicyError, match="is a directory"):
        load_policy(tmp_path)


def test_a_policy_error_is_a_configuration_error_of_the_one_tree(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError):
        load_policy(tmp_path / "nowhere.toml")
    assert issubclass(PolicyError, ReconbotError)


@pytest.mark.parametrize(
    ("written", "compared"),
    [
        ("Requires Payment Method", "requires_payment_method"),
        ("  FAILED ", "failed"),
        ("Payment  Pending", "payment__pending"),  # as DuckDB: each space one underscore
        ("on_hold", "on_hold"),
    ],
)
def test_status_words_are_normalised_as_status_columns_are_read(
    written: str, compared: str
) -> None:
    assert normalise_status_word(written) == compared
    policy = Policy(failed_payment_statuses=(written,))
    assert policy.failed_payment_statuses == (compared,)


def test_the_policy_is_frozen_and_its_version_cannot_be_set() -> None:
    policy = Policy()
    with pytest.raises(ValueError, match="frozen"):
        policy.amount_tolerance_minor = 7
    with pytest.raises(ValueError, match="version"):
        Policy(version="2026-11-30.1")  # type: ignore[call-arg]


def test_explanations_use_this_policys_numbers_and_words(tmp_path: Path) -> None:
    policy = load_policy(_write(tmp_path, A_POLICY))
    rules = policy.explanations()
    assert "more than 5 minor unit(s)" in rules["amount_mismatch"]
    assert "more than 45 days after" in rules["capture_outside_window"]
    assert "more than 12 hours before" in rules["capture_outside_window"]
    assert '"requires_payment_method"' in rules["legitimate"]
    assert '"voided" or "cancelled"' in rules["order_without_capture"]
    assert '"paid" or "completed"' in rules["status_mismatch"]
    values = policy.rule_values()
    assert list(values) == list(RULE_KEYS)
    assert values["amount_tolerance_minor"] == "5"
    assert values["failed_payment_statuses"] == "failed, declined, requires_payment_method"


def _one_order_two_payments(folder: Path) -> tuple[dict[Role, tuple[Path, str]], Mapping]:
    """Order 1001 for 100.00, one payment "On Hold" and one that succeeded, both 100.00."""
    orders = folder / "o.csv"
    payments = folder / "p.csv"
    with orders.open("w", newline="") as handle:
        csv.writer(handle).writerows([["order_id", "total", "currency"], ["1001", "100.00", "USD"]])
    with payments.open("w", newline="") as handle:
        csv.writer(handle).writerows(
            [
                ["payment_id", "order_id", "amount", "currency", "status"],
                ["ch_1", "1001", "100.00", "USD", "On Hold"],
                ["ch_2", "1001", "100.00", "USD", "succeeded"],
            ]
        )
    options = ReadingOptions(
        amounts={"order_amount": AmountReading(), "captured_amount": AmountReading()}
    )
    mapping = Mapping(
        orders=DatasetMapping(
            columns={"order_id": "order_id", "order_amount": "total", "currency": "currency"},
            options=options,
        ),
        payments=DatasetMapping(
            columns={
                "payment_id": "payment_id",
                "order_id": "order_id",
                "captured_amount": "amount",
                "currency": "currency",
                "payment_status": "status",
            },
            options=options,
        ),
    )
    return {Role.ORDERS: (orders, "o.csv"), Role.PAYMENTS: (payments, "p.csv")}, mapping


def _found(counts: dict[str, int]) -> dict[str, int]:
    return {category: count for category, count in counts.items() if count}


def test_the_engine_applies_a_status_word_written_as_people_write_it(tmp_path: Path) -> None:
    files, mapping = _one_order_two_payments(tmp_path)
    default = reconcile(files, mapping, Policy())
    assert _found(default.summary().counts) == {"duplicate_capture": 1}

    written = _write(tmp_path, 'failed_payment_statuses = ["failed", "ON HOLD"]\n')
    policy = load_policy(written)
    run = reconcile(files, mapping, policy)
    assert _found(run.summary().counts) == {}
    assert run.summary().failed_attempts == 1
    assert run.summary().policy_version == policy.version


def test_the_documented_template_is_the_built_in_defaults(tmp_path: Path) -> None:
    docs = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"
    section = docs.read_text(encoding="utf-8").split("\n## The policy file\n", 1)[1]
    template = section.split("```toml\n", 1)[1].split("```", 1)[0]
    policy = load_policy(_write(tmp_path, template))
    assert policy.version == Policy().version
    assert policy.rule_values() == Policy().rule_values()  # the words in today's order, too
