"""What the bot says in a thread about uploads and edits: where a case stands after a step,
problems (with a "Try again" button when only the model's turn failed), and internal errors.
"""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import ActionsBlock, ButtonElement

from agent.data.schema import Role
from bot.slack.blocks.common import Rendered, code, escape, mention, note
from bot.slack.ids import INVESTIGATE_AGAIN

INTERNAL_ERROR = (
    "Something went wrong on reconbot's side (reference {ref}); nothing you uploaded or decided "
    "was lost. Try again, or ask whoever runs the bot to look up the reference in its log."
)
FILES_NOT_PROCESSED = "the files could not be processed"


def problem_message(text: str, *, retry: str | None = None) -> Rendered:
    """A file or workflow problem, in words, in the thread; with `retry` (an investigation
    id), a button to investigate it again (the model was busy or did not answer)."""
    rendered = note(f":warning: {escape(text)}")
    if retry is None:
        return rendered
    button = ActionsBlock(
        block_id="again",
        elements=[ButtonElement(text="Try again", action_id=INVESTIGATE_AGAIN, value=retry[:2000])],
    )
    return Rendered(rendered.text, [*rendered.blocks, button.to_dict()])


def internal_error_message(ref: str) -> Rendered:
    """Something failed on the bot's side: nothing was lost, and the log reference."""
    return problem_message(INTERNAL_ERROR.format(ref=ref))


def not_csv_note(names: Sequence[str]) -> Rendered:
    """Files shared that are not CSV exports: left alone."""
    shown = ", ".join(code(name, 60) for name in names)
    return note(
        f"Thanks, but I only read CSV exports; I left {shown} alone. Share the orders "
        "and captured-payments exports as .csv files."
    )


def started_note(
    investigation_id: str, have_role: Role, file_name: str, missing_role: Role
) -> Rendered:
    """A case started with one export: the other is needed."""
    return note(
        f":inbox_tray: Started *{investigation_id}* with the {have_role.value} export "
        f"{code(file_name, 60)}. Upload the *{missing_role.value}* export in "
        "this thread to continue."
    )


def inspected_note(investigation_id: str) -> Rendered:
    """Both files inspected and the proposal checked: a request follows."""
    return note(
        f":mag: *{investigation_id}*: inspected both files and checked the proposed mapping on "
        "every row. Decision needed below."
    )


def unchanged_note(file_name: str, role: Role) -> Rendered:
    """An upload identical to the file the case already has."""
    return note(
        f":information_source: {code(file_name, 60)} is byte-identical to the "
        f"{role.value} file this investigation already has; nothing changed and "
        "the pending request stands."
    )


def added_note(file_name: str, role: Role, revision: int) -> Rendered:
    """A file added to a case that still needs the other export."""
    return note(
        f":inbox_tray: Added {code(file_name, 60)} as the {role.value} "
        f"export (revision {revision}). Upload the other export to continue."
    )


def revised_note(revision: int, file_name: str, role: Role) -> Rendered:
    """A file replaced: a new revision, inspected again; a request follows."""
    return note(
        f":arrows_counterclockwise: Revision {revision}: {code(file_name, 60)} "
        f"is the new {role.value} export. Inspected and validated again; decision "
        "needed below."
    )


def edited_note(user: str) -> Rendered:
    """A mapping edited (in the modal or by answering a question): a request follows."""
    return note(
        f":pencil2: {mention(user)} edited the mapping; validated again, decision needed below."
    )


def edit_not_applied_note() -> Rendered:
    """An edit the guard refused (the editor is told why, alone)."""
    return note("The edit was not applied.")


def rejected_note(user: str, *, policy_change: bool = False) -> Rendered:
    """A request rejected: nothing reconciled (a policy change: the rules stay in force)."""
    if policy_change:
        return note(f":x: Rejected by {mention(user)}. The rules in force stay as they are.")
    return note(f":x: Rejected by {mention(user)}. Nothing was reconciled.")


def stalled_message(investigation_id: str) -> Rendered:
    """An inspection a stopped process left unfinished, with a button to try again."""
    return problem_message(
        f"{investigation_id}: the bot stopped while inspecting these files. Nothing you "
        "uploaded was lost; try again to get the request.",
        retry=investigation_id,
    )
