"""The browser app's limits: the caps on sessions, games, replays, records and request bodies,
the agents' costly parameters (:data:`COST_LIMITS`), the time and memory budgets, and
:class:`Limits`, the ones :func:`~rummy_agents.web.app.create_app` takes.
"""

from __future__ import annotations

import dataclasses
import math

MiB = 1024 * 1024

MAX_SESSIONS = 64
"""Sessions holding games or replays kept in memory; beyond this only an empty or idle-expired
one is dropped for a new one, else the new one is refused (429)."""

SESSION_IDLE_SECONDS = 3600.0
"""A session with no request for this long may be dropped to make room (its games with it)."""

MAX_GAMES = 8
"""Games per session: a new one replaces the oldest finished game, else it is refused (429)."""

MAX_REPLAYS = 8
"""Replays per session: a new one replaces the least recently used."""

MAX_RECORD_BYTES = 4 * MiB
"""Largest record accepted (uploaded or read from ``--records DIR``)."""

MAX_BODY_BYTES = MAX_RECORD_BYTES + 64 * 1024
"""Largest request body (a record as JSON text, escapes included, has some slack)."""

MAX_LISTED_RECORDS = 2000
"""Records listed from ``--records DIR`` at most (the first, in path order)."""

MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects a request body may have (the API's bodies need 3)."""

MEMORY_BYTES = 256 * MiB
"""Memory the app keeps for games and replays (and the request bodies being read), all
sessions together, accounted for by :class:`~rummy_agents.web.memory.Memory`."""

MAX_GAME_STEPS = 20_000
"""Decisions of one game at most: its ``max_steps`` rule option is at most this (and this when
not given), so that one game's memory is bounded."""

MOVE_SECONDS = 60.0
"""Longest one agent decision may take; past it the game is stopped with an error."""

FIRST_MOVE_SECONDS = 300.0
"""Longest the first decision of an agent class in a game may take in this process (its
compiled kernels are built or loaded from numba's disk cache then)."""

REQUEST_SECONDS = 30.0
"""Agents' moves one request plays at most for this long; the game is then answered with
``pending`` true and ``POST /api/play/{id}/advance`` plays on."""

COST_LIMITS: dict[str, tuple[float, float, bool]] = {
    # parameter: (least, most, None allowed); the same name means the same cost in every agent
    "iterations": (1, 5000, True),  # ismcts: searched worlds per decision (None: time only)
    "time_limit": (0.001, 10.0, True),  # ismcts: seconds per decision
    "batch_size": (1, 256, False),  # ismcts: worlds searched at once (memory, kernel time)
    "root_k": (1, 16, True),  # ismcts, ppo_search: root moves compared
    "worlds": (2, 512, False),  # ppo_search: rollouts per candidate move
    "oversample": (1, 16, False),  # ppo_search: worlds drawn per world kept
    "node_limit": (1, 30_000, False),  # greedy agents: search nodes per plan
    "threads": (1, 4, True),  # ppo: torch threads
    "rollouts": (1, 5000, False),  # any agent: rollouts per decision
    "simulations": (1, 5000, False),  # any agent: simulations per decision
}
"""The agent parameters that set how much work a decision is, and the range the browser app
allows (``rummy-env play`` and the arena take any): a request names what it may cost."""

EVENT_PICTURES = 16
"""Moves of one answer that carry a picture (the last ones): the page shows them one by one."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """The app's time and memory limits (:func:`~rummy_agents.web.app.create_app`; tests pass small
    ones).

    Attributes:
        move_seconds: longest one agent decision may take (:data:`MOVE_SECONDS`).
        first_move_seconds: the same for the first decision of an agent class in a game in
            this process (:data:`FIRST_MOVE_SECONDS`).
        request_seconds: agents' moves one request plays at most for this long
            (:data:`REQUEST_SECONDS`).
        memory_bytes: memory kept for games, replays and request bodies (:data:`MEMORY_BYTES`).
        sessions: sessions kept (:data:`MAX_SESSIONS`).
        session_idle_seconds: idle time after which a session may be dropped.
    """

    move_seconds: float = MOVE_SECONDS
    first_move_seconds: float = FIRST_MOVE_SECONDS
    request_seconds: float = REQUEST_SECONDS
    memory_bytes: int = MEMORY_BYTES
    sessions: int = MAX_SESSIONS
    session_idle_seconds: float = SESSION_IDLE_SECONDS

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf:
                raise ValueError(f"Limits.{f.name} must be a positive number, got {v!r}")
