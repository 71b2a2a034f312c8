"""Uniformly random agent over the legal actions of an action mask."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rummy_agents.base import legal_actions


class RandomAgent:
    """Picks uniformly among the legal actions (``action_mask == 1``).

    Works with the AEC env (one observation dict per call, :meth:`act`) and with the vector env
    (a stacked ``(N, A)`` mask per call, :meth:`act_batch`). The agent owns its random generator,
    so two agents built with the same seed make the same choices on the same masks.

    Args:
        seed: seed of the agent's ``np.random.Generator`` (``None``: fresh entropy).

    Example:
        >>> from rummy_env import gin_rummy_v0
        >>> env = gin_rummy_v0.env()
        >>> env.reset(seed=0)
        >>> agent = RandomAgent(seed=0)
        >>> for name in env.agent_iter():
        ...     obs, reward, term, trunc, info = env.last()
        ...     env.step(None if term or trunc else agent.act(obs))

    """

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """Choose one legal action.

        Args:
            observation: an observation dict with an ``"action_mask"`` entry, a 1-D array whose
                entries are 1 for legal actions.
            view: the seat's public view (unused: a random agent needs nothing else).

        Returns:
            The id of an action whose mask entry is 1, each with equal probability.

        Raises:
            ValueError: if the mask is not 1-D or has no legal action.

        """
        mask = np.asarray(observation["action_mask"])
        if mask.ndim != 1:
            raise ValueError(f"action_mask must be 1-D, got shape {mask.shape}")
        legal = legal_actions(mask)
        return int(legal[self.rng.integers(legal.size)])

    def act_batch(self, masks: np.ndarray) -> np.ndarray:
        """Choose one legal action per row of a batch of masks.

        Vectorised: one uniform draw ``k`` per row selects the row's k-th legal action (the first
        column where the row's running count of legal actions exceeds ``k``); no loop over rows.

        Args:
            masks: (N, A) array, 1 marks a legal action (e.g. ``obs["action_mask"]`` of
                ``rummy_env.make_vec``).

        Returns:
            (N,) int64 array of action ids, each legal in its row.

        Raises:
            ValueError: if ``masks`` is not 2-D or some row has no legal action.

        """
        m = np.asarray(masks)
        if m.ndim != 2:
            raise ValueError(f"masks must be 2-D (N, A), got shape {m.shape}")
        legal = m == 1
        counts = np.cumsum(legal, axis=1, dtype=np.int64)
        n_legal = counts[:, -1] if m.shape[1] else np.zeros(m.shape[0], np.int64)
        empty = np.flatnonzero(n_legal == 0)
        if empty.size:
            raise ValueError(
                f"masks has no legal action in row(s) {empty[:10].tolist()}"
                + (" ..." if empty.size > 10 else "")
            )
        # k-th legal action (0-based) of each row: the first column whose running count is k + 1
        k = self.rng.integers(0, n_legal)
        return np.argmax(counts > k[:, None], axis=1).astype(np.int64)
