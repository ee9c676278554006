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


def effect_on_last_reconciliation(
    deps: Dependencies, channel: str | None, proposed: Policy
) -> tuple[PolicyEffect | None, str | None]:
    """What `proposed` would have changed on the channel's last approved reconciliation:
    its files reconciled again, as approved, under the proposed rules (None, and why, when
    they could not be; None, None when the channel has none)."""
    with deps.uow() as uow:
        latest = uow.outcomes.latest_in_channel(channel)  # a policy change has no outcome
        state = uow.pauses.get(latest.pause_id) if latest is not None else None
    if latest is None or state is None or state.request.mapping is None:
        return None, None  # no reconciliation approved in the channel
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
