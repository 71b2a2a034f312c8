"""Agents by name for the arena, imported lazily.

A registry entry is ``"module:Class"`` plus default keyword arguments; the class is imported only
when an agent of that name is built, so heavy agents (search, torch) cost nothing until used. Any
``"package.module:Class"`` string also works as an agent name, and ``@key=value`` suffixes pass
keyword arguments: ``ismcts@iterations=200``, ``simple@take_rule=best_meld``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AgentEntry:
    """How to build one named agent: ``Class(seed=..., **kwargs)``."""

    target: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    doc: str = ""
    takes_game: bool = False
    """The class takes ``game=``: :func:`resolve` passes the game it resolves for."""

    def build(self, seed: int | None = None) -> Any:
        """The agent, seeded (so an entry is an agent factory for
        ``rummy_env.wrappers.RummySingleAgentEnv``).

        Raises:
            ValueError: for a class that cannot be imported.
        """
        mod_name, _, cls_name = self.target.partition(":")
        if mod_name == "agents" or mod_name.startswith("agents."):
            # The package installed as ``agents`` before it took a name of its own.
            mod_name = "rummy_" + mod_name
        try:
            cls = getattr(importlib.import_module(mod_name), cls_name)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"agent {self.target!r}: cannot import it ({e})") from None
        return cls(seed=seed, **self.kwargs)


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


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split an agent spec ``name@key=value@key=value`` into the name and keyword arguments
    (values: int, float, true/false, none, or text).

    Raises:
        ValueError: for a parameter without ``=``.
    """
    name, *params = spec.split("@")
    kwargs: dict[str, Any] = {}
    for p in params:
        key, sep, value = p.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"bad agent parameter {p!r} in {spec!r}: expected key=value")
        if key.strip() == "seed":
            raise ValueError(f"{spec!r}: the arena seeds every agent itself; drop @seed=")
        kwargs[key.strip()] = parse_value(value)
    return name.strip(), kwargs


def resolve(spec: str, game: str | None = None) -> AgentEntry:
    """The registry entry of an agent spec (a ``module:Class`` name is its own entry), with
    the spec's ``@key=value`` parameters merged over the entry's defaults. ``game`` picks the
    game's own agents (:data:`GAME_AGENTS`); without it, a name only one game has is that
    game's agent.

    Raises:
        ValueError: for an unknown name, a name of another game's agent, a name several games
            have without ``game``, or a malformed spec.
    """
    name, kwargs = parse_spec(spec)
    if game is not None and game not in GAME_AGENTS:
        raise ValueError(f"game must be one of {sorted(GAME_AGENTS)}, got {game!r}")
    owners = [g for g, table in GAME_AGENTS.items() if name in table]
    if name in AGENTS:
        entry = AGENTS[name]
    elif game is not None and name in GAME_AGENTS[game]:
        entry = GAME_AGENTS[game][name]
    elif game is None and len(owners) == 1:
        entry = GAME_AGENTS[owners[0]][name]
    elif ":" in name:
        entry = AgentEntry(name)
    elif game is None and owners:
        raise ValueError(
            f"agent {name!r} is an agent of several games ({', '.join(owners)}): pass game="
        )
    elif owners:
        raise ValueError(
            f"agent {name!r} plays {', '.join(owners)}, not {game}; agents of {game}: "
            f"{', '.join([*AGENTS, *GAME_AGENTS[game]])} or 'module:Class'"
        )
    else:
        known = [
            *AGENTS,
            *(GAME_AGENTS[game] if game else sorted(set().union(*GAME_AGENTS.values()))),
        ]
        raise ValueError(f"unknown agent {name!r}; available: {', '.join(known)} or 'module:Class'")
    if entry.takes_game and game is not None:
        kwargs.setdefault("game", game)
    return AgentEntry(entry.target, {**entry.kwargs, **kwargs}, entry.doc, entry.takes_game)


def check_spec(spec: str) -> None:
    """Check that an agent spec names a registered agent (of any game) or a ``module:Class``.

    Raises:
        ValueError: for an unknown name or a malformed spec.
    """
    name, _ = parse_spec(spec)
    names = set(AGENTS).union(*(set(g) for g in GAME_AGENTS.values()))
    if name not in names and ":" not in name:
        raise ValueError(f"unknown agent {name!r}; available: {', '.join(sorted(names))}")


def agent_spec(name: str, game: str | None = None) -> AgentEntry:
    """The factory of an agent spec (``name`` or ``name@key=value...``) for ``game``: its
    ``build(seed)`` makes a seeded agent. Pass it as an opponent of
    ``rummy_env.wrappers.RummySingleAgentEnv`` to rebuild the agent at every reset.

    Raises:
        ValueError: for an unknown name or a malformed spec.
    """
    return resolve(name, game)


def make_agent(name: str, seed: int | None = None, game: str | None = None) -> Any:
    """Build the agent of a spec (``name`` or ``name@key=value...``) with a seed, for ``game``
    (its own entry of the name, if any).

    Raises:
        ValueError: for an unknown name or a class that cannot be imported.
    """
    return resolve(name, game).build(seed)


__all__ = [
    "AGENTS",
    "GAME_AGENTS",
    "AgentEntry",
    "agent_spec",
    "check_spec",
    "make_agent",
    "parse_spec",
    "parse_value",
    "register_agent",
    "resolve",
]
