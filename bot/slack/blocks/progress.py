"""The one progress message of a thread: what the agent has done so far, in words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.slack.blocks.common import Rendered, code, cut, dicts, escape, plain, section

TOOL_WORDS = {
    "inspect_datasets": "inspected the files",
    "validate_mapping": "checked the proposed mapping on every row",
    "reconcile": "reconciled",
    "get_evidence": "looked up the evidence",
    "list_findings": "listed the findings",
    "explain_policy": "read the policy",
}


def progress_message(
    names: Sequence[str],
    done: Sequence[str],
    reading: Mapping[str, tuple[int, float]] | None = None,
) -> Rendered:
    """The one progress message of a thread: what the agent has done so far, and while a
    large file is read, how many of its rows (`reading`: file name -> rows, share of bytes)."""
    files = ", ".join(code(n, 60) for n in names)
    # A name not in TOOL_WORDS is whatever tool the model asked for: a value, escaped.
    steps = [TOOL_WORDS.get(d) or escape(cut(d.replace("_", " "), 60)) for d in done]
    status = ("; ".join(steps[-4:]) + "…") if steps else "reading the files…"
    text = f":mag: Investigating {files}: {status}"
    if reading:
        read = "; ".join(
            f"{code(name, 60)} {rows:,} rows read ({share:.0%})"
            for name, (rows, share) in reading.items()
        )
        text += f"\n{read}"
    return Rendered(plain(text), dicts([section(text)]))
