"""What a game supplies to the search: :class:`GameHooks`, and the pieces hooks share.

The search (:mod:`rummy_agents.ismcts.search`) needs from a game only the batched engine's
generic API (``masks``, ``step``, ``states``, ``step_single`` or ``step_one``) and the
seat view's ``sample_worlds``. Everything else that depends on the game - the rollout policy,
the prior that orders expansion, the chance outcomes the searcher observes, the reward scale,
the belief over hidden cards, the moves played without a search, the rule-based anchor and the
default settings - is a field of :class:`GameHooks`. Hooks are plain Python callables: the
per-game compiled kernels are selected in Python (a hook calls its game's kernel), so nothing
compiled is passed as an argument through numba's cache.

Games without hooks get :data:`GENERIC_HOOKS`: uniformly random rollouts, no prior (action-id
order), no belief and plain SO-ISMCTS settings (:data:`SEARCH_DEFAULTS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rummy_env.core.jit import kernel
from rummy_env.core.rng import random_legal

SEARCH_DEFAULTS = {"iterations": 1000, "root": "ucb", "root_k": 4}
"""Search settings under ``"auto"`` for a game whose hooks give none: plain SO-ISMCTS."""


@dataclass(frozen=True)
class GameHooks:
    """What ISMCTS needs to know about one game beyond the batched engine's generic API.

    Attributes:
        rollout_actions: ``(game, rollout, eps) -> (N,) int64`` actions of a rollout step for
            every world of a batched game (``rollout`` is ``"heuristic"`` or ``"random"``;
            ``eps`` the fraction of heuristic decisions played at random; any action where no
            action is legal).
        prior: ``(game, i) -> (num_actions,) float64`` scores (higher = expanded first) of the
            legal actions of world ``i``, or ``None`` for the action-id order.
        observed_outcome: ``(game, i, action) -> hashable | None``: what the acting (searching)
            seat learned from the chance event its own action just caused in world ``i`` (Gin:
            the card drawn from the stock), or ``None``.
        reward_scale: ``config -> float``: divides the raw rewards into [-1, 1].
        belief: ``(view, n, rng) -> worlds``: determinizations drawn from a non-uniform belief
            (``belief="evidence"``); ``None``: ``view.sample_worlds`` only.
        knock_now: ``observation -> action | None``: the move that ends the hand at once when
            one is legal (Gin: the knock leaving the least deadwood), played without a search
            under ``knock="always"``.
        zero_sum: value each player's hand rewards against the others' (own reward minus the
            mean of the others', :func:`~rummy_agents.ismcts.search.zero_sum`) before scaling:
            for games whose rewards are not zero-sum (500 Rum points, Rummy 51 penalties).
        forced: ``(game, i) -> action`` (-1: none): a move of world ``i`` played without a
            search under ``knock="always"``, at the root and inside the tree (500 Rum, Rummy 51:
            the rollout policy's melds, lay-offs, joker retrievals and "Rummy!" calls), so the
            search spends its budget on draws and discards.
        anchor: ``seed -> agent``: the game's rule-based agent; with ``anchor=True`` its move
            leads the root's candidate order (tried first, kept on ties), so the search starts
            from it and departs from it only for a move its rollouts rate higher.
        unsearched: ``(game, i, action) -> bool``: is ``action`` (the anchor's move in world
            ``i``) of the kind ``forced`` plays without a search (Rummy 51: a meld, lay-off or
            joker retrieval)? With an anchor, such a move of the anchor is played as is at the
            root, in place of the ``forced`` hook's; when the anchor's move is another kind (it
            declines to meld now), the root's candidates leave such moves out.
        defaults: the search settings ``ISMCTSAgent`` uses when left at ``"auto"``:
            ``iterations``, ``root``, ``root_k`` (the best measured for the game).
    """

    rollout_actions: Callable[[Any, str, float], np.ndarray]
    prior: Callable[[Any, int], np.ndarray] | None = None
    observed_outcome: Callable[[Any, int, int], Any] | None = None
    reward_scale: Callable[[Any], float] = field(default=lambda config: 1.0)
    belief: Callable[[Any, int, np.random.Generator], Any] | None = None
    knock_now: Callable[[Mapping[str, Any]], int | None] | None = None
    zero_sum: bool = False
    forced: Callable[[Any, int], int] | None = None
    anchor: Callable[[int | None], Any] | None = None
    unsearched: Callable[[Any, int, int], bool] | None = None
    defaults: Mapping[str, Any] = field(default_factory=lambda: dict(SEARCH_DEFAULTS))


@kernel
def random_rollout_actions(states, masks, na, out) -> None:
    """Uniformly random legal actions from each game's own stream (0 where none is legal)."""
    for i in range(states.shape[0]):
        a = random_legal(states[i], masks[i], na)
        out[i] = a if a >= 0 else 0


def random_rollouts(game: Any, rollout: str, eps: float) -> np.ndarray:
    """Uniformly random legal actions for every world of ``game`` (every game's
    ``rollout="random"``; a ``rollout_actions`` hook).
    """
    out = np.zeros(game.num_games, dtype=np.int64)
    random_rollout_actions(game.states, game.masks, game.num_actions, out)
    return out


GENERIC_HOOKS = GameHooks(random_rollouts)
"""The hooks of a game that has none of its own."""


def resample_worlds(big: Any, idx: np.ndarray, rng: np.random.Generator) -> Any:
    """The worlds ``big[idx]`` (repeats allowed) as a new batch, each chosen world's stock
    reshuffled (repeated picks differ) and given a fresh random stream.

    Belief hooks draw many uniform worlds, weight them by a model of the opponents and pick
    ``idx`` from them with this.
    """
    n = len(idx)
    worlds = type(big)(big.config, n)
    worlds.states[:] = big.states[idx]
    pos = int(big.states[0]["deck_pos"])
    worlds.states["deck"][:, pos:] = rng.permuted(worlds.states["deck"][:, pos:], axis=1)
    worlds.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
    worlds.masks[:] = big.masks[idx]
    return worlds


def stock_draw_outcome(game: Any, i: int, action: int, draw_stock: int) -> int | None:
    """The card world ``i``'s player just drew when ``action`` is ``draw_stock`` (the chance
    outcome the drawing seat observes), else ``None``.
    """
    if action == draw_stock:
        s = game.states[i]
        return int(s["deck"][int(s["deck_pos"]) - 1])
    return None


__all__ = [
    "GENERIC_HOOKS",
    "SEARCH_DEFAULTS",
    "GameHooks",
    "random_rollout_actions",
    "random_rollouts",
    "resample_worlds",
    "stock_draw_outcome",
]
