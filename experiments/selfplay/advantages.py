"""What training sees of the games' rewards, and the returns and advantages made of them.

Rewards are zero-sum and arrive at the end of a hand, so each seat's decisions form their own
trajectory inside a game: a decision's reward is what the seat received until its next
decision, and GAE runs over each (game, seat) sequence separately (:func:`compute_gae`).
"""

from __future__ import annotations

import numpy as np

from rummy_agents.features import FeatureSet, parse_pieces
from selfplay.config import Config


def win_outcome(total: np.ndarray) -> np.ndarray:
    """Zero-sum outcome of finished episodes from each seat's total return (rows: games): the
    seats with the best total share +1, the others share -1; all 0 when every seat ties. With
    2 players: +1 for the winner, -1 for the loser, 0 for a draw."""
    best = total == total.max(1, keepdims=True)
    n_best = best.sum(1, keepdims=True)
    n_rest = total.shape[1] - n_best
    out = np.where(best, 1.0 / n_best, -1.0 / np.maximum(n_rest, 1))
    return np.where(n_rest > 0, out, 0.0)


class TrainRewards:
    """The rewards training sees, step by step: the game's own, minus the mean of all seats'
    (``zero_sum``: 500 Rum and Rummy 51 pay each player its own score), or with ``win_reward``
    nothing until the episode ends and then who won it (:func:`win_outcome` of the seats'
    totals): the arena's measure, where points are what the game pays.
    """

    def __init__(self, cfg: Config, n: int, players: int) -> None:
        self.zero_sum, self.win = cfg.zero_sum, cfg.win_reward
        self.total = np.zeros((n, players))

    def __call__(self, rewards: np.ndarray, done: np.ndarray) -> np.ndarray:
        """Training rewards of one step of all ``n`` games (``done``: the episode ended)."""
        if self.zero_sum:
            rewards = rewards - rewards.mean(1, keepdims=True)
        if not self.win:
            return rewards
        self.total += rewards
        out = np.where(done[:, None], win_outcome(self.total), 0.0)
        self.total[done] = 0.0
        return out


def shaping_score(cfg: Config, x: np.ndarray) -> np.ndarray | None:
    """Per-row shaping score of featured observations: minus the hand's deadwood / 100 for Gin
    Rummy with the ``gin_deadwood`` piece (10 cards: now; 11 cards: after the best discard),
    else None.
    """
    if cfg.game != "gin_rummy" or "gin_deadwood" not in parse_pieces(cfg.features):
        return None
    at = FeatureSet(cfg.game, cfg.features, cfg.options).offset("gin_deadwood")
    n_cards = x[:, :52].sum(1)
    dw = x[:, at + 52]
    return np.where((n_cards == 10) | (n_cards == 11), -dw, 0.0)


def compute_gae(
    values: np.ndarray,
    rewards: np.ndarray,
    dones: np.ndarray,
    cur: np.ndarray,
    train: np.ndarray,
    next_values: np.ndarray,
    gamma: float,
    lam: float,
    phi: np.ndarray | None = None,
    next_phi: np.ndarray | None = None,
) -> np.ndarray:
    """GAE over each (game, seat) trajectory of a turn-based rollout.

    Args:
        values: (T, N) value of the decision at step t (from the acting seat's view).
        rewards: (T, N, P) every seat's reward from the step's transition.
        dones: (T, N) the episode ended with step t (the game reset in the same step).
        cur: (T, N) the seat that acted at step t.
        train: (T, N) bool, the decision is training data (only those get an advantage).
        next_values: (N, P) value of each seat's next decision after the rollout (its own view).
        gamma: discount per decision of the seat.
        lam: GAE lambda.
        phi: (T, N) optional shaping score of each decision's state (acting seat's view): a
            decision is also rewarded ``phi(next decision of the seat) - phi(this one)``, and
            nothing after the seat's last decision of an episode (so an episode's shaping sums
            to its last minus its first score).
        next_phi: (N, P) shaping score of each seat's next decision after the rollout.

    Returns:
        (T, N) advantages (0 where ``train`` is False).
    """
    t_len, n = values.shape
    rows = np.arange(n)
    nv = next_values.astype(np.float64).copy()  # value of each seat's next decision
    nadv = np.zeros_like(nv)  # advantage of each seat's next decision
    acc = np.zeros_like(nv)  # rewards since each seat's next decision, walking backwards
    shaped = phi is not None
    nphi = next_phi.astype(np.float64).copy() if shaped else None
    has_next = np.ones_like(nv, dtype=bool)  # the seat decides again in this episode
    adv = np.zeros((t_len, n))
    for t in range(t_len - 1, -1, -1):
        d = dones[t]
        nv[d] = 0.0  # the seat's last decision of an episode bootstraps from 0
        nadv[d] = 0.0
        acc[d] = 0.0
        has_next[d] = False
        acc += rewards[t]
        p = cur[t]
        r = acc[rows, p]
        if shaped:
            r = r + np.where(has_next[rows, p], nphi[rows, p] - phi[t], 0.0)
            nphi[rows, p] = phi[t]
        delta = r + gamma * nv[rows, p] - values[t]
        a = delta + gamma * lam * nadv[rows, p]
        k = train[t]
        adv[t, k] = a[k]
        # every decision (trained or not) starts its seat's next segment
        nv[rows, p] = values[t]
        nadv[rows, p] = np.where(k, a, 0.0)
        acc[rows, p] = 0.0
        has_next[rows, p] = True
    return adv


def returns_to_go(
    rews: list[np.ndarray], dones: list[np.ndarray], curs: list[np.ndarray], where: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Each recorded decision's return: what its seat receives from then to the end of the
    episode (undiscounted), and whether that episode ended within the record.

    Args:
        rews: per step, (N, players) rewards of the step.
        dones: per step, (N,) episode ended with the step.
        curs: per step, (N,) player who acted.
        where: per step, the games whose decision is recorded.

    Returns:
        (returns, finished), in record order (step by step, the games of ``where``).
    """
    g, over = np.zeros(rews[0].shape), np.zeros(rews[0].shape[0], dtype=bool)
    ret, ok = [], []
    for t in range(len(rews) - 1, -1, -1):
        g = rews[t] + np.where(dones[t][:, None], 0.0, g)
        over = dones[t] | over
        rows = where[t]
        ret.append(g[rows, curs[t][rows]])
        ok.append(over[rows])
    return np.concatenate(ret[::-1]), np.concatenate(ok[::-1])
