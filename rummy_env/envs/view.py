"""What one seat of a running game may see: the view an agent acts from.

An agent gets the PettingZoo observation dict (``"observation"``, ``"action_mask"``) and a
:class:`SeatView`: the rules config, the seat, and the env's public helpers (full states
consistent with the seat's information). Nothing in it reads the game's hidden state.

In 3- and 4-player Gin Rummy every hand is a 2-player hand: :meth:`SeatView.table_view` is the
seat's view of the hand it sits in, as a 2-player game (:class:`TableSeatView`), and
:func:`table_observation` cuts the 2-player observation out of the seat's observation, so a
2-player agent plays there unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class SeatView:
    """Public information and helpers for one seat of a running AEC env.

    Args:
        env: the AEC env (wrapped or raw); only its public helpers are used. Any object with
            the same helpers works: the seat's game is game ``env.game_index`` (0 when absent,
            as in an AEC env, a batch of one) of ``env.game``, which lets a batched env
            (``RummySingleAgentVectorEnv``) give its opponents the views an AEC env gives.
        agent: the seat's agent name (``"player_0"``, ...).
    """

    def __init__(self, env: Any, agent: str) -> None:
        self._env = env.unwrapped
        self.agent = agent
        self.seat = self._env.possible_agents.index(agent)
        self.index = int(getattr(self._env, "game_index", 0))
        self.config = self._env.config
        self.game = self._env.metadata["name"].rsplit("_v", 1)[0]

    def sample_worlds(self, n: int, seed: int | np.random.Generator | None = None) -> Any:
        """``n`` full states consistent with this seat's information (a batched game)."""
        return self._env.sample_worlds(self.agent, n, seed)

    @property
    def plays_tables(self) -> bool:
        """True in a 3- or 4-player Gin Rummy match, whose hands are 2-player hands."""
        return self.game == "gin_rummy" and self.config.num_players > 2

    def table_view(self) -> SeatView:
        """The seat's view of the 2-player hand it plays now (:class:`TableSeatView`); the
        view itself where every hand is the whole game.

        Raises:
            ValueError: if the seat sits out the hand (3-player Gin Rummy).
        """
        return TableSeatView(self._env, self.agent) if self.plays_tables else self


class TableSeatView(SeatView):
    """A seat of a 3- or 4-player Gin Rummy match seen as a seat of the 2-player hand it plays:
    ``config`` is the hand options (``config.hand_config()``: 2 players, one hand), ``seat``
    the table-local seat (0 or 1) and :meth:`sample_worlds` gives 2-player games of that hand.

    Raises:
        ValueError: if the seat sits out the hand.
    """

    def __init__(self, env: Any, agent: str) -> None:
        super().__init__(env, agent)
        game = self._env.game
        self.player = self._env.possible_agents.index(agent)
        if game.table_of(self.index, self.player) < 0:
            raise ValueError(f"{agent} sits out this hand: it plays at no table")
        self.match_config = self.config
        self.config = self.config.hand_config()
        self.seat = game.table_seat(self.index, self.player)

    def sample_worlds(self, n: int, seed: int | np.random.Generator | None = None) -> Any:
        """``n`` 2-player games of this seat's hand consistent with what it knows."""
        self._env._require_reset("sample_worlds")
        hand = self._env.game.table_game(self.index, self.player)
        return hand.sample_worlds(0, self.seat, n, seed)

    @property
    def plays_tables(self) -> bool:
        """False: this view is already the 2-player hand."""
        return False


def table_observation(observation: dict[str, np.ndarray], view: SeatView) -> dict[str, np.ndarray]:
    """The 2-player part of a seat's observation dict in a 3- or 4-player Gin Rummy match (the
    first 225, or 537, entries: the hand it plays), the observation itself otherwise.
    """
    if not view.plays_tables:
        return observation
    from rummy_env.encodings.gin_rummy import observation_size

    n = observation_size(view.config.auto_meld)
    return {"observation": observation["observation"][..., :n],
            "action_mask": observation["action_mask"]}  # fmt: skip


__all__ = ["SeatView", "TableSeatView", "table_observation"]
