"""Test helpers shared by the joker games (500 Rum, Rummy 51): card accounting and a redeal
of the cards hidden from one player, over the state records both games use (``hands``,
``known``, ``deck``/``deck_pos``, ``pile``/``pile_n`` and the table slots).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from reference_500 import meld_cards, table_of


def deck_counts(config) -> Counter:
    """The deck of ``config`` as card-type counts (jokers as type 52)."""
    c = Counter({card: config.decks for card in range(52)})
    if config.jokers:
        c[52] = config.jokers
    return c


def all_cards(rec, config) -> Counter:
    """Hands + stock + pile + table (jokers as type 52): must always be the whole deck."""
    c: Counter = Counter()
    for q in range(config.num_players):
        for t in range(53):
            c[t] += int(rec["hands"][q][t])
    c.update(int(x) for x in rec["deck"][int(rec["deck_pos"]) :])
    c.update(int(x) for x in rec["pile"][: int(rec["pile_n"])])
    for meld in table_of(rec):
        c.update(meld_cards(meld))
    return +c


def hidden_shuffle(rec, p: int, n_p: int, rng: np.random.Generator):
    """A copy of the record where the cards hidden from ``p`` (the other players' cards not
    publicly known, and the stock) are dealt differently.
    """
    r = rec.copy()
    others = [q for q in range(n_p) if q != p]
    hidden = {
        q: np.array(r["hands"][q], np.int64) - np.array(r["known"][q], np.int64) for q in others
    }
    pos = int(r["deck_pos"])
    pool = [int(c) for c in r["deck"][pos:]]
    for q in others:
        assert (hidden[q] >= 0).all()
        pool += [c for c in range(53) for _ in range(int(hidden[q][c]))]
    pool = list(rng.permutation(pool)) if pool else []
    k = 0
    for q in others:
        n = int(hidden[q].sum())
        new = np.array(r["known"][q], np.int64)
        for c in pool[k : k + n]:
            new[int(c)] += 1
        k += n
        r["hands"][q] = new.astype(np.int8)
    r["deck"][pos:] = np.array(pool[k:], np.int8)
    return r
