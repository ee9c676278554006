"""Intake: files come in, an investigation starts or gets a new revision, the agent inspects.

Files are stored (content-addressed) before anything is recorded about them, and recorded
before the agent's turn starts, so a crash loses nothing a person uploaded: a stalled
inspection is found and offered again (`Recovery.find_stalled`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agent.casefiles.arrival import Arrived, Readable
from agent.data.policy import Policy
from agent.data.schema import Role
from agent.dependencies import Dependencies, Progress
from agent.domain import (
    ApprovalRequest,
    DatasetRef,
    Investigation,
    InvestigationStatus,
    Revision,
)
from agent.errors import FileTooLargeError, WorkflowError
from agent.identity import input_identity, new_id
from agent.ports import StoredBlob
from agent.runtime.prompts import investigate_prompt
from agent.runtime.turns import AgentTurns
from agent.usecases.common import (
    Upload,
    current_revision,
    investigation_in,
    pending_in,
    request_stood,
)
from agent.usecases.requests import investigate, supersede_open

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileAdded:
    """The result of adding a file: unchanged (byte-identical), or a new revision and request."""

    investigation: Investigation
    unchanged: bool
    role: Role
    revision: int
    superseded: list[str]
    request: ApprovalRequest | None


@dataclass(frozen=True)
class Started:
    """A new investigation and, once it has both files, its first request.

    A chat thread has one investigation. When the thread had one already (another upload got
    there first, e.g. a second process handling the same upload), the files were added to it
    instead, one by one as `add_file` adds them, and `added` says what each did (in order):
    `investigation` is that investigation as it stands now, `request` the newest request
    these files made (None: none, e.g. every file was byte-identical) and `missing` the role
    its current revision still lacks. `added` is empty for a new investigation.
    """

    investigation: Investigation
    request: ApprovalRequest | None
    missing: Role | None
    added: tuple[FileAdded, ...] = ()


class Intake:
    """Start an investigation, add or replace a file, inspect a case again."""

    def __init__(self, deps: Dependencies, turns: AgentTurns) -> None:
        self.deps = deps
        self.turns = turns

    def start(
        self,
        uploads: list[Upload],
        *,
        requested_by: str,
        channel: str | None = None,
        thread_ts: str | None = None,
        team: str | None = None,
        progress: Progress | None = None,
    ) -> Started:
        """Open an investigation on one or two files; with both, investigate and pause.

        If the chat thread has an investigation already (the database keeps one per thread, so
        this also holds when a concurrent start for the same thread saved its first), the files
        are added to that one instead (see `Started.added`).

        Raises the typed input errors for a file that is not a readable CSV export.
        """
        files = self._refs(uploads, progress, self.deps.policy_for(channel))
        now = self.deps.clock.now()
        investigation = Investigation(
            id=new_id("INV"),
            status=InvestigationStatus.AWAITING_FILE,
            requested_by=requested_by,
            channel=channel,
            thread_ts=thread_ts,
            revision=1,
            created_at=now,
            team=team,
        )
        revision = self._revision(investigation.id, 1, files, requested_by)
        with self.deps.uow() as uow:
            created = uow.investigations.add(investigation, revision)
        if not created:  # nothing written: the thread has an investigation (new units on)
            return self._join(channel, thread_ts, files, actor=requested_by, progress=progress)
        if not revision.complete:
            missing = next(role for role in Role if role not in files)
            return Started(investigation, None, missing)
        request = investigate(
            self.deps,
            self.turns,
            investigation,
            revision,
            investigate_prompt(1, files),
            {},
            progress=progress,
        )
        with self.deps.uow() as uow:
            return Started(investigation_in(uow, investigation.id), request, None)

    def add_file(
        self,
        investigation_id: str,
        upload: Upload,
        *,
        actor: str,
        progress: Progress | None = None,
    ) -> FileAdded:
        """Add or replace one file; a changed input makes a new revision and a new request.

        A byte-identical re-upload changes nothing and the pending request stands. The new
        revision and the superseding of the requests it replaces are one unit of work.
        """
        with self.deps.uow() as uow:
            # An unknown case is refused before storing.
            channel = investigation_in(uow, investigation_id).channel
            policy = self.deps.policy_for(channel, uow)
        ((role, ref),) = self._refs([upload], policy=policy).items()
        return self._add_ref(investigation_id, role, ref, actor=actor, progress=progress)

    def _join(
        self,
        channel: str | None,
        thread_ts: str | None,
        files: dict[Role, DatasetRef],
        *,
        actor: str,
        progress: Progress | None,
    ) -> Started:
        """Add stored files to the thread's investigation, as `add_file` does (see `start`)."""
        existing = None
        if channel is not None and thread_ts is not None:
            with self.deps.uow() as uow:
                existing = uow.investigations.by_thread(channel, thread_ts)
        if existing is None:  # only a thread's investigation refuses a new one, and it stays
            raise RuntimeError(f"a new investigation in {channel}/{thread_ts} was refused")
        logger.info(
            "investigation=%s actor=%s | the thread has this investigation; adding the files",
            existing.id,
            actor,
        )
        added = tuple(
            self._add_ref(existing.id, role, files[role], actor=actor, progress=progress)
            for role in Role
            if role in files
        )
        with self.deps.uow() as uow:
            investigation = investigation_in(uow, existing.id)
            current = current_revision(uow, existing.id)
        requests = [a.request for a in added if a.request is not None]
        missing = next((role for role in Role if role not in current.files), None)
        return Started(investigation, requests[-1] if requests else None, missing, added)

    def _add_ref(
        self,
        investigation_id: str,
        role: Role,
        ref: DatasetRef,
        *,
        actor: str,
        progress: Progress | None,
    ) -> FileAdded:
        """Add one stored file (see `add_file`)."""
        with self.deps.uow() as uow:
            investigation = investigation_in(uow, investigation_id)
            current = current_revision(uow, investigation_id)
            if role in current.files and current.files[role].digest == ref.digest:
                return FileAdded(investigation, True, role, current.number, [], None)
            files = {**current.files, role: ref}
            revision = self._revision(investigation_id, current.number + 1, files, actor)
            # Pauses first, then the case: every unit of work that locks both takes them in
            # this order (a decision locks its pause, then updates the case), so an upload and
            # a click on the same case queue instead of deadlocking on PostgreSQL.
            superseded = supersede_open(
                uow,
                investigation_id,
                actor=actor,
                at=revision.created_at,
                reason=f"superseded by revision {revision.number}",
            )
            uow.investigations.add_revision(revision, actor=actor)
        self.deps.files.discard_sealed(superseded)
        request = None
        if revision.complete:
            request = investigate(
                self.deps,
                self.turns,
                investigation,
                revision,
                investigate_prompt(revision.number, files),
                {},
                progress=progress,
            )
        with self.deps.uow() as uow:
            investigation = investigation_in(uow, investigation_id)
        return FileAdded(investigation, False, role, revision.number, superseded, request)

    def inspect_if_unanswered(
        self, investigation_id: str, *, actor: str, progress: Progress | None = None
    ) -> ApprovalRequest | None:
        """Inspect the current revision again when its inspection never ended on a request (it
        was cut off) and the case still waits for one: a person re-sharing the same files asks
        for it. None when a request stands or stood for the revision, the revision lacks a
        file, or the revision is past its decision (its outcome is saved; an older revision's
        outcome does not count)."""
        with self.deps.uow() as uow:
            investigation = investigation_in(uow, investigation_id)
            revision = current_revision(uow, investigation_id)
            pauses = uow.pauses.of_investigation(investigation_id)
            outcome = uow.outcomes.latest(investigation_id)
        waiting = investigation.status in (
            InvestigationStatus.AWAITING_FILE,
            InvestigationStatus.AWAITING_DECISION,
            InvestigationStatus.FAILED,
        )
        reconciled = outcome is not None and outcome.revision == revision.number
        if request_stood(pauses, revision) or not revision.complete or not waiting or reconciled:
            return None
        return self.investigate_again(investigation_id, actor=actor, progress=progress)

    def investigate_again(
        self,
        investigation_id: str,
        *,
        actor: str,
        progress: Progress | None = None,
        answers: dict[Role, dict[str, str]] | None = None,
        edits: tuple[tuple[str, str], ...] = (),
    ) -> ApprovalRequest:
        """Run the inspection of the current revision again, after a failed attempt (the
        model was busy or timed out), or for a new request after the policy changed (with the
        `answers` and `edits` people gave the request it replaces: their readings stand, and
        so does four-eyes over them). Refused when a request for it made under the policy now
        in force is already pending."""
        with self.deps.uow() as uow:
            investigation = investigation_in(uow, investigation_id)
            revision = current_revision(uow, investigation_id)
            pending = pending_in(uow, investigation_id)
        if not revision.complete:
            raise WorkflowError("This investigation still needs its other file.")
        if (
            pending is not None
            and pending.revision == revision.number
            and pending.policy_version == self.deps.policy_for(investigation.channel).version
        ):
            raise WorkflowError(
                f"Revision {revision.number} already has a request waiting for a decision "
                f"({pending.pause_id})."
            )
        logger.info("investigation=%s actor=%s | investigating again", investigation_id, actor)
        return investigate(
            self.deps,
            self.turns,
            investigation,
            revision,
            investigate_prompt(revision.number, revision.files),
            dict(answers or {}),
            progress=progress,
            edits=edits,
        )

    def _put(self, upload: Upload, on_readable: Readable) -> StoredBlob:
        limit = self.deps.settings.max_upload_bytes
        try:
            return self.deps.blobs.put(
                upload.stream,
                max_bytes=None if upload.local else limit,
                on_readable=on_readable,
            )
        except FileTooLargeError:
            raise FileTooLargeError(
                f"the file is over the upload limit of {limit / (1 << 20):g} MB",
                file_name=upload.name,
            ) from None

    def _refs(
        self,
        uploads: list[Upload],
        progress: Progress | None = None,
        policy: Policy | None = None,
    ) -> dict[Role, DatasetRef]:
        """Store the uploads and the role of each; a pair's first read starts on the way,
        its values read under `policy` (the case's channel's)."""

        # Both files stored at once, each hashed and written (and synced) as it is read; each
        # file's head is inspected, and a pair's mapping inferred, while the rest is stored;
        # the pair's first read starts once their bytes are written, while they are synced.
        # Should the start then fail (a sync, the database) or find the thread's case has
        # these files already, that read is wasted: its tables are kept like any validation's
        # (`KeptTables`: two workspaces at most, an hour at most) and nothing is recorded.
        def readable(arrived: list[Arrived]) -> None:
            self.turns.prefetch(_refs_of(arrived), progress, policy=policy)

        stored = self.deps.files.store_and_inspect(uploads, self._put, readable, policy)
        return _refs_of(stored)

    def _revision(
        self, investigation_id: str, number: int, files: dict[Role, DatasetRef], added_by: str
    ) -> Revision:
        identity = None
        if all(role in files for role in Role):
            identity = input_identity({role: files[role].digest for role in Role})
        return Revision(
            investigation_id=investigation_id,
            number=number,
            files=files,
            input_identity=identity,
            created_at=self.deps.clock.now(),
            added_by=added_by,
        )


def _refs_of(arrived: list[Arrived]) -> dict[Role, DatasetRef]:
    """The stored files by the role each plays, as a revision records them."""
    return {
        a.role: DatasetRef(
            role=a.role,
            name=a.upload.name,
            size=a.blob.size,
            digest=a.blob.digest,
            slack_file_id=a.upload.slack_file_id,
        )
        for a in arrived
    }
