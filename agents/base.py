"""The agent protocol: an agent acts for one seat from what that seat may see.

``act(observation, view)`` gets the PettingZoo observation dict (``"observation"``,
``"action_mask"``) and a :class:`~rummy_env.envs.view.SeatView`, which the env side owns: the
rules config, the seat, and the env's public helpers (sampling full states consistent with the
seat's information). No agent ever reads the hidden state of the game.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from rummy_env.envs.view import SeatView


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


__all__ = ["Agent", "SeatView", "legal_actions"]
