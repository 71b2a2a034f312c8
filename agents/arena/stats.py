"""Statistics for arena results: Wilson intervals, t intervals, Bradley-Terry ratings.

Pure numpy (scipy is used for the t quantile when it is installed, otherwise a Cornish-Fisher
expansion accurate to about 1e-4 for 3+ degrees of freedom).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)
"""Elo points per unit of natural-log strength (a 400-point gap = 10:1 odds)."""


def z_quantile(level: float = 0.95) -> float:
    """Two-sided standard normal quantile (1.959964 for 95%)."""
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def t_quantile(df: float, level: float = 0.95) -> float:
    """Two-sided Student t quantile with ``df`` degrees of freedom.

    Args:
        df: degrees of freedom (> 0).
        level: confidence level.

    Returns:
        ``q`` with ``P(|T| <= q) = level``.
    """
    if df <= 0:
        return math.inf
    try:
        from scipy.stats import t as _t

        return float(_t.ppf(0.5 + level / 2.0, df))
    except ImportError:  # pragma: no cover - scipy is optional
        z = z_quantile(level)
        v = float(df)
        z3, z5, z7, z9 = z**3, z**5, z**7, z**9
        return (
            z
            + (z3 + z) / (4 * v)
            + (5 * z5 + 16 * z3 + 3 * z) / (96 * v**2)
            + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v**3)
            + (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * v**4)
        )


def wilson_interval(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion.

    Args:
        successes: number of successes (may be fractional, e.g. draws counted as halves).
        n: number of trials.
        level: confidence level.

    Returns:
        (low, high); (0, 1) when ``n`` is 0.

    Example:
        >>> [round(x, 4) for x in wilson_interval(8, 10)]
        [0.4902, 0.9433]
    """
    if n <= 0:
        return 0.0, 1.0
    z = z_quantile(level)
    p = successes / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0))
    return max(0.0, center - half), min(1.0, center + half)


def mean_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    """Mean of independent values with a Student t interval.

    Args:
        values: 1-D sample.
        level: confidence level.

    Returns:
        (mean, low, high, standard error); the interval is infinite for fewer than 2 values.
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.size
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    m = float(x.mean())
    if n < 2:
        return m, -math.inf, math.inf, math.inf
    se = float(x.std(ddof=1) / math.sqrt(n))
    h = t_quantile(n - 1, level) * se
    return m, m - h, m + h, se


def bradley_terry(
    wins: np.ndarray, prior: float = 1.0, tol: float = 1e-12, max_iter: int = 100_000
) -> np.ndarray:
    """Bradley-Terry strengths by Hunter's (2004) MM algorithm.

    Model: ``P(i beats j) = p_i / (p_i + p_j)``. The MM update
    ``p_i <- W_i / sum_j n_ij / (p_i + p_j)`` increases the likelihood monotonically.

    Args:
        wins: (K, K) matrix, ``wins[i, j]`` = wins of ``i`` over ``j`` (draws may be entered as
            half a win to each side).
        prior: pseudo-games added to every pair that played, split evenly (``prior / 2`` wins
            each way), so an unbeaten or winless agent keeps a finite rating; 0 disables it.
        tol: convergence tolerance on the log strengths.
        max_iter: iteration cap.

    Returns:
        (K,) natural-log strengths with mean 0 (agents that never played get 0).
    """
    w = np.array(wins, dtype=np.float64)
    k = w.shape[0]
    if w.shape != (k, k):
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    np.fill_diagonal(w, 0.0)
    n = w + w.T
    played = n > 0
    if prior > 0:
        w = w + played * (prior / 2.0)
        n = w + w.T
    active = n.sum(axis=1) > 0
    total_wins = w.sum(axis=1)
    p = np.ones(k)
    for _ in range(max_iter):
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(active & (denom > 0), total_wins / np.where(denom > 0, denom, 1.0), 1.0)
        new = np.maximum(new, 1e-300)
        # normalise: geometric mean 1 over the active agents
        new = new / math.exp(float(np.log(new[active]).mean())) if active.any() else new
        done = np.max(np.abs(np.log(new) - np.log(p))) < tol
        p = new
        if done:
            break
    ls = np.log(p)
    ls[~active] = 0.0
    if active.any():
        ls[active] -= ls[active].mean()
    return ls


def bt_ratings(wins: np.ndarray, anchor: int | None = None, prior: float = 1.0) -> np.ndarray:
    """Bradley-Terry ratings on the Elo scale (400 points = 10:1 odds).

    Args:
        wins: (K, K) wins matrix (see :func:`bradley_terry`).
        anchor: index of the agent rated 0; ``None``: mean 0.
        prior: pseudo-games per pair (see :func:`bradley_terry`).

    Returns:
        (K,) ratings.
    """
    ls = bradley_terry(wins, prior=prior) * ELO_SCALE
    if anchor is not None:
        ls = ls - ls[anchor]
    return ls


def bt_bootstrap(
    pair_units: list[tuple[int, int, np.ndarray]],
    num_agents: int,
    n_boot: int,
    seed: int,
    anchor: int | None = None,
    prior: float = 1.0,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the Bradley-Terry ratings.

    Resamples the independent units of every pair (one unit = one duplicate deal, i.e. both
    games of the deal together) with replacement and refits.

    Args:
        pair_units: per pair ``(i, j, scores)`` with ``scores`` an (U, 2) array: points of ``i``
            and of ``j`` in each unit (win 1, draw 1/2).
        num_agents: number of agents.
        n_boot: bootstrap replicates.
        seed: seed of the resampling generator.
        anchor: agent rated 0 (``None``: mean 0).
        prior: pseudo-games per pair.
        level: interval level.

    Returns:
        (low, high) arrays of shape (K,).
    """
    rng = np.random.default_rng(seed)
    reps = np.empty((n_boot, num_agents))
    for b in range(n_boot):
        w = np.zeros((num_agents, num_agents))
        for i, j, s in pair_units:
            if len(s) == 0:
                continue
            idx = rng.integers(0, len(s), len(s))
            tot = s[idx].sum(axis=0)
            w[i, j] += tot[0]
            w[j, i] += tot[1]
        reps[b] = bt_ratings(w, anchor=anchor, prior=prior)
    a = (1 - level) / 2
    return np.quantile(reps, a, axis=0), np.quantile(reps, 1 - a, axis=0)


__all__ = [
    "ELO_SCALE",
    "bradley_terry",
    "bt_bootstrap",
    "bt_ratings",
    "mean_interval",
    "t_quantile",
    "wilson_interval",
    "z_quantile",
]
