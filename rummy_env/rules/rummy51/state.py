"""Batched Rummy 51 state: a structured numpy array (B,), one record per game.

Card types and table meld slots are those of ``rummy_env.core.table`` (0..51 naturals, 52 the
joker; groups and runs with jokers), so the table code is shared with 500 Rum.
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
            ("opened", np.int8, (p,)),  # player has laid down the opening
            ("out", np.int8, (p,)),  # eliminated from the match
            ("penalties", np.int32, (p,)),  # match penalty totals
            ("hand_penalty", np.int32, (p,)),  # penalties of the last finished hand
            "rewards",
            "phase",  # PH_* of encodings.rummy51 (common fields: core.batch.record_dtype)
            "cur",
            "dealer",
            ("open_pts", np.int16),  # points of new melds laid this turn before opening
            ("opened_now", np.int8),  # the player to act opened in this turn
            ("built_others", np.int8),  # ... and laid off on / took from another's meld
            ("oblig", np.int8),  # top discard taken that must go into an opening meld, -1
            ("taken_single", np.int8),  # card type taken from the pile this turn, -1
            ("owed", np.int8),  # retrieved jokers still to be melded this turn
            ("reshuffles", np.int16),  # times the pile became the stock this hand
            ("pile_draws", np.int16),  # draws of the top discard this hand
            "outcome",  # last finished hand: 0 none yet, 1 went out, 2 draw
            ("hand_winner", np.int8),  # who went out in the last hand, -1
            ("rummy", np.int8),  # the last hand was won with a Rummy
            ("winner", np.int8),  # match winner, -1
            "done",
            "truncated",
            "steps",
            "hands_played",
            "rng",
        ],
    )
