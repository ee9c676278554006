"""What every builder shares: Block Kit's limits, `Rendered`, text made safe for mrkdwn, and
the small blocks every message is made of. Pure functions, no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject, SectionBlock

from bot.presentation.text import cell

MAX_BLOCKS = 50
MAX_SECTION = 3000
MAX_HEADER = 150
MAX_OPTIONS = 100
MAX_OPTION_TEXT = 75
MAX_OPTION_VALUE = 150
MAX_BLOCK_ID = 255


@dataclass(frozen=True)
class Rendered:
    """A message: its notification text and its blocks (as dicts ready for the Web API)."""

    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)


_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,3}$")


def cut(text: str, limit: int) -> str:
    """`text` shortened to `limit` characters, ending in an ellipsis when cut (never in the
    middle of an escaped `&amp;`, `&lt;` or `&gt;`)."""
    if len(text) <= limit:
        return text
    return _PARTIAL_ENTITY.sub("", text[: max(limit - 1, 0)]) + "…"


def escape(text: str) -> str:
    """A value from a file, a person or the model made safe for mrkdwn and for a message's
    notification text: `&`, `<` and `>` as Slack's entities, so no mention (`<@U…>`,
    `<!here>`), channel or link (`<https://…|…>`) can be injected. Every such value goes
    through here (or `code`) before it reaches a mrkdwn text or a `Rendered.text`; `plain_text`
    objects (labels, headers, options) are not parsed by Slack and take values as they are."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_GRAVE = "\u02cb"
"""Shown for a backtick inside inline code, which Slack cannot hold (`ˋ`, not a quote that a
real name could have)."""


def code(text: str, limit: int = 80) -> str:
    """Text from a file shown as inline code, on one line (a line break shows as `\\n`)."""
    return "`" + escape(cut(cell(text), limit)).replace("`", _GRAVE) + "`"


def whole(text: str) -> str:
    """Text from a file or a person shown as inline code, never cut: for what an approval
    binds (a column's name, a choice), which the approver must see entire: on one line, so a
    name with a line break cannot draw a line of its own."""
    return "`" + escape(cell(text)).replace("`", _GRAVE) + "`"


def cut_middle(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut in its middle when longer: two long names that
    differ only at their ends (`… (EUR)`, `… (USD)`) stay apart in a menu's labels."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return text[:head] + "…" + text[len(text) - (limit - 1 - head) :]


def preformatted(text: str, width: int = MAX_SECTION - 200) -> list[str]:
    """A value-bearing text (a reading's words) as code blocks of at most `width` characters,
    split between words: shown literally, so no word in it is taken for bold, strike or a
    link, and no line of it is cut."""
    safe = escape(cell(text)).replace("```", _GRAVE * 3)
    return [f"```{piece}```" for piece in _split(safe, width)]


def _split(text: str, width: int, indent: str = "") -> list[str]:
    """`text` (escaped) in pieces of at most `width` characters, split between words where a
    word allows it and never inside `&amp;`, `&lt;` or `&gt;`; each piece after the first
    starts with `indent`."""
    pieces: list[str] = []
    while len(text) > width:
        at = text.rfind(" ", 0, width)
        at = at if at > width // 2 else width
        entity = text.rfind("&", at - 4, at)
        at = entity if entity > 0 and ";" not in text[entity:at] else at
        pieces.append(text[:at])
        text = indent + text[at:].lstrip(" ")
    pieces.append(text)
    return pieces


def person(user: str) -> str:
    """A maker as people read them: a Slack mention, or a terminal account (`os:alice`)."""
    return f"`{escape(user)}`" if user.startswith("os:") else mention(user)


def mention(user: str) -> str:
    """A person (or a user group, `S…`) as Slack shows it: the bot's own mentions, of ids
    Slack gave it (escaped all the same, so an id can never close the mention early)."""
    user = escape(user)
    return f"<!subteam^{user}>" if user.startswith("S") else f"<@{user}>"


def short_digest(digest: str) -> str:
    """`sha256:1a2b3c4d5e6f` from a full digest."""
    return digest[:19]


def when(moment: datetime) -> str:
    """A time as people read it, in UTC."""
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def plain(line: str) -> str:
    """A mrkdwn line as notification text (bold marks dropped; emoji and codes kept)."""
    return line.replace("*", "")


def section(text: str) -> SectionBlock:
    """A mrkdwn section, cut to Block Kit's limit."""
    return SectionBlock(text=MarkdownTextObject(text=cut(text, MAX_SECTION)))


def context(text: str) -> ContextBlock:
    """A mrkdwn context line, cut to Block Kit's limit."""
    return ContextBlock(elements=[MarkdownTextObject(text=cut(text, MAX_SECTION))])


def packed(
    title: str, lines: Sequence[str], budget: int, where: str, cuts: list[str] | None = None
) -> list[Block]:
    """`lines` (mrkdwn, escaped) under `title` in as few sections as Block Kit allows, none of
    them cut: a line longer than a section goes on in the next. At most `budget` sections;
    past them one line says how many lines are left and `where` they all are, so nothing is
    left out without saying so (and `title` is added to `cuts`, when given)."""
    room = MAX_SECTION - 100
    chunks = [chunk for line in lines for chunk in _split(line, room, "  ")]
    texts: list[str] = []
    text = title
    for chunk in chunks:
        if text and len(text) + len(chunk) + 1 > room:
            texts.append(text)
            text = ""
        text = f"{text}\n{chunk}" if text else chunk
    if text:
        texts.append(text)
    if len(texts) <= budget:
        return [section(t) for t in texts]
    if cuts is not None:
        cuts.append(title)
    shown = texts[: max(budget - 1, 0)]
    left = sum(t.count("\n") + 1 for t in texts[len(shown) :])
    shown.append(f"…and {left:,} more lines: {where}")
    return [section(t) for t in shown]


def dicts(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """Blocks as Web API dicts, never more than a message holds."""
    rendered = [block.to_dict() for block in blocks]
    assert len(rendered) <= MAX_BLOCKS
    return rendered


def note(text: str) -> Rendered:
    """A plain message in the thread (already written for people)."""
    return Rendered(plain(text), dicts([section(text)]))
