"""Agents by name for the arena, imported lazily.

A registry entry is ``"module:Class"`` plus default keyword arguments; the class is imported only
when an agent of that name is built, so heavy agents (search, torch) cost nothing until used. Any
``"package.module:Class"`` string also works as an agent name, and ``@key=value`` suffixes pass
keyword arguments: ``ismcts@iterations=200``, ``simple@take_rule=best_meld``.

:func:`check_agent` is the one check of a spec for a game, shared by :func:`agent_spec`,
:func:`make_agent`, the arena (``ArenaSpec``) and the command line: it raises ``ValueError``
(``rummy_env.core.validate.ArgumentTypeError``, also a ``TypeError``, for a value of the wrong
type) with a one-line message naming what is wrong and what is allowed, for an unknown agent, an
agent of another game, an unknown parameter, a value of the wrong type or out of range, a missing
checkpoint file or a checkpoint trained on another game.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, NamedTuple

from rummy_env.core.validate import ArgumentTypeError

_CLASSES: dict[str, Any] = {}
"""Target -> class, imported once."""


@dataclass(frozen=True)
class AgentEntry:
    """How to build one named agent: ``Class(seed=..., **kwargs)``."""

    target: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    doc: str = ""
    takes_game: bool = False
    """The class takes ``game=``: :func:`resolve` passes the game it resolves for."""

    builds_alike: typing.ClassVar[bool] = True
    """Every agent :meth:`build` makes is of one class with the same arguments; only the seed
    differs (``rummy_env.wrappers.RummySingleAgentEnv`` relies on it)."""

    def agent_class(self) -> Any:
        """The class of the entry, imported.

        Raises:
            ValueError: for a class that cannot be imported.
        """
        found = _CLASSES.get(self.target)
        if found is not None:  # the Gymnasium envs build their opponents every episode
            return found
        # the package installed as ``agents`` before it took a name of its own
        mod_name, _, cls_name = _full_target(self.target).partition(":")
        try:
            obj: Any = importlib.import_module(mod_name)
            for part in cls_name.split("."):
                obj = getattr(obj, part)
        except Exception as e:  # noqa: BLE001 - any failure of an import is the user's to read
            raise ValueError(f"agent {self.target!r}: cannot import it ({_one_line(e)})") from None
        _CLASSES[self.target] = obj
        return obj

    def build(self, seed: int | None = None) -> Any:
        """The agent, seeded (so an entry is an agent factory for
        ``rummy_env.wrappers.RummySingleAgentEnv``).

        Raises:
            ValueError: for a class that cannot be imported.
        """
        return self.agent_class()(seed=seed, **self.kwargs)


AGENTS: dict[str, AgentEntry] = {
    "random": AgentEntry("rummy_agents.random_agent:RandomAgent", doc="uniform over legal actions"),
    "ismcts": AgentEntry("rummy_agents.ismcts:ISMCTSAgent", doc="information-set MCTS"),
    "ppo": AgentEntry(
        "rummy_agents.ppo_agent:PPOAgent",
        doc="trained PPO net: the game's published agent, or @checkpoint=PATH",
        takes_game=True,
    ),
    "heuristic": AgentEntry(
        "rummy_agents.heuristic:HeuristicAgent",
        doc="ISMCTS's compiled rollout policy, batched over games (fast training opponent)",
    ),
}
"""Agents of every game (extend with :func:`register_agent`)."""

GAME_AGENTS: dict[str, dict[str, AgentEntry]] = {
    "gin_rummy": {
        "simple": AgentEntry(
            "rummy_agents.gin_rummy_rules:GinRummySimpleAgent", doc="EAAI simple player"
        ),
        "simple_best": AgentEntry(
            "rummy_agents.gin_rummy_rules:GinRummySimpleAgent",
            {"take_rule": "best_meld"},
            doc="simple player, takes a discard only if a best arrangement melds it",
        ),
        "planner": AgentEntry(
            "rummy_agents.gin_rummy_rules:GinRummyPlannerAgent",
            doc="simple player with a one-draw lookahead and card tracking",
        ),
        "novice": AgentEntry(
            "rummy_agents.gin_rummy_rules:GinRummyNoviceAgent", doc="knock asap, random draws"
        ),
        "openspiel": AgentEntry(
            "rummy_agents.openspiel_bot:OpenSpielSimpleBot", doc="OpenSpiel's simple Gin bot"
        ),
        "ppo_search": AgentEntry(
            "rummy_agents.ismcts.policy:PolicySearchAgent",
            doc="the trained net (or @checkpoint=PATH), its moves checked by paired rollouts"
            " (the net against Gin's rules)",
            takes_game=True,
        ),
    },
    "five_hundred_rum": {
        "greedy": AgentEntry(
            "rummy_agents.five_hundred_rum_greedy:FiveHundredRumGreedyAgent",
            doc="melds asap, deep takes that pay, calls Rummy!, safe discards",
        ),
    },
    "rummy51": {
        "greedy": AgentEntry(
            "rummy_agents.rummy51_greedy:Rummy51GreedyAgent",
            doc="opens asap, builds, retrieves jokers, safe discards",
        ),
        "greedy_plus": AgentEntry(
            "rummy_agents.rummy51_greedy:Rummy51GreedyAgent",
            {"take_gain": "any", "near_order": True, "joker_layoff": "out", "hold_melds": 3},
            doc="greedy taking any discard that helps, near cards by links, jokers and new melds"
            " kept in hand until it goes out (new melds: while opponents hold 4+ cards)",
        ),
    },
}
"""Each game's own agents, by game name: a name means one class in one game. Without a game,
a name only one game has means that game's agent."""


