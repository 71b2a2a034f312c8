"""Dealing a player's hidden cards anew: the compiled part of sampling full game states
("worlds") consistent with one player's information, shared by the joker games (500 Rum,
Rummy 51).

A world starts as a copy of the real state record. What the player cannot know is where the
cards of a *pool* lie (the other players' cards not publicly known to be held, and the stock).
:func:`deal_hidden` deals that pool anew from the record's own random stream and
:func:`rewrite_dealt` rewrites the part of the deck already dealt, which the rules never read
again, so that no world keeps the real deal order. ``core.batch.deal_worlds`` loops over worlds
and tries and checks the game-specific condition (its ``world_ok`` hook: the player to act has a
legal move).

The functions take state records of any layout with the fields ``hands`` (players, card types)
counts, ``deck`` (card types, deal order), ``deck_pos`` (first stock card) and ``rng`` (the
record's SplitMix64 stream, ``core.rng``).
"""

from __future__ import annotations

import numpy as np

from rummy_env.core.jit import kernel
from rummy_env.core.rng import shuffle_inplace


@kernel
def deck_counts(deck_size: int, jokers: int, num_types: int) -> np.ndarray:
    """Copies of each card type in a deck of ``deck_size`` cards (naturals 0..51 equally often,
    type 52 the joker), as an int64 array of ``num_types`` entries.
    """
    cnt = np.zeros(num_types, np.int64)
    for c in range(52):
        cnt[c] = (deck_size - jokers) // 52
    if num_types > 52:
        cnt[52] = jokers
    return cnt


@kernel
def deal_hidden(rec, base, hidden_n, buf, n_pool: int, num_players: int) -> None:
    """One deal of the hidden cards into ``rec``.

    ``buf[:n_pool]`` (the pool, card types) is shuffled by the record's stream; hand ``q``
    becomes ``base[q]`` (the counts the player can place: its own hand, the others' known
    cards) plus the next ``hidden_n[q]`` cards of the shuffle; the rest of the shuffle becomes
    the stock, ``deck[deck_pos:]``. ``buf`` is left shuffled (the next try reshuffles it).
    """
    shuffle_inplace(rec, buf, n_pool)
    n_types = base.shape[1]
    k = 0
    for q in range(num_players):
        for c in range(n_types):
            rec.hands[q, c] = base[q, c]
        for _ in range(hidden_n[q]):
            rec.hands[q, buf[k]] += 1
            k += 1
    pos = rec.deck_pos
    for j in range(k, n_pool):
        rec.deck[pos + j - k] = buf[j]


@kernel
def rewrite_dealt(rec, counts, work) -> None:
    """Rewrite ``deck[:deck_pos]`` (cards already dealt, never read again) as a shuffle of the
    deck's cards not in the stock, so the whole ``deck`` is again the deck (``counts`` copies
    of each type) and no world keeps the real deal order. ``work``: scratch of ``counts``'s
    size.
    """
    n_types = counts.shape[0]
    for c in range(n_types):
        work[c] = counts[c]
    pos = rec.deck_pos
    for j in range(pos, rec.deck.shape[0]):
        work[rec.deck[j]] -= 1
    k = 0
    for c in range(n_types):
        for _ in range(work[c]):
            rec.deck[k] = c
            k += 1
    shuffle_inplace(rec, rec.deck, pos)
