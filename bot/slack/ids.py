"""The ids that tie what the bot renders to the listener that handles it: action ids of
buttons and selects, callback ids of modals, block and input ids read back from a submission.

No imports from `bot`: both the Block Kit builders and the payload parsers use these.
"""

from __future__ import annotations

from agent.data.schema import Role

APPROVE, EDIT, REJECT, RETRY, ANSWER = "approve", "edit_mapping", "reject", "retry", "answer"
"""Action ids of the decision buttons; `ANSWER:<n>` is the action id (and the start of the
block id) of a clarification's answer select."""
INVESTIGATE_AGAIN = "investigate_again"
EDIT_VIEW, REJECT_VIEW = "edit_mapping_view", "reject_view"
POLICY_VIEW = "policy_view"
"""The `/recon policy` form: the channel's rules, each as today, to propose new values."""
POLICY_EDIT_VIEW = "policy_edit_view"
"""Edit on a policy-change request: its proposed rules, to propose on top of them."""
RULE_BLOCK_PREFIX, RULE_INPUT = "rule:", "value"
REASON_BLOCK, REASON_INPUT = "reason", "reason_input"
OPTIONS_BLOCK_PREFIX = "options."
OPTIONS_INPUT = "options"
COLUMN_INPUT = "column"


def field_block_id(role: Role, name: str) -> str:
    """The block id of a field's select in the edit modal."""
    return f"{role.value}.{name}"


def options_block_id(role: Role) -> str:
    """The block id of a file's reading-options text input in the edit modal."""
    return f"{OPTIONS_BLOCK_PREFIX}{role.value}"
