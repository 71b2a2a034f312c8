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

A record is checked in one place, before anything uses it: :func:`read_record` (and
:func:`check_record`, for a :class:`GameRecord` built in Python, which :func:`replay` calls)
checks every field of every line (type, range, length, allowed values; unknown and missing
keys; strict JSON: no ``NaN``, no key twice) and refuses anything else with a ``ValueError``
naming the line, the field, the value and what is allowed (``ArgumentTypeError``, both a
``TypeError`` and a ``ValueError``, for a value of the wrong type). The web app and the CLI
turn these into a 422 and a one-line error.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import reprlib
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

from rummy_env.core.cards import parse_cards
from rummy_env.core.validate import ArgumentTypeError, is_int

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
    if isinstance(x, (list, tuple)):
        return [_json_value(v) for v in x]
    return x


def _check_labels(labels: Mapping[str, str] | None, agents: list[str]) -> dict[str, str]:
    """A recorder's labels: seats of ``agents`` to printable text (what a record may hold).

    Raises:
        ValueError: for a key that is not an agent or a label that is not printable text of
            at most :data:`MAX_TEXT` characters (``ArgumentTypeError`` for a mapping of
            another type).
    """
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise ArgumentTypeError(f"labels must be a mapping of agents to text, got {labels!r:.80}")
    out = {}
    for k, v in labels.items():
        if k not in agents:
            raise ValueError(f"labels: {k!r:.80} is not one of the agents {agents}")
        text = str(v)
        if len(text) > MAX_TEXT or _CONTROL.search(text):
            raise ValueError(
                f"labels[{k!r}] must be text of at most {MAX_TEXT} characters without control "
                f"characters, got {_show(text)}"
            )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"labels[{k!r}] must be valid Unicode, got {_show(text)}") from None
        out[str(k)] = text
    return out


