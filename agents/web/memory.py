"""The one account of the app's memory (:class:`Memory`): what a game, a replay and a request
body being read are counted as, and the budget they share (:class:`MemoryFull` when it has no
room).
"""

from __future__ import annotations

import itertools
import threading

from rummy_agents.web.errors import ApiError
from rummy_agents.web.limits import MEMORY_BYTES, MiB

GAME_BASE_BYTES = 2 * MiB
"""What a game is counted as before its first move: the env, the agents (a published net's
weights included) and their views."""

GAME_STEP_BYTES = 2048
"""What each decision of a game adds (its move in the log and the record), counted high."""

GAME_STEP_CHUNK = 512
"""A game's memory is reserved this many decisions ahead (one ledger update per chunk)."""

REPLAY_BASE_BYTES = 3 * MiB
"""What a replay is counted as besides its record (the env, its views)."""

REPLAY_BYTES_PER_BYTE = 12
"""A replay's memory per byte of its record's text, counted at its peak (the text, the parsed
lines and decisions, the steps sent to the page): measured about 12 at most."""

BODY_BYTES_PER_BYTE = 3
"""A request body's memory per byte while it is read and parsed (the bytes, their join, the
JSON values)."""


class MemoryFull(ApiError):
    """No room in the app's memory budget (429)."""


class Memory:
    """The one account of what the app keeps: every game, replay and request body being read
    reserves its bytes here first, and gives them back when it is dropped; the total never
    exceeds ``budget``.
    """

    def __init__(self, budget: int = MEMORY_BYTES) -> None:
        self.budget = budget
        self.used = 0
        self.held: dict[int, int] = {}
        self.lock = threading.Lock()
        self._keys = itertools.count(1)

    def key(self) -> int:
        """A new key to hold memory under (an item keeps it as ``mem_key``)."""
        return next(self._keys)

    def set(self, key: int, nbytes: int, what: str = "this") -> None:
        """Hold ``nbytes`` for ``key`` (more or less than it held).

        Raises:
            MemoryFull: when the growth does not fit the budget (nothing changes).
        """
        with self.lock:
            old = self.held.get(key, 0)
            if nbytes > old and self.used - old + nbytes > self.budget:
                raise MemoryFull(
                    429,
                    f"the server keeps at most {self.budget // MiB} MiB of games and replays "
                    f"and has {max(0, self.budget - self.used) // 1024} KiB left, not enough for "
                    f"{what} ({-(-nbytes // 1024)} KiB): delete or stop a game or replay, or try "
                    "again later",
                )
            self.used += nbytes - old
            self.held[key] = nbytes

    def free(self, key: int) -> None:
        """Give back what ``key`` held."""
        with self.lock:
            self.used -= self.held.pop(key, 0)


def replay_bytes(text_bytes: int) -> int:
    """What a replay of a record of ``text_bytes`` bytes is counted as."""
    return REPLAY_BASE_BYTES + REPLAY_BYTES_PER_BYTE * text_bytes
