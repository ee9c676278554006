"""Nothing from a file, a person or the model becomes a mention or a link in Slack.

Slack parses `<…>` in mrkdwn texts and in a message's notification `text`: `<!here>`,
`<!channel>`, `<@U…>`, `<#C…>`, `<!subteam^S…>` and `<https://…|…>` are control sequences
(api.slack.com/reference/surfaces/formatting#escaping: `&`, `<`, `>` must be sent as `&amp;`,
`&lt;`, `&gt;`). Every builder is fed values made of those sequences (file names, column names,
sample cells, currency and amount cells, finding categories and evidence, questions and their
choices, reasons, the model's answer, tool names) and every text of what it renders is walked:
in a mrkdwn text or the notification text, the only `<…>` left are the bot's own mentions of
the people it means (the clicker, the requester, the approvers, the channel). `plain_text`
objects (labels, headers, options, titles) are not parsed by Slack and show values as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agent.data.mapping import Clarification
from agent.data.schema import SCHEMA, DatasetMapping, Mapping, ReadingOptions, Role
from agent.domain import (
    ApprovalRequest,
    ApproverPolicy,
    DatasetRef,
    Decision,
    FieldReading,
    Investigation,
    InvestigationStatus,
    InvestigationStatusReport,
    Outcome,
    PauseKind,
    PauseState,
    PauseStatus,
    RefusalReason,
    Revision,
)
from bot.slack import blocks
from bot.slack.payloads import ModalMetadata

NOW = datetime(2026, 11, 30, 10, 42, tzinfo=UTC)
ALICE, BOB, CONTROL, CHANNEL = "U0ALICE", "U0BOB", "S0CONTROL", "C0FINANCE"
HOSTILE = (
    "<!here> <!channel> <@U0BOSS> <#C0SECRET> <!subteam^S0X> <https://evil.example|click> "
    "*bold* _it_ ~x~ `tick` ```block``` &lt;!everyone&gt; & > <"
)
OURS = re.compile(
    rf"<@(?:{ALICE}|{BOB})>|<!subteam\^{CONTROL}>|<#{CHANNEL}>"
)  # the bot's own mentions: the only control sequences it may send
PROPERTY = settings(
    max_examples=200,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

View = dict[str, Any]
Shown = blocks.Rendered | View


# -- walking what a builder rendered ----------------------------------------------------------


def texts(shown: Shown) -> Iterator[tuple[str, str, str]]:
    """(where, kind, text) of every text object in the blocks or view, and the notification
    text (`mrkdwn`: Slack parses it like a mrkdwn text object)."""
    if isinstance(shown, blocks.Rendered):
        yield "text", "mrkdwn", shown.text
        yield from _walk(shown.blocks, "blocks")
    else:
        yield from _walk(shown, "view")


def _walk(node: Any, where: str) -> Iterator[tuple[str, str, str]]:
    if isinstance(node, dict):
        if isinstance(node.get("text"), str):
            assert node.get("type") in ("mrkdwn", "plain_text"), f"{where}: untyped text"
            yield where, str(node["type"]), node["text"]
        for key, value in node.items():
            yield from _walk(value, f"{where}.{key}")
    elif isinstance(node, list):
        for number, value in enumerate(node):
            yield from _walk(value, f"{where}[{number}]")


def leaks(shown: Shown) -> list[str]:
    """Every control sequence (or bare `&`) not the bot's own, in a parsed text."""
    found = []
    for where, kind, text in texts(shown):
        if kind != "mrkdwn":
            continue
        rest = OURS.sub("", text)
        for match in re.finditer(r"<[^>]{0,40}|>|&(?!amp;|lt;|gt;)", rest):
            found.append(
                f"{where}: {match.group()!r} in …{text[max(match.start() - 30, 0) :][:90]}"
            )
    return found


def assert_safe(shown: Shown) -> None:
    problems = leaks(shown)
    assert not problems, "\n".join(problems)


def everything(shown: Shown) -> str:
    return "\n".join(text for _, _, text in texts(shown))


