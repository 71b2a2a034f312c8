"""Rummy 51 worlds: the compiled deal of a player's hidden cards (``Rummy51Game.sample_worlds``),
with the Rummy 51 check that the player to act keeps a legal move.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rummy_env.core.worlds import deal_hidden, deck_counts, rewrite_dealt
from rummy_env.rules.rummy51 import kernels as K


@njit(cache=True)
def deal_worlds(states, cfg, base, hidden_n, pool, jokers, max_tries, check) -> np.ndarray:
    """Deal the hidden cards of every world anew.

    Each record already holds the state to sample from. Hand ``q`` becomes ``base[q]`` plus
    ``hidden_n[q]`` cards of a shuffle of ``pool``, the rest is the stock, and the cards
    already dealt are rewritten (``core.worlds``). With ``check``, a deal is redrawn (up to
    ``max_tries`` times) until the player to act has a legal move (after taking the top
    discard, a completable turn). Returns the deals tried per world, -1 where none passed.
    """
    p_n = cfg[K.C_P]
    na = cfg[K.C_NA]
    n_pool = pool.shape[0]
    buf = pool.copy()
    mask = np.empty(na, np.int8)
    ws = K.make_work()
    counts = deck_counts(cfg[K.C_D], jokers, 53)
    work = np.empty(53, np.int64)
    tries = np.full(states.shape[0], -1, np.int64)
    for w in range(states.shape[0]):
        rec = states[w]
        for t in range(max_tries):
            deal_hidden(rec, base, hidden_n, buf, n_pool, p_n)
            if check:
                K.legal_mask(rec, cfg, mask, ws)
                ok = False
                for a in range(na):
                    if mask[a]:
                        ok = True
                        break
                if not ok:
                    continue
            tries[w] = t + 1
            break
        rewrite_dealt(rec, counts, work)
    return tries
