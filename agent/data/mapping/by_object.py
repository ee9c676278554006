"""What was worked out from some objects, remembered for those very objects.

Inference works from samples that never change once read (`CsvSample` is frozen), and the same
sample objects are handed to it several times in a case: role assignment and inference at the
upload, the agent's inspection, each edit. `ByObjects` remembers a result for the objects it was
worked out from, by identity, so it is worked out once per process.
"""

from __future__ import annotations

import threading
import weakref
from typing import Generic, TypeVar

from cachetools import LRUCache

K = TypeVar("K")
V = TypeVar("V")


class ByObjects(Generic[K, V]):
    """The last few results, each for a tuple of objects and a hashable extra key.

    Keyed by the objects' `id`s, each entry holds weak references to them: a result is
    returned only for the very objects it was worked out from, never for others that took the
    ids of ones gone.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._found: LRUCache[tuple[object, ...], tuple[list[weakref.ref[K]], V]] = LRUCache(size)
        self._lock = threading.Lock()

    def get(self, objects: tuple[K, ...], extra: object = None) -> V | None:
        """The result kept for these very `objects` (and `extra`), else None."""
        key = (*(id(o) for o in objects), extra)
        with self._lock:
            entry = self._found.get(key)
        if entry is None or any(ref() is not o for ref, o in zip(entry[0], objects, strict=True)):
            return None
        return entry[1]

    def put(self, objects: tuple[K, ...], value: V, extra: object = None) -> None:
        """Keep `value` for `objects` (and `extra`); the least recently used entry goes past
        `size` (at least 1)."""
        key = (*(id(o) for o in objects), extra)
        with self._lock:
            self._found[key] = ([weakref.ref(o) for o in objects], value)
