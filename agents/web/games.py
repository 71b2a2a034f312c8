"""A game against agents: :func:`new_game` checks a request to start one, :class:`PlayGame`
plays it a move at a time (the person's moves and the agents', each under its deadline) and
says what the person's seat may see of it.
"""

from __future__ import annotations

import dataclasses
import functools
import secrets
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from rummy_agents.arena.play import make_env, probe_agent
from rummy_agents.arena.registry import make_agent
from rummy_agents.base import SeatView
from rummy_agents.cli import BASELINES, make_config
from rummy_agents.move_words import describe_moves
from rummy_agents.table_seat import seat_at_tables
from rummy_agents.web.catalog import (
    HUMAN,
    REFEREE,
    TITLES,
    check_opponent,
    json_value,
    read_options,
)
from rummy_agents.web.deadline import AgentStopped, Work, agent_key, decide, is_warm
from rummy_agents.web.errors import ApiError
from rummy_agents.web.limits import EVENT_PICTURES, Limits
from rummy_agents.web.memory import (
    GAME_BASE_BYTES,
    GAME_STEP_BYTES,
    GAME_STEP_CHUNK,
    Memory,
    MemoryFull,
)
from rummy_agents.web.seat import seat_json
from rummy_env.game_records import MAX_SEED, GameRecord, GameRecorder
from rummy_env.games import GAMES


def _over(env: Any) -> bool:
    return all(env.terminations[a] or env.truncations[a] for a in env.possible_agents)


def hands_played(env: Any) -> int:
    """Hands the env has played to their end so far."""
    return max((int(i.get("hands_played", 0)) for i in env.infos.values()), default=0)


def hand_infos(env: Any) -> dict[str, dict[str, Any]]:
    """Each seat's infos after a hand (the points and scores announced at its end)."""
    out = {}
    for agent in env.possible_agents:
        info = env.infos.get(agent, {})
        out[agent] = {
            k: json_value(v)
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
            "infos": hand_infos(self.env),
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
            "options": {k: json_value(v) for k, v in self.options.items()},
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
        hands = hands_played(env)
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
        if hands_played(env) > hands:
            hand = {
                "number": len(self.hands) + 1,
                "after_step": self.steps - 1,
                "rewards": {a: float(env.rewards.get(a, 0.0)) for a in self.names},
                "infos": hand_infos(env),
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
                        agent_key(self.labels[agent], self.game),
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
    options = read_options(game, body.get("options"), body.get("players"))
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
        key = agent_key(spec, game)
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
            seconds = limits.move_seconds if is_warm(key) else limits.first_move_seconds
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
