"""A child process for the concurrency, crash and restart tests: `python -m ... helper.py CMD`.

Commands:
  confirm URL BLOBS WORK PAUSE AUTH THREADS   confirm from THREADS threads; print one JSON line
  crash   URL BLOBS WORK PAUSE AUTH           confirm, but die (exit 9) right before the outcome
  recover URL BLOBS WORK                      start up (recovery runs) and print what it did
"""

from __future__ import annotations

import json
import os
import sys
import threading
from datetime import timedelta
from pathlib import Path

from agent.dependencies import Dependencies, SystemClock, WorkflowSettings
from agent.domain import Approver
from agent.errors import ApprovalRefusedError
from agent.models.offline import OfflineModel
from agent.usecases import UseCases, build_use_cases
from storage.blobs import LocalBlobStore
from storage.database import create_engine
from storage.repositories.outcomes import SqlOutcomeRepository
from storage.unit_of_work import SqlUnitOfWorkFactory


def _die_instead_of_saving(self, outcome):  # type: ignore[no-untyped-def]
    """The process dies where the outcome would be saved."""
    os._exit(9)


def service(url: str, blobs: str, work: str) -> UseCases:
    return build_use_cases(
        Dependencies(
            SqlUnitOfWorkFactory(create_engine(url)),
            LocalBlobStore(Path(blobs)),
            OfflineModel(),
            SystemClock(),
            WorkflowSettings(workdir=Path(work), claim_lease=timedelta(minutes=15)),
        )
    )


def main() -> None:
    command, url, blobs, work, *rest = sys.argv[1:]
    if command == "confirm":
        pause, auth, threads = rest[0], rest[1], int(rest[2])
        svc = service(url, blobs, work)
        barrier = threading.Barrier(threads)
        results: list[str] = []
        lock = threading.Lock()

        def click(n: int) -> None:
            barrier.wait()
            try:
                svc.decisions.confirm(pause, auth, Approver(user=f"user{os.getpid()}-{n}"))
                outcome = "RESUMED"
            except ApprovalRefusedError as error:
                outcome = error.reason
            with lock:
                results.append(outcome)

        workers = [threading.Thread(target=click, args=(n,)) for n in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=300)
        print(json.dumps(results))
    elif command == "crash":
        SqlOutcomeRepository.add = _die_instead_of_saving  # type: ignore[method-assign]
        service(url, blobs, work).decisions.confirm(rest[0], rest[1], Approver(user="bob"))
    elif command == "recover":
        print(json.dumps(service(url, blobs, work).recovery.recover()))


if __name__ == "__main__":
    main()