def _recorded_reset_options(options: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What a record keeps of the reset options: the stacked ``deck`` as card ids and the
    ``dealer`` (the env ignores any other option, with a warning).
    """
    if not options:
        return None
    out = {}
    deck = options.get("deck")
    if deck is not None:
        deck = _json_value(deck)
        try:  # card texts ("As") to ids; a deck the env will refuse stays as it is
            if isinstance(deck, list) and deck and isinstance(deck[0], (list, str)):
                # one deck per table (lists, or texts "As 2s ..."), else one deck of cards
                several = isinstance(deck[0], list) or len(deck[0].split()) > 1
                deck = [parse_cards(d) for d in deck] if several else parse_cards(deck)
            elif isinstance(deck, (list, str)):
                deck = parse_cards(deck)
        except (TypeError, ValueError):
            pass
        out["deck"] = deck
    if options.get("dealer") is not None:
        out["dealer"] = _json_value(options["dealer"])
    return out or None


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
        self.labels = _check_labels(labels, list(self.env.possible_agents))
        self.record: GameRecord | None = None
        self._returns: dict[str, float] = {}

    def start(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> int:
        """Begin a record; returns the seed to reset the env with (``seed``, or a new one)."""
        import rummy_env  # noqa: PLC0415

        if seed is None:
            seed = secrets.randbelow(MAX_SEED)
        reset_options = _recorded_reset_options(options)
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
        state: Any = getattr(self.env, "state_record", None)  # None: the TypeError below
        try:
            rec.dealer = int(state["dealer"])
        except (TypeError, KeyError, ValueError, IndexError):
            rec.dealer = -1
        if not 0 <= rec.dealer < len(rec.agents):  # a code, not a seat: unknown
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


# ---------------------------------------------------------------------------------------------
# Reading and checking records: the schema of version 1, checked in one place (_check_objects)

MAX_TEXT = 1000
"""Longest free text (a label, an action name, an outcome, a version) a record may hold."""
MAX_ACTION = 2**31 - 1
"""Largest action id a record may hold (the env's own range is checked on replay)."""
MAX_COUNT = 2**31 - 1
"""Largest count (``hands_played``) a record's result may hold."""
MAX_RETURN = 1e15
"""Largest absolute return a record's result may hold (far above any game's scores)."""
MAX_DECK = 256
"""Most cards one stacked deck of a record's ``reset_options`` may hold."""
MAX_TABLES = 4
"""Most stacked decks (one per table) a record's ``reset_options`` may hold."""

HEADER_KEYS = (
    "format", "version", "game", "env", "rummy_env", "options", "seed", "reset_options",
    "agents", "labels", "dealer",
)  # fmt: skip
"""The header's keys; the first three and ``options``, ``seed``, ``agents`` are required."""
REQUIRED_HEADER_KEYS = ("format", "version", "game", "options", "seed", "agents")
STEP_KEYS = ("step", "agent", "action", "name")
"""A decision line's keys; ``name`` may be left out."""
RESULT_KEYS = ("returns", "outcome", "hands_played", "steps", "terminated", "truncated")
"""The result's keys; only ``returns`` is required."""
RESET_KEYS = ("deck", "dealer")
"""The keys ``reset_options`` may hold."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SHOW = reprlib.Repr()
_SHOW.maxstring = _SHOW.maxother = 60
_SHOW.maxlong = 40
_SHOW.maxlist = _SHOW.maxtuple = 6
_SHOW.maxdict = 4
_SHOW.maxlevel = 3


def _show(value: Any) -> str:
    """A short repr of any value (long strings, big numbers and deep nesting cut)."""
    return _SHOW.repr(value)


def _short_path(where: str) -> str:
    """A file name short enough for a one-line message."""
    return where if len(where) <= 160 else f"{where[:100]}...{where[-50:]}"


class _At:
    """Where a check is (the source and line, and the decision) and how its errors read:
    ``game.jsonl: line 3: step 1: action must be ..., got ...``.
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.line = 0
        self.step: int | None = None

    def prefix(self) -> str:
        """``where: line N: `` (and ``step k: `` on a decision line)."""
        step = "" if self.step is None else f"step {self.step}: "
        return f"{self.where}: line {self.line}: {step}"

    def error(self, msg: str) -> ValueError:
        """A ``ValueError`` with the place in front of ``msg``."""
        return ValueError(self.prefix() + msg)

    def wrong(self, field: str, allowed: str, value: Any, wrong_type: bool) -> ValueError:
        """``field must be allowed, got value``: an ``ArgumentTypeError`` (a ``TypeError`` and
        a ``ValueError``) for a value of the wrong type, else a ``ValueError``.
        """
        cls = ArgumentTypeError if wrong_type else ValueError
        return cls(f"{self.prefix()}{field} must be {allowed}, got {_show(value)}")

    # -- typed fields -----------------------------------------------------------------------
    def int_(self, field: str, value: Any, lo: int, hi: int, allowed: str = "") -> int:
        """An integer in ``lo..hi`` (``bool`` is not one); ``allowed`` says so otherwise."""
        allowed = allowed or f"an integer in {lo}..{hi}"
        if not is_int(value):
            raise self.wrong(field, allowed, value, True)
        if not lo <= value <= hi:
            raise self.wrong(field, allowed, value, False)
        return int(value)

    def bool_(self, field: str, value: Any) -> bool:
        """``true`` or ``false``."""
        if not isinstance(value, (bool, np.bool_)):
            raise self.wrong(field, "true or false", value, True)
        return bool(value)

    def number(self, field: str, value: Any) -> float:
        """A finite number of magnitude at most :data:`MAX_RETURN`."""
        allowed = f"a finite number in -{MAX_RETURN:g}..{MAX_RETURN:g}"
        if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)
        ):
            raise self.wrong(field, allowed, value, True)
        # compare before float(): an int of 400 digits does not fit a float
        if not (-MAX_RETURN <= value <= MAX_RETURN):  # also False for NaN
            raise self.wrong(field, allowed, value, False)
        return float(value)

    def text(self, field: str, value: Any, max_len: int = MAX_TEXT) -> str:
        """Printable text: a string of at most ``max_len`` characters, valid Unicode (no lone
        surrogates: the record must encode to UTF-8), no control characters (a label is
        printed on terminals and put in pages).
        """
        allowed = f"text of at most {max_len} characters without control characters"
        if not isinstance(value, str):
            raise self.wrong(field, allowed, value, True)
        if len(value) > max_len or _CONTROL.search(value):
            raise self.wrong(field, allowed, value, False)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise self.wrong(
                field, "valid Unicode text (no lone surrogates)", value, False
            ) from None
        return str(value)

    def obj(
        self, field: str, value: Any, allowed: Sequence[str], required: Sequence[str] = ()
    ) -> dict[str, Any]:
        """A JSON object whose keys are among ``allowed``, with every key of ``required``."""
        if not isinstance(value, dict):
            raise self.wrong(field, f"an object with keys {list(allowed)}", value, True)
        unknown = [k for k in value if k not in allowed]
        if unknown:
            raise self.error(
                f"{field} has unknown key(s) {_show(unknown)}; allowed: {', '.join(allowed)}"
            )
        missing = [k for k in required if k not in value]
        if missing:
            raise self.error(f"{field} lacks {', '.join(missing)}")
        return value


