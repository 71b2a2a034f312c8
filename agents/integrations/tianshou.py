"""A rummy game for Tianshou: one learner seat against fixed opponents, the mask in the
observation.

Tianshou's discrete policies (``DiscreteQLearningPolicy`` of DQN and its relatives, and the
discrete actor of PPO) read an action mask from ``batch.obs.mask`` and the network input from
``batch.obs.obs``, so the env's observation must be the dict ``{"obs": vector, "mask": 0/1}``.
:class:`TianshouMaskedEnv` makes that of :class:`~rummy_env.wrappers.RummySingleAgentEnv`;
:func:`make_env` builds both. This module needs only Gymnasium (not Tianshou itself); the
example ``examples/tianshou_dqn_masked.py`` trains DQN with it (the ``tianshou`` extra).
"""

from __future__ import annotations

from typing import Any, Protocol, SupportsFloat, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rummy_env.wrappers import RummySingleAgentEnv


class _Masked(Protocol):
    """An env with ``action_masks()`` (``RummySingleAgentEnv``)."""

    def action_masks(self) -> np.ndarray: ...


class TianshouMaskedEnv(gym.ObservationWrapper):
    """``{"obs": observation, "mask": int8 legal-action mask}`` observations for Tianshou.

    ``env`` is a :class:`~rummy_env.wrappers.RummySingleAgentEnv` (or any env whose
    ``unwrapped`` has ``action_masks()``); the mask is the learner's legal actions after the
    step, all zeros once the episode is over.

    Infos keep the same keys at every step, ``learner_seat`` and ``illegal_action``: Tianshou
    stores them in its replay buffer, which refuses a key missing at some steps (the game's
    hand results, ``outcome`` and the points, come only when a hand ends; they stay readable in
    ``env.unwrapped.aec.infos``).
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        if not callable(getattr(env.unwrapped, "action_masks", None)):
            raise TypeError(
                f"env must have action_masks() (RummySingleAgentEnv), got {type(env).__name__}"
            )
        if not isinstance(env.action_space, spaces.Discrete):
            raise TypeError(
                f"env must have a Discrete action space (RummySingleAgentEnv), got "
                f"{env.action_space!r}"
            )
        n = int(env.action_space.n)
        self.observation_space = spaces.Dict(
            {"obs": env.observation_space, "mask": spaces.MultiBinary(n)}
        )

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        """The observation vector and the learner's mask."""
        mask = np.asarray(cast(_Masked, self.env.unwrapped).action_masks(), dtype=np.int8)
        return {"obs": observation, "mask": mask}

    @staticmethod
    def _info(info: dict[str, Any]) -> dict[str, Any]:
        return {
            "learner_seat": int(info.get("learner_seat", -1)),
            "illegal_action": bool(info.get("illegal_action", False)),
        }

    def reset(self, **kwargs: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """As the env's ``reset``, with the fixed infos."""
        obs, info = super().reset(**kwargs)
        return obs, self._info(info)

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], SupportsFloat, bool, bool, dict]:
        """As the env's ``step``, with the fixed infos."""
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated, truncated, self._info(info)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (as ``RummySingleAgentEnv.action_masks``)."""
        return cast(_Masked, self.env.unwrapped).action_masks()


def make_env(game: str = "gin_rummy", opponents: Any = None, **kwargs: Any) -> TianshouMaskedEnv:
    """``TianshouMaskedEnv(RummySingleAgentEnv(game, opponents, **kwargs))``.

    ``kwargs`` are ``RummySingleAgentEnv``'s (``learner_seat``, ``features``, ...) and the
    game's rule options.
    """
    return TianshouMaskedEnv(RummySingleAgentEnv(game, opponents=opponents, **kwargs))


__all__ = ["TianshouMaskedEnv", "make_env"]
