"""Block Kit's limits, checked the way Slack checks them before it posts a message or a view."""

from __future__ import annotations

from typing import Any

from workspace.slack.calls import ApiError, json_arg

MAX_BLOCKS_MESSAGE = 50
MAX_BLOCKS_VIEW = 100
MAX_SECTION_TEXT = 3000
MAX_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_HEADER_TEXT = 150
MAX_ACTION_ELEMENTS = 25
MAX_OPTIONS = 100


def validate_blocks(blocks: Any, *, limit: int = MAX_BLOCKS_MESSAGE) -> list[dict[str, Any]]:
    """Check blocks against Block Kit's limits the way Slack does (`invalid_blocks`)."""
    blocks = json_arg(blocks) or []
    if not isinstance(blocks, list):
        raise ApiError("invalid_blocks", "blocks must be a list")
    if len(blocks) > limit:
        raise ApiError("invalid_blocks", f"{len(blocks)} blocks, over the limit of {limit}")
    for number, block in enumerate(blocks):
        kind = block.get("type")
        where = f"block {number} ({kind})"
        text = block.get("text")
        if kind == "section":
            if text and len(text.get("text", "")) > MAX_SECTION_TEXT:
                raise ApiError("invalid_blocks", f"{where}: text over {MAX_SECTION_TEXT}")
            fields = block.get("fields") or []
            if len(fields) > MAX_FIELDS:
                raise ApiError("invalid_blocks", f"{where}: {len(fields)} fields")
            if any(len(f.get("text", "")) > MAX_FIELD_TEXT for f in fields):
                raise ApiError("invalid_blocks", f"{where}: a field over {MAX_FIELD_TEXT}")
            if not text and not fields:
                raise ApiError("invalid_blocks", f"{where}: needs text or fields")
        elif kind == "header":
            if len((text or {}).get("text", "")) > MAX_HEADER_TEXT:
                raise ApiError("invalid_blocks", f"{where}: header over {MAX_HEADER_TEXT}")
        elif kind == "actions":
            if len(block.get("elements", [])) > MAX_ACTION_ELEMENTS:
                raise ApiError("invalid_blocks", f"{where}: too many elements")
        elif kind not in ("context", "divider", "input", "image", "rich_text"):
            raise ApiError("invalid_blocks", f"{where}: unknown block type")
        for element in [*block.get("elements", []), block.get("accessory"), block.get("element")]:
            if isinstance(element, dict) and len(element.get("options", [])) > MAX_OPTIONS:
                raise ApiError("invalid_blocks", f"{where}: over {MAX_OPTIONS} options")
    return list(blocks)
