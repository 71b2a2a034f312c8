"""What can be played: the games, their rule options and the agents of the registry
(:func:`catalog`), and the checks of a request's rule options and opponents (an opponent's
costly parameters within :data:`~rummy_agents.web.limits.COST_LIMITS`).
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from rummy_agents.arena.registry import AGENTS, GAME_AGENTS, check_agent, split_spec
from rummy_agents.cli import BASELINES, CLIError, make_config, parse_options, parse_value
from rummy_agents.web.errors import ApiError
from rummy_agents.web.limits import COST_LIMITS, MAX_GAME_STEPS
from rummy_env.games import GAMES

TITLES = {"gin_rummy": "Gin Rummy", "five_hundred_rum": "500 Rum", "rummy51": "Rummy 51"}

HUMAN = "human"
"""The person's label in the game record."""

REFEREE = "referee"
"""The view name of the referee's view (every card face up) in a replay."""


def json_value(x: Any) -> Any:
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
                {"name": f.name, "default": json_value(f.default), "type": str(f.type)}
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


def read_options(game: str, raw: Any, players: Any) -> dict[str, Any]:
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