def _json_line(at: _At, text: str) -> Any:
    """One line's JSON value: strict JSON (no ``NaN``/``Infinity``, no number that overflows
    a float, no key twice), any failure a ``ValueError`` naming the line.
    """

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    def finite(s: str) -> float:
        x = float(s)
        if not math.isfinite(x):
            raise ValueError(f"number {s[:40]} is too large")
        return x

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                raise ValueError(f"key {_show(k)} appears twice")
            out[k] = v
        return out

    try:
        return json.loads(
            text, parse_constant=no_constant, parse_float=finite, object_pairs_hook=pairs
        )
    except json.JSONDecodeError as e:
        raise at.error(f"not JSON ({e.msg}, column {e.colno})") from None
    except RecursionError:
        raise at.error("not JSON (nested too deeply)") from None
    except ValueError as e:  # the hooks' errors, an integer of over 4300 digits
        raise at.error(f"not JSON ({e})") from None


def _check_options(at: _At, game: str, options: Any) -> tuple[dict[str, Any], int]:
    """The header's ``options``, checked by the game's own option class; returns them and the
    number of players they give.
    """
    import rummy_env  # noqa: PLC0415

    config_cls = rummy_env.ENV_MODULES[game].raw_env.config_cls
    names = [f.name for f in dataclasses.fields(config_cls)]
    if not isinstance(options, dict):
        raise at.wrong("options", f"an object of {game} rule options", options, True)
    for k, v in options.items():
        if k not in names:
            raise at.error(
                f"options: {_show(k)} is not a rule option of the game {game!r}; its options: "
                f"{', '.join(names)}"
            )
        if not (v is None or isinstance(v, (bool, str)) or is_int(v) or isinstance(v, float)):
            raise at.wrong(f"options.{k}", "null, true, false, a number or text", v, True)
        if isinstance(v, str):  # a choice's name: short (the option class shows it whole)
            at.text(f"options.{k}", v, 100)
    try:
        config = config_cls.from_kwargs(**options)
    except (TypeError, ValueError) as e:  # the option class names the option and the value
        cls = ArgumentTypeError if isinstance(e, TypeError) else ValueError
        raise cls(f"{at.prefix()}options: {e}") from None
    return dict(options), int(config.num_players)


def _check_reset_options(at: _At, value: Any, players: int) -> dict[str, Any] | None:
    """``null`` or ``{"deck": ..., "dealer": ...}``: the shapes and ranges (that a deck is a
    full deck of the game and the dealer a seat that may deal is the env's check, on replay).
    """
    if value is None:
        return None
    at.obj("reset_options", value, RESET_KEYS)
    out: dict[str, Any] = {}
    deck = value.get("deck")
    if deck is not None:
        allowed = (
            f"a list of card ids (0..53, at most {MAX_DECK}) or a list of at most {MAX_TABLES} "
            "such lists (one per table)"
        )
        if not isinstance(deck, list) or not deck:
            raise at.wrong("reset_options.deck", allowed, deck, not isinstance(deck, list))
        if isinstance(deck[0], list):
            if len(deck) > MAX_TABLES:
                raise at.wrong("reset_options.deck", allowed, deck, False)
            out["deck"] = [
                _check_deck(at, f"reset_options.deck[{t}]", d) for t, d in enumerate(deck)
            ]
        else:
            out["deck"] = _check_deck(at, "reset_options.deck", deck)
    dealer = value.get("dealer")
    if dealer is not None:
        if isinstance(dealer, list):
            if not 1 <= len(dealer) <= players:
                raise at.wrong("reset_options.dealer", "a seat or a list of seats", dealer, False)
            out["dealer"] = [
                at.int_(f"reset_options.dealer[{k}]", d, 0, players - 1)
                for k, d in enumerate(dealer)
            ]
        else:
            out["dealer"] = at.int_("reset_options.dealer", dealer, 0, players - 1)
    return out or None


