"""Batched 500 Rum state: a structured numpy array (B,), one record per game, sized by config.

Card types: 0..51 naturals (``suit * 13 + rank``), 52 the joker (all jokers are one type; hands
are counts, so two decks simply hold two of each natural). Table melds are slots:

- group: ``m_key`` = rank, ``m_nat`` = bitmask of the suits of its natural cards, ``m_jok`` =
  number of jokers (at most 4 cards in all, naturals of different suits);
- run: ``m_key`` = suit, positions ``m_lo..m_hi`` on the 14-position axis (0 = ace low,
  1..12 = ranks 2..K, 13 = ace high), ``m_nat`` / ``m_jok`` = bitmasks of the positions held by
  naturals / jokers (a joker's position is the card it stands for, fixed for ever).
"""

from __future__ import annotations

import numpy as np

from rummy_env.core.batch import record_dtype
from rummy_env.core.table import table_fields

NUM_TYPES = 53
JOKER = 52


def make_state_dtype(num_players: int, deck_size: int, max_melds: int) -> np.dtype:
    """The record layout for ``num_players`` players, ``deck_size`` cards, ``max_melds`` slots."""
    p, d, m = num_players, deck_size, max_melds
    return record_dtype(
        p,
        [
            *table_fields(p, d, m),
            ("melded_pts", np.int32, (p,)),  # points melded and laid off this hand
            ("scores", np.int32, (p,)),  # cumulative game score
            ("hand_points", np.int32, (p,)),  # score of the last finished hand
            ("floating", np.int8, (p,)),  # player melded every card and floats
            "rewards",
            "phase",  # PH_* of encodings.five_hundred_rum (common fields: core.batch.record_dtype)
            "cur",
            ("turn", np.int8),  # player whose turn it is in the normal order
            "dealer",
            ("discarder", np.int8),  # who made the last discard (call offers), -1
            ("oblig", np.int8),  # card type that must be melded this turn, -1 none
            ("oblig_new", np.int8),  # the obligation needs a new meld (no lay-off)
            ("taken_single", np.int8),  # type taken as the single top discard this turn, -1
            ("took_pile", np.int8),  # cards taken from the pile this turn
            ("empty_turns", np.int16),  # turns ended since the stock ran out
            ("pile_draws", np.int16),  # draws from the discard pile this hand (not calls)
            ("went_out", np.int8),  # player who went out in the last hand, -1
            "outcome",  # 0 playing, 1 went out, 2 stock exhausted
            ("winner", np.int8),  # game winner, -1
            "done",
            "truncated",
            "steps",
            "hands_played",
            "rng",
        ],
    )
