"""Adapters to reinforcement-learning frameworks, and a framework-free evaluation helper.

- :mod:`rummy_agents.integrations.rllib`: the games as an RLlib ``MultiAgentEnv`` (new API
  stack) whose observations carry the action mask the way RLlib's action-masking RL module
  reads it (``{"observations": ..., "action_mask": ...}``); needs the ``rllib`` extra.
- :mod:`rummy_agents.integrations.tianshou`: :class:`~rummy_env.wrappers.RummySingleAgentEnv`
  with the mask in the observation (``{"obs": ..., "mask": ...}``), the form Tianshou's
  discrete policies read; the wrapper itself needs only Gymnasium.
- :mod:`rummy_agents.integrations.openspiel`: the games as OpenSpiel Python games
  (``rummy_env_gin_rummy``, ``rummy_env_five_hundred_rum``, ``rummy_env_rummy51``, registered
  with ``pyspiel`` on import), ``as_bot`` and ``ismcts_bot``; needs the ``openspiel`` extra.
- Stable-Baselines3 needs no adapter: sb3-contrib's ``MaskablePPO`` reads
  ``RummySingleAgentEnv.action_masks()`` as it is.

Nothing here is imported by ``rummy_env`` or by ``import rummy_agents``: a framework is loaded
only when its module is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

MaskedPolicy = Callable[[np.ndarray, np.ndarray], int]
"""``policy(observation_vector, action_mask) -> action``: what :func:`evaluate` plays."""


def evaluate(
    policy: MaskedPolicy,
    game: str = "gin_rummy",
    opponents: Any = None,
    episodes: int = 10,
    seed: int = 0,
    **options: Any,
) -> dict[str, float]:
    """Play ``episodes`` episodes of ``policy`` against fixed opponents; a framework-free score.

    The policy plays one seat of :class:`~rummy_env.wrappers.RummySingleAgentEnv` (the seat is
    drawn at every reset, so it plays every seat), the other seats are ``opponents`` (``None``:
    uniformly random legal actions; or an agent factory such as
    ``rummy_agents.agent_spec("simple")``). An episode is won when the policy's return is
    positive, lost when negative.

    Args:
        policy: ``policy(observation, action_mask) -> action``; it must return a legal action.
        game: the game's name.
        opponents: as ``RummySingleAgentEnv``'s ``opponents``.
        episodes: number of episodes, reset with seeds ``seed``, ``seed + 1``, ...
        seed: the first episode's seed.
        **options: the game's rule options.

    Returns:
        ``{"episodes", "win_rate", "loss_rate", "mean_return"}``.
    """
    from rummy_env.wrappers import RummySingleAgentEnv

    env = RummySingleAgentEnv(game, opponents=opponents, illegal_action="raise", **options)
    returns = []
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + k)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(int(policy(obs, env.action_masks())))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    r = np.asarray(returns)
    return {
        "episodes": float(episodes),
        "win_rate": float(np.mean(r > 0)) if episodes else 0.0,
        "loss_rate": float(np.mean(r < 0)) if episodes else 0.0,
        "mean_return": float(np.mean(r)) if episodes else 0.0,
    }


__all__ = ["MaskedPolicy", "evaluate"]
