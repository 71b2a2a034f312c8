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
  malformed request; 404: an unknown game, replay or record file; 409: a move after the end;
  413: too large; 422: an unknown game, agent or rule option, an illegal move, a malformed
  record; 429: too many games), never a traceback;
- ``rummy-env serve`` listens on 127.0.0.1 by default and then answers only requests addressed
  to a loopback name (``allowed_hosts``); sessions, games per session and record sizes are
  capped.

Endpoints (JSON unless said otherwise)::

    GET    /                              the page (static/index.html)
    GET    /api/catalog                   games, player counts, rule options, agents
    GET    /api/play                      this session's games
    POST   /api/play                      start a game: {game, players, seat, opponents,
                                          options, seed} -> its state (201)
    GET    /api/play/{id}                 the game's state (and its log)
    POST   /api/play/{id}/move            {action}: the person's move, then the agents' up to
                                          the person's next turn -> the state and the moves
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

import dataclasses
import json
import logging
import math
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

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
from rummy_agents.table_seat import seat_at_tables
from rummy_env.game_records import MAX_SEED, GameRecord, GameRecorder, read_record, replay
from rummy_env.games import GAMES

log = logging.getLogger(__name__)

COOKIE = "rummy_session"
"""Name of the session cookie (HttpOnly, SameSite=Strict)."""

MAX_SESSIONS = 64
"""Sessions kept in memory; the least recently used one is dropped beyond this."""

MAX_GAMES = 8
"""Games per session: a new one replaces the oldest finished game, else it is refused (429)."""

MAX_REPLAYS = 8
"""Replays per session: a new one replaces the least recently used."""

MAX_RECORD_BYTES = 4 * 1024 * 1024
"""Largest record accepted (uploaded or read from ``--records DIR``)."""

MAX_BODY_BYTES = MAX_RECORD_BYTES + 64 * 1024
"""Largest request body (a record as JSON text, escapes included, has some slack)."""

MAX_LISTED_RECORDS = 2000
"""Records listed from ``--records DIR`` at most (the first, in path order)."""

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
    """

    def __init__(
        self,
        gid: str,
        game: str,
        options: dict[str, Any],
        seat: int,
        opponents: dict[str, str],
        seed: int,
    ) -> None:
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

    # -- state ---------------------------------------------------------------------------------
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
            "my_turn": not self.over and self.env.agent_selection == self.me,
            "legal": self.legal(),
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
        """Play a legal move, record it, and note the end of a hand or of the game."""
        env = self.env
        board_of = env.state_record["board_of"].copy() if self.four_tables else None
        hands = _hands_played(env)
        name = self._name(agent, action, board_of)
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

    def advance(self) -> list[dict[str, Any]]:
        """The agents' moves up to the person's turn or the end of the game."""
        events = []
        env = self.env
        while not self.over and env.agent_selection != self.me:
            agent = env.agent_selection
            obs = env.observe(agent)
            try:
                a = int(self.agents[agent].act(obs, self.views[agent]))
            except Exception as e:  # noqa: BLE001 - an agent's failure ends the game, not the app
                self.error = f"agent {self.labels[agent]!r} ({agent}) failed: {e}"
                self._finish(stopped=True)
                break
            if not (0 <= a < obs["action_mask"].shape[0]) or obs["action_mask"][a] != 1:
                self.error = f"agent {self.labels[agent]!r} ({agent}) chose an illegal move ({a})"
                self._finish(stopped=True)
                break
            events.append(self._shown(self._apply(agent, a)))
        return _keep_pictures(events)

    def move(self, action: Any) -> list[dict[str, Any]]:
        """The person's move, then the agents' (the moves played, in order).

        Raises:
            ApiError: 400 for an action that is not an integer, 409 after the end, 422 for an
                action out of range or not legal now.
        """
        if not isinstance(action, int) or isinstance(action, bool):
            raise ApiError(400, f"action must be an integer action id, got {action!r:.40}")
        if self.over:
            raise ApiError(409, "the game is over: no more moves")
        env = self.env
        if env.agent_selection != self.me:  # not reached: the agents play up to the person
            raise ApiError(409, f"it is {env.agent_selection}'s turn, not yours")
        n = env.action_space(self.me).n
        if not 0 <= action < n:
            raise ApiError(422, f"action {action} is out of range: actions are 0..{n - 1}")
        if env.observe(self.me)["action_mask"][action] != 1:
            why = env.unwrapped.game.explain_illegal(0, action)
            raise ApiError(422, f"illegal move {action}: {why}")
        events = [self._shown(self._apply(self.me, action))]
        return _keep_pictures(events + self.advance())

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
        check_agent(spec, game)
    except (ValueError, TypeError) as e:
        raise ApiError(422, f"opponent {spec!r:.80}: {e}") from None


def new_game(gid: str, body: Mapping[str, Any]) -> tuple[PlayGame, list[dict[str, Any]]]:
    """Check a request to start a game and start it: the game and the agents' moves before the
    person's first turn.

    Raises:
        ApiError: 400 for fields of the wrong type, 422 for an unknown game, agent or option, a
            seat that is not one, a wrong number of opponents.
    """
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
        try:
            probe_agent(game, options, spec)
        except Exception as e:  # noqa: BLE001 - whatever stops it, it cannot play this table
            raise ApiError(
                422, f"opponent {spec!r} cannot play {game} with these rules: {e}"
            ) from None
    g = PlayGame(gid, game, options, seat, dict(zip(others, specs, strict=True)), seed)
    return g, g.advance()


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

    def __init__(self, rid: str, record: GameRecord, source: str) -> None:
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
        except ValueError as e:
            raise ApiError(422, f"{source}: {e}") from None
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
        return read_record(text.splitlines())
    except ValueError as e:
        msg = str(e)
        if msg.startswith("record: "):
            msg = msg[len("record: ") :]
        raise ApiError(422, f"{source}: {msg}") from None


# ---------------------------------------------------------------------------------------------
# Sessions


class Session:
    """One browser's games and replays."""

    def __init__(self, sid: str) -> None:
        self.id = sid
        self.games: OrderedDict[str, PlayGame] = OrderedDict()
        self.replays: OrderedDict[str, ReplayView] = OrderedDict()
        self.lock = threading.Lock()

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
        del self.games[done[0]]

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

    def add_replay(self, r: ReplayView) -> None:
        """Keep a new replay, dropping the least recently used one at the cap."""
        with self.lock:
            while len(self.replays) >= MAX_REPLAYS:
                self.replays.popitem(last=False)
            self.replays[r.id] = r


