"""Browser sessions: each one's games and replays (:class:`Session`, their memory held in the
app's :class:`~rummy_agents.web.memory.Memory`), and the sessions kept, by the random id of
their cookie (:class:`Sessions`).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from rummy_agents.web.errors import ApiError
from rummy_agents.web.limits import MAX_GAMES, MAX_REPLAYS, MAX_SESSIONS, SESSION_IDLE_SECONDS
from rummy_agents.web.memory import Memory

if TYPE_CHECKING:
    from rummy_agents.web.games import PlayGame
    from rummy_agents.web.replays import ReplayView


COOKIE = "rummy_session"
"""Name of the session cookie (HttpOnly, SameSite=Strict)."""


class Session:
    """One browser's games and replays (their memory held in ``memory``)."""

    def __init__(self, sid: str, memory: Memory | None = None) -> None:
        self.id = sid
        self.memory = memory if memory is not None else Memory()
        self.games: OrderedDict[str, PlayGame] = OrderedDict()
        self.replays: OrderedDict[str, ReplayView] = OrderedDict()
        self.lock = threading.Lock()
        self.last_used = time.monotonic()
        self.busy = 0  # requests running now
        self.stored = False  # kept by Sessions (it holds or held something)

    @property
    def empty(self) -> bool:
        """The session holds no game and no replay."""
        return not self.games and not self.replays

    def game(self, gid: str) -> PlayGame:
        """A game of this session.

        Raises:
            ApiError: 404 for an id this session does not have.
        """
        return self._lookup(self.games, gid, "game")

    def replay(self, rid: str) -> ReplayView:
        """A replay of this session.

        Raises:
            ApiError: 404 for an id this session does not have.
        """
        return self._lookup(self.replays, rid, "replay")

    def _lookup(self, store: OrderedDict, key: str, kind: str) -> Any:
        """``store[key]``, now the most recently used; a 404 naming ``kind`` if absent."""
        with self.lock:
            item = store.get(key)
            if item is None:
                raise ApiError(404, f"no {kind} {key!r:.40} in this session")
            store.move_to_end(key)
        return item

    def _room(self) -> None:
        """Make room for a game: drop the oldest finished one at the cap (hold the lock).

        Raises:
            ApiError: 429 when the session already runs :data:`MAX_GAMES` unfinished games.
        """
        if len(self.games) < MAX_GAMES:
            return
        done = [k for k, x in self.games.items() if x.over]
        if not done:
            raise ApiError(
                429, f"this session already runs {MAX_GAMES} games: stop or delete one first"
            )
        self.memory.free(self.games.pop(done[0]).mem_key)

    def check_room(self) -> None:
        """Refuse a new game before it is built when there is no room (429)."""
        with self.lock:
            if len(self.games) >= MAX_GAMES and all(not x.over for x in self.games.values()):
                self._room()

    def add_game(self, g: PlayGame) -> None:
        """Keep a new game (:meth:`_room` first)."""
        with self.lock:
            self._room()
            self.games[g.id] = g

    def drop_game(self, gid: str) -> None:
        """Forget a game and give back its memory."""
        with self.lock:
            g = self.games.pop(gid, None)
        if g is not None:
            self.memory.free(g.mem_key)

    def add_replay(self, r: ReplayView) -> None:
        """Keep a new replay, dropping the least recently used one at the cap."""
        with self.lock:
            while len(self.replays) >= MAX_REPLAYS:
                self.memory.free(self.replays.popitem(last=False)[1].mem_key)
            self.replays[r.id] = r

    def drop_replay(self, rid: str) -> None:
        """Forget a replay and give back its memory."""
        with self.lock:
            r = self.replays.pop(rid, None)
        if r is not None:
            self.memory.free(r.mem_key)

    def make_room(self, nbytes: int) -> None:
        """Drop this session's least recently used replays and oldest finished games until
        ``nbytes`` more fit the memory budget (or nothing more can go).
        """
        m = self.memory
        while m.used + nbytes > m.budget:
            with self.lock:
                if self.replays:
                    item: Any = self.replays.popitem(last=False)[1]
                else:
                    done = [k for k, x in self.games.items() if x.over]
                    if not done:
                        return
                    item = self.games.pop(done[0])
            m.free(item.mem_key)

    def clear(self) -> None:
        """Drop everything (the session is dropped)."""
        with self.lock:
            items: list[PlayGame | ReplayView] = [*self.games.values(), *self.replays.values()]
            self.games.clear()
            self.replays.clear()
        for item in items:
            self.memory.free(item.mem_key)


class Sessions:
    """Every session that holds something, by its random id. A session is kept from the first
    game or replay it adds (:meth:`keep`); at the cap, a new one takes the place of an empty or
    idle-expired one, never of one in use (429 instead).
    """

    def __init__(
        self,
        cap: int = MAX_SESSIONS,
        memory: Memory | None = None,
        idle_seconds: float = SESSION_IDLE_SECONDS,
    ) -> None:
        self.cap = cap
        self.memory = memory if memory is not None else Memory()
        self.idle_seconds = idle_seconds
        self.items: OrderedDict[str, Session] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, sid: str | None) -> tuple[Session, bool]:
        """The session of a cookie's id, or a new one (new: True, not kept until it adds a game
        or replay) for none or an unknown id (an id is never taken from the browser: only the
        server makes them).
        """
        with self.lock:
            if sid is not None and sid in self.items:
                self.items.move_to_end(sid)
                s = self.items[sid]
                s.last_used = time.monotonic()
                return s, False
        return Session(secrets.token_urlsafe(32), self.memory), True

    def _expired(self, s: Session, now: float) -> bool:
        return s.busy == 0 and (s.empty or now - s.last_used > self.idle_seconds)

    def keep(self, session: Session) -> None:
        """Keep a new session (it adds a game or replay).

        Raises:
            ApiError: 429 when :attr:`cap` sessions are in use (none empty or idle-expired).
        """
        dropped = []
        with self.lock:
            if session.stored:
                return
            now = time.monotonic()
            while len(self.items) >= self.cap:
                old = next((s for s in self.items.values() if self._expired(s, now)), None)
                if old is None:
                    raise ApiError(
                        429,
                        f"the server already keeps {self.cap} browser sessions with games or "
                        "replays: try again later (or finish and delete games elsewhere)",
                    )
                del self.items[old.id]
                dropped.append(old)
            self.items[session.id] = session
            session.stored = True
        for s in dropped:
            s.clear()

    def expire(self) -> None:
        """Drop the idle-expired sessions (their memory goes back)."""
        now = time.monotonic()
        with self.lock:
            old = [s for s in self.items.values() if self._expired(s, now)]
            for s in old:
                del self.items[s.id]
        for s in old:
            s.clear()
