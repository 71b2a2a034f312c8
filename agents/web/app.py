"""The browser app of ``rummy-env serve``: play against agents, step through game records.

A Starlette app of JSON endpoints and three static files (``static/``: plain HTML, CSS and
JavaScript, served by the app itself; no build step, nothing fetched from the internet).
Starlette and not FastAPI: the endpoints are a dozen small JSON handlers whose requests are
checked by hand, with the one-line messages of the command line (the rule options, the agent
specs and the records already validate themselves with clear ``ValueError``s); FastAPI would add
pydantic models and generated OpenAPI pages on top of the same Starlette, a second validation
layer and a heavier dependency for nothing the page uses.

Pictures of the table are always ``env.render_picture(view, fmt="svg")``, the drawing of the
envs' ``rgb_array`` pictures. What a player is sent is what that seat may see:

- a live game is drawn in the person's seat view (the other hands face down), the opponents'
  moves are named as the table sees them (``public_action_name``: a Gin knock's discard is face
  down; with four Gin players, no card of the other table), and the seed, which would deal every
  hidden card again, is sent with the record only once the game is over;
- every browser session (an HttpOnly cookie holding a random id, made by the server) keeps its
  games and replays in memory; a game or replay id of another session is unknown (404), so a
  session never reads or plays another's game;
- every request is checked: a mistake is a 4xx JSON ``{"error": "..."}`` naming it (400: a
  malformed request, a body nested too deeply; 403: a request of another site's page; 404: an
  unknown game, replay or record file; 409: a move after the end; 413: too large; 415: a
  request that changes something not sent as JSON; 422: an unknown game, agent or rule option,
  an agent parameter over the app's limits, an illegal move, a malformed record; 429: too many
  games or sessions, memory full; 503: the server stops), never a traceback;
- ``rummy-env serve`` listens on 127.0.0.1 by default and then answers only requests addressed
  to a loopback name (``allowed_hosts``); a request that changes something must come from the
  app's own page (``Origin``, ``Sec-Fetch-Site``) as ``application/json``;
- every request ends in bounded time: the agents' costly parameters are capped
  (:data:`COST_LIMITS`), each decision runs under a deadline (:class:`Limits`), a request plays
  agents' moves for :data:`REQUEST_SECONDS` at most (the game is then ``pending``), and the
  work of a client that left or of a server asked to stop is interrupted;
- memory is bounded: games, replays and request bodies hold their bytes in one account
  (:class:`Memory`, :data:`MEMORY_BYTES`), and a live session is never dropped for a new one.

Endpoints (JSON unless said otherwise)::

    GET    /                              the page (static/index.html)
    GET    /api/catalog                   games, player counts, rule options, agents
    GET    /api/play                      this session's games
    POST   /api/play                      start a game: {game, players, seat, opponents,
                                          options, seed} -> its state (201)
    GET    /api/play/{id}                 the game's state (and its log)
    POST   /api/play/{id}/move            {action}: the person's move, then the agents' up to
                                          the person's next turn -> the state and the moves
    POST   /api/play/{id}/advance         {}: the agents' moves left (the state was pending)
    POST   /api/play/{id}/stop            end the game now (its record is then available)
    GET    /api/play/{id}/record          the game record (JSON lines), once the game is over
    DELETE /api/play/{id}                 forget the game
    GET    /api/records                   the records under --records DIR
    POST   /api/replays                   {path} (under DIR) or {text, name}: check the record by
                                          replaying it -> its steps and result (201)
    GET    /api/replays/{id}              the same again
    GET    /api/replays/{id}/frame        ?step=i&view=referee|player_k: the table before
                                          decision i (i = steps: after the last)
    DELETE /api/replays/{id}              forget the replay
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import itertools
import json
import logging
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import urlsplit

import anyio
import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from rummy_agents.arena.play import make_env, probe_agent
from rummy_agents.arena.registry import (
    AGENTS,
    GAME_AGENTS,
    check_agent,
    make_agent,
    split_spec,
)
from rummy_agents.base import SeatView
from rummy_agents.cli import BASELINES, CLIError, make_config, parse_options, parse_value
from rummy_agents.move_words import describe_moves
from rummy_agents.table_seat import seat_at_tables
from rummy_agents.web.seat import seat_json
from rummy_env.game_records import MAX_SEED, GameRecord, GameRecorder, read_record, replay
from rummy_env.games import GAMES

log = logging.getLogger(__name__)

COOKIE = "rummy_session"
"""Name of the session cookie (HttpOnly, SameSite=Strict)."""

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
sessions together, accounted for by :class:`Memory`."""

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

TITLES = {"gin_rummy": "Gin Rummy", "five_hundred_rum": "500 Rum", "rummy51": "Rummy 51"}

HUMAN = "human"
"""The person's label in the game record."""

REFEREE = "referee"
"""The view name of the referee's view (every card face up) in a replay."""

STATIC = ("index.html", "app.js", "style.css")
MEDIA = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}

HEADERS = {
    # the page loads only its own files: no inline script, nothing from elsewhere
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class ApiError(Exception):
    """A request the app refuses: answered as ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = " ".join(message.split())


# ---------------------------------------------------------------------------------------------
# Agents' moves with a deadline: a move that runs too long, whose client left or whose server
# stops is interrupted


class _Interrupted(BaseException):
    """Raised inside a worker thread to stop an agent's move (a ``BaseException``, as
    ``KeyboardInterrupt``: an agent's ``except Exception`` does not swallow it).
    """


class AgentStopped(Exception):
    """An agent's move was interrupted: ``deadline`` true when it ran past its time, false when
    its request was cancelled (the client left, the server stops); ``reason`` says which.
    """

    def __init__(self, reason: str, deadline: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.deadline = deadline


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in the thread ``thread_id`` at its next Python instruction (``None``: forget
    one raised and not yet delivered). Compiled kernels run to their end first: the agents'
    cost limits keep each one short.
    """
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), None if exc is None else ctypes.py_object(exc)
    )


class Work:
    """One request's agent work: the moves it may play until ``deadline`` (monotonic time), and
    its cancellation (the client left, the server stops).
    """

    def __init__(self, seconds: float = REQUEST_SECONDS) -> None:
        self.deadline = time.monotonic() + seconds
        self.cancelled: str | None = None

    def cancel(self, reason: str) -> None:
        """Stop the work: the move being computed is interrupted at once."""
        if self.cancelled is None:
            self.cancelled = reason
        _WATCHDOG.wake()

    @property
    def out_of_time(self) -> bool:
        """The request has played agents' moves for as long as it may."""
        return time.monotonic() >= self.deadline


@dataclasses.dataclass
class _Call:
    thread: int
    deadline: float
    seconds: float
    work: Work
    reason: str | None = None
    fired: float = 0.0
    active: bool = True


