"""Batched multi-agent vector env: N games stepped by one compiled call.

Shaped like a Gymnasium vector env for a turn-based multi-agent game: each step takes one action
per game (for the player to act there) and returns that player's observation and mask in each game.
Finished games reset in the same step (Gymnasium's ``SAME_STEP`` autoreset mode); the finished
episode's per-player final observations and results are in ``info`` for the games where
``info["_final_observation"]`` is True (other rows are undefined).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from rummy_env.core.validate import (
    MAX_GAMES,
    ArgumentTypeError,
    ResetNeeded,
    check_int,
    check_options,
    check_seed,
)
from rummy_env.games import GAMES


class RummyVectorEnv:
    """``num_envs`` games of one variant, numpy arrays in and out.

    ``reset(seed=None, options=None) -> (obs, info)`` and
    ``step(actions) -> (obs, rewards, terminated, truncated, info)`` where ``obs`` is
    ``{"observation": (N, O) float32, "action_mask": (N, A) int8}`` for the player to act in each
    game, ``rewards`` is (N, num_players) float32 (every player's reward for that step) and
    ``info["current_player"]`` is (N,) int64. Arrays returned are fresh every call.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self, name: str, num_envs: int, seed: int | list[int] | None = None, **options: Any
    ) -> None:
        """See :func:`make_vec`."""
        if not isinstance(name, str):
            raise ArgumentTypeError(f"name must be a game name {sorted(GAMES)}, got {name!r}")
        if name not in GAMES:
            raise ValueError(f"unknown game name {name!r}; available: {sorted(GAMES)}")
        num_envs = check_int("num_envs", num_envs, 1, MAX_GAMES)
        seed = check_seed("seed", seed, num_envs)
        config_cls, game_cls = GAMES[name]
        self.name = name
        self.config = config_cls.from_kwargs(**options)
        self.num_envs = num_envs
        self.game = game_cls(self.config, self.num_envs)
        self.num_players = self.game.num_players
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        a = self.game.num_actions
        low, high = self.game.obs_bounds()
        self.single_action_space = spaces.Discrete(a)
        self.single_observation_space = spaces.Dict(
            {
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(a,), dtype=np.int8),
            }
        )
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, a))
        n = self.num_envs
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(
                    np.tile(low, (n, 1)), np.tile(high, (n, 1)), dtype=np.float32
                ),
                "action_mask": spaces.Box(0, 1, shape=(self.num_envs, a), dtype=np.int8),
            }
        )
        self._seed = seed
        self._needs_reset = True

    def reset(
        self, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a new episode in every game. Game ``i`` is seeded with ``seed + i``, so it plays
        exactly like the AEC env reset with that seed. ``options``: ``decks`` (list, one stacked
        deck or None per game) and ``dealers`` (list, one seat or None per game); ``seed`` may
        also be a list of ``num_envs`` seeds.

        Every argument is checked before anything changes: a rejected reset leaves every game
        as it was.

        Raises:
            TypeError: (``ArgumentTypeError``) for an argument of the wrong type.
            ValueError: for a bad value (a seed < 0, a seat out of range, not a full deck, a list
                whose length is not ``num_envs``, an unknown option), naming it.
        """
        seed = check_seed("seed", seed, self.num_envs)
        options = check_options("options", options)
        decks = options.pop("decks", None)
        dealers = options.pop("dealers", None)
        if options:
            raise ValueError(
                f"unknown reset option(s) {sorted(options, key=repr)}; valid: decks, dealers"
            )
        if seed is None and self._needs_reset:
            seed = self._seed
        obs = self.game.reset(seed=seed, dealers=dealers, decks=decks)
        self._needs_reset = False
        return (
            {"observation": obs, "action_mask": self.game.masks[:, : self.game.num_actions].copy()},
            {"current_player": self.game.states["cur"].astype(np.int64)},
        )

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per game, an integer array of shape ``(num_envs,)``.

        Raises:
            TypeError: (``ArgumentTypeError``) for actions that are not integers (floats, bools,
                strings), before any game moves.
            ValueError: for another shape, or an action out of range or illegal (naming the
                first such game), before any game moves.
            ResetNeeded (a RuntimeError and ValueError): before ``reset()``.
        """
        if self._needs_reset:
            raise ResetNeeded("call reset() before step()")
        obs, rewards, term, trunc, info = self.game.step(actions, autoreset=True)
        return (
            {"observation": obs, "action_mask": self.game.masks[:, : self.game.num_actions].copy()},
            rewards,
            term,
            trunc,
            info,
        )

    def action_masks(self) -> np.ndarray:
        """(N, A) legal-action masks of the players to act (fresh array)."""
        return self.game.masks[:, : self.game.num_actions].copy()

    def close(self) -> None:
        """Nothing to release."""


def make_vec(
    name: str, num_envs: int, seed: int | list[int] | None = None, **options: Any
) -> RummyVectorEnv:
    """Batched env of game ``name`` (``"gin_rummy"``) with ``num_envs`` games and rule options.

    ``num_envs`` is an integer in 1..2**24; ``seed`` (used by the first ``reset()`` without a
    seed) is None, an integer >= 0 or a list of ``num_envs`` of them.

    Raises:
        TypeError: (``ArgumentTypeError``) for an argument or option of the wrong type.
        ValueError: for an unknown game or option, or a value out of range, naming it.
    """
    return RummyVectorEnv(name, num_envs, seed=seed, **options)
