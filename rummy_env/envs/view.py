"""What one seat of a running game may see: the view an agent acts from.

An agent gets the PettingZoo observation dict (``"observation"``, ``"action_mask"``) and a
:class:`SeatView`: the rules config, the seat, and the env's public helpers (full states
consistent with the seat's information). Nothing in it reads the game's hidden state.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class SeatView:
    """Public information and helpers for one seat of a running AEC env.

    Args:
        env: the AEC env (wrapped or raw); only its public helpers are used.
        agent: the seat's agent name (``"player_0"``, ...).
    """

    def __init__(self, env: Any, agent: str) -> None:
        self._env = env.unwrapped
        self.agent = agent
        self.seat = self._env.possible_agents.index(agent)
        self.config = self._env.config
        self.game = self._env.metadata["name"].rsplit("_v", 1)[0]

    def sample_worlds(self, n: int, seed: int | np.random.Generator | None = None) -> Any:
        """``n`` full states consistent with this seat's information (a batched game)."""
        return self._env.sample_worlds(self.agent, n, seed)


__all__ = ["SeatView"]