def register_agent(
    name: str, target: str, doc: str = "", game: str | None = None, **kwargs: Any
) -> None:
    """Register (or replace) a named agent.

    Args:
        name: the name used on the command line.
        target: ``"module:Class"``; the class is called as ``Class(seed=seed, **kwargs)``.
        doc: one-line description.
        game: the game it plays (:data:`GAME_AGENTS`), or ``None`` for every game.
        **kwargs: default keyword arguments.
    """
    if ":" not in target:
        raise ValueError(f"target must look like 'module:Class', got {target!r}")
    if game is None:
        AGENTS[name] = AgentEntry(target, dict(kwargs), doc)
    else:
        GAME_AGENTS.setdefault(game, {})[name] = AgentEntry(target, dict(kwargs), doc)


def parse_value(text: str) -> Any:
    """An agent parameter's value: int, float, true/false, none, else the text."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
"""A dotted Python name (``package.module`` or ``Class``)."""

_MAX_MESSAGE = 400
"""Longest error text passed on from an agent's own exception (longer ones are cut)."""


def _one_line(error: BaseException) -> str:
    """The text of an exception on one line (whitespace runs collapsed, long texts cut)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split an agent spec ``name@key=value@key=value`` into the name and the text of each
    parameter (both stripped of surrounding spaces).

    Raises:
        ArgumentTypeError: if ``spec`` is not a string.
        ValueError: for an empty name, a parameter without ``=`` or without a key, a parameter
            given twice, or ``@seed=`` (the arena seeds every agent itself).
    """
    if not isinstance(spec, str):
        raise ArgumentTypeError(
            f"agent spec must be a string like 'name' or 'name@key=value', got {spec!r:.80}"
        )
    name, *params = spec.split("@")
    name = name.strip()
    if not name:
        raise ValueError(f"agent spec {spec!r} has no agent name: expected name or name@key=value")
    raw: dict[str, str] = {}
    for p in params:
        key, sep, value = p.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"bad agent parameter {p!r} in {spec!r}: expected key=value")
        if key == "seed":
            raise ValueError(f"{spec!r}: the arena seeds every agent itself; drop @seed=")
        if key in raw:
            raise ValueError(f"agent parameter {key!r} is given twice in {spec!r}")
        raw[key] = value.strip()
    return name, raw


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split an agent spec ``name@key=value@key=value`` into the name and keyword arguments
    (values read by :func:`parse_value`: int, float, true/false, none, or text; the typed
    reading of :func:`check_agent` follows the class's annotations instead).

    Raises:
        ValueError: as :func:`split_spec`.
    """
    name, raw = split_spec(spec)
    return name, {k: parse_value(v) for k, v in raw.items()}


def _game_names(game: str) -> str:
    """The names that play ``game``, for an error message."""
    return ", ".join([*AGENTS, *GAME_AGENTS[game]]) + ", or 'package.module:Class'"


def _lookup(name: str, game: str | None) -> AgentEntry:
    """The registry entry of an agent name (a ``module:Class`` name is its own entry).

    Raises:
        ValueError: for an unknown game, an unknown name, a name of another game's agent, a name
            several games have without ``game``, or a malformed ``module:Class``.
    """
    if game is not None and (not isinstance(game, str) or game not in GAME_AGENTS):
        raise ValueError(f"game must be one of {', '.join(GAME_AGENTS)}, got {game!r:.80}")
    owners = [g for g, table in GAME_AGENTS.items() if name in table]
    if name in AGENTS:
        return AGENTS[name]
    if game is not None and name in GAME_AGENTS[game]:
        return GAME_AGENTS[game][name]
    if game is None and len(owners) == 1:
        return GAME_AGENTS[owners[0]][name]
    if ":" in name:
        module, _, cls = name.partition(":")
        if not (_DOTTED.fullmatch(module) and _DOTTED.fullmatch(cls)):
            raise ValueError(
                f"agent {name!r} is not a registered name and does not look like "
                "'package.module:Class'"
            )
        return AgentEntry(name)
    if owners:
        if game is None:
            raise ValueError(
                f"agent {name!r} is an agent of several games ({', '.join(owners)}): pass game="
            )
        raise ValueError(
            f"agent {name!r} plays {', '.join(owners)}, not {game}; agents of {game}: "
            + _game_names(game)
        )
    if game is None:
        known = ", ".join([*AGENTS, *sorted(set().union(*GAME_AGENTS.values()))])
        raise ValueError(f"unknown agent {name!r}; available: {known}, or 'package.module:Class'")
    raise ValueError(f"unknown agent {name!r} for {game}; agents of {game}: {_game_names(game)}")


def resolve(spec: str, game: str | None = None) -> AgentEntry:
    """The registry entry of an agent spec (a ``module:Class`` name is its own entry), with
    the spec's ``@key=value`` parameters (read by :func:`parse_value`) merged over the entry's
    defaults, without importing the class. ``game`` picks the game's own agents
    (:data:`GAME_AGENTS`); without it, a name only one game has is that game's agent.
    :func:`check_agent` does this and checks the parameters against the class.

    Raises:
        ValueError: for an unknown name, a name of another game's agent, a name several games
            have without ``game``, or a malformed spec.
    """
    name, kwargs = parse_spec(spec)
    entry = _lookup(name, game)
    if entry.takes_game and game is not None:
        kwargs.setdefault("game", game)
    return AgentEntry(entry.target, {**entry.kwargs, **kwargs}, entry.doc, entry.takes_game)


def _full_target(target: str) -> str:
    """``target`` with the package's old name ``agents`` spelled ``rummy_agents``."""
    if target == "agents" or target.startswith(("agents.", "agents:")):
        return "rummy_" + target
    return target


def plays_games(agent: Any) -> tuple[str, ...] | None:
    """The games an agent (a class or an instance) plays; ``None`` when it does not say (any
    game).

    In order: a ``games`` attribute (a tuple of game names), the game its checkpoint was trained
    on (``meta["game"]``, as :class:`rummy_agents.ppo_agent.PPOAgent` records it), the games
    whose registry entries (:data:`GAME_AGENTS`) build its class.
    """
    declared = getattr(agent, "games", None)
    if isinstance(declared, str):
        declared = (declared,)
    if isinstance(declared, (tuple, list)) and all(isinstance(g, str) for g in declared):
        return tuple(declared) or None
    meta = getattr(agent, "meta", None)
    if isinstance(meta, Mapping) and isinstance(meta.get("game"), str):
        return (meta["game"],)
    cls = agent if inspect.isclass(agent) else type(agent)
    target = f"{cls.__module__}:{cls.__qualname__}"
    owners = tuple(
        g
        for g, table in GAME_AGENTS.items()
        if any(_full_target(e.target) == target for e in table.values())
    )
    return owners or None


def _check_plays(spec: str, agent: Any, game: str | None) -> None:
    """Refuse an agent (class or instance) that says it plays other games than ``game``."""
    plays = plays_games(agent)
    if game is None or plays is None or game in plays:
        return
    why = ""
    meta = getattr(agent, "meta", None)
    if isinstance(meta, Mapping) and meta.get("game") in plays:
        why = f" (its checkpoint was trained on {meta['game']})"
    raise ValueError(
        f"agent {spec!r} plays {', '.join(plays)}{why}, not {game}; agents of {game}: "
        + _game_names(game)
    )


class _Params(NamedTuple):
    """The keyword parameters of an agent class (``seed`` left out)."""

    named: dict[str, inspect.Parameter]
    open: bool  # it takes **kwargs: any name goes
    takes_seed: bool


@functools.cache
def _parameters(cls: type) -> _Params | None:
    """The parameters of ``cls(seed=..., **kwargs)``; ``None`` when its signature is unknown
    (cached: the arena builds agents for every game).
    """
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    params = sig.parameters
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    open_ = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    seed = params.get("seed")
    named = {k: p for k, p in params.items() if k != "seed" and p.kind in keyword}
    return _Params(named, open_, open_ or (seed is not None and seed.kind in keyword))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The evaluated annotations of ``cls.__init__`` (empty when they do not evaluate; cached)."""
    try:
        # the class's own __init__ (mypy flags __init__ read from an instance, not a class)
        return typing.get_type_hints(cls.__init__)  # type: ignore[misc]
    except Exception:  # annotations that do not evaluate: values are read generically
        return {}


def _kinds(hint: Any) -> list[Any] | None:
    """What a parameter annotation allows, as a list of ``None``, ``bool``, ``int``, ``float``,
    ``str`` and ``("choice", value)`` items; ``None`` for an annotation read generically.
    """
    if hint is Any:
        return None
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(hint):
            kinds = _kinds(arg)
            if kinds is None:
                return None
            out += kinds
        return out
    if typing.get_origin(hint) is typing.Literal:
        return [("choice", v) for v in typing.get_args(hint)]
    if hint is type(None) or hint is None:
        return [None]
    if hint in (bool, int, float, str):
        return [hint]
    if isinstance(hint, type) and issubclass(hint, (os.PathLike, PurePath)):
        return [str]
    return None


def _describe(kinds: list[Any]) -> str:
    words = {None: "none", bool: "true or false", int: "an integer", float: "a number"}
    out = [words[k] for k in (None, bool, int, float) if k in kinds]
    choices = [v for k in kinds if isinstance(k, tuple) for v in k[1:]]
    if choices:
        out.append("one of " + ", ".join(repr(c) for c in choices))
    if str in kinds:
        out.append("text")
    return " or ".join(out)


def _coerce(name: str, key: str, text: str, hint: Any) -> Any:
    """The value of parameter ``key`` written as ``text``, read as its annotation ``hint`` says
    (none, true/false, an integer, a number, a choice, text; in that order of preference);
    without a usable annotation, :func:`parse_value`.

    Raises:
        ArgumentTypeError: if ``text`` is none of what the annotation allows.
    """
    kinds = _kinds(hint) if hint is not None else None
    if not kinds:
        return parse_value(text)
    low = text.lower()
    if None in kinds and low in ("none", "null"):
        return None
    if bool in kinds and low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        if conv in kinds:
            try:
                return conv(text)
            except ValueError:
                pass
    for k in kinds:
        if isinstance(k, tuple) and str(k[1]) == text:
            return k[1]
    if str in kinds:
        return text
    raise ArgumentTypeError(f"agent {name!r}: {key} must be {_describe(kinds)}, got {text!r}")


def _check_checkpoint(name: str, kwargs: dict[str, Any], params: _Params | None) -> None:
    """A ``checkpoint`` parameter (given, or the class's default) must name an existing file.

    Raises:
        ValueError: if it names no file.
    """
    if "checkpoint" in kwargs:
        path = kwargs["checkpoint"]
    elif params is not None and "checkpoint" in params.named:
        path = params.named["checkpoint"].default
    else:
        return
    if not isinstance(path, (str, os.PathLike)):
        return
    file = Path(path).expanduser()
    if not file.is_file():
        where = "" if file.is_absolute() else f" (in {Path.cwd()})"
        raise ValueError(
            f"agent {name!r}: checkpoint {str(path)!r} is not a file{where}; give "
            f"{name}@checkpoint=PATH of an agent checkpoint"
        )


def _prepare(spec: str, game: str | None) -> tuple[AgentEntry, type]:
    """The checks of :func:`check_agent` that need no agent: the entry, with its parameters
    typed by the class's annotations, and the class.
    """
    name, raw = split_spec(spec)
    base = _lookup(name, game)
    cls = base.agent_class()
    if not isinstance(cls, type):  # inspect.isclass; narrows to ``type`` for the cached helpers
        raise ValueError(f"agent {name!r}: {base.target} is a {type(cls).__name__}, not a class")
    _check_plays(name, cls, game)
    params = _parameters(cls)
    if params is not None and not params.takes_seed:
        raise ValueError(
            f"agent {name!r}: {cls.__qualname__} takes no seed= argument (agents are built as "
            "Class(seed=..., **parameters))"
        )
    kwargs = dict(base.kwargs)
    for key, text in raw.items():
        if params is not None and not params.open and key not in params.named:
            if not params.named:
                raise ValueError(f"agent {name!r} takes no parameters, got {key!r}={text!r}")
            raise ValueError(
                f"agent {name!r} has no parameter {key!r}; its parameters: "
                + ", ".join(params.named)
            )
        kwargs[key] = _coerce(name, key, text, _hints(cls).get(key))
    if params is not None:
        missing = [k for k, p in params.named.items() if p.default is p.empty and k not in kwargs]
        if missing:
            raise ValueError(
                f"agent {name!r} needs the parameter(s) {', '.join(missing)}: "
                f"{name}@{missing[0]}=VALUE"
            )
    _check_checkpoint(name, kwargs, params)
    if base.takes_game and game is not None:
        kwargs.setdefault("game", game)
    return AgentEntry(base.target, kwargs, base.doc, base.takes_game), cls


def _build(spec: str, cls: type, kwargs: dict[str, Any], seed: int | None, game: str | None) -> Any:
    """``cls(seed=seed, **kwargs)``, its own errors turned into one-line ``ValueError``s (or
    ``ArgumentTypeError``s for a ``TypeError``), checked to play ``game``.
    """
    try:
        agent = cls(seed=seed, **kwargs)
    except TypeError as e:
        raise ArgumentTypeError(f"agent {spec!r}: {_one_line(e)}") from None
    except Exception as e:  # the class's own checks (ValueError), a bad checkpoint, ...
        raise ValueError(f"agent {spec!r}: {_one_line(e)}") from None
    _check_plays(spec, agent, game)
    return agent


def check_agent(spec: str, game: str | None = None) -> AgentEntry:
    """Parse and check an agent spec (``name`` or ``name@key=value@...``) for ``game``: the
    one check behind :func:`agent_spec`, :func:`make_agent`, the arena and ``rummy-env arena``.

    In order: the spec's form (:func:`split_spec`); the name (registered for ``game`` or for
    every game, or an importable ``package.module:Class``); the class plays ``game``
    (:func:`plays_games`) and takes ``seed=``; each parameter is one of the class's keyword
    parameters and its text reads as the parameter's annotation allows (``int | None``: an
    integer or ``none``); required parameters are given; a ``checkpoint`` parameter names a
    file. Then one agent is built (seed 0): the class's own checks of its values run, and an
    agent that says what it plays (a checkpoint's game) must play ``game``.

    Args:
        spec: the agent spec.
        game: the game it must play (a key of :data:`GAME_AGENTS`); ``None``: a name only one
            game has means that game's agent, and nothing is checked against a game.

    Returns:
        The agent's factory: an :class:`AgentEntry` whose ``kwargs`` hold the typed parameters.

    Raises:
        ValueError: with a one-line message naming the spec, what is wrong and what is allowed;
            :class:`~rummy_env.core.validate.ArgumentTypeError` (also a ``TypeError``) for a
            value of the wrong type.
    """
    entry, cls = _prepare(spec, game)
    _build(spec, cls, entry.kwargs, 0, game)
    return entry


def check_spec(spec: str) -> None:
    """Check that an agent spec names a registered agent (of any game) or a ``module:Class``,
    without importing it (:func:`check_agent` checks everything, for one game).

    Raises:
        ValueError: for an unknown name or a malformed spec.
    """
    name, _ = parse_spec(spec)
    names = set(AGENTS).union(*(set(g) for g in GAME_AGENTS.values()))
    if name not in names and ":" not in name:
        raise ValueError(f"unknown agent {name!r}; available: {', '.join(sorted(names))}")


def agent_spec(name: str, game: str | None = None) -> AgentEntry:
    """The factory of an agent spec (``name`` or ``name@key=value...``) for ``game``, checked
    by :func:`check_agent`: its ``build(seed)`` makes a seeded agent. Pass it as an opponent of
    ``rummy_env.wrappers.RummySingleAgentEnv`` to rebuild the agent at every reset.

    Raises:
        ValueError: as :func:`check_agent` (a ``TypeError`` too for a value of the wrong type).
    """
    return check_agent(name, game)


def make_agent(name: str, seed: int | None = None, game: str | None = None) -> Any:
    """Build the agent of a spec (``name`` or ``name@key=value...``) with a seed, for ``game``
    (its own entry of the name, if any), with the checks of :func:`check_agent`.

    Raises:
        ValueError: as :func:`check_agent` (a ``TypeError`` too for a value of the wrong type).
    """
    entry, cls = _prepare(name, game)
    return _build(name, cls, entry.kwargs, seed, game)


__all__ = [
    "AGENTS",
    "GAME_AGENTS",
    "AgentEntry",
    "agent_spec",
    "check_agent",
    "check_spec",
    "make_agent",
    "parse_spec",
    "parse_value",
    "plays_games",
    "register_agent",
    "resolve",
    "split_spec",
]
