"""The reconcile tool's work once an approval is confirmed: publish the reconciliation sealed
under exactly the approved identity, or compute it now; either way store the exceptions file
and return what the results message shows.

The sealed reconciliation was computed while the request waited (`CaseFiles.seal`); it is
published only when it was computed under the approved input identity, mapping digest and
policy version, and from bytes whose digests make the approved input identity. Anything else
computes as if nothing had been sealed, so the result is the same either way.
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agent.casefiles import Finding, SealIdentity, Summary
from agent.identity import input_identity
from agent.ports import StoredBlob
from agent.runtime.context import BoundContext, InvestigationContext

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reconciled:
    """A reconciliation of the approved files, its exceptions file stored: the figures, the
    examples, the file's rows, and when it was sealed (None: computed on approval)."""

    stored: StoredBlob
    summary: Summary
    examples: list[Finding]
    exported: int
    sealed_at: datetime | None


class BytesChangedError(Exception):
    """The bytes read are not the approved files' bytes: nothing is reported."""


def reconciled(context: InvestigationContext, bound: BoundContext, examples: int) -> Reconciled:
    """The approved reconciliation of the case's files, with its exceptions file stored: the one
    sealed under exactly `bound`'s identity when there is one, else computed now. Raises
    BytesChangedError when the bytes read do not make the approved input identity, and the
    engine's errors (ReconbotError) as they come."""
    identity = SealIdentity(
        bound.pause_id, bound.input_identity, bound.mapping_digest, bound.policy_version
    )
    sealed = context.case_files.take_sealed(identity)
    if sealed is not None:
        try:
            if input_identity(sealed.digests) == bound.input_identity:
                with sealed.export.open("rb") as handle:
                    stored = context.blobs.put(handle)
                if stored.size == sealed.export_size:
                    return Reconciled(
                        stored, sealed.summary, sealed.examples, sealed.exported, sealed.sealed_at
                    )
            logger.warning(
                "pause=<%s> | the sealed result is not of the approved bytes; reconciling now",
                bound.pause_id,
            )
        except OSError as error:  # removed meanwhile (another worker, a sweep): reconcile now
            logger.info(
                "pause=<%s> error=<%s> | the sealed result could not be read; reconciling now",
                bound.pause_id,
                type(error).__name__,
            )
        finally:
            context.case_files.discard_sealed([bound.pause_id])
    with tempfile.TemporaryDirectory(dir=context.workdir) as folder:
        export = Path(folder) / "exceptions.csv"
        exported, summary, shown, digests = context.case_files.reconcile_and_read(
            bound.files, bound.mapping, context.policy, export, examples
        )
        if input_identity(digests) != bound.input_identity:
            raise BytesChangedError
        with export.open("rb") as handle:
            stored = context.blobs.put(handle)
        return Reconciled(stored, summary, shown, exported, None)
