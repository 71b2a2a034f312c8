"""Observation features for learned agents, computed from what the seat observes.

A learned policy reads ``concat(observation, features(observation))``. Features are pure
functions of the seat's own observation vector (never of hidden state), so an agent that was
trained with them can compute them again at play time from the PettingZoo observation.

- ``"none"``: no extra features (any game).
- ``"gin_deadwood"`` (Gin Rummy): the exact minimum deadwood after each possible discard of the
  hand (11 cards: the hand itself; 10 cards: the hand plus the top discard, i.e. what taking the
  discard would allow), scaled by 1/100 with 1.0 for cards that cannot be discarded, plus the
  deadwood of the 10-card hand now and the best deadwood reachable by taking the top discard.
  A second card plane holds, at the top discard only, what taking it gains: (deadwood now -
  best deadwood after taking it) / 100 (10-card hands; 0 elsewhere). The rule-based agents
  compute exactly these numbers; a small network learns much faster when it does not have to
  rediscover the meld arithmetic.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rummy_env.core.melds import (
    GROUP_NOPT,
    GROUP_OPTS,
    INF_DEADWOOD,
    SPREAD,
    SUIT_DEADWOOD,
    min_deadwood,
    min_deadwood_per_discard,
)

FEATURES = ("none", "gin_deadwood")
"""Names accepted by :func:`feature_size` and :func:`add_features`."""

_GIN_FEATURES = 106  # 52 per-discard, now, best after taking, 52 take-gain plane
_U1 = np.uint64(1)


@njit(cache=True)
def _gin_deadwood_features(obs, out, suit_dw, group_opts, group_nopt, spread):
    per = np.empty(52, np.int64)
    for i in range(obs.shape[0]):
        m = np.uint64(0)
        n = 0
        for c in range(52):
            if obs[i, c] > 0.5:
                m |= _U1 << np.uint64(c)
                n += 1
        top = -1
        for c in range(52):
            if obs[i, 52 + c] > 0.5:
                top = c
        for c in range(54):
            out[i, c] = 1.0
        for c in range(54, _GIN_FEATURES):
            out[i, c] = 0.0
        if n == 11:
            best = min_deadwood_per_discard(m, per, suit_dw, group_opts, group_nopt, spread)
            for c in range(52):
                if per[c] < INF_DEADWOOD:
                    out[i, c] = min(per[c], 100) / 100.0
            out[i, 52] = min(best, 100) / 100.0
            out[i, 53] = out[i, 52]
        elif n == 10:
            now = min_deadwood(m, suit_dw, group_opts, group_nopt, spread)
            out[i, 52] = min(now, 100) / 100.0
            if top >= 0 and not (m >> np.uint64(top) & _U1):
                min_deadwood_per_discard(
                    m | (_U1 << np.uint64(top)), per, suit_dw, group_opts, group_nopt, spread
                )
                best = INF_DEADWOOD
                for c in range(52):
                    if c != top and per[c] < INF_DEADWOOD:
                        out[i, c] = min(per[c], 100) / 100.0
                        best = min(best, per[c])
                out[i, 53] = min(best, 100) / 100.0
                out[i, 54 + top] = out[i, 52] - out[i, 53]


def feature_size(name: str) -> int:
    """Number of extra features of ``name``.

    Raises:
        ValueError: for an unknown feature set.
    """
    if name == "none":
        return 0
    if name == "gin_deadwood":
        return _GIN_FEATURES
    raise ValueError(f"unknown features {name!r}; available: {', '.join(FEATURES)}")


def add_features(name: str, obs: np.ndarray) -> np.ndarray:
    """``obs`` with the features of ``name`` appended (a fresh float32 array).

    Args:
        name: a feature set of :data:`FEATURES`.
        obs: (B, O) or (O,) observations of one game (Gin Rummy for ``"gin_deadwood"``).

    Returns:
        (B, O + F) or (O + F,) float32.
    """
    x = np.asarray(obs, dtype=np.float32)
    single = x.ndim == 1
    x2 = x[None] if single else x
    k = feature_size(name)
    out = np.empty((x2.shape[0], x2.shape[1] + k), dtype=np.float32)
    out[:, : x2.shape[1]] = x2
    if name == "gin_deadwood":
        if x2.shape[1] < 104:
            raise ValueError("gin_deadwood needs a Gin Rummy observation (hand, discard_top)")
        _gin_deadwood_features(
            np.ascontiguousarray(x2), out[:, x2.shape[1] :], SUIT_DEADWOOD, GROUP_OPTS,
            GROUP_NOPT, SPREAD,
        )  # fmt: skip
    return out[0] if single else out


def card_layout(
    game: str, features: str, obs_size: int
) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """Card planes of a game's (featured) observation and its card-indexed actions, for a
    policy's card head: (offsets of 52-wide card planes, first ids of 52-wide action blocks,
    (action id, plane offset) of actions about the card marked in a plane). Empty for games
    without a known layout.

    Args:
        game: game name.
        features: the feature set appended to the observation.
        obs_size: size of the raw observation (without features).
    """
    if game != "gin_rummy":
        return [], [], []
    # hand, discard_top, discard_pile, opponent_known (rummy_env.encodings.gin_rummy)
    planes = [0, 52, 104, 156]
    if features == "gin_deadwood":
        planes += [obs_size, obs_size + 54]  # deadwood after each discard, gain of taking
    # DISCARD[c], KNOCK[c]; TAKE_DISCARD is about the card of the discard_top plane
    return planes, [3, 55], [(1, 52)]


def default_features(game: str) -> str:
    """The feature set used by default for ``game``."""
    return "gin_deadwood" if game == "gin_rummy" else "none"


__all__ = ["FEATURES", "add_features", "card_layout", "default_features", "feature_size"]