def _check_deck(at: _At, field: str, deck: Any) -> list[int]:
    """One stacked deck: a list of card ids."""
    allowed = f"a list of at most {MAX_DECK} card ids (0..53)"
    if not isinstance(deck, list):
        raise at.wrong(field, allowed, deck, True)
    if not 1 <= len(deck) <= MAX_DECK:
        raise at.wrong(field, allowed, deck, False)
    return [at.int_(f"{field}[{k}]", c, 0, 53) for k, c in enumerate(deck)]


def _check_header(at: _At, head: Any) -> GameRecord:
    """The header line as a record without decisions (every field checked)."""
    import rummy_env  # noqa: PLC0415

    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise at.error(f"not a game record (the header's format must be {FORMAT!r})")
    version = head.get("version")
    if not is_int(version) or version != VERSION:
        raise at.error(f"record version {_show(version)}; this reads {VERSION}")
    at.obj("the header", head, HEADER_KEYS, REQUIRED_HEADER_KEYS)
    game = head["game"]
    games = sorted(rummy_env.ENV_MODULES)
    if not isinstance(game, str):
        raise at.wrong("game", f"one of {games}", game, True)
    if game not in games:
        raise at.error(f"unknown game {_show(game)}; known: {games}")
    options, players = _check_options(at, game, head["options"])
    seed = at.int_("seed", head["seed"], 0, MAX_SEED)
    agents = [f"player_{i}" for i in range(players)]
    got = head["agents"]
    if not isinstance(got, list):
        raise at.wrong("agents", f"the list {agents}", got, True)
    if got != agents:
        allowed = f"{agents} (the env's agents for options.num_players = {players})"
        raise at.wrong("agents", allowed, got, False)
    labels_in = head.get("labels")
    labels: dict[str, str] = {}
    if labels_in is not None:
        if not isinstance(labels_in, dict):
            raise at.wrong("labels", "an object from agents to text", labels_in, True)
        for k, v in labels_in.items():
            if k not in agents:
                raise at.error(f"labels: {_show(k)} is not one of the agents {agents}")
            labels[k] = at.text(f"labels.{k}", v)
    return GameRecord(
        game=game,
        env=at.text("env", head.get("env", ""), 100),
        options=options,
        seed=seed,
        reset_options=_check_reset_options(at, head.get("reset_options"), players),
        agents=agents,
        labels=labels,
        dealer=at.int_("dealer", head.get("dealer", -1), -1, players - 1),
        writer=at.text("rummy_env", head.get("rummy_env", ""), 100),
    )


def _check_step(at: _At, rec: GameRecord, obj: Any) -> None:
    """A decision line (``obj``, a dict with no ``result`` key), added to ``rec.steps``."""
    k = len(rec.steps)
    if not isinstance(obj, dict) or not is_int(obj.get("step")) or obj.get("step") != k:
        raise at.error(f"expected decision {k} (a step line) or the result")
    at.step = k
    at.obj("a step line", obj, STEP_KEYS, ("step", "agent", "action"))
    agent = obj["agent"]
    if not isinstance(agent, str) or agent not in rec.agents:
        raise at.error(f"agent {_show(agent)} is not one of {rec.agents}")
    action = at.int_("action", obj["action"], 0, MAX_ACTION, f"an integer id in 0..{MAX_ACTION}")
    name = at.text("name", obj.get("name", ""), 200)
    rec.steps.append((agent, action, name))
    at.step = None


