"""Argument checks shared by every public entry point (envs, vector env, rule options, worlds).

Each check either returns the value in a normal form or raises an error whose message names the
argument, shows the value and says what is allowed. A value of the wrong type raises
:class:`ArgumentTypeError`, which is both a ``TypeError`` and a ``ValueError`` (code written
against the earlier ``ValueError`` keeps working); a value of the right type but out of range
raises ``ValueError``. ``bool`` is never accepted as an integer: ``True`` for a seat, a seed or an
action is almost always a bug.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np

# Largest batch a vector env or ``sample_worlds`` builds: far above any practical use (a game
# record is hundreds of bytes), low enough that a typo fails here instead of in the allocator.
MAX_GAMES = 2**24


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type (a ``TypeError`` that ``except ValueError`` also catches)."""


class ResetNeeded(RuntimeError, ValueError):
    """A call that needs a running episode: before ``reset()``, or after the episode's agents
    have left (a ``RuntimeError``, as Gymnasium's order checks raise, that ``except ValueError``
    also catches).
    """


def _show(value: Any) -> str:
    """A short repr of a value for an error message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def is_int(value: Any) -> bool:
    """True for a Python or numpy integer (``bool`` and ``np.bool_`` are not integers here)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an ``int`` in ``[lo, hi]`` (either bound may be open).

    Raises:
        ArgumentTypeError: if ``value`` is not a Python or numpy integer.
        ValueError: if it is out of range.
    """
    if lo is None and hi is None:
        allowed = "an integer"
    elif hi is None:
        allowed = f"an integer >= {lo}"
    elif lo is None:
        allowed = f"an integer <= {hi}"
    else:
        allowed = f"an integer in {lo}..{hi}"
    if not is_int(value):
        raise ArgumentTypeError(f"{name} must be {allowed}, got {_show(value)}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be {allowed}, got {v}")
    return v


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a ``bool`` (Python or numpy bool only).

    Raises:
        ArgumentTypeError: for anything else (``0``/``1`` included).
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name} must be True or False, got {_show(value)}")
    return bool(value)


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` if it is one of the strings ``choices``.

    Raises:
        ArgumentTypeError: if it is not a string.
        ValueError: if it is not one of ``choices``.
    """
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be one of {tuple(choices)}, got {_show(value)}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {_show(value)}")
    return value


def check_list(name: str, value: Any, n: int) -> list[Any] | tuple[Any, ...] | np.ndarray:
    """``value`` if it is a list, tuple or 1-D array of exactly ``n`` entries (one per game).

    Raises:
        ArgumentTypeError: for another type (a bare value, a string, a dict, ...).
        ValueError: for another length.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if not isinstance(value, (list, tuple, np.ndarray)):
        raise ArgumentTypeError(
            f"{name} must be a list with one entry per game ({n}), got {_show(value)}"
        )
    if len(value) != n:
        raise ValueError(f"{name} must have one entry per game ({n}), got {len(value)} entries")
    return value


@overload
def check_seed(name: str, seed: Any, n: None = None) -> int | None: ...


@overload
def check_seed(name: str, seed: Any, n: int) -> int | list[int] | None: ...


def check_seed(name: str, seed: Any, n: int | None = None) -> int | list[int] | None:
    """A seed: ``None`` (fresh entropy) or a non-negative integer; with ``n`` given also a list
    of ``n`` non-negative integers (one per game).

    Raises:
        ArgumentTypeError: for another type.
        ValueError: for a negative seed or a list of the wrong length.
    """
    if seed is None:
        return None
    if n is not None and isinstance(seed, (list, tuple, np.ndarray)):
        seeds = check_list(name, seed, n)
        return [_seed_int(f"{name}[{i}]", s, n) for i, s in enumerate(seeds)]
    return _seed_int(name, seed, n)


def _seed_int(name: str, seed: Any, n: int | None) -> int:
    allowed = "None or an integer >= 0" + ("" if n is None else f" or a list of {n} of them")
    if not is_int(seed):
        raise ArgumentTypeError(f"{name} must be {allowed}, got {_show(seed)}")
    if seed < 0:
        raise ValueError(f"{name} must be {allowed}, got {int(seed)}")
    return int(seed)


def check_rng_seed(name: str, seed: Any) -> int | np.random.Generator | None:
    """A seed for a numpy ``Generator``: ``None``, a non-negative integer or a ``Generator``.

    Raises:
        ArgumentTypeError: for another type.
        ValueError: for a negative integer.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return None
    if not is_int(seed):
        raise ArgumentTypeError(
            f"{name} must be None, an integer >= 0 or a numpy Generator, got {_show(seed)}"
        )
    if seed < 0:
        raise ValueError(f"{name} must be None, an integer >= 0 or a numpy Generator, got {seed}")
    return int(seed)


def check_options(name: str, options: Any) -> dict[str, Any]:
    """A copy of an ``options`` mapping (``None``: empty).

    Raises:
        ArgumentTypeError: if it is neither ``None`` nor a dict.
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ArgumentTypeError(f"{name} must be a dict or None, got {_show(options)}")
    return dict(options)


def check_agent(name: str, agent: Any, agents: Sequence[str]) -> str:
    """``agent`` if it is one of the names ``agents``.

    Raises:
        ArgumentTypeError: if it is not a string.
        ValueError: if it is an unknown name.
    """
    if not isinstance(agent, str):
        raise ArgumentTypeError(f"{name} must be an agent name {list(agents)}, got {_show(agent)}")
    if agent not in agents:
        raise ValueError(f"unknown {name} {agent!r}; agents: {list(agents)}")
    return agent


def check_action(name: str, action: Any) -> int:
    """One action id: a Python or numpy integer (or a 0-d integer array, as Gymnasium allows).

    Raises:
        ArgumentTypeError: for another type (``bool``, floats and strings included).
    """
    if isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
        action = action[()]
    if not is_int(action):
        raise ArgumentTypeError(
            f"{name} must be an integer action id (a Python or numpy int), got {_show(action)}"
        )
    return int(action)


def check_actions(name: str, actions: Any, n: int) -> np.ndarray:
    """One action id per game as an array of shape ``(n,)`` with an integer dtype.

    Raises:
        ArgumentTypeError: for a non-integer dtype (floats, bools, strings, objects).
        ValueError: for another shape (or a ragged nested list).
    """
    try:
        a = np.asarray(actions)
    except (ValueError, TypeError):
        raise ValueError(
            f"{name} must be an integer array of shape ({n},), got {_show(actions)}"
        ) from None
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    if a.dtype.kind not in "iu":
        raise ArgumentTypeError(f"{name} must be integers, got dtype {a.dtype}")
    return a


def check_sample_worlds(game: Any, i: Any, player: Any, n: Any, seed: Any) -> None:
    """The arguments of a batched game's ``sample_worlds(i, player, n, seed)``.

    Raises:
        ArgumentTypeError: for a non-integer game, player or count, or a bad seed type.
        ValueError: for a game, player or count out of range, or a negative seed.
    """
    check_int("i", i, 0, game.num_games - 1)
    check_int("player", player, 0, game.num_players - 1)
    check_int("n", n, 1, MAX_GAMES)
    check_rng_seed("seed", seed)