class _Watchdog:
    """One daemon thread that interrupts the agent moves (:meth:`call`) past their deadline or
    whose :class:`Work` was cancelled.
    """

    REFIRE_SECONDS = 1.0
    """An interrupt is raised again this often while the move still runs (in case agent code
    caught it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # a C lock: an interrupt cannot land inside its __enter__
        self.event = threading.Event()
        self.calls: dict[int, _Call] = {}
        self.thread: threading.Thread | None = None

    def wake(self) -> None:
        self.event.set()

    def active(self) -> int:
        """Agent moves running now."""
        with self.lock:
            return len(self.calls)

    def call(self, fn: Callable[[], Any], seconds: float, work: Work) -> Any:
        """``fn()`` in this thread, interrupted when it runs ``seconds`` or ``work`` is
        cancelled.

        Raises:
            AgentStopped: when it was interrupted.
        """
        if work.cancelled is not None:
            raise AgentStopped(work.cancelled, False)
        c = _Call(threading.get_ident(), time.monotonic() + seconds, seconds, work)
        with self.lock:
            self.calls[c.thread] = c
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._run, name="rummy-env serve watchdog", daemon=True
                )
                self.thread.start()
        self.event.set()
        try:
            try:
                return fn()
            finally:
                self._leave(c)
        except _Interrupted:
            self._leave(c)
            raise AgentStopped(c.reason or "interrupted", c.reason == "deadline") from None

    def _leave(self, c: _Call) -> None:
        """Forget the call and any interrupt raised for it and not yet delivered (an interrupt
        landing here is caught and the forgetting done again).
        """
        while True:
            try:
                with self.lock:
                    if self.calls.get(c.thread) is c:
                        del self.calls[c.thread]
                    if c.active and c.fired:
                        _raise_in(c.thread, None)
                    c.active = False
                return
            except _Interrupted:
                continue

    def _run(self) -> None:
        while True:
            self.event.wait(0.05 if self.calls else 1.0)
            self.event.clear()
            now = time.monotonic()
            with self.lock:
                for c in self.calls.values():
                    reason = c.work.cancelled or ("deadline" if now >= c.deadline else None)
                    if reason is None or now - c.fired < self.REFIRE_SECONDS:
                        continue
                    c.reason = c.reason or reason
                    c.fired = now
                    _raise_in(c.thread, _Interrupted)


_WATCHDOG = _Watchdog()


@dataclasses.dataclass(frozen=True)
class Limits:
    """The app's time and memory limits (:func:`create_app`; tests pass small ones).

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


_WARM: set[tuple[str, str]] = set()
"""(game, agent class) whose first decision this process has played (kernels compiled)."""


def _agent_key(spec: str, game: str) -> tuple[str, str]:
    name, _ = split_spec(spec)
    try:
        return game, _lookup_target(name, game)
    except ValueError:
        return game, name


def _lookup_target(name: str, game: str) -> str:
    entry = GAME_AGENTS.get(game, {}).get(name) or AGENTS.get(name)
    if entry is None:
        raise ValueError(name)
    return entry.target


def decide(fn: Callable[[], Any], work: Work, key: tuple[str, str], move_seconds: float,
           first_seconds: float) -> Any:  # fmt: skip
    """An agent's decision ``fn()`` under its deadline: ``first_seconds`` for the first one of
    an agent class in a game in this process, else ``move_seconds``.

    Raises:
        AgentStopped: past the deadline, or when ``work`` is cancelled.
    """
    seconds = move_seconds if key in _WARM else max(move_seconds, first_seconds)
    out = _WATCHDOG.call(fn, seconds, work)
    _WARM.add(key)
    return out


# ---------------------------------------------------------------------------------------------
# What can be played


def _json_value(x: Any) -> Any:
    """A value as JSON can hold it (numpy scalars and arrays as Python ones)."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


_CATALOG: dict[str, Any] = {}
_CATALOG_LOCK = threading.Lock()


def catalog() -> dict[str, Any]:
    """Each game's title, player counts, rule options (name, default, type) and the agents of
    the registry that play it (checked once, then cached).
    """
    with _CATALOG_LOCK:
        if _CATALOG:
            return _CATALOG
        games = {}
        for game, (cfg_cls, _) in GAMES.items():
            players = []
            for n in range(2, 9):
                try:
                    cfg_cls.from_kwargs(num_players=n)
                    players.append(n)
                except (ValueError, TypeError):
                    pass
            options = [
                {"name": f.name, "default": _json_value(f.default), "type": str(f.type)}
                for f in dataclasses.fields(cfg_cls)
                if f.name != "num_players"
            ]
            agents = []
            for name, entry in [*AGENTS.items(), *GAME_AGENTS.get(game, {}).items()]:
                try:
                    check_agent(name, game)
                except Exception:  # noqa: BLE001 - an agent that cannot be built is not listed
                    continue
                agents.append({"name": name, "doc": entry.doc})
            games[game] = {
                "title": TITLES.get(game, game),
                "players": players,
                "options": options,
                "agents": agents,
                "default_opponent": BASELINES[game].split(",")[-1],
            }
        _CATALOG.update(games=games)
        return _CATALOG


def _read_options(game: str, raw: Any, players: Any) -> dict[str, Any]:
    """Rule options from a request: ``key=value`` text (lines, commas or spaces between) or an
    object, with ``players`` as ``num_players``; checked by the game's config.

    Raises:
        ApiError: 400 for options of the wrong type, 422 for options the game refuses.
    """
    if raw is None or raw == "":
        options: dict[str, Any] = {}
    elif isinstance(raw, str):
        try:
            options = parse_options([t for t in re.split(r"[\s,;]+", raw) if t])
        except CLIError as e:
            raise ApiError(422, str(e).replace("--option ", "option ")) from None
    elif isinstance(raw, dict):
        options = {}
        for key, value in raw.items():
            if isinstance(value, (dict, list)):
                raise ApiError(400, f"option {key!r} must be a number, true/false, null or text")
            options[str(key)] = parse_value(value) if isinstance(value, str) else value
    else:
        raise ApiError(400, "options must be key=value text or an object")
    if players is not None:
        if not isinstance(players, int) or isinstance(players, bool):
            raise ApiError(400, f"players must be an integer, got {players!r:.40}")
        if options.get("num_players", players) != players:
            raise ApiError(
                422, f"players {players} and option num_players={options['num_players']} disagree"
            )
        options["num_players"] = players
    try:
        make_config(game, options, what="option")
    except CLIError as e:
        raise ApiError(422, str(e)) from None
    steps = options.get("max_steps")
    if steps is None:
        options["max_steps"] = MAX_GAME_STEPS  # a game's memory is bounded
    elif steps > MAX_GAME_STEPS:
        raise ApiError(
            422,
            f"option max_steps must be at most {MAX_GAME_STEPS} in the browser app (a game's "
            f"memory is bounded), got {steps}",
        )
    return options


# ---------------------------------------------------------------------------------------------
# A game against agents


def _over(env: Any) -> bool:
    return all(env.terminations[a] or env.truncations[a] for a in env.possible_agents)


def _hands_played(env: Any) -> int:
    return max((int(i.get("hands_played", 0)) for i in env.infos.values()), default=0)


def _hand_infos(env: Any) -> dict[str, dict[str, Any]]:
    """Each seat's infos after a hand (the points and scores announced at its end)."""
    out = {}
    for agent in env.possible_agents:
        info = env.infos.get(agent, {})
        out[agent] = {
            k: _json_value(v)
            for k, v in info.items()
            if isinstance(v, (int, float, str, bool, np.generic))
        }
    return out


