"""Batched Gin Rummy state: one numpy structured array of shape (B,), one record per game.

Every field is a fixed-shape numpy array (``states["hands"]`` is (B, 2) uint64, ...), so the state
is a plain array with a leading batch axis that compiled kernels take as a single argument. Card
sets are 52-bit masks (bit ``suit * 13 + rank``): Gin uses one deck without jokers, and masks are
what the exact deadwood solver works on.
"""

from __future__ import annotations

import numpy as np

from rummy_env.core.batch import record_dtype

GIN_STATE_DTYPE = record_dtype(
    2,
    [
        ("hands", np.uint64, (2,)),  # cards in each player's hand (melded cards removed)
        ("deck", np.int8, (52,)),  # the deal order; stock = deck[deck_pos:]
        ("deck_pos", np.int16),  # index of the next stock card
        ("pile", np.int8, (52,)),  # discard pile bottom -> top, valid up to pile_n
        ("pile_n", np.int16),  # cards in the discard pile
        ("known", np.uint64, (2,)),  # cards each player is publicly known to hold
        ("melds", np.uint64, (2, 3)),  # declared meld slots per player (with lay-offs added)
        ("n_melds", np.int8, (2,)),  # used meld slots per player
        ("laid_off", np.uint64),  # cards the defender laid off on the knocker's melds
        "phase",  # PH_* of encodings.gin_rummy (common fields: core.batch.record_dtype)
        "cur",
        "dealer",
        ("knocker", np.int8),  # player who knocked, -1 before
        ("offer_stage", np.int8),  # upcard offer: 0 non-dealer asked, 1 dealer asked
        ("forced_stock", np.int8),  # 1 when both passed the upcard: non-dealer must draw stock
        ("taken", np.int8),  # card just taken from the pile (may not be discarded), -1 none
        ("knock_card", np.int8),  # the knocker's face-down discard, -1 none
        ("upcard", np.int8),  # the first upcard of the hand, -1 (eleven-card deal)
        ("knock_limit", np.int8),  # knock limit of this hand
        ("spade_double", np.int8),  # 1 when the hand score is doubled (Oklahoma spade)
        ("gin", np.int8),  # 1 when the knocker went gin
        "outcome",  # OUT_* of the last finished hand of this episode, 0 before
        "done",
        "truncated",
        ("scores", np.int32, (2,)),  # cumulative match points (hand scores only)
        ("boxes", np.int32, (2,)),  # boxes: hands won + Oklahoma extra boxes
        ("totals", np.int32, (2,)),  # final match totals with all bonuses (match end)
        ("hand_points", np.int32, (2,)),  # points each player scored in the last hand
        ("deadwood", np.int16, (2,)),  # final deadwood of the last scored hand
        "rewards",
        ("pile_draws", np.int16),  # draws from the discard pile in this hand (normal turns)
        "steps",
        "hands_played",
        "rng",
    ],
)


def new_states(n: int) -> np.ndarray:
    """An uninitialised batch of ``n`` game records (call a reset kernel before use)."""
    s = np.zeros(n, dtype=GIN_STATE_DTYPE)
    s["knocker"] = -1
    s["taken"] = -1
    s["knock_card"] = -1
    s["upcard"] = -1
    return s
