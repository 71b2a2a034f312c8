"""Entry points of the suite's Gymnasium ids: one learner seat against opponents picked by name.

``import rummy_env`` registers these ids (``rummy_env.GYM_IDS``; the entry points are strings,
so the env package never imports this one):

=============================  ===================  =====================================
id                             game                 default opponent
=============================  ===================  =====================================
``rummy/GinRummy-v0``          ``gin_rummy``        ``simple`` (EAAI simple player)
``rummy/FiveHundredRum-v1``    ``five_hundred_rum`` ``greedy``
``rummy/Rummy51-v1``           ``rummy51``          ``greedy``
=============================  ===================  =====================================

``gymnasium.make(id, **kwargs)`` builds a :class:`~rummy_env.wrappers.RummySingleAgentEnv`
(:func:`make_env`) and ``gymnasium.make_vec(id, num_envs=N, **kwargs)`` a
:class:`~rummy_env.wrappers.RummySingleAgentVectorEnv` over the batched core
(:func:`make_vec_env`); ``kwargs`` are the rule options (``num_players=3``, ``target=...``),
``opponent=`` (a registry spec such as ``"random"``, ``"greedy@hold_melds=3"``,
``"package.module:Class"``; an agent; a callable ``policy(observation, view)``; an agent factory
``build(seed)``; ``None`` for random legal moves; or a list of these, one per opponent seat) and
the env's own arguments (``learner_seat``, ``features``, ``illegal_action``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rummy_agents.arena.registry import AgentEntry, agent_spec
from rummy_agents.table_seat import TableSeatAgent
from rummy_env.wrappers import RummySingleAgentEnv, RummySingleAgentVectorEnv

DEFAULT_OPPONENTS = {"gin_rummy": "simple", "five_hundred_rum": "greedy", "rummy51": "greedy"}
"""Each game's rule-based agent: the opponent of the Gymnasium ids unless ``opponent=`` says."""


class _Default:
    """The ``opponent`` argument's default: the game's rule-based agent."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT = _Default()


class TableSeatFactory:
    """A factory of 2-player agents seated at 3- or 4-player Gin Rummy tables
    (:class:`~rummy_agents.TableSeatAgent` around each agent ``factory`` builds).

    Args:
        factory: an agent factory (``build(seed)``), such as ``agent_spec("simple")``.
    """

    def __init__(self, factory: Any) -> None:
        self.factory = factory

    def build(self, seed: int) -> TableSeatAgent:
        """A :class:`TableSeatAgent` around ``factory.build(seed)``."""
        return TableSeatAgent(self.factory.build(seed))

    def __repr__(self) -> str:
        return f"TableSeatFactory({self.factory!r})"


def _plays_tables(game: str, options: dict[str, Any]) -> bool:
    return game == "gin_rummy" and options.get("num_players", 2) not in (2, None)


def resolve_opponent(game: str, opponent: Any, tables: bool = False) -> Any:
    """What an env of ``rummy_env.wrappers`` takes for the ``opponent`` argument.

    A string is an agent spec of the registry (``rummy_agents.agent_spec``): ``"random"``
    becomes ``None`` (random legal moves, drawn in bulk by the vector env), any other name its
    factory, whose agent is built once here so that a bad name, parameter or class fails now.
    With ``tables`` (3- and 4-player Gin Rummy) named agents, 2-player agents, sit at the
    tables through :class:`TableSeatFactory`. A sequence is resolved entry by entry; anything
    else (an agent, a callable, a factory, ``None``) is passed on as it is.

    Raises:
        ValueError: for an unknown agent name, a malformed spec, a parameter the agent does not
            take or a bad value (``rummy_agents.arena.registry.check_agent``), naming
            ``opponent``.
    """
    if opponent is DEFAULT:
        opponent = DEFAULT_OPPONENTS[game]
    if isinstance(opponent, str):
        if opponent.strip() == "random":
            return None
        try:
            entry: AgentEntry = agent_spec(opponent, game)
            entry.build(0)
        except ValueError as e:
            raise ValueError(f"opponent={opponent!r}: {e}") from None
        except TypeError as e:
            raise TypeError(f"opponent={opponent!r}: {e}") from None
        return TableSeatFactory(entry) if tables else entry
    if isinstance(opponent, Sequence) and not isinstance(opponent, bytes):
        return [resolve_opponent(game, o, tables) for o in opponent]
    return opponent


def make_env(
    game: str = "gin_rummy",
    opponent: Any = DEFAULT,
    learner_seat: int | None = None,
    features: Any = None,
    illegal_action: str = "random",
    render_mode: str | None = None,
    **options: Any,
) -> RummySingleAgentEnv:
    """The single-agent env of a Gymnasium id (``gymnasium.make``).

    Args:
        game: the game (set by the id).
        opponent: the opponents (see the module docstring); default: the game's rule-based
            agent (:data:`DEFAULT_OPPONENTS`).
        learner_seat: the learner's seat, or ``None``: drawn at every reset.
        features: extra observation entries (``rummy_agents.features.FeatureSet``) or ``None``.
        illegal_action: ``"random"`` (replace an illegal action by a random legal one) or
            ``"raise"``.
        render_mode: ``None`` or ``"ansi"``.
        **options: the game's rule options.

    Raises:
        TypeError: (``ArgumentTypeError``) for an argument of the wrong type.
        ValueError: for an unknown option or agent, or a bad value, naming it.
    """
    opponents = resolve_opponent(game, opponent, _plays_tables(game, options))
    return RummySingleAgentEnv(
        game,
        opponents=opponents,
        learner_seat=learner_seat,
        features=features,
        illegal_action=illegal_action,
        render_mode=render_mode,
        **options,
    )


def make_vec_env(
    num_envs: int = 1,
    game: str = "gin_rummy",
    opponent: Any = DEFAULT,
    learner_seat: int | None = None,
    features: Any = None,
    illegal_action: str = "random",
    render_mode: str | None = None,
    **options: Any,
) -> RummySingleAgentVectorEnv:
    """The native vector env of a Gymnasium id (``gymnasium.make_vec``): ``num_envs`` games
    stepped by the batched core. Arguments as :func:`make_env`, plus ``num_envs``.

    Raises:
        TypeError: (``ArgumentTypeError``) for an argument of the wrong type.
        ValueError: for an unknown option or agent, or a bad value, naming it.
    """
    opponents = resolve_opponent(game, opponent, _plays_tables(game, options))
    return RummySingleAgentVectorEnv(
        game,
        num_envs,
        opponents=opponents,
        learner_seat=learner_seat,
        features=features,
        illegal_action=illegal_action,
        render_mode=render_mode,
        **options,
    )


__all__ = [
    "DEFAULT",
    "DEFAULT_OPPONENTS",
    "TableSeatFactory",
    "make_env",
    "make_vec_env",
    "resolve_opponent",
]