# -- what the builders are given --------------------------------------------------------------


def request(value: str, kind: PauseKind = PauseKind.CONFIRMATION) -> ApprovalRequest:
    """A request every value of which (but the ids the bot issues) is `value`."""
    options = ReadingOptions(default_currency=value)
    mapping = Mapping(
        orders=DatasetMapping(
            columns={s.name: value for s in SCHEMA[Role.ORDERS]}, options=options
        ),
        payments=DatasetMapping(
            columns={s.name: value for s in SCHEMA[Role.PAYMENTS]}, options=options
        ),
    )
    approvable = kind is not PauseKind.CLARIFICATION
    return ApprovalRequest(
        pause_id="PAUSE-0123456789",
        investigation_id="INV-ABCDEF0123",
        kind=kind,
        revision=2,
        files=[
            DatasetRef(role=role, name=f"{value}.csv", size=10, digest="sha256:" + "a" * 64)
            for role in Role
        ],
        input_identity="sha256:" + "b" * 64,
        mapping=mapping if approvable else None,
        mapping_digest="sha256:" + "c" * 64 if approvable else None,
        fields=[
            FieldReading(
                role=role,
                field=spec.name,
                required=spec.required,
                column=value,
                confidence_percent=87,
                samples=[value, value],
                alternatives=[value],
            )
            for role in Role
            for spec in SCHEMA[role]
        ],
        clarifications=[
            Clarification(
                role=Role.PAYMENTS, field="captured_amount", question=value, choices=[value, "x"]
            ),
            Clarification(role=None, field=None, question=value, choices=[value + ".csv"]),
            Clarification(role=Role.ORDERS, field=None, question=value, choices=[value]),
        ],
        problems=[value],
        warnings=[value],
        rows={"orders": 3, "payments": 4},
        policy_version="2026-11-30.1",
        authorization_identity="sha256:" + "d" * 64,
        requested_by=ALICE,
        channel=CHANNEL,
        thread_ts="1.000001",
        created_at=NOW,
        expires_at=NOW + timedelta(hours=24),
        approver_policy=ApproverPolicy(approvers=(CONTROL, BOB), self_approval=False),
        answers={},
        message=value,
    )


def outcome(value: str) -> Outcome:
    """An outcome whose findings, counts and summary hold `value` wherever a file's cell may."""
    finding = {
        "category": value,
        "order_ids": [value, "#1"],
        "payment_ids": [value],
        "currency": value,
        "expected": value,
        "actual": value,
        "evidence": [{"file": f"{value}.csv", "rows": [1, 2], "ids": [value]}],
    }
    return Outcome(
        investigation_id="INV-1",
        pause_id="PAUSE-1",
        revision=1,
        mapping_digest="sha256:" + "c" * 64,
        input_identity="sha256:" + "b" * 64,
        counts={value: 2, "amount_mismatch": 1},
        summary={"orders": value, "payments": value},
        top_findings=[finding, finding],
        report=value,
        export_digest=None,
        export_rows=2,
        created_at=NOW,
    )


def state(value: str, status: PauseStatus = PauseStatus.REJECTED) -> PauseState:
    return PauseState(
        request=request(value), status=status, decided_by=BOB, decided_at=NOW, reason=value
    )


def report(value: str) -> InvestigationStatusReport:
    investigation = Investigation(
        id="INV-1",
        status=InvestigationStatus.AWAITING_DECISION,
        requested_by=ALICE,
        channel=CHANNEL,
        thread_ts="1.0",
        revision=2,
        created_at=NOW,
    )
    files = {
        role: DatasetRef(role=role, name=value, size=1, digest="sha256:" + "a" * 64)
        for role in Role
    }
    return InvestigationStatusReport(
        investigation=investigation,
        revisions=[
            Revision(
                investigation_id="INV-1",
                number=2,
                files=files,
                input_identity=None,
                created_at=NOW,
            )
        ],
        pauses=[state(value, status) for status in PauseStatus],
        decisions=[
            Decision(
                pause_id="PAUSE-1",
                investigation_id="INV-1",
                action="approve",
                actor=BOB,
                reason=value,
                accepted=False,
                refusal=RefusalReason.NOT_AUTHORIZED,
                at=NOW,
            )
        ],
        outcome=outcome(value),
    )


