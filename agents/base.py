"""The agent protocol: an agent acts for one seat from what that seat may see.

``act(observation, view)`` gets the PettingZoo observation dict (``"observation"``,
``"action_mask"``) and a :class:`SeatView` - the rules config, the seat, and the env's public
helpers (sampling full states consistent with the seat's information). No agent ever reads the
hidden state of the game.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

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


def legal_actions(mask: Any) -> np.ndarray:
    """The legal action ids of an action mask (entries equal to 1), in increasing order.

    Raises:
        ValueError: if the mask allows no action.
    """
    legal = np.flatnonzero(np.asarray(mask) == 1)
    if legal.size == 0:
        raise ValueError("action_mask has no legal action (all entries are 0)")
    return legal


@runtime_checkable
class Agent(Protocol):
    """Anything with a ``name`` and ``act(observation, view) -> action id``."""

    name: str

    def act(self, observation: dict[str, np.ndarray], view: SeatView | None = None) -> int:
        """Choose a legal action (``observation["action_mask"][a] == 1``)."""
        ...
