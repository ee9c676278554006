"""Block Kit's limits as the stand-in checks them, where tests import them from."""

from workspace.slack.blockkit import validate_blocks

__all__ = ["validate_blocks"]