def every_message(value: str) -> dict[str, Shown]:
    """Every message, modal and tab the bot shows, built from `value` wherever a value goes."""
    req = request(value)
    metadata = ModalMetadata(req.pause_id, req.authorization_identity, CHANNEL, "1.2")
    done = outcome(value)
    shown: dict[str, Shown] = {
        "approval": blocks.approval_message(req),
        "clarification": blocks.approval_message(request(value, PauseKind.CLARIFICATION)),
        "blocked": blocks.approval_message(request(value, PauseKind.BLOCKED_RECONCILE)),
        "results": blocks.results_message(done, BOB),
        "failure": blocks.failure_message(req, value),
        "refusal": blocks.refusal_message(
            RefusalReason.REJECTED,
            f"This request was rejected by {BOB} at 2026-11-30 10:42 UTC: {value}",
            who_may=blocks.who_may_approve((CONTROL, BOB), [ALICE], self_approval=False),
            people=[BOB, ALICE],
        ),
        "answer": blocks.answer_message(value),
        "progress": blocks.progress_message([value, value], ["inspect_datasets", value]),
        "problem": blocks.problem_message(value, retry="INV-1"),
        "internal": blocks.internal_error_message("1a2b3c4d"),
        "not csv": blocks.not_csv_note([value, value]),
        "started": blocks.started_note("INV-1", Role.ORDERS, value, Role.PAYMENTS),
        "unchanged": blocks.unchanged_note(value, Role.ORDERS),
        "added": blocks.added_note(value, Role.PAYMENTS, 2),
        "revised": blocks.revised_note(3, value, Role.PAYMENTS),
        "edited": blocks.edited_note(BOB),
        "rejected": blocks.rejected_note(BOB),
        "stalled": blocks.stalled_message("INV-1"),
        "edit modal": blocks.edit_modal(req, {role: [value, "Total"] for role in Role}, metadata),
        "reject modal": blocks.reject_modal(req, metadata),
        "message modal": blocks.message_modal(value, value),
        "status": blocks.status_message(report(value)),
        "list": blocks.list_message([report(value).investigation], where=f"in <#{CHANNEL}>"),
        "home": blocks.home_view([report(value).investigation]),
        "help": blocks.help_message(),
    }
    for status in PauseStatus:
        decided = state(value, status)
        line = blocks.state_line(decided, newest_revision=3)
        shown[f"decided {status.value}"] = blocks.decided_message(decided.request, line)
    file = blocks.exceptions_file(done)
    shown["exceptions file"] = blocks.Rendered(file.comment)
    return shown


# -- the tests ---------------------------------------------------------------------------------


def test_results_escape_categories_currencies_counts_and_evidence_from_the_files() -> None:
    rendered = blocks.results_message(outcome(HOSTILE), BOB)
    assert_safe(rendered)
    text = everything(rendered)
    assert "approved by <@U0BOB>" in text, "the approver is still mentioned"
    assert "&lt;!here&gt;" in text and "&amp;lt;!everyone&amp;gt;" in text, "values shown escaped"


def test_the_answer_is_escaped_in_the_notification_text_as_in_the_blocks() -> None:
    rendered = blocks.answer_message(f"Order #1 is fine. {HOSTILE}")
    assert_safe(rendered)
    assert rendered.text.startswith("Order #1 is fine. &lt;!here&gt;")
    long = blocks.answer_message("<" * 5000)
    assert_safe(long)
    assert len(long.text) <= 3000 and long.text.endswith("&lt;…"), "never cut in an entity"
    texts = [block["text"]["text"] for block in long.blocks]
    assert "".join(texts).replace(" ", "") == "&lt;" * 5000, "the whole answer, in sections"
    assert all(t.strip(" ").startswith("&lt;") and t.endswith(";") for t in texts)