def _winners(env: Any, returns: Mapping[str, float]) -> list[str]:
    """Who won: the infos' winner of the game or match (Rummy 51: of the hand), else the best
    returns (nobody when every seat has them).
    """
    names = list(env.possible_agents)
    info = env.infos.get(names[0], {})
    for key in ("winner", "hand_winner"):
        if key in info:
            w = int(info[key])
            return [names[w]] if 0 <= w < len(names) else []
    best = max(returns.values())
    top = [a for a, r in returns.items() if r == best]
    return [] if len(top) == len(names) else top


class PlayGame:
    """A game between the person (one seat) and agents (the others), played a move at a time.

    Args:
        gid: the game's id.
        game: game name.
        options: rule options (checked).
        seat: the person's seat.
        opponents: agent spec of each other seat, by agent name.
        seed: the reset seed (the agents' seeds follow from it).
        limits: the agents' deadlines.
        memory: the account the game's memory is held in (a key of it: ``mem_key``).
        mem_key: the key to hold it under (a new one if None).

    Raises:
        MemoryFull: when the account has no room for a new game.
    """

    def __init__(
        self,
        gid: str,
        game: str,
        options: dict[str, Any],
        seat: int,
        opponents: dict[str, str],
        seed: int,
        limits: Limits | None = None,
        memory: Memory | None = None,
        mem_key: int | None = None,
    ) -> None:
        self.limits = limits if limits is not None else Limits()
        self.memory = memory if memory is not None else Memory()
        self.mem_key = mem_key if mem_key is not None else self.memory.key()
        self.reserved = 0
        self._grow(0)  # the env and the agents, before they are built
        self.id = gid
        self.game = game
        self.options = options
        self.seed = seed
        self.env = make_env(game, options)
        self.names = list(self.env.possible_agents)
        self.me = self.names[seat]
        self.seat = seat
        self.labels = {a: opponents.get(a, HUMAN) for a in self.names}
        seeds = np.random.SeedSequence(seed).generate_state(len(self.names))
        self.agents = {
            a: make_agent(spec, int(seeds[self.names.index(a)]), game)
            for a, spec in opponents.items()
        }
        self.views = {a: SeatView(self.env, a) for a in opponents}
        if self.views and next(iter(self.views.values())).plays_tables:
            # 3-, 4-player Gin Rummy: each agent plays the 2-player hand its seat sits in
            self.agents = {a: seat_at_tables(x) for a, x in self.agents.items()}
        self.four_tables = game == "gin_rummy" and len(self.names) == 4
        self.recorder = GameRecorder(self.env, self.labels)
        self.recorder.start(seed)
        self.env.reset(seed=seed)
        self.recorder.dealt()
        self.returns = dict.fromkeys(self.names, 0.0)
        self.steps = 0
        self.hands: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self.stopped = False
        self.error: str | None = None
        self.record: GameRecord | None = None
        self.lock = threading.Lock()

    def _grow(self, steps: int) -> None:
        """Hold the memory of a game of ``steps`` decisions (reserved a chunk ahead).

        Raises:
            MemoryFull: when the app's memory budget has no room for it.
        """
        need = GAME_BASE_BYTES + GAME_STEP_BYTES * steps
        if need > self.reserved:
            more = GAME_BASE_BYTES + GAME_STEP_BYTES * (steps + GAME_STEP_CHUNK)
            self.memory.set(self.mem_key, more, "a game")
            self.reserved = more

    # -- state ---------------------------------------------------------------------------------
    @property
    def pending(self) -> bool:
        """The agents are still to move before the person's turn (a request ran out of time):
        ``POST /api/play/{id}/advance`` plays on.
        """
        return not self.over and self.env.agent_selection != self.me

    @property
    def over(self) -> bool:
        """The game has ended (played out, truncated, stopped or failed)."""
        return self.record is not None

    def picture(self) -> tuple[str, str]:
        """(view, SVG) of the table: the person's seat while the game runs, every card once it
        is over.
        """
        view = None if self.over else self.me
        return view or REFEREE, self.env.render_picture(view, fmt="svg")

    def legal(self) -> list[dict[str, Any]]:
        """The person's legal moves now (id and name), in action id order."""
        if self.over or self.env.agent_selection != self.me:
            return []
        mask = self.env.observe(self.me)["action_mask"]
        return [{"id": int(a), "name": self.env.action_name(int(a))} for a in np.flatnonzero(mask)]

    def result(self) -> dict[str, Any] | None:
        """The final result (None while the game runs)."""
        if self.record is None:
            return None
        res = self.record.result or {}
        winners = _winners(self.env, self.returns) if not (self.stopped or self.error) else []
        if self.stopped or self.error:
            verdict = "stopped"
        elif not winners:
            verdict = "draw"
        else:
            verdict = "win" if self.me in winners else "loss"
        return {
            "returns": {a: round(r, 6) for a, r in self.returns.items()},
            "outcome": res.get("outcome"),
            "hands_played": res.get("hands_played"),
            "terminated": res.get("terminated"),
            "truncated": res.get("truncated"),
            "stopped": self.stopped,
            "winners": winners,
            "verdict": verdict,
            "infos": _hand_infos(self.env),
        }

    def state(self, events: list[dict[str, Any]] | None = None, log: bool = False) -> dict:
        """What the page shows: the seat, whose turn, the legal moves, the table (picture and
        its data), the hands' results, the result; ``events``: the moves just played.
        """
        view, svg = self.picture()
        table = self.env.table_view(None if view == REFEREE else view)
        my_turn = not self.over and self.env.agent_selection == self.me
        seat = seat_json(self.env, self.me, my_turn)
        words = {m["action"]: m["text"] for m in seat["moves"]}
        legal = [{**m, "text": words.get(m["id"], m["name"])} for m in self.legal()]
        out: dict[str, Any] = {
            "id": self.id,
            "game": self.game,
            "title": TITLES.get(self.game, self.game),
            "players": len(self.names),
            "seat": self.seat,
            "me": self.me,
            "labels": self.labels,
            "options": {k: _json_value(v) for k, v in self.options.items()},
            "to_act": None if self.over else self.env.agent_selection,
            "my_turn": my_turn,
            "pending": self.pending,
            "legal": legal,
            "seat_table": seat,
            "view": view,
            "svg": svg,
            "table": dataclasses.asdict(table),
            "steps": self.steps,
            "hands": self.hands,
            "over": self.over,
            "result": self.result(),
            "error": self.error,
            "seed": self.seed if self.over else None,  # the seed deals every hidden card again
            "record_ready": self.over,
        }
        if events is not None:
            out["events"] = events
        if log:
            out["log"] = self.log
        return out

    # -- play ----------------------------------------------------------------------------------
    def _name(self, agent: str, action: int, board_of: Any) -> str:
        """The move as the person sees it."""
        if agent == self.me:
            return self.env.action_name(action)
        name = self.env.public_action_name(action)
        if self.four_tables and int(board_of[self.names.index(agent)]) != int(board_of[self.seat]):
            # nothing of the other table's cards is the person's to see
            return name.split("[")[0] + " (at the other table)"
        return name

    def _apply(self, agent: str, action: int) -> dict[str, Any]:
        """Play a legal move, record it, and note the end of a hand or of the game (its memory
        held first: :meth:`_grow` may raise :class:`MemoryFull`).
        """
        self._grow(self.steps + 1)
        env = self.env
        board_of = env.state_record["board_of"].copy() if self.four_tables else None
        hands = _hands_played(env)
        name = self._name(agent, action, board_of)
        # the person's own move in words (read before it is played; another seat's would name
        # cards of its hidden hand, so theirs keep the table's public name)
        text = describe_moves(env, agent, [action])[0].text if agent == self.me else name
        self.recorder.add(agent, action)
        env.step(action)
        self.steps += 1
        for a in self.names:
            self.returns[a] += float(env.rewards.get(a, 0.0))
        self.recorder.rewards(env.rewards)
        event: dict[str, Any] = {
            "step": self.steps - 1,
            "agent": agent,
            "label": self.labels[agent],
            "you": agent == self.me,
            "name": name,
            "text": text,
        }
        if _hands_played(env) > hands:
            hand = {
                "number": len(self.hands) + 1,
                "after_step": self.steps - 1,
                "rewards": {a: float(env.rewards.get(a, 0.0)) for a in self.names},
                "infos": _hand_infos(env),
            }
            self.hands.append(hand)
            event["hand"] = hand
        if _over(env):
            self._finish()
        self.log.append(event)
        return event

    def _shown(self, event: dict[str, Any]) -> dict[str, Any]:
        """A move as sent to the page: with the person's view of the table after it."""
        return {**event, "svg": self.env.render_picture(self.me, fmt="svg")}

    def _finish(self, stopped: bool = False) -> None:
        self.stopped = stopped
        self.record = self.recorder.finish(stopped=stopped)

    def advance(self, work: Work | None = None) -> list[dict[str, Any]]:
        """The agents' moves up to the person's turn or the end of the game, each under its
        deadline (:class:`Limits`), for as long as ``work`` may run (then the game is left
        :attr:`pending`).

        An agent that fails, chooses an illegal move or runs past its deadline ends the game
        (stopped, with ``error``); when ``work`` is cancelled the agent's move is dropped and
        the game stays as it was (pending).

        Raises:
            ApiError: 503 when ``work`` was cancelled (the client left, the server stops).
        """
        work = work if work is not None else Work(self.limits.request_seconds)
        events: list[dict[str, Any]] = []
        env = self.env
        while not self.over and env.agent_selection != self.me:
            if events and work.out_of_time:
                break  # answer now; the page asks for the rest
            agent = env.agent_selection
            obs = env.observe(agent)
            label = f"agent {self.labels[agent]!r} ({agent})"
            try:
                a = int(
                    decide(
                        functools.partial(self.agents[agent].act, obs, self.views[agent]),
                        work,
                        _agent_key(self.labels[agent], self.game),
                        self.limits.move_seconds,
                        self.limits.first_move_seconds,
                    )
                )
            except AgentStopped as e:
                if not e.deadline:
                    raise ApiError(503, f"the agents' moves were stopped: {e.reason}") from None
                self.error = (
                    f"{label} took longer than {self.limits.move_seconds:g} s for a move: the "
                    "game is stopped"
                )
                self._finish(stopped=True)
                break
            except Exception as e:  # noqa: BLE001 - an agent's failure ends the game, not the app
                self.error = f"{label} failed: {' '.join(str(e).split())[:300]}"
                self._finish(stopped=True)
                break
            if not (0 <= a < obs["action_mask"].shape[0]) or obs["action_mask"][a] != 1:
                self.error = f"{label} chose an illegal move ({a})"
                self._finish(stopped=True)
                break
            try:
                events.append(self._shown(self._apply(agent, a)))
            except MemoryFull as e:
                self.error = f"the game is stopped: {e.message}"
                self._finish(stopped=True)
                break
        return _keep_pictures(events)

    def move(self, action: Any, work: Work | None = None) -> list[dict[str, Any]]:
        """The person's move, then the agents' (:meth:`advance`; the moves played, in order).

        Raises:
            ApiError: 400 for an action that is not an integer, 409 after the end or while the
                agents are to move, 422 for an action out of range or not legal now, 429 when
                the app's memory is full.
        """
        if not isinstance(action, int) or isinstance(action, bool):
            raise ApiError(400, f"action must be an integer action id, got {action!r:.40}")
        if self.over:
            raise ApiError(409, "the game is over: no more moves")
        env = self.env
        if env.agent_selection != self.me:  # a request ran out of time: the agents play on
            raise ApiError(
                409,
                f"it is {env.agent_selection}'s turn, not yours: POST /api/play/{self.id}/advance "
                "plays the agents' moves",
            )
        n = env.action_space(self.me).n
        if not 0 <= action < n:
            raise ApiError(422, f"action {action} is out of range: actions are 0..{n - 1}")
        if env.observe(self.me)["action_mask"][action] != 1:
            why = env.unwrapped.game.explain_illegal(0, action)
            raise ApiError(422, f"illegal move {action}: {why}")
        events = [self._shown(self._apply(self.me, action))]
        return _keep_pictures(events + self.advance(work))

    def stop(self) -> None:
        """End the game now (its record is marked stopped)."""
        if not self.over:
            self._finish(stopped=True)

    def record_text(self) -> str:
        """The game record as JSON lines.

        Raises:
            ApiError: 409 while the game runs (the record holds the seed).
        """
        if self.record is None:
            raise ApiError(
                409,
                "the record is available once the game is over (it holds the seed, which deals "
                "every hidden card): finish or stop the game first",
            )
        return "\n".join(self.record.lines()) + "\n"

    def summary(self) -> dict[str, Any]:
        """The game in the session's list."""
        return {
            "id": self.id,
            "game": self.game,
            "title": TITLES.get(self.game, self.game),
            "players": len(self.names),
            "me": self.me,
            "steps": self.steps,
            "over": self.over,
        }


