"""Game records: one game as a JSON Lines file, written while it is played, replayed by the env.

A record holds what it takes to play the game again exactly: the game, every rule option, the
reset seed and reset options (a stacked deck and dealer), and every decision; and what came of
it, to check a replay against. One JSON object per line (UTF-8), version 1:

1. The header::

       {"format": "rummy_env.game_record", "version": 1, "game": "gin_rummy",
        "env": "gin_rummy_v0", "rummy_env": "0.1.0", "options": {every rule option},
        "seed": 12345, "reset_options": null, "agents": ["player_0", "player_1"],
        "labels": {"player_0": "simple", "player_1": "ppo"}, "dealer": 1}

   ``reset_options`` is ``null`` or ``{"deck": [card ids, top first], "dealer": seat}`` (the
   env's stacked-deck reset); ``labels`` names whoever played each seat (free text);
   ``dealer`` is the first dealer's seat (informative).
2. One line per decision, in order::

       {"step": 0, "agent": "player_1", "action": 0, "name": "DRAW_STOCK"}

3. The result, last::

       {"result": {"returns": {"player_0": 25.0, "player_1": -25.0}, "outcome": "knock",
                   "hands_played": 1, "steps": 37, "terminated": true, "truncated": false}}

   ``returns``: each agent's rewards summed over the game; ``outcome``: the env's
   ``infos[agent]["outcome"]`` at the end (``null`` if it has none); ``truncated``: the env's
   ``max_steps`` cut the game, or the player stopped early (then ``terminated`` is false too).

The same seed deals the same cards only with the same engine: a record names the env version
(``gin_rummy_v0``) and the package version that wrote it, and :func:`replay` refuses another
env version.

Write records with :class:`GameRecorder` from any play loop (the arena's ``--record DIR`` and
``rummy-env play`` do) or wrap an AEC env in :class:`RecordGame`; read one with
:func:`read_record`; play it back with :func:`replay` (``rummy-env replay FILE``), which checks
every decision is legal and the result matches.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

FORMAT = "rummy_env.game_record"
VERSION = 1
MAX_SEED = 2**63 - 1


@dataclass
class GameRecord:
    """One game: the header fields, the decisions ``(agent, action, name)`` and the result.

    Attributes:
        game: game name (a key of ``rummy_env.ENV_MODULES``).
        env: env name with its version (``gin_rummy_v0``).
        options: every rule option of the env.
        seed: the reset seed.
        reset_options: the env's reset options (``deck``, ``dealer``) or None.
        agents: the env's ``possible_agents``.
        labels: who played each seat (free text, may be empty).
        steps: the decisions, ``(agent, action id, action name)``.
        result: the result (see the module docstring), None while the game is unfinished.
        dealer: the first dealer's seat (-1 if unknown).
        writer: ``rummy_env`` version that wrote the record.
    """

    game: str
    env: str
    options: dict[str, Any]
    seed: int
    reset_options: dict[str, Any] | None
    agents: list[str]
    labels: dict[str, str] = field(default_factory=dict)
    steps: list[tuple[str, int, str]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    dealer: int = -1
    writer: str = ""

    def header(self) -> dict[str, Any]:
        """The header line as a dict."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "game": self.game,
            "env": self.env,
            "rummy_env": self.writer,
            "options": self.options,
            "seed": self.seed,
            "reset_options": self.reset_options,
            "agents": self.agents,
            "labels": self.labels,
            "dealer": self.dealer,
        }

    def lines(self) -> list[str]:
        """The record as JSON lines (without newlines)."""
        out = [json.dumps(self.header())]
        for i, (agent, action, name) in enumerate(self.steps):
            out.append(json.dumps({"step": i, "agent": agent, "action": action, "name": name}))
        if self.result is not None:
            out.append(json.dumps({"result": self.result}))
        return out

    def write(self, path: str | Path) -> Path:
        """Write the record to ``path`` (parent folders are created); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        return path


def _versioned(game: str) -> str:
    """The versioned env name of a game (``gin_rummy`` -> ``gin_rummy_v0``)."""
    import rummy_env  # noqa: PLC0415 - the package imports this module

    return rummy_env.ENV_MODULES[game].__name__.rsplit(".", 1)[-1]


def _env_name(env: Any) -> tuple[str, str]:
    """(game name, versioned env name) of a raw rummy_env env."""
    import rummy_env  # noqa: PLC0415

    game = type(env).__module__.rsplit(".", 1)[-1]  # rummy_env.envs.gin_rummy -> gin_rummy
    if game not in rummy_env.ENV_MODULES:
        raise ValueError(f"env must be a rummy_env env, got {type(env).__name__}")
    return game, _versioned(game)


def _json_value(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


class GameRecorder:
    """Builds the record of the game an env is playing.

    Call :meth:`start` with the reset's seed and options (before ``env.reset``: it picks a seed
    when there is none, so that the game can be replayed), :meth:`add` before each
    ``env.step`` of a live agent, and :meth:`finish` at the end::

        rec = GameRecorder(env, labels={"player_0": "me", "player_1": "simple"})
        seed = rec.start(seed=None)
        env.reset(seed=seed)
        ...  # before each env.step(a): rec.add(env.agent_selection, a)
        record = rec.finish()
        record.write("game.jsonl")
    """

    def __init__(self, env: Any, labels: Mapping[str, str] | None = None) -> None:
        self.env = env.unwrapped
        self.game, self.env_name = _env_name(self.env)
        self.labels = {str(k): str(v) for k, v in (labels or {}).items()}
        self.record: GameRecord | None = None
        self._returns: dict[str, float] = {}

    def start(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> int:
        """Begin a record; returns the seed to reset the env with (``seed``, or a new one)."""
        import rummy_env  # noqa: PLC0415

        if seed is None:
            seed = secrets.randbelow(MAX_SEED)
        reset_options = None
        if options:
            reset_options = {k: _json_value(v) for k, v in options.items()}
        self.record = GameRecord(
            game=self.game,
            env=self.env_name,
            options=dataclasses.asdict(self.env.config),
            seed=int(seed),
            reset_options=reset_options,
            agents=list(self.env.possible_agents),
            labels=dict(self.labels),
            writer=rummy_env.__version__,
        )
        self._returns = dict.fromkeys(self.env.possible_agents, 0.0)
        return int(seed)

    def _require(self) -> GameRecord:
        if self.record is None:
            raise RuntimeError("GameRecorder: call start() before add() or finish()")
        return self.record

    def dealt(self) -> None:
        """Note the first dealer (call after ``env.reset``; optional)."""
        rec = self._require()
        state = getattr(self.env, "state_record", None)
        try:
            rec.dealer = int(state["dealer"])
        except (TypeError, KeyError, ValueError, IndexError):
            rec.dealer = -1

    def add(self, agent: str, action: int) -> None:
        """Note that ``agent`` plays ``action`` (call before ``env.step``)."""
        rec = self._require()
        a = int(action)
        rec.steps.append((str(agent), a, self.env.action_name(a)))

    def rewards(self, rewards: Mapping[str, float]) -> None:
        """Add one step's ``env.rewards`` to the returns (call after each ``env.step``)."""
        for k, v in rewards.items():
            self._returns[k] = self._returns.get(k, 0.0) + float(v)

    def finish(self, stopped: bool = False) -> GameRecord:
        """The record with its result (``stopped``: the game was abandoned before its end)."""
        rec = self._require()
        env = self.env
        names = list(env.possible_agents)
        term = all(env.terminations.get(a, True) for a in names) and not stopped
        trunc = any(env.truncations.get(a, False) for a in names)
        info = env.infos.get(names[0], {}) if getattr(env, "infos", None) else {}
        outcome = info.get("outcome")
        rec.result = {
            "returns": {a: round(self._returns.get(a, 0.0), 6) for a in names},
            "outcome": None if outcome is None else str(outcome),
            "hands_played": int(info.get("hands_played", 0)),
            "steps": len(rec.steps),
            "terminated": bool(term and not trunc),
            "truncated": bool(trunc or stopped),
        }
        return rec


