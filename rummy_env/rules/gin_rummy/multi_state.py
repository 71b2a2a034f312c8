"""Batched 3- and 4-player Gin Rummy state (RULES.md §1.10): one record per game.

A 3- or 4-player match is made of 2-player hands, so its record holds one 2-player Gin record per
table (``boards``: the very records, ``GIN_STATE_DTYPE``, that the 2-player kernels play), which
seat sits where, and the match: scores, boxes, settlement. 3 players: one table (the dealer sits
out); 4 players: two tables (teams {0, 2} and {1, 3}).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from rummy_env.core.batch import record_dtype
from rummy_env.rules.gin_rummy.state import GIN_STATE_DTYPE


@cache
def multi_state_dtype(num_players: int) -> np.dtype:
    """The record layout of a ``num_players`` (3 or 4) match."""
    p, t = num_players, (1 if num_players == 3 else 2)
    return record_dtype(
        p,
        [
            ("boards", GIN_STATE_DTYPE, (t,)),  # each table's 2-player hand (table-local seats)
            ("seat", np.int8, (t, 2)),  # seat of each table-local player
            ("board_of", np.int8, (p,)),  # table of each seat, -1 while sitting out
            ("local", np.int8, (p,)),  # table-local index of each seat, -1 while sitting out
            ("table_dealer", np.int8, (t,)),  # seat in the dealer's part at each table
            ("turn", np.int8),  # table whose player acts next
            ("round", np.int32),  # 4 players: pairing index (advances after a scored round)
            ("scores", np.int32, (p,)),  # match points per seat (4 players: its team's)
            ("boxes", np.int32, (p,)),  # boxes per seat (4 players: its team's)
            ("totals", np.int32, (p,)),  # final totals with bonuses (match end)
            ("settle", np.int32, (p,)),  # the settlement (4 players: the team's; match end)
            ("hand_points", np.int32, (p,)),  # points the seat scored in its last hand
            ("deadwood", np.int16, (p,)),  # the seat's final deadwood in its last hand
            ("hand_outcome", np.int8, (p,)),  # outcome of the last hand at the seat's table
            ("round_points", np.int32, (p,)),  # 4 players: the team's score of the last round
            ("paid", np.float64, (p,)),  # rewards paid this episode (for the last settlement)
            "phase",  # the phase of the acting table's hand (PH_* of encodings.gin_rummy)
            "cur",  # the seat to act
            "dealer",  # 3 players: the seat sitting out; 4: the dealer at player_0's table
            "outcome",  # outcome of the last finished hand at any table
            "done",
            "truncated",
            "rewards",
            "steps",
            "hands_played",  # hands finished (4 players: two per round)
            "rng",
        ],
    )


def new_multi_states(num_players: int, n: int) -> np.ndarray:
    """An uninitialised batch of ``n`` match records (call a reset kernel before use)."""
    s = np.zeros(n, dtype=multi_state_dtype(num_players))
    for f in ("knocker", "taken", "knock_card", "upcard"):
        s["boards"][f] = -1
    return s
