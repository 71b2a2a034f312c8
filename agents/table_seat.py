"""A 2-player Gin Rummy agent seated at a 3- or 4-player match (RULES.md §1.10).

Every hand of a 3- or 4-player match is a 2-player hand, and the seat's observation starts with
the 2-player observation of that hand: :class:`TableSeatAgent` gives the agent that part and
the seat's view of the hand as a 2-player game (``SeatView.table_view``), so any 2-player agent
(rule players, ISMCTS, a trained net) plays there unchanged. Elsewhere it passes everything on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rummy_env.envs.view import SeatView, table_observation


class TableSeatAgent:
    """``agent`` acting on the 2-player hand its seat plays (other attributes are the agent's).

    Args:
        agent: any agent with ``act(observation, view)``.
    """

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)

    def act(self, observation: Mapping[str, np.ndarray], view: SeatView | None = None) -> int:
        """The agent's move in the hand the seat plays."""
        if view is None or not view.plays_tables:
            return int(self.agent.act(observation, view))
        return int(self.agent.act(table_observation(dict(observation), view), view.table_view()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["agent"], name)


def seat_at_tables(agent: Any) -> Any:
    """``agent`` wrapped as a :class:`TableSeatAgent` (once)."""
    return agent if isinstance(agent, TableSeatAgent) else TableSeatAgent(agent)


__all__ = ["TableSeatAgent", "seat_at_tables"]