def _check_result(at: _At, rec: GameRecord, res: Any) -> dict[str, Any]:
    """The result object (after the last decision)."""
    if not isinstance(res, dict) or not isinstance(res.get("returns"), dict):
        raise at.error(
            f"the result needs a returns object (an object with keys {list(RESULT_KEYS)}), got "
            f"{_show(res)}"
        )
    at.obj("the result", res, RESULT_KEYS, ("returns",))
    returns = {}
    for a, v in res["returns"].items():
        if a not in rec.agents:
            raise at.error(f"result.returns: {_show(a)} is not one of the agents {rec.agents}")
        returns[a] = at.number(f"result.returns.{a}", v)
    out: dict[str, Any] = {"returns": returns}
    if "outcome" in res:
        o = res["outcome"]
        out["outcome"] = None if o is None else at.text("result.outcome", o, 100)
    if "hands_played" in res:
        out["hands_played"] = at.int_("result.hands_played", res["hands_played"], 0, MAX_COUNT)
    if "steps" in res:
        n = len(rec.steps)
        out["steps"] = at.int_("result.steps", res["steps"], n, n, f"{n} (the decisions above)")
    for key in ("terminated", "truncated"):
        if key in res:
            out[key] = at.bool_(f"result.{key}", res[key])
    if out.get("terminated") and out.get("truncated"):
        raise at.error("result.terminated and result.truncated cannot both be true")
    return out


def _check_objects(where: str, objs: list[tuple[int, Any]]) -> GameRecord:
    """The record that ``objs`` (line number, parsed JSON value) hold, every field of every line
    checked: the one place a record's schema is checked (:func:`read_record` and
    :func:`replay`).
    """
    at = _At(where)
    if not objs:
        raise ValueError(f"{where}: empty record")
    at.line, head = objs[0]
    rec = _check_header(at, head)
    for line, obj in objs[1:]:
        at.line = line
        if rec.result is not None:
            raise at.error("nothing may follow the result")
        if isinstance(obj, dict) and "result" in obj:
            at.obj("the result line", obj, ("result",), ("result",))
            rec.result = _check_result(at, rec, obj["result"])
        else:
            _check_step(at, rec, obj)
    return rec


def check_record(record: GameRecord) -> GameRecord:
    """A checked copy of a record built in Python (what :func:`read_record` checks of a file;
    the errors name the line the field would be on in the file, ``record: line 1: seed ...``).

    Raises:
        ValueError: for any field of the wrong shape, range or value (a field of the wrong
            type raises ``ArgumentTypeError``, which is a ``TypeError`` and a ``ValueError``).
        TypeError: (``ArgumentTypeError``) if ``record`` is not a :class:`GameRecord`.
    """
    if not isinstance(record, GameRecord):
        raise ArgumentTypeError(f"record must be a GameRecord, got {type(record).__name__}")
    objs: list[tuple[int, Any]] = [(1, record.header())]
    if not isinstance(record.steps, (list, tuple)):
        raise ArgumentTypeError(f"record.steps must be a list, got {_show(record.steps)}")
    for k, step in enumerate(record.steps):
        if not isinstance(step, (list, tuple)) or len(step) != 3:
            raise ArgumentTypeError(
                f"record.steps[{k}] must be (agent, action, name), got {_show(step)}"
            )
        agent, action, name = step
        objs.append((k + 2, {"step": k, "agent": agent, "action": action, "name": name}))
    if record.result is not None:
        objs.append((len(objs) + 1, {"result": record.result}))
    return _check_objects("record", objs)


