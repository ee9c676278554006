"""The modals: Reject (a required reason), Edit mapping (a select per field and reading
options per file), and the loading and message modals shown around them."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    Block,
    HeaderBlock,
    InputBlock,
    Option,
    PlainTextInputElement,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from agent.data.schema import READING_OPTIONS, SCHEMA, Role
from agent.domain import ApprovalRequest, PauseKind
from bot.presentation.readings import asked_of, shown_reading
from bot.slack.blocks.common import (
    MAX_HEADER,
    MAX_OPTION_TEXT,
    MAX_OPTIONS,
    cut,
    cut_middle,
    escape,
    section,
)
from bot.slack.ids import (
    COLUMN_INPUT,
    EDIT_VIEW,
    OPTIONS_INPUT,
    REASON_BLOCK,
    REASON_INPUT,
    REJECT_VIEW,
    field_block_id,
    options_block_id,
)
from bot.slack.payloads import ModalMetadata


def reject_modal(request: ApprovalRequest, metadata: ModalMetadata) -> dict[str, Any]:
    """The Reject modal: a required reason, and what rejecting leaves as it is."""
    if request.kind is PauseKind.POLICY_CHANGE:
        what = (
            f"Reject the change to this channel's policy proposed in {request.investigation_id}? "
            "The rules in force stay as they are; the reason is recorded."
        )
    else:
        what = (
            f"Reject revision {request.revision} of {request.investigation_id}? "
            "Nothing will be reconciled; the reason is recorded."
        )
    view = View(
        type="modal",
        callback_id=REJECT_VIEW,
        title="Reject the request",
        submit="Reject",
        close="Cancel",
        private_metadata=metadata.encode(),
        blocks=[
            section(what),
            InputBlock(
                block_id=REASON_BLOCK,
                label="Reason",
                element=PlainTextInputElement(
                    action_id=REASON_INPUT, multiline=True, min_length=1, max_length=500
                ),
            ),
        ],
    )
    return view.to_dict()


def loading_modal(title: str) -> dict[str, Any]:
    """A modal shown at once while the real one is prepared (trigger ids last 3 s)."""
    return View(
        type="modal",
        title=cut(title, 24),
        close="Cancel",
        blocks=[section(":hourglass_flowing_sand: Reading the files…")],
    ).to_dict()


def message_modal(title: str, text: str) -> dict[str, Any]:
    """A modal that only says something (a problem preparing a form)."""
    return View(
        type="modal", title=cut(title, 24), close="Close", blocks=[section(escape(text))]
    ).to_dict()


def options_hint() -> str:
    """What a person may write in the reading-options input: one `name=value` per line, and
    every option's name, whole (what each does is in docs/reading.md's reading options table; the
    hints' 2,000 characters would cut their descriptions mid-word)."""
    return (
        "One per line, name=value, e.g. id_prefix=WC- or kinds_ignore=Fee, Payout. "
        f"The options: {', '.join(READING_OPTIONS)}."
    )


def edit_modal(
    request: ApprovalRequest, columns: dict[Role, list[str]], metadata: ModalMetadata
) -> dict[str, Any]:
    """The Edit mapping modal: a select per canonical field, preset to the proposed column, and
    per file a text input for reading options (`id_prefix=WC-`, one per line).

    Option values are column positions, so any header fits; a file with more than 100
    columns offers the proposed and alternative columns first. A field a question asks about
    is not preset: submitting the form unchanged must not answer the question for the person.
    """
    current = {(r.role, r.field): r for r in request.fields}
    asked = {role: asked_of(shown_reading(request, role)) for role in Role}
    blocks: list[Block] = [
        section(
            f"Choose the column for each field of revision {request.revision}. The edited "
            "mapping is validated on every row and comes back as a new request to approve."
        )
    ]
    for role in Role:
        header = columns.get(role, [])
        blocks.append(
            HeaderBlock(text=cut(f"{role.value} · {_file_name(request, role)}", MAX_HEADER))
        )
        for spec in SCHEMA[role]:
            reading = current.get((role, spec.name))
            preferred = [reading.column] if reading and reading.column else []
            preferred += reading.alternatives if reading else []
            order = [c for c in preferred if c in header]
            order += [c for c in header if c not in order]
            options = [
                Option(value=str(header.index(c)), label=cut_middle(c, MAX_OPTION_TEXT))
                for c in order[:MAX_OPTIONS]
            ]
            if not options:
                continue
            chosen = reading.column if reading and reading.column in header else None
            if spec.name in asked[role]:
                chosen = None
            select = StaticSelectElement(
                action_id=COLUMN_INPUT,
                placeholder="Choose a column",
                options=options,
                initial_option=next(
                    (o for o in options if chosen and o.value == str(header.index(chosen))), None
                ),
            )
            blocks.append(
                InputBlock(
                    block_id=field_block_id(role, spec.name),
                    # Each select may be left as it is (Slack says "optional"); whether the
                    # field must be read is in its hint, not a second label word.
                    label=cut(spec.name, 2000),
                    element=select,
                    optional=True,
                    hint=cut(
                        ("Needed to reconcile: " if spec.required else "") + spec.description,
                        2000,
                    ),
                )
            )
        blocks.append(
            InputBlock(
                block_id=options_block_id(role),
                label=f"Reading options for {role.value}",
                element=PlainTextInputElement(
                    action_id=OPTIONS_INPUT,
                    multiline=True,
                    placeholder=cut("e.g. " + next(iter(READING_OPTIONS), "name") + "=value", 150),
                ),
                optional=True,
                hint=options_hint(),
            )
        )
    return View(
        type="modal",
        callback_id=EDIT_VIEW,
        title="Edit the mapping",
        submit="Propose",
        close="Cancel",
        private_metadata=metadata.encode(),
        blocks=blocks[:100],
    ).to_dict()


def _file_name(request: ApprovalRequest, role: Role) -> str:
    return next((ref.name for ref in request.files if ref.role is role), "")
