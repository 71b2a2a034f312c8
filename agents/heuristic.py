"""The compiled rollout policy of :mod:`rummy_agents.ismcts` as a player, single and batched.

:class:`HeuristicAgent` plays each game's compiled heuristic (Gin Rummy:
:func:`rummy_agents.ismcts.gin_rollout_actions`; 500 Rum and Rummy 51:
:func:`rummy_agents.joker_rollouts.joker_rollout_actions`).
Its rules are in those functions' docstrings;
in short it plays like the game's rule-based agent (Gin: knock as soon as legal, take the top
discard when it melds, discard to the least deadwood; joker games: meld and lay off at once,
take a discard that melds, shed the highest card no one can use by ``greedy``'s tiers). It is
weaker than those agents (``docs/agents.md``) but runs in compiled code over a whole batch of
games: the fast rule-based opponent and teacher for training
(``experiments/ppo_selfplay.py --baseline heuristic``).

The policy reads only what the player to act observes (own hand, the table, the discard pile,
the cards the next player is known to hold, the rule options), so:

- :meth:`HeuristicAgent.act` (the agent protocol) plays it on one world drawn with the seat's
  ``view.sample_worlds``: any world consistent with the seat's information gives the same move;
- :meth:`HeuristicAgent.act_game` plays it directly on the states of a batched game (a vector
  env's ``game``), for the batched training loop.

The only exception is a phase where the policy plays a uniformly random legal move (Gin Rummy's
manual-meld phases, not reached with the default ``auto_meld``), drawn from the world's random
stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rummy_agents.base import legal_actions


def _hooks(game: str) -> Any:
    from rummy_agents.ismcts import HOOKS  # every game of the suite has a compiled heuristic there

    if game not in HOOKS:
        raise ValueError(f"no heuristic policy for game {game!r}; games: {tuple(HOOKS)}")
    return HOOKS[game]


def game_name(game: Any) -> str:
    """The suite's name of a batched game object (``GinRummyGame`` -> ``"gin_rummy"``), from
    :data:`rummy_env.games.ENGINE_CLASSES`; the class name for any other object (the 3-, 4-player
    Gin engine too: the compiled heuristic plays 2-player hands, reached through a seat's
    ``SeatView.table_view()``).
    """
    from rummy_env.games import ENGINE_CLASSES

    for name, classes in ENGINE_CLASSES.items():
        if isinstance(game, classes[0]):
            return name
    return type(game).__name__


class HeuristicAgent:
    """The compiled heuristic of each game (see the module docstring).

    Args:
        seed: seed of the generator that draws the world :meth:`act` plays on.
        name: the agent's name in reports.
    """

    def __init__(self, seed: int | None = None, name: str = "heuristic") -> None:
        self.rng = np.random.default_rng(seed)
        self.name = name

    def act(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """The heuristic's move for the seat of ``view``.

        Raises:
            ValueError: if the mask allows no action, or no view is given while more than one
                action is legal (the policy reads the table through a sampled world).
        """
        mask = np.asarray(observation["action_mask"])
        legal = legal_actions(mask)
        if legal.size == 1:
            return int(legal[0])
        if view is None:
            raise ValueError("HeuristicAgent needs the seat's view (sample_worlds) to act")
        hooks = _hooks(view.game)
        world = view.sample_worlds(1, self.rng)
        action = int(hooks.rollout_actions(world, "heuristic", 0.0)[0])
        if mask[action] != 1:  # the world keeps the seat's own mask: this is a bug if reached
            raise RuntimeError(f"heuristic chose illegal action {action} on a sampled world")
        return action

    def act_game(self, game: Any, rows: np.ndarray | None = None) -> np.ndarray:
        """Moves of the player to act in games ``rows`` (all by default) of a batched game
        (``RummyVectorEnv.game``); 0 for a finished game.
        """
        actions = _hooks(game_name(game)).rollout_actions(game, "heuristic", 0.0)
        return actions if rows is None else actions[rows]


__all__ = ["HeuristicAgent", "game_name"]