def test_progress_escapes_a_tool_name_the_model_made_up() -> None:
    rendered = blocks.progress_message(["orders.csv"], ["inspect_datasets", HOSTILE])
    assert_safe(rendered)
    assert "inspected the files" in rendered.text


def test_a_refusal_mentions_the_people_the_guard_named_and_nobody_a_reason_names() -> None:
    words = f"This request was rejected by {BOB} at 2026-11-30 10:42 UTC: <@{ALICE}> {ALICE} {BOB}"
    rendered = blocks.refusal_message(RefusalReason.REJECTED, words, people=[BOB, ALICE])
    assert_safe(rendered)
    text = rendered.blocks[0]["text"]["text"]
    assert text.count("<@") == 1 and f"rejected by <@{BOB}> at" in text
    assert f"&lt;@{ALICE}&gt; {ALICE} {BOB}" in text, "the reason stays text"
    # the system actor is no Slack user: named, not mentioned
    system = blocks.refusal_message(
        RefusalReason.ALREADY_CONSUMED,
        "This request was already approved by reconbot.",
        people=["reconbot"],
    )
    assert "<@" not in everything(system)
    # an id is the bot's own to mention, but cannot close the mention early
    assert blocks.mention("U0BOB><!here") == "<@U0BOB&gt;&lt;!here>"


def test_every_message_built_from_hostile_values_is_safe_and_keeps_its_own_mentions() -> None:
    shown = every_message(HOSTILE)
    problems = [f"{name}: {leak}" for name, one in shown.items() for leak in leaks(one)]
    assert not problems, "\n".join(problems)
    assert "requested by <@U0ALICE>" in everything(shown["approval"])
    assert "<!subteam^S0CONTROL>, <@U0BOB>, except the requester (<@U0ALICE>)" in everything(
        shown["refusal"]
    )
    assert "*Rejected by <@U0BOB>*" in everything(shown["decided rejected"])
    assert "<@U0BOB> edited the mapping" in shown["edited"].text  # type: ignore[union-attr]
    assert f"in <#{CHANNEL}>" in everything(shown["list"])
    # plain_text is not parsed by Slack: column names are offered as they are
    labels = [t for _, kind, t in texts(shown["edit modal"]) if kind == "plain_text"]
    assert any(t.startswith("<!here> <!channel>") for t in labels)


_SEQUENCES = st.sampled_from(
    [
        "<",
        ">",
        "&",
        "<!here>",
        "<!channel|channel>",
        "<@U0BOSS>",
        "<@U0BOB>",  # a value may name a person; it is not the bot's mention of them
        "<#C0SECRET|secret>",
        "<!subteam^S0X>",
        "<https://evil.example|click>",
        "<mailto:a@b.c|mail>",
        "&lt;",
        "&amp;",
        "`",
        "*",
        "\n",
        "U0BOB",
        "by U0ALICE",
    ]
)
VALUES = st.lists(st.one_of(_SEQUENCES, st.text(max_size=8)), max_size=12).map("".join)


@PROPERTY
@given(value=VALUES)
@example(value="<@U0BOB>")
@example(value="&lt;!here&gt;")
def test_any_value_in_any_message_never_becomes_a_control_sequence(value: str) -> None:
    shown = every_message(value)
    problems = [f"{name}: {leak}" for name, one in shown.items() for leak in leaks(one)]
    assert not problems, "\n".join(problems)


BUILDERS: dict[str, Callable[[str], Shown]] = {
    "answer": blocks.answer_message,
    "problem": blocks.problem_message,
    "failure": lambda value: blocks.failure_message(request("x"), value),
    "message modal": lambda value: blocks.message_modal("Edit", value),
}


@PROPERTY
@given(value=st.text(), size=st.integers(min_value=0, max_value=20))
def test_long_values_are_cut_without_leaving_half_an_entity(value: str, size: int) -> None:
    padded = value + "<&>" * (size * 400)
    for build in BUILDERS.values():
        assert_safe(build(padded))