def read_record(source: str | os.PathLike[str] | list[str]) -> GameRecord:
    """Read a record from a ``.jsonl`` file (or from its lines), checking every field.

    Args:
        source: the file's path, or its lines (the text split at each newline).

    Raises:
        ValueError: for anything that is not a version-1 record, naming the file (``record``
            for lines), the line and the field, the value and what is allowed: a file that
            cannot be read (missing, a folder, not UTF-8, ...), bad JSON, another format or
            version, an unknown game, a field of the wrong type or out of range, an unknown or
            missing field, a malformed decision or result. A field of the wrong type raises
            ``ArgumentTypeError``, which is both a ``TypeError`` and a ``ValueError``.
        TypeError: (``ArgumentTypeError``) for a ``source`` that is neither a path nor a list
            of strings.
    """
    if isinstance(source, list):
        where, lines = "record", source
        for k, line in enumerate(lines):
            if not isinstance(line, str):
                raise ArgumentTypeError(f"source[{k}] must be a line of text, got {_show(line)}")
    elif isinstance(source, (str, os.PathLike)):
        where = _short_path(os.fsdecode(source))
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as e:
            raise ValueError(f"{where}: cannot read the record: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise ValueError(
                f"{where}: cannot read the record: not UTF-8 text (byte {e.start})"
            ) from None
        except ValueError as e:  # a path with a NUL character
            raise ValueError(f"{where}: cannot read the record: {e}") from None
        # JSON Lines ends a line at "\n" only: str.splitlines() would also break a string
        # holding U+2028 or U+0085, which JSON allows unescaped
        lines = text.split("\n")
    else:
        raise ArgumentTypeError(
            f"source must be a path or a list of lines, got {type(source).__name__}"
        )
    at = _At(where)
    objs = []
    for i, text in enumerate(lines, 1):
        if not text.strip():
            continue
        at.line = i
        objs.append((i, _json_line(at, text)))
    return _check_objects(where, objs)


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
    record: GameRecord | str | os.PathLike[str],
    on_step: Callable[[Any, int, str, int], None] | None = None,
    check_result: bool = True,
) -> ReplayResult:
    """Play a record back through a fresh env, checking every decision.

    Args:
        record: a :class:`GameRecord` (checked as :func:`check_record` does) or the path of a
            ``.jsonl`` record (read with :func:`read_record`).
        on_step: called as ``on_step(env, i, agent, action)`` before decision ``i`` is applied
            (``env`` is the raw env: ``env.render_text()``, ``env.observe(agent)``) and once more
            after the last with ``i = len(steps)``, ``agent = ""``, ``action = -1``.
        check_result: compare the returns and outcome with the record's result.

    Returns:
        The replay's result (its ``record`` is the checked copy); ``matches`` is False only
        when the record has no result or ``check_result`` is off.

    Raises:
        ValueError: for a malformed record (as :func:`read_record`; a field of the wrong type
            raises ``ArgumentTypeError``, both a ``TypeError`` and a ``ValueError``), a record
            of another env version, a stacked deck or dealer the env refuses, a decision by the
            wrong agent, an action id the env does not have or an illegal one, a name that
            does not match its action id, a game still running after the last decision of a
            finished record, or returns or an outcome other than the record's (each naming the
            step).
    """
    import rummy_env  # noqa: PLC0415

    if on_step is not None and not callable(on_step):
        raise ArgumentTypeError(f"on_step must be a function or None, got {_show(on_step)}")
    record = check_record(record) if isinstance(record, GameRecord) else read_record(record)
    env_name = _versioned(record.game)
    if record.env and record.env != env_name:
        raise ValueError(
            f"the record was played on {record.env}; this rummy_env has {env_name}, whose "
            "rules or dealing may differ"
        )
    # the options passed the game's own checks in check_record, so this does not raise
    env = rummy_env.ENV_MODULES[record.game].raw_env(**record.options)
    try:
        env.reset(seed=record.seed, options=record.reset_options)
    except (TypeError, ValueError) as e:  # a deck that is not the game's, a seat that can't deal
        cls = ArgumentTypeError if isinstance(e, TypeError) else ValueError
        raise cls(f"the record's reset_options are refused: {e}") from None
    names = list(env.possible_agents)
    if names != record.agents:
        raise ValueError(f"the record's agents {record.agents} are not the env's {names}")
    num_actions = env.game.num_actions
    returns = dict.fromkeys(names, 0.0)
    for i, (agent, action, name) in enumerate(record.steps):
        if all(env.terminations[a] or env.truncations[a] for a in names):
            raise ValueError(f"step {i}: the game is over, but the record goes on")
        if env.agent_selection != agent:
            raise ValueError(f"step {i}: {env.agent_selection} is to act, the record has {agent}")
        if not 0 <= action < num_actions:
            raise ValueError(
                f"step {i}: {agent}'s action {action} is not an action of {env_name} "
                f"(0..{num_actions - 1})"
            )
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
            if a in want and abs(want[a] - returns[a]) > 1e-6:
                raise ValueError(
                    f"{a}'s return is {returns[a]:g} on replay, {want[a]:g} in the record"
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
    "check_record",
    "read_record",
    "replay",
]