class Sessions:
    """Every session, by its random id; the least recently used goes beyond the cap."""

    def __init__(self, cap: int = MAX_SESSIONS) -> None:
        self.cap = cap
        self.items: OrderedDict[str, Session] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, sid: str | None) -> tuple[Session, bool]:
        """The session of a cookie's id, or a new one (new: True) for none or an unknown id
        (an id is never taken from the browser: only the server makes them).
        """
        with self.lock:
            if sid is not None and sid in self.items:
                self.items.move_to_end(sid)
                return self.items[sid], False
            s = Session(secrets.token_urlsafe(32))
            self.items[s.id] = s
            while len(self.items) > self.cap:
                self.items.popitem(last=False)
            return s, True


# ---------------------------------------------------------------------------------------------
# The app

Handler = Callable[[Request, Session, Any], Any]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=HEADERS)


async def _body(request: Request) -> Any:
    """The request's JSON body (None for none).

    Raises:
        ApiError: 413 for a body over :data:`MAX_BODY_BYTES`, 400 for one that is not JSON.
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
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError(400, f"the request body is not JSON: {e}") from None


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


def create_app(
    records_dir: str | Path | None = None, allowed_hosts: Sequence[str] | None = None
) -> Starlette:
    """The browser app.

    Args:
        records_dir: a folder of game records to list and replay (nothing outside it is read);
            None: records are uploaded only.
        allowed_hosts: the host names requests may be addressed to (``rummy-env serve`` on a
            loopback address passes the loopback names, so a page of another site that points
            its name at 127.0.0.1 is refused); None: any.

    Returns:
        A Starlette app (ASGI): serve it with uvicorn, or test it with Starlette's TestClient.
    """
    root = None if records_dir is None else Path(records_dir)
    hosts = None if allowed_hosts is None else {_host(h).lower() for h in allowed_hosts}
    sessions = Sessions()

    def endpoint(handler: Handler, body: bool = False) -> Callable[[Request], Awaitable[Response]]:
        """An endpoint: host check, session cookie, JSON body, the handler in a worker thread
        (agents and envs are synchronous), errors as JSON, the security headers.
        """

        async def run(request: Request) -> Response:
            if hosts is not None and _host(request.headers.get("host", "")).lower() not in hosts:
                return _error(400, "this server answers only to its own address (Host header)")
            session, new = sessions.get(request.cookies.get(COOKIE))
            try:
                data = await _body(request) if body else None
                out = await run_in_threadpool(handler, request, session, data)
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
            if new:
                response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict", path="/")
            return response

        return run

    # -- static files --------------------------------------------------------------------------
    def static(request: Request, session: Session, _: Any) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in STATIC:
            raise ApiError(404, f"no file {name!r:.40}")
        text = resources.files("rummy_agents.web").joinpath("static", name).read_text("utf-8")
        media = MEDIA[Path(name).suffix] + "; charset=utf-8"
        return Response(text, media_type=media)

    # -- play ----------------------------------------------------------------------------------
    def get_catalog(request: Request, session: Session, _: Any) -> dict:
        limits = {"games": MAX_GAMES, "replays": MAX_REPLAYS, "record_bytes": MAX_RECORD_BYTES}
        return {**catalog(), "records": root is not None, "limits": limits}

    def list_games(request: Request, session: Session, _: Any) -> dict:
        with session.lock:
            return {"games": [g.summary() for g in session.games.values()]}

    def start(request: Request, session: Session, body: Any) -> tuple[dict, int]:
        body = _object(body)
        session.check_room()
        g, events = new_game(secrets.token_urlsafe(12), body)
        session.add_game(g)
        with g.lock:
            return g.state(events=events), 201

    def get_game(request: Request, session: Session, _: Any) -> dict:
        g = session.game(request.path_params["gid"])
        with g.lock:
            return g.state(log=True)

    def move(request: Request, session: Session, body: Any) -> dict:
        g = session.game(request.path_params["gid"])
        body = _object(body)
        if "action" not in body:
            raise ApiError(400, 'give the move as {"action": id}')
        with g.lock:
            events = g.move(body["action"])
            return g.state(events=events)

    def stop(request: Request, session: Session, _: Any) -> dict:
        g = session.game(request.path_params["gid"])
        with g.lock:
            g.stop()
            return g.state()

    def delete_game(request: Request, session: Session, _: Any) -> dict:
        gid = request.path_params["gid"]
        session.game(gid)
        with session.lock:
            session.games.pop(gid, None)
        return {"deleted": gid}

    def record(request: Request, session: Session, _: Any) -> Response:
        g = session.game(request.path_params["gid"])
        with g.lock:
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

    def open_replay(request: Request, session: Session, body: Any) -> tuple[dict, int]:
        body = _object(body)
        if "path" in body:
            if root is None:
                raise ApiError(404, "the server has no records folder (rummy-env serve --records)")
            path = confined(root, body["path"])
            if path.stat().st_size > MAX_RECORD_BYTES:
                raise ApiError(413, f"{body['path']}: the record is over {MAX_RECORD_BYTES} bytes")
            source = str(body["path"])
            try:
                text = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise ApiError(422, f"{source}: cannot read the record: {e}") from None
        elif "text" in body:
            text = body["text"]
            if not isinstance(text, str):
                raise ApiError(400, "text must be the record's text (JSON lines)")
            name = body.get("name", "record")
            source = name if isinstance(name, str) and name else "record"
            source = source[-120:]
        else:
            raise ApiError(400, 'give a record as {"path": ...} or {"text": ...}')
        r = ReplayView(secrets.token_urlsafe(12), parse_record(text, source), source)
        session.add_replay(r)
        return r.meta(), 201

    def get_replay(request: Request, session: Session, _: Any) -> dict:
        return session.replay(request.path_params["rid"]).meta()

    def frame(request: Request, session: Session, _: Any) -> dict:
        r = session.replay(request.path_params["rid"])
        q = request.query_params
        with r.lock:
            return r.frame(q.get("step", "0"), q.get("view", REFEREE))

    def delete_replay(request: Request, session: Session, _: Any) -> dict:
        rid = request.path_params["rid"]
        session.replay(rid)
        with session.lock:
            session.replays.pop(rid, None)
        return {"deleted": rid}

    routes = [
        Route("/", endpoint(static), methods=["GET"]),
        Route("/static/{name}", endpoint(static), methods=["GET"]),
        Route("/favicon.ico", endpoint(lambda *_: Response(status_code=204)), methods=["GET"]),
        Route("/api/catalog", endpoint(get_catalog), methods=["GET"]),
        Route("/api/play", endpoint(list_games), methods=["GET"]),
        Route("/api/play", endpoint(start, body=True), methods=["POST"]),
        Route("/api/play/{gid}", endpoint(get_game), methods=["GET"]),
        Route("/api/play/{gid}", endpoint(delete_game), methods=["DELETE"]),
        Route("/api/play/{gid}/move", endpoint(move, body=True), methods=["POST"]),
        Route("/api/play/{gid}/stop", endpoint(stop, body=True), methods=["POST"]),
        Route("/api/play/{gid}/record", endpoint(record), methods=["GET"]),
        Route("/api/records", endpoint(records), methods=["GET"]),
        Route("/api/replays", endpoint(open_replay, body=True), methods=["POST"]),
        Route("/api/replays/{rid}", endpoint(get_replay), methods=["GET"]),
        Route("/api/replays/{rid}", endpoint(delete_replay), methods=["DELETE"]),
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
    return app


__all__ = [
    "COOKIE",
    "MAX_GAMES",
    "MAX_RECORD_BYTES",
    "MAX_REPLAYS",
    "MAX_SESSIONS",
    "ApiError",
    "PlayGame",
    "ReplayView",
    "catalog",
    "check_opponent",
    "confined",
    "create_app",
    "list_records",
    "new_game",
    "parse_record",
]