def _keep_pictures(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The moves with the pictures of the last :data:`EVENT_PICTURES` only (a 3-player Gin hand
    the person sits out is many moves: the answer stays small).
    """
    cut = len(events) - EVENT_PICTURES
    return [
        e if i >= cut else {k: v for k, v in e.items() if k != "svg"} for i, e in enumerate(events)
    ]


def check_opponent(spec: str, game: str) -> None:
    """Check an opponent's spec: an agent of the registry that plays ``game``, with any of its
    parameters but a file to read (``checkpoint``). The command line also takes
    ``package.module:Class`` and checkpoints; a request to a server may not make it import a
    module or open a file of its choosing.

    Raises:
        ApiError: 422 naming what is wrong and the agents of the game.
    """
    agents = ", ".join(a["name"] for a in catalog()["games"][game]["agents"])
    try:
        name, params = split_spec(spec)
    except (ValueError, TypeError) as e:
        raise ApiError(422, f"opponent {spec!r:.80}: {e}") from None
    if ":" in name:
        raise ApiError(
            422,
            f"opponent {spec!r:.80}: the browser app plays the registry's agents ({agents}); "
            "an agent class by its module plays in rummy-env play and the arena",
        )
    if "checkpoint" in params:
        raise ApiError(
            422,
            f"opponent {spec!r:.80}: the browser app reads no file a request names; play "
            "the published agent (ppo) here, your own checkpoint with rummy-env play",
        )
    try:
        entry = check_agent(spec, game)  # builds the agent: no decision, nothing costly yet
    except (ValueError, TypeError) as e:
        raise ApiError(422, f"opponent {spec!r:.80}: {e}") from None
    check_cost(spec, entry.kwargs, game)


def check_cost(spec: str, kwargs: Mapping[str, Any], game: str) -> None:
    """Refuse an opponent whose parameters (``kwargs``: as the agent gets them, read by the
    registry's :func:`~rummy_agents.arena.registry.check_agent`) make a decision cost more than
    the browser app allows (:data:`COST_LIMITS`), or that would build another agent than one of
    the game's registry names (``anchor``).

    Raises:
        ApiError: 422 naming the parameter, the value and the range allowed.
    """
    for key, value in kwargs.items():
        if key == "anchor":
            names = [a["name"] for a in catalog()["games"][game]["agents"]]
            if not isinstance(value, bool) and value not in names:
                raise ApiError(
                    422,
                    f"opponent {spec!r:.80}: anchor must be true, false or an agent of {game} "
                    f"({', '.join(names)}), got {value!r:.40}",
                )
            continue
        if key not in COST_LIMITS:
            continue
        lo, hi, none_ok = COST_LIMITS[key]
        allowed = f"{lo:g}..{hi:g}" + (" or none" if none_ok else "")
        if value is None and not none_ok:
            raise ApiError(
                422, f"opponent {spec!r:.80}: {key} must be {allowed} in the browser app"
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue  # text ('auto') or none: the agent's own checks read it
        if not lo <= value <= hi:  # also refuses NaN
            raise ApiError(
                422,
                f"opponent {spec!r:.80}: {key} must be {allowed} in the browser app (at most "
                f"{hi:g}: every move must answer in time), got {value!r:.40}; rummy-env play "
                "and the arena take any",
            )


def new_game(
    gid: str,
    body: Mapping[str, Any],
    work: Work | None = None,
    limits: Limits | None = None,
    memory: Memory | None = None,
) -> tuple[PlayGame, list[dict[str, Any]]]:
    """Check a request to start a game and start it: the game and the agents' moves before the
    person's first turn (:meth:`PlayGame.advance`, under ``work``).

    Raises:
        ApiError: 400 for fields of the wrong type, 422 for an unknown game, agent or option, a
            seat that is not one, a wrong number of opponents, an agent parameter over the
            browser app's limits (:data:`COST_LIMITS`) or an agent whose first decision fails or
            runs past its deadline; 429 when the app's memory is full; 503 when ``work`` is
            cancelled.
    """
    limits = limits if limits is not None else Limits()
    work = work if work is not None else Work(limits.request_seconds)
    game = body.get("game", "gin_rummy")
    if not isinstance(game, str) or game not in GAMES:
        raise ApiError(422, f"unknown game {game!r:.40}; available: {', '.join(GAMES)}")
    options = _read_options(game, body.get("options"), body.get("players"))
    players = make_config(game, options).num_players
    seat = body.get("seat", 0)
    if not isinstance(seat, int) or isinstance(seat, bool):
        raise ApiError(400, f"seat must be an integer, got {seat!r:.40}")
    if not 0 <= seat < players:
        raise ApiError(422, f"seat must be 0..{players - 1} ({players} players), got {seat}")
    seed = body.get("seed")
    if seed is None:
        seed = secrets.randbelow(MAX_SEED)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ApiError(400, f"seed must be an integer or null, got {seed!r:.40}")
    if not 0 <= seed <= MAX_SEED:
        raise ApiError(422, f"seed must be 0..{MAX_SEED}, got {seed}")
    others = [f"player_{s}" for s in range(players) if s != seat]
    specs = body.get("opponents", BASELINES[game].split(",")[-1])
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
        raise ApiError(400, "opponents must be an agent spec or a list of them")
    specs = [s.strip() for s in specs]
    if len(specs) == 1:
        specs *= len(others)
    if len(specs) != len(others):
        raise ApiError(
            422,
            f"give one opponent for every other seat, or one per other seat ({len(others)}: "
            f"{', '.join(others)}), got {len(specs)}",
        )
    for spec in dict.fromkeys(specs):
        check_opponent(spec, game)
    for spec in dict.fromkeys(specs):
        # one decision on a fresh deal, under the agents' deadline: refused before the game
        key = _agent_key(spec, game)
        try:
            decide(
                functools.partial(probe_agent, game, options, spec),
                work,
                key,
                limits.move_seconds,
                limits.first_move_seconds,
            )
        except AgentStopped as e:
            if not e.deadline:
                raise ApiError(503, f"the game was not started: {e.reason}") from None
            seconds = limits.move_seconds if key in _WARM else limits.first_move_seconds
            raise ApiError(
                422,
                f"opponent {spec!r:.80} took longer than {seconds:g} s for one move: give it "
                "a smaller budget (iterations, worlds, time_limit)",
            ) from None
        except Exception as e:  # noqa: BLE001 - whatever stops it, it cannot play this table
            why = " ".join(str(e).split())[:300]
            raise ApiError(
                422, f"opponent {spec!r:.80} cannot play {game} with these rules: {why}"
            ) from None
    memory = memory if memory is not None else Memory()
    mem_key = memory.key()
    try:
        g = PlayGame(
            gid, game, options, seat, dict(zip(others, specs, strict=True)), seed,
            limits, memory, mem_key,
        )  # fmt: skip
        return g, g.advance(work)
    except BaseException:
        memory.free(mem_key)
        raise


# ---------------------------------------------------------------------------------------------
# Replays


class ReplayView:
    """A checked record, stepped through with one env: forwards a step at a time, backwards by
    dealing again and replaying up to the step (every step is cheap).

    Args:
        rid: the replay's id.
        record: the record.
        source: where it came from (a path under the records folder, or an upload's name).

    Raises:
        ApiError: 422 for a record that does not replay (:func:`rummy_env.game_records.replay`).
    """

    def __init__(self, rid: str, record: GameRecord, source: str, mem_key: int = 0) -> None:
        self.mem_key = mem_key
        self.id = rid
        self.record = record
        self.source = source
        self.steps: list[dict[str, Any]] = []
        self.hands: list[dict[str, Any]] = []
        seen = [0]

        def note(env: Any, i: int, agent: str, action: int) -> None:
            played = _hands_played(env)
            if played > seen[0]:
                seen[0] = played
                self.hands.append(
                    {"number": len(self.hands) + 1, "frame": i, "infos": _hand_infos(env)}
                )
            if agent:
                self.steps.append(
                    {
                        "step": i,
                        "agent": agent,
                        "label": record.labels.get(agent, ""),
                        "name": env.action_name(action),
                        "public": env.public_action_name(action),
                    }
                )

        try:
            res = replay(record, on_step=note)
        except (ValueError, TypeError) as e:  # the record's own checks name the field
            raise ApiError(422, f"{source}: {_one_line(e)}") from None
        self.result = {
            "returns": res.returns,
            "outcome": res.outcome,
            "finished": res.finished,
            "matches": res.matches,
            "recorded": record.result,
        }
        self.env = make_env(record.game, record.options)
        self.views = [REFEREE, *self.env.possible_agents]
        self.pos = -1  # not dealt yet
        self.lock = threading.Lock()

    def meta(self) -> dict[str, Any]:
        """The record's game, seats, steps and result, for the page."""
        rec = self.record
        return {
            "id": self.id,
            "source": self.source,
            "game": rec.game,
            "title": TITLES.get(rec.game, rec.game),
            "options": rec.options,
            "seed": rec.seed,
            "agents": rec.agents,
            "labels": rec.labels,
            "views": self.views,
            "steps": self.steps,
            "frames": len(self.steps) + 1,
            "hands": self.hands,
            "result": self.result,
        }

    def _goto(self, step: int) -> None:
        env = self.env
        if step < self.pos or self.pos < 0:
            opts = None
            if self.record.reset_options is not None:
                opts = dict(self.record.reset_options)
                if "deck" in opts:
                    opts["deck"] = np.asarray(opts["deck"], dtype=np.int64)
            env.reset(seed=self.record.seed, options=opts)
            self.pos = 0
        while self.pos < step:
            env.step(self.record.steps[self.pos][1])
            self.pos += 1

    def frame(self, step: Any, view: Any) -> dict[str, Any]:
        """The table before decision ``step`` (after the last one for ``step`` = the number of
        steps) in ``view``, with that decision and, at the end, the result.

        Raises:
            ApiError: 400 for a step or view that is not one of the record's.
        """
        n = len(self.steps)
        try:
            i = int(step)
        except (TypeError, ValueError):
            raise ApiError(400, f"step must be an integer 0..{n}, got {step!r:.40}") from None
        if not 0 <= i <= n:
            raise ApiError(400, f"step must be 0..{n} (the record has {n} steps), got {i}")
        if view not in self.views:
            raise ApiError(400, f"unknown view {view!r:.40}; views: {', '.join(self.views)}")
        seat = None if view == REFEREE else view
        self._goto(i)
        table = self.env.table_view(seat)
        nxt = None
        if i < n:
            s = self.steps[i]
            shown = s["name"] if seat in (None, s["agent"]) else s["public"]
            nxt = {"agent": s["agent"], "label": s["label"], "name": shown}
        hand = next((h for h in self.hands if h["frame"] == i), None)
        return {
            "step": i,
            "frames": n + 1,
            "view": view,
            "svg": self.env.render_picture(seat, fmt="svg"),
            "table": dataclasses.asdict(table),
            "next": nxt,
            "last": table.last_action,
            "hand": hand,
            "result": self.result if i == n else None,
        }


def confined(root: Path, rel: Any) -> Path:
    """The file ``rel`` names under ``root``, refusing anything that could leave it.

    Raises:
        ApiError: 400 for a path that is not relative, climbs (``..``), or resolves (through a
            link) outside ``root``, or is not a ``.jsonl`` file; 404 for no such file.
    """
    if not isinstance(rel, str) or not rel.strip() or "\x00" in rel:
        raise ApiError(400, "path must be a record's path under the records folder")
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or rel[:1] in "\\/":
        raise ApiError(400, f"path {rel!r:.80} must be relative to the records folder")
    parts = re.split(r"[\\/]", rel)
    if ".." in parts:
        raise ApiError(400, f"path {rel!r:.80} may not contain '..'")
    if not rel.endswith(".jsonl"):
        raise ApiError(400, f"path {rel!r:.80} is not a record (.jsonl)")
    base = root.resolve()
    path = (base / rel).resolve()
    if not path.is_relative_to(base):
        raise ApiError(400, f"path {rel!r:.80} leads outside the records folder")
    if not path.is_file():
        raise ApiError(404, f"no record {rel!r:.80} in the records folder")
    return path


def list_records(root: Path) -> tuple[list[str], bool]:
    """The ``.jsonl`` files under ``root`` (relative POSIX paths, sorted, links that leave it
    left out) and whether the list was cut at :data:`MAX_LISTED_RECORDS`.
    """
    base = root.resolve()
    found = []
    for p in sorted(base.rglob("*.jsonl")):
        try:
            if not p.is_file() or not p.resolve().is_relative_to(base):
                continue
        except OSError:
            continue
        found.append(p.relative_to(base).as_posix())
        if len(found) > MAX_LISTED_RECORDS:
            return found[:MAX_LISTED_RECORDS], True
    return found, False


def parse_record(text: str, source: str) -> GameRecord:
    """A record from its text.

    Raises:
        ApiError: 413 for a record over :data:`MAX_RECORD_BYTES`, 422 for a malformed one (the
            message names the line).
    """
    if len(text.encode("utf-8", "surrogatepass")) > MAX_RECORD_BYTES:
        raise ApiError(413, f"{source}: the record is over {MAX_RECORD_BYTES} bytes")
    try:
        # JSON Lines ends a line at "\n" only (str.splitlines() also breaks at U+2028, which a
        # JSON string may hold)
        return read_record(text.split("\n"))
    except (ValueError, TypeError) as e:  # the record's checks name the line and the field
        msg = _one_line(e)
        if msg.startswith("record: "):
            msg = msg[len("record: ") :]
        raise ApiError(422, f"{source}: {msg}") from None


def _one_line(e: BaseException, limit: int = 500) -> str:
    """An exception's text on one line, cut at ``limit`` characters."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# Memory and sessions

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


# ---------------------------------------------------------------------------------------------
# The app

Handler = Callable[[Request, Session, Any], Any]

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
"""Methods that change nothing; every other one must come from the app's own page (or a client
that sends no ``Origin``) as ``Content-Type: application/json``."""

LOCK_SECONDS = 5.0
"""A request waits this long for a game another request of the session is playing (409)."""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=HEADERS)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _depth(value: Any, limit: int) -> int:
    """The nesting depth of a JSON value (arrays and objects), counted up to ``limit + 1``
    (without recursion: a deep value cannot overflow the stack here).
    """
    deepest = 0
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def parse_body(raw: bytes) -> Any:
    """A request body's JSON value (None for an empty body): strict JSON (no ``NaN`` or
    ``Infinity``), nested at most :data:`MAX_JSON_DEPTH` deep.

    Raises:
        ApiError: 400 naming the problem.
    """
    if not raw.strip():
        return None
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise ApiError(
            400, f"the request body is nested too deeply (at most {MAX_JSON_DEPTH} levels)"
        ) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError(400, f"the request body is not JSON: {_one_line(e, 200)}") from None
    if _depth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise ApiError(
            400, f"the request body is nested too deeply (at most {MAX_JSON_DEPTH} levels)"
        )
    return value


async def _body(request: Request, memory: Memory, key: int) -> Any:
    """The request's JSON body (None for none), its memory held under ``key`` while it is read.

    Raises:
        ApiError: 413 for a body over :data:`MAX_BODY_BYTES`, 400 for one that is not JSON or is
            nested too deeply, 429 when the app's memory has no room for it.
    """
    size = request.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > MAX_BODY_BYTES:
        raise ApiError(413, f"the request is over {MAX_BODY_BYTES} bytes")
    chunks = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > MAX_BODY_BYTES:
            raise ApiError(413, f"the request is over {MAX_BODY_BYTES} bytes")
        if chunk:
            memory.set(key, BODY_BYTES_PER_BYTE * total, "the request body")
        chunks.append(chunk)
    return parse_body(b"".join(chunks))


def _object(body: Any) -> dict[str, Any]:
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


def _host(value: str) -> str:
    """The host of a ``Host`` header, without its port and brackets."""
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _netloc(scheme: str, netloc: str) -> str:
    """``host:port`` lowercased, the scheme's default port left out."""
    netloc = netloc.lower()
    default = {"http": ":80", "https": ":443"}.get(scheme.lower(), "")
    return netloc[: -len(default)] if default and netloc.endswith(default) else netloc


def foreign_origin(headers: Mapping[str, str], scheme: str = "http") -> str | None:
    """Why a state-changing request is refused as sent by another site's page (None: it is
    not): ``Sec-Fetch-Site`` other than ``same-origin`` or ``none``, or an ``Origin`` other
    than the server's own (its scheme, host and port; ``null`` included). A client that sends
    neither (curl, scripts) is not a page of another site.
    """
    site = headers.get("sec-fetch-site")
    if site is not None and site.strip().lower() not in ("same-origin", "none"):
        return f"Sec-Fetch-Site: {site.strip()[:40]}"
    origin = headers.get("origin")
    if origin is None:
        return None
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        parts = None
    own = _netloc(scheme, headers.get("host", ""))
    if (
        parts is None
        or parts.scheme.lower() not in ("http", "https")
        or not parts.netloc
        or parts.scheme.lower() != scheme.lower()
        or parts.path not in ("", "/")
        or _netloc(parts.scheme, parts.netloc) != own
    ):
        return f"Origin: {origin.strip()[:80]}"
    return None


def is_json(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` is ``application/json`` (parameters such as charset aside)."""
    return (content_type or "").split(";", 1)[0].strip().lower() == "application/json"


@contextmanager
def _locked(g: Any) -> Iterator[None]:
    """Hold a game's (or replay's) lock, waiting :data:`LOCK_SECONDS` at most.

    Raises:
        ApiError: 409 when another request holds it all that time.
    """
    if not g.lock.acquire(timeout=LOCK_SECONDS):
        raise ApiError(409, "another request of this session is playing this game: try again")
    try:
        yield
    finally:
        g.lock.release()


async def _in_thread(request: Request, fn: Callable[[], Any], work: Work) -> Any:
    """``fn()`` in a worker thread (agents and envs are synchronous), its ``work`` cancelled
    when the client leaves before the answer.
    """
    outcome: dict[str, Any] = {}

    async def watch() -> None:
        while True:
            message = await request.receive()
            if message["type"] == "http.disconnect":
                work.cancel("the client left")
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        try:
            outcome["value"] = await run_in_threadpool(fn)
        except Exception as e:  # noqa: BLE001 - raised again below, outside the task group
            outcome["error"] = e
        tg.cancel_scope.cancel()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def create_app(
    records_dir: str | Path | None = None,
    allowed_hosts: Sequence[str] | None = None,
    limits: Limits | None = None,
) -> Starlette:
    """The browser app.

    Args:
        records_dir: a folder of game records to list and replay (nothing outside it is read);
            None: records are uploaded only.
        allowed_hosts: the host names requests may be addressed to (``rummy-env serve`` on a
            loopback address passes the loopback names, so a page of another site that points
            its name at 127.0.0.1 is refused); None: any.
        limits: the agents' deadlines and the memory and session limits (defaults:
            :class:`Limits`).

    Returns:
        A Starlette app (ASGI): serve it with uvicorn, or test it with Starlette's TestClient.
        ``app.state.shutdown()`` interrupts every agent's move and refuses new work (call it
        when the server is asked to stop); ``app.state.sessions`` and ``app.state.memory`` are
        its sessions and memory account.
    """
    root = None if records_dir is None else Path(records_dir)
    hosts = None if allowed_hosts is None else {_host(h).lower() for h in allowed_hosts}
    limits = limits if limits is not None else Limits()
    memory = Memory(limits.memory_bytes)
    sessions = Sessions(limits.sessions, memory, limits.session_idle_seconds)
    running: set[Work] = set()
    stopping: list[str] = []

    def shutdown(reason: str = "the server is stopping") -> None:
        """Interrupt every agent's move now and refuse new requests that change anything."""
        if not stopping:
            stopping.append(reason)
        for w in list(running):
            w.cancel(reason)

    def endpoint(handler: Handler, body: bool = False) -> Callable[[Request], Awaitable[Response]]:
        """An endpoint: host and origin checks, session cookie, JSON body, the handler in a
        worker thread (cancelled when the client leaves), errors as JSON, the security headers.
        """

        async def run(request: Request) -> Response:
            if hosts is not None and _host(request.headers.get("host", "")).lower() not in hosts:
                return _error(400, "this server answers only to its own address (Host header)")
            if request.method not in SAFE_METHODS:
                why = foreign_origin(request.headers, request.url.scheme)
                if why is not None:
                    return _error(
                        403,
                        f"refused: a request that changes something must come from this "
                        f"server's own page, not another site's ({why})",
                    )
                if not is_json(request.headers.get("content-type")):
                    got = request.headers.get("content-type", "none")[:60]
                    return _error(
                        415,
                        f"a request that changes something must be sent as Content-Type: "
                        f"application/json (got {got})",
                    )
                if stopping:
                    return _error(503, stopping[0])
            session, new = sessions.get(request.cookies.get(COOKIE))
            session.busy += 1
            work = Work(limits.request_seconds)
            if stopping:
                work.cancel(stopping[0])
            running.add(work)
            request.state.work = work
            body_key = memory.key()
            try:
                data = await _body(request, memory, body_key) if body else None
                out = await _in_thread(request, lambda: handler(request, session, data), work)
            except ApiError as e:
                response: Response = _error(e.status, e.message)
            except Exception:  # a bug: logged here, never a traceback to the page
                log.exception("rummy-env serve: %s %s failed", request.method, request.url.path)
                response = _error(500, "internal error (see the server's log)")
            else:
                if isinstance(out, Response):
                    response = out
                else:
                    payload, status = out if isinstance(out, tuple) else (out, 200)
                    response = JSONResponse(payload, status_code=status)
                response.headers.update(HEADERS)
            finally:
                memory.free(body_key)
                running.discard(work)
                session.busy -= 1
                session.last_used = time.monotonic()
            if new and session.stored:
                response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict", path="/")
            return response

        return run

    # -- static files --------------------------------------------------------------------------
    def static(request: Request, session: Session, _: Any) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in STATIC:
            raise ApiError(404, f"no file {name!r:.40}")
        text = (
            resources.files("rummy_agents.web").joinpath("static").joinpath(name).read_text("utf-8")
        )
        media = MEDIA[Path(name).suffix] + "; charset=utf-8"
        return Response(text, media_type=media)

    # -- play ----------------------------------------------------------------------------------
    def get_catalog(request: Request, session: Session, _: Any) -> dict:
        limits_out = {
            "games": MAX_GAMES,
            "replays": MAX_REPLAYS,
            "record_bytes": MAX_RECORD_BYTES,
            "memory_bytes": memory.budget,
            "agent_parameters": {k: [lo, hi] for k, (lo, hi, _) in COST_LIMITS.items()},
        }
        return {**catalog(), "records": root is not None, "limits": limits_out}

    def list_games(request: Request, session: Session, _: Any) -> dict:
        with session.lock:
            return {"games": [g.summary() for g in session.games.values()]}

    def start(request: Request, session: Session, body: Any) -> tuple[dict, int]:
        body = _object(body)
        session.check_room()
        sessions.expire()
        sessions.keep(session)
        session.make_room(GAME_BASE_BYTES + GAME_STEP_BYTES * GAME_STEP_CHUNK)
        g, events = new_game(secrets.token_urlsafe(12), body, request.state.work, limits, memory)
        try:
            session.add_game(g)
        except BaseException:
            memory.free(g.mem_key)
            raise
        with _locked(g):
            return g.state(events=events), 201

    def get_game(request: Request, session: Session, _: Any) -> dict:
        g = session.game(request.path_params["gid"])
        with _locked(g):
            return g.state(log=True)

    def move(request: Request, session: Session, body: Any) -> dict:
        g = session.game(request.path_params["gid"])
        body = _object(body)
        if "action" not in body:
            raise ApiError(400, 'give the move as {"action": id}')
        with _locked(g):
            events = g.move(body["action"], request.state.work)
            return g.state(events=events)

    def advance(request: Request, session: Session, body: Any) -> dict:
        g = session.game(request.path_params["gid"])
        _object(body)
        with _locked(g):
            if g.over:
                raise ApiError(409, "the game is over: no more moves")
            return g.state(events=g.advance(request.state.work))

    def stop(request: Request, session: Session, _: Any) -> dict:
        g = session.game(request.path_params["gid"])
        with _locked(g):
            g.stop()
            return g.state()

    def delete_game(request: Request, session: Session, _: Any) -> dict:
        gid = request.path_params["gid"]
        g = session.game(gid)
        with _locked(g):  # not while a request plays it (its memory is given back here)
            session.drop_game(gid)
        return {"deleted": gid}

    def record(request: Request, session: Session, _: Any) -> Response:
        g = session.game(request.path_params["gid"])
        with _locked(g):
            text = g.record_text()
        name = f"rummy-{g.game}-{g.seed}.jsonl"
        return Response(
            text,
            media_type="application/x-ndjson; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    # -- replays -------------------------------------------------------------------------------
    def records(request: Request, session: Session, _: Any) -> dict:
        if root is None:
            return {"enabled": False, "records": [], "truncated": False}
        found, cut = list_records(root)
        return {"enabled": True, "records": found, "truncated": cut}

    def reserve(session: Session, nbytes: int) -> int:
        """Hold a replay's memory (room made among the session's own replays and finished
        games first); returns the key it is held under.
        """
        sessions.expire()
        sessions.keep(session)
        session.make_room(nbytes)
        key = memory.key()
        memory.set(key, nbytes, "this replay")
        return key

    def open_replay(request: Request, session: Session, body: Any) -> tuple[dict, int]:
        body = _object(body)
        if "path" in body:
            if root is None:
                raise ApiError(404, "the server has no records folder (rummy-env serve --records)")
            path = confined(root, body["path"])
            size = path.stat().st_size
            if size > MAX_RECORD_BYTES:
                raise ApiError(413, f"{body['path']}: the record is over {MAX_RECORD_BYTES} bytes")
            source = str(body["path"])
            key = reserve(session, replay_bytes(size))
            try:
                text = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError) as e:
                memory.free(key)
                raise ApiError(422, f"{source}: cannot read the record: {e}") from None
        elif "text" in body:
            text = body["text"]
            if not isinstance(text, str):
                raise ApiError(400, "text must be the record's text (JSON lines)")
            name = body.get("name", "record")
            source = name if isinstance(name, str) and name else "record"
            source = source[-120:]
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_RECORD_BYTES:
                raise ApiError(413, f"{source}: the record is over {MAX_RECORD_BYTES} bytes")
            key = reserve(session, replay_bytes(size))
        else:
            raise ApiError(400, 'give a record as {"path": ...} or {"text": ...}')
        try:
            r = ReplayView(secrets.token_urlsafe(12), parse_record(text, source), source, key)
            session.add_replay(r)
        except BaseException:
            memory.free(key)
            raise
        return r.meta(), 201

    def get_replay(request: Request, session: Session, _: Any) -> dict:
        return session.replay(request.path_params["rid"]).meta()

    def frame(request: Request, session: Session, _: Any) -> dict:
        r = session.replay(request.path_params["rid"])
        q = request.query_params
        with _locked(r):
            return r.frame(q.get("step", "0"), q.get("view", REFEREE))

    def delete_replay(request: Request, session: Session, _: Any) -> dict:
        rid = request.path_params["rid"]
        session.replay(rid)
        session.drop_replay(rid)
        return {"deleted": rid}

    routes = [
        Route("/", endpoint(static), methods=["GET"]),
        Route("/static/{name}", endpoint(static), methods=["GET"]),
        Route("/favicon.ico", endpoint(lambda *_: Response(status_code=204)), methods=["GET"]),
        Route("/api/catalog", endpoint(get_catalog), methods=["GET"]),
        Route("/api/play", endpoint(list_games), methods=["GET"]),
        Route("/api/play", endpoint(start, body=True), methods=["POST"]),
        Route("/api/play/{gid}", endpoint(get_game), methods=["GET"]),
        Route("/api/play/{gid}", endpoint(delete_game, body=True), methods=["DELETE"]),
        Route("/api/play/{gid}/move", endpoint(move, body=True), methods=["POST"]),
        Route("/api/play/{gid}/advance", endpoint(advance, body=True), methods=["POST"]),
        Route("/api/play/{gid}/stop", endpoint(stop, body=True), methods=["POST"]),
        Route("/api/play/{gid}/record", endpoint(record), methods=["GET"]),
        Route("/api/records", endpoint(records), methods=["GET"]),
        Route("/api/replays", endpoint(open_replay, body=True), methods=["POST"]),
        Route("/api/replays/{rid}", endpoint(get_replay), methods=["GET"]),
        Route("/api/replays/{rid}", endpoint(delete_replay, body=True), methods=["DELETE"]),
        Route("/api/replays/{rid}/frame", endpoint(frame), methods=["GET"]),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        # unknown paths and methods: JSON as every other error
        status = getattr(exc, "status_code", 500)
        if status == 404:
            return _error(404, f"no such page: {request.url.path}")
        if status == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(status, str(getattr(exc, "detail", "error")))

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    app.state.sessions = sessions  # for tests and tools: every session's games, by id
    app.state.memory = memory
    app.state.limits = limits
    app.state.shutdown = shutdown
    app.state.running = running
    return app


def agent_moves_running() -> int:
    """Agent moves running now in this process (every app together)."""
    return _WATCHDOG.active()


__all__ = [
    "COOKIE",
    "COST_LIMITS",
    "MAX_GAMES",
    "MAX_JSON_DEPTH",
    "MAX_RECORD_BYTES",
    "MAX_REPLAYS",
    "MAX_SESSIONS",
    "MEMORY_BYTES",
    "AgentStopped",
    "ApiError",
    "Limits",
    "Memory",
    "MemoryFull",
    "PlayGame",
    "ReplayView",
    "Work",
    "agent_moves_running",
    "catalog",
    "check_cost",
    "check_opponent",
    "confined",
    "create_app",
    "foreign_origin",
    "is_json",
    "list_records",
    "new_game",
    "parse_body",
    "parse_record",
    "replay_bytes",
]
