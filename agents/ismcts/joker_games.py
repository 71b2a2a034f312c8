"""500 Rum and Rummy 51 hooks of the search (:data:`FIVE_HUNDRED_RUM_HOOKS`,
:data:`RUMMY51_HOOKS`), for any number of players.

- **Rollouts and prior**: the compiled scoring policy of :mod:`rummy_agents.joker_rollouts` (meld
  and lay off whenever the mask allows, take the top discard when it melds, shed the highest
  card no meld wants; in Rummy 51 close to ``greedy``'s own rules), over each game's action
  ranges and card values (:func:`joker_params`, built once per config).
- **Observed outcome**: the searching seat sees the card of its own stock draws.
- **Rewards**: turned into margins (own hand reward minus the mean of the others',
  ``zero_sum``) and divided by :data:`FIVE_HUNDRED_RUM_SCALE` / :data:`RUMMY51_SCALE`.
- **Forced moves**: under ``knock="always"`` the policy's melds, lay-offs, joker retrievals and
  "Rummy!" calls are played without a search, at the root and inside the tree, so the budget
  goes to draws and discards.
- **Anchor**: the game's ``greedy`` agent, whose move leads the root's candidates. In Rummy 51
  the root plays the anchor's own melds, lay-offs and retrievals instead of the policy's, and
  when the anchor declines to meld now (``greedy_plus`` keeps new melds in hand) the root does
  not search melding either (the ``unsearched`` hook).
- **Belief** (Rummy 51, :func:`rummy51_belief_worlds`): uniform worlds reweighted against
  opponents who could have opened, or still hold a meld or a card that lays off, as ``greedy``
  never does. 500 Rum uses ``sample_worlds`` as is.
- **Defaults** (:data:`JOKER_DEFAULTS`): 256 iterations, paired root comparisons of the
  anchor's move with the prior's best other move.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_agents.ismcts.hooks import (
    GameHooks,
    random_rollouts,
    resample_worlds,
    stock_draw_outcome,
)
from rummy_agents.joker_rollouts import (
    five_hundred_rum_params,
    joker_forced_at,
    joker_prior_at,
    joker_rollout_actions,
    joker_unsearched,
    rummy51_evidence,
    rummy51_params,
)

JOKER_DEFAULTS = {"iterations": 256, "root": "paired", "root_k": 2}
"""ISMCTS settings of 500 Rum and Rummy 51 under ``"auto"``: paired root comparisons of the
``greedy`` anchor's move with the prior's best other move."""

FIVE_HUNDRED_RUM_SCALE = 100.0
"""500 Rum: hand-point margin (own points minus the opponents' mean) that counts as a full
win; margins are clipped to [-1, 1] after dividing by it."""

RUMMY51_SCALE = 100.0
"""Rummy 51: penalty margin (the opponents' mean penalty minus one's own) of a full win."""

RUMMY51_OVERSAMPLE = 4
"""Rummy 51 belief: uniform worlds drawn per world kept."""

RUMMY51_NOT_OPENED = 4.0
"""Rummy 51 belief: log-weight per fact of a world ``greedy`` would never leave
(:func:`~rummy_agents.joker_rollouts.rummy51_evidence`: it could have opened, or could still meld or
lay off, and did not)."""

# ---------------------------------------------------------------------------------------------
# The compiled policy of rummy_agents.joker_rollouts over each game's parameters

_PARAMS: dict[Any, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def joker_params(game: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rollout policy's parameters of a batched 500 Rum or Rummy 51 game (action layout,
    card values, meld points: :func:`~rummy_agents.joker_rollouts.five_hundred_rum_params` /
    :func:`~rummy_agents.joker_rollouts.rummy51_params`), built once per game class and config.
    """
    key = (type(game).__name__, game.config)
    params = _PARAMS.get(key)
    if params is None:
        build = rummy51_params if type(game).__name__ == "Rummy51Game" else five_hundred_rum_params
        params = _PARAMS[key] = build(game.config, game.layout)
    return params


def _joker_rollout(game: Any, rollout: str, eps: float) -> np.ndarray:
    if rollout == "random":
        return random_rollouts(game, rollout, eps)
    out = np.zeros(game.num_games, dtype=np.int64)
    lay, vals, pts = joker_params(game)
    joker_rollout_actions(game.states, game.masks, lay, vals, pts, eps, out)
    return out


def _joker_prior(game: Any, i: int) -> np.ndarray:
    out = np.empty(game.num_actions, dtype=np.float64)
    lay, vals, pts = joker_params(game)
    joker_prior_at(game.states, i, game.masks, lay, vals, pts, out)
    return out


def _joker_forced(game: Any, i: int) -> int:
    lay, vals, pts = joker_params(game)
    return int(joker_forced_at(game.states, i, game.masks, lay, vals, pts))


def _joker_unsearched(game: Any, i: int, action: int) -> bool:
    return bool(joker_unsearched(game.states[i], action, joker_params(game)[0]))


def _joker_outcome(game: Any, i: int, action: int) -> Any:
    return stock_draw_outcome(game, i, action, 0)  # DRAW_STOCK is action 0 in both games


# ---------------------------------------------------------------------------------------------
# Rummy 51 belief: opponents who open as soon as they can


def rummy51_belief_worlds(view: Any, n: int, rng: np.random.Generator) -> Any:
    """Rummy 51 determinizations for opponents who open as soon as they can.

    Uniform worlds give a player who has not opened a hand that reaches the 51 about as often
    as a fresh deal does, yet a player who has had a turn and did not open (``greedy`` opens as
    soon as the threshold is reachable) holds no such hand: its cards are those it kept at its
    last turn; likewise an opened player keeps no meld and (2 players) no card that lays off.
    ``RUMMY51_OVERSAMPLE * n`` uniform worlds are drawn and ``n`` resampled with log-weight
    ``-RUMMY51_NOT_OPENED`` per such fact (:func:`~rummy_agents.joker_rollouts.rummy51_evidence`).
    Each chosen world's stock is reshuffled (repeated picks differ) and gets a fresh random stream.
    """
    big = view.sample_worlds(n * RUMMY51_OVERSAMPLE, rng)
    ev = np.zeros(big.num_games, dtype=np.int64)
    rummy51_evidence(big.states, int(view.seat), int(big.config.opening_threshold), ev)
    w = np.exp(-RUMMY51_NOT_OPENED * (ev - ev.min()))
    return resample_worlds(big, rng.choice(big.num_games, size=n, p=w / w.sum()), rng)


# ---------------------------------------------------------------------------------------------
# The hooks


def _five_hundred_rum_greedy(seed: int | None) -> Any:
    from rummy_agents.five_hundred_rum_greedy import FiveHundredRumGreedyAgent

    return FiveHundredRumGreedyAgent(seed=seed)


def _rummy51_greedy(seed: int | None) -> Any:
    from rummy_agents.rummy51_greedy import Rummy51GreedyAgent

    return Rummy51GreedyAgent(seed=seed)


def _five_hundred_rum_scale(config: Any) -> float:
    return 1.0 if getattr(config, "reward", "raw") == "normalized" else FIVE_HUNDRED_RUM_SCALE


def _rummy51_scale(config: Any) -> float:
    reward = getattr(config, "reward", "penalty")
    if reward == "normalized":
        return 1.0
    if reward == "payout":
        return float(config.num_players)
    return RUMMY51_SCALE


FIVE_HUNDRED_RUM_HOOKS = GameHooks(
    _joker_rollout,
    _joker_prior,
    _joker_outcome,
    _five_hundred_rum_scale,
    zero_sum=True,
    forced=_joker_forced,
    anchor=_five_hundred_rum_greedy,
    defaults=JOKER_DEFAULTS,
)
"""The 500 Rum hooks (``HOOKS["five_hundred_rum"]``)."""

RUMMY51_HOOKS = GameHooks(
    _joker_rollout,
    _joker_prior,
    _joker_outcome,
    _rummy51_scale,
    rummy51_belief_worlds,
    zero_sum=True,
    forced=_joker_forced,
    anchor=_rummy51_greedy,
    unsearched=_joker_unsearched,
    defaults=JOKER_DEFAULTS,
)
"""The Rummy 51 hooks (``HOOKS["rummy51"]``)."""

__all__ = [
    "FIVE_HUNDRED_RUM_HOOKS",
    "JOKER_DEFAULTS",
    "RUMMY51_NOT_OPENED",
    "RUMMY51_OVERSAMPLE",
    "RUMMY51_SCALE",
    "RUMMY51_HOOKS",
    "FIVE_HUNDRED_RUM_SCALE",
    "joker_params",
    "rummy51_belief_worlds",
]