class RecordGame(BaseWrapper):
    """An AEC env wrapper that writes each game it plays as a record.

    Args:
        env: a rummy_env AEC env (wrapped or raw).
        folder: where the records go, one file per game: ``game_00000.jsonl``, ...
        labels: who plays each seat (written in the records).

    ``reset(seed=None)`` gets a fresh seed from the recorder, so every record replays. A game is
    written when every agent's episode has ended; :meth:`close` writes an unfinished one as
    stopped. ``paths`` lists the files written.
    """

    def __init__(
        self, env: Any, folder: str | Path, labels: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(env)
        self.folder = Path(folder)
        self.recorder = GameRecorder(env, labels)
        self.paths: list[Path] = []
        self._open = False

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset the env and begin a record (an unfinished game is written first)."""
        if self._open:
            self._write(stopped=True)
        seed = self.recorder.start(seed, options)
        super().reset(seed=seed, options=options)
        self.recorder.dealt()
        self._open = True

    def step(self, action: int | None) -> None:
        """Step the env, noting the decision and its rewards."""
        agent = self.agent_selection
        live = not (self.terminations.get(agent, True) or self.truncations.get(agent, True))
        if self._open and live and action is not None:
            self.recorder.add(agent, action)
        super().step(action)
        if self._open and live:
            self.recorder.rewards(self.env.unwrapped.rewards)
            names = self.env.unwrapped.possible_agents
            if all(self.terminations.get(a, True) or self.truncations.get(a, True) for a in names):
                self._write(stopped=False)

    def _write(self, stopped: bool) -> None:
        record = self.recorder.finish(stopped=stopped)
        self.paths.append(record.write(self.folder / f"game_{len(self.paths):05d}.jsonl"))
        self._open = False

    def close(self) -> None:
        """Write an unfinished game (as stopped), then close the env."""
        if self._open:
            self._write(stopped=True)
        super().close()


def _bad(path: Any, line: int, msg: str) -> ValueError:
    return ValueError(f"{path}: line {line}: {msg}")


def read_record(source: str | Path | list[str]) -> GameRecord:
    """Read a record from a ``.jsonl`` file (or from its lines).

    Raises:
        ValueError: for anything that is not a version-1 record (naming the line): bad JSON,
            another format or version, an unknown game, a malformed decision or result.
    """
    import rummy_env  # noqa: PLC0415

    if isinstance(source, list):
        where, lines = "record", source
    else:
        where = str(source)
        try:
            lines = Path(source).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"{where}: cannot read the record: {e}") from None
    objs = []
    for i, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            objs.append((i, json.loads(text)))
        except json.JSONDecodeError as e:
            raise _bad(where, i, f"not JSON ({e.msg})") from None
    if not objs:
        raise ValueError(f"{where}: empty record")
    i, head = objs[0]
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise _bad(where, i, f"not a game record (the header's format must be {FORMAT!r})")
    if head.get("version") != VERSION:
        raise _bad(where, i, f"record version {head.get('version')!r}; this reads {VERSION}")
    game = head.get("game")
    if game not in rummy_env.ENV_MODULES:
        raise _bad(where, i, f"unknown game {game!r}; known: {sorted(rummy_env.ENV_MODULES)}")
    seed = head.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise _bad(where, i, f"seed must be an integer in 0..{MAX_SEED}, got {seed!r}")
    options = head.get("options")
    agents = head.get("agents")
    reset_options = head.get("reset_options")
    if not isinstance(options, dict) or not isinstance(agents, list) or not agents:
        raise _bad(where, i, "the header needs an options object and a list of agents")
    if reset_options is not None and not isinstance(reset_options, dict):
        raise _bad(where, i, "reset_options must be null or an object")
    labels = head.get("labels") or {}
    rec = GameRecord(
        game=game,
        env=str(head.get("env", "")),
        options=options,
        seed=seed,
        reset_options=reset_options,
        agents=[str(a) for a in agents],
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
        dealer=int(head.get("dealer", -1)) if isinstance(head.get("dealer"), int) else -1,
        writer=str(head.get("rummy_env", "")),
    )
    for i, obj in objs[1:]:
        if rec.result is not None:
            raise _bad(where, i, "nothing may follow the result")
        if isinstance(obj, dict) and "result" in obj:
            res = obj["result"]
            if not isinstance(res, dict) or not isinstance(res.get("returns"), dict):
                raise _bad(where, i, "the result needs a returns object")
            rec.result = res
            continue
        if not isinstance(obj, dict) or obj.get("step") != len(rec.steps):
            raise _bad(where, i, f"expected decision {len(rec.steps)} (a step line) or the result")
        agent, action = obj.get("agent"), obj.get("action")
        if agent not in rec.agents:
            raise _bad(where, i, f"agent {agent!r} is not one of {rec.agents}")
        if not isinstance(action, int) or isinstance(action, bool):
            raise _bad(where, i, f"action must be an integer id, got {action!r}")
        rec.steps.append((agent, action, str(obj.get("name", ""))))
    return rec


@dataclass
class ReplayResult:
    """What a replay found: the returns and outcome it got, and whether they match."""

    record: GameRecord
    returns: dict[str, float]
    outcome: str | None
    steps: int
    finished: bool
    matches: bool


def replay(
    record: GameRecord | str | Path,
    on_step: Callable[[Any, int, str, int], None] | None = None,
    check_result: bool = True,
) -> ReplayResult:
    """Play a record back through a fresh env, checking every decision.

    Args:
        record: a :class:`GameRecord` or the path of a ``.jsonl`` record.
        on_step: called as ``on_step(env, i, agent, action)`` before decision ``i`` is applied
            (``env`` is the raw env: ``env.render_text()``, ``env.observe(agent)``) and once more
            after the last with ``i = len(steps)``, ``agent = ""``, ``action = -1``.
        check_result: compare the returns and outcome with the record's result.

    Returns:
        The replay's result; ``matches`` is False only when the record has no result or
        ``check_result`` is off.

    Raises:
        ValueError: for a record of another env version, rule options the env refuses, a
            decision by the wrong agent or an illegal one, a name that does not match its
            action id, a game still running after the last decision of a finished record, or
            returns or an outcome other than the record's (each naming the step).
    """
    import rummy_env  # noqa: PLC0415

    if not isinstance(record, GameRecord):
        record = read_record(record)
    env_name = _versioned(record.game)
    if record.env and record.env != env_name:
        raise ValueError(
            f"the record was played on {record.env}; this rummy_env has {env_name}, whose "
            "rules or dealing may differ"
        )
    env = rummy_env.ENV_MODULES[record.game].raw_env(**record.options)
    opts = None
    if record.reset_options is not None:
        opts = dict(record.reset_options)
        if "deck" in opts:
            opts["deck"] = np.asarray(opts["deck"], dtype=np.int64)
    env.reset(seed=record.seed, options=opts)
    names = list(env.possible_agents)
    if names != record.agents:
        raise ValueError(f"the record's agents {record.agents} are not the env's {names}")
    returns = dict.fromkeys(names, 0.0)
    for i, (agent, action, name) in enumerate(record.steps):
        if all(env.terminations[a] or env.truncations[a] for a in names):
            raise ValueError(f"step {i}: the game is over, but the record goes on")
        if env.agent_selection != agent:
            raise ValueError(f"step {i}: {env.agent_selection} is to act, the record has {agent}")
        if not env.game.is_legal(0, action):
            why = env.game.explain_illegal(0, action)
            raise ValueError(f"step {i}: {agent}'s action {action} is illegal: {why}")
        if name and env.action_name(action) != name:
            raise ValueError(
                f"step {i}: action {action} is {env.action_name(action)!r} here, "
                f"{name!r} in the record"
            )
        if on_step is not None:
            on_step(env, i, agent, action)
        env.step(action)
        for a in names:
            returns[a] += float(env.rewards.get(a, 0.0))
    if on_step is not None:
        on_step(env, len(record.steps), "", -1)
    finished = all(env.terminations[a] or env.truncations[a] for a in names)
    info = env.infos.get(names[0], {})
    outcome = info.get("outcome")
    outcome = None if outcome is None else str(outcome)
    res = record.result
    matches = False
    if check_result and res is not None:
        if res.get("terminated") and not finished:
            raise ValueError(
                f"after the last step ({len(record.steps)}) the game is still running; the "
                "record says it ended"
            )
        want = res["returns"]
        for a in names:
            if a in want and abs(float(want[a]) - returns[a]) > 1e-6:
                raise ValueError(
                    f"{a}'s return is {returns[a]:g} on replay, {float(want[a]):g} in the record"
                )
        if finished and res.get("outcome") is not None and res["outcome"] != outcome:
            raise ValueError(f"outcome {outcome!r} on replay, {res['outcome']!r} in the record")
        matches = True
    return ReplayResult(record, returns, outcome, len(record.steps), finished, matches)


__all__ = [
    "FORMAT",
    "VERSION",
    "GameRecord",
    "GameRecorder",
    "RecordGame",
    "ReplayResult",
    "read_record",
    "replay",
]
