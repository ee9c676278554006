"""What a proposed policy would have changed on a channel's last approved reconciliation: its
inputs reconciled again, as approved, under the proposed rules. Not a reconciliation of new
data, so a policy-change request shows it to everyone in the channel."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

from agent.data.policy import Policy
from agent.dependencies import Dependencies
from agent.errors import ReconbotError
from agent.policy_change import PolicyEffect

logger = logging.getLogger(__name__)

POLICY_CASE_PREFIX = "POL"
"""The prefix of a policy change's case id (an investigation's is `INV`)."""
RECENT_CASES = 50
"""How many of a channel's most recent cases are searched for its last approved reconciliation."""


def effect_on_last_reconciliation(
    deps: Dependencies, channel: str | None, proposed: Policy
) -> tuple[PolicyEffect | None, str | None]:
    """What `proposed` would have changed on the channel's last approved reconciliation:
    its files reconciled again, as approved, under the proposed rules (None, and why, when
    they could not be; None, None when the channel has none among its recent cases)."""
    with deps.uow() as uow:
        cases = [
            c
            for c in uow.investigations.recent(channel=channel, limit=RECENT_CASES)
            if c.channel == channel and not c.id.startswith(POLICY_CASE_PREFIX)
        ]
        outcomes = [o for o in (uow.outcomes.latest(c.id) for c in cases) if o is not None]
        latest = max(outcomes, key=lambda o: o.created_at, default=None)
        state = uow.pauses.get(latest.pause_id) if latest is not None else None
    if latest is None or state is None or state.request.mapping is None:
        return None, None  # no reconciliation approved among the channel's recent cases
    request, mapping = state.request, state.request.mapping
    files = {ref.role: ref for ref in request.files}
    case = latest.investigation_id
    try:
        with tempfile.TemporaryDirectory(dir=deps.settings.workdir) as folder:
            _, summary, _, digests = deps.files.reconcile_and_read(
                files, mapping, proposed, Path(folder) / "effect.csv", 0
            )
    except ReconbotError as error:
        kind = type(error).__name__  # never its text in the log: it may quote a cell
        logger.warning("investigation=%s error=<%s> | effect not computed", case, kind)
        return None, f"{case}'s files could not be reconciled again ({error})"
    if {role: ref.digest for role, ref in files.items()} != digests:
        return None, f"{latest.investigation_id}'s stored files are not the ones approved"
    effect = PolicyEffect(
        investigation_id=latest.investigation_id,
        pause_id=latest.pause_id,
        reconciled_at=latest.created_at,
        before=dict(latest.counts),
        after=dict(summary.counts),
    )
    return effect, None
