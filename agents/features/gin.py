"""Gin Rummy's feature pieces ``gin_deadwood`` (exact minimum deadwood after each discard) and
``gin_deadwood_relative`` (the same relative to the best discard), computed by one kernel.

The piece holds 106 entries, computed from the hand and top-discard planes of the observation:

- ``[0:52]``: per card, the minimum deadwood left after discarding it / 100 (capped at 1.0),
  1.0 for cards that cannot be discarded. 11-card hands: the hand itself; 10-card hands: the
  hand plus the top discard (what taking the discard allows), the top discard excluded.
- ``[52]``: the hand's minimum deadwood now / 100 (11 cards: the best after a discard).
- ``[53]``: the best deadwood reachable by taking the top discard and discarding / 100 (11
  cards: the same as ``[52]``; 1.0 when the top discard cannot be taken).
- ``[54:106]``: at the top discard only, what taking it gains: ``[52] - [53]`` (10-card hands;
  zeros elsewhere).

``gin_deadwood_relative`` holds 104 entries in points / 10, so that one point of deadwood moves
an input by 0.1, not 0.01 (a policy separates discards one point apart with small weights):

- ``[0:52]``: per card, (deadwood after discarding it - the best discard's) / 10, capped at 1.0
  (the best discards read 0.0); 1.0 for cards that cannot be discarded.
- ``[52:104]``: at the top discard only (10-card hands), what taking it gains, (deadwood now -
  best deadwood after taking it) / 10, within [-1, 1]; zeros elsewhere.
"""

from __future__ import annotations

import numpy as np

from rummy_env.core.jit import kernel
from rummy_env.core.melds import (
    GROUP_NOPT,
    GROUP_OPTS,
    INF_DEADWOOD,
    SPREAD,
    SUIT_DEADWOOD,
    min_deadwood,
    min_deadwood_per_discard,
)

GIN_DEADWOOD_SIZE = 106  # 52 per-discard, now, best after taking, 52 take-gain plane
GIN_RELATIVE_SIZE = 104  # 52 per-discard relative to the best, 52 take-gain plane in points / 10
_U1 = np.uint64(1)


def gin_deadwood(
    obs: np.ndarray,
    out: np.ndarray,
    o_hand: int,
    o_top: int,
    rel: np.ndarray | None = None,
) -> None:
    """Write the ``gin_deadwood`` piece of each row of ``obs`` (B, O) into ``out`` (B, 106),
    and with ``rel`` the ``gin_deadwood_relative`` piece into ``rel`` (B, 104).

    Args:
        obs: C-contiguous float32 Gin Rummy observations.
        out: float32 output rows.
        o_hand: offset of the ``hand`` plane.
        o_top: offset of the ``discard_top`` plane.
        rel: float32 output rows of the relative piece, or None.
    """
    if rel is None:
        rel = np.empty((0, GIN_RELATIVE_SIZE), np.float32)
    _gin_deadwood(obs, out, rel, o_hand, o_top, SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD)


@kernel
def _gin_deadwood(obs, out, rel, o_hand, o_top, suit_dw, group_opts, group_nopt, spread):
    per = np.empty(52, np.int64)
    with_rel = rel.shape[0] > 0
    for i in range(obs.shape[0]):
        m = np.uint64(0)
        n = 0
        for c in range(52):
            if obs[i, o_hand + c] > 0.5:
                m |= _U1 << np.uint64(c)
                n += 1
        top = -1
        for c in range(52):
            if obs[i, o_top + c] > 0.5:
                top = c
        for c in range(54):
            out[i, c] = 1.0
        for c in range(54, GIN_DEADWOOD_SIZE):
            out[i, c] = 0.0
        if with_rel:
            for c in range(52):
                rel[i, c] = 1.0
            for c in range(52, GIN_RELATIVE_SIZE):
                rel[i, c] = 0.0
        best = INF_DEADWOOD
        skip = -1  # the top discard: a 10-card hand cannot discard the card it takes
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
                skip = top
                min_deadwood_per_discard(
                    m | (_U1 << np.uint64(top)), per, suit_dw, group_opts, group_nopt, spread
                )
                for c in range(52):
                    if c != top and per[c] < INF_DEADWOOD:
                        out[i, c] = min(per[c], 100) / 100.0
                        best = min(best, per[c])
                out[i, 53] = min(best, 100) / 100.0
                out[i, 54 + top] = out[i, 52] - out[i, 53]
                if with_rel:
                    rel[i, 52 + top] = max(-1.0, min(1.0, (now - best) / 10.0))
        if with_rel and best < INF_DEADWOOD:
            for c in range(52):
                if c != skip and per[c] < INF_DEADWOOD:
                    rel[i, c] = min(per[c] - best, 10) / 10.0
