"""Rummy 51 action table and observation pieces (the versioned contract of rummy51_v1).

108 cards (two decks, four jokers), ``M = 36`` table meld slots, ``P`` players. Card types:
0..51 naturals, 52 the joker.

==================  =====================  =========================================================
name                count                  meaning
==================  =====================  =========================================================
DRAW_STOCK          1                      draw the top stock card
TAKE_DISCARD        1                      take the top discard
MELD[t]             685                    lay a new meld by template ``t`` (``core.jmelds``)
LAYOFF[c, m]        52 * M                 lay natural card ``c`` off on table meld slot ``m``
LAYOFF_JOKER[m, e]  2 * M                  lay a joker off on slot ``m``: e=0 group / run low end,
                                           e=1 run high end
RETRIEVE[m, k]      14 * M                 take a joker back from slot ``m`` by putting a natural in
                                           its place: run position ``k`` (0..13), or group suit
                                           ``k`` (0..3)
DISCARD[c]          53                     discard card type ``c`` (ends the turn)
==================  =====================  =========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rummy_env.core.cards import card_to_str
from rummy_env.core.jmelds import NUM_TEMPLATES, template_str
from rummy_env.encodings.pieces import Piece, PieceLayout, build_pieces, table_specs

NUM_TYPES = 53
DECK_SIZE = 108
MAX_MELDS = DECK_SIZE // 3

PH_DRAW = 0
PH_PLAY = 1
PH_OVER = 2
NUM_PHASES = 3
PHASE_NAMES = ("draw", "play", "hand_over")

OUT_NONE = 0
OUT_WENT_OUT = 1
OUT_DRAW = 2
OUTCOME_NAMES = ("none", "went_out", "draw")


@dataclass(frozen=True)
class Layout(PieceLayout):
    """Action ids and observation offsets for ``num_players`` players."""

    num_players: int
    deck_size: int = DECK_SIZE

    @cached_property
    def max_melds(self) -> int:
        """Table meld slots."""
        return self.deck_size // 3

    @cached_property
    def draw_stock(self) -> int:
        """Id of DRAW_STOCK."""
        return 0

    @cached_property
    def take_discard(self) -> int:
        """Id of TAKE_DISCARD."""
        return 1

    @cached_property
    def meld_base(self) -> int:
        """First MELD id."""
        return 2

    @cached_property
    def layoff_base(self) -> int:
        """First LAYOFF id (``layoff_base + c * M + m``)."""
        return self.meld_base + NUM_TEMPLATES

    @cached_property
    def joker_base(self) -> int:
        """First LAYOFF_JOKER id (``joker_base + 2 * m + e``)."""
        return self.layoff_base + 52 * self.max_melds

    @cached_property
    def retrieve_base(self) -> int:
        """First RETRIEVE id (``retrieve_base + 14 * m + k``)."""
        return self.joker_base + 2 * self.max_melds

    @cached_property
    def discard_base(self) -> int:
        """First DISCARD id."""
        return self.retrieve_base + 14 * self.max_melds

    @cached_property
    def num_actions(self) -> int:
        """Size of the action space."""
        return self.discard_base + NUM_TYPES

    def action_ranges(self) -> tuple[tuple[str, int, int], ...]:
        """(name, first id, count) of each action range."""
        m = self.max_melds
        return (
            ("DRAW_STOCK", 0, 1),
            ("TAKE_DISCARD", 1, 1),
            ("MELD[t]", self.meld_base, NUM_TEMPLATES),
            ("LAYOFF[c, m]", self.layoff_base, 52 * m),
            ("LAYOFF_JOKER[m, e]", self.joker_base, 2 * m),
            ("RETRIEVE[m, k]", self.retrieve_base, 14 * m),
            ("DISCARD[c]", self.discard_base, NUM_TYPES),
        )

    def action_name(self, a: int) -> str:
        """Readable name of an action id."""
        a = int(a)
        m = self.max_melds
        if a == 0:
            return "DRAW_STOCK"
        if a == 1:
            return "TAKE_DISCARD"
        if self.meld_base <= a < self.layoff_base:
            return f"MELD[{template_str(a - self.meld_base)}]"
        if self.layoff_base <= a < self.joker_base:
            c, s = divmod(a - self.layoff_base, m)
            return f"LAYOFF[{card_to_str(c)}, {s}]"
        if self.joker_base <= a < self.retrieve_base:
            s, e = divmod(a - self.joker_base, 2)
            return f"LAYOFF_JOKER[{s}, {'high' if e else 'low'}]"
        if self.retrieve_base <= a < self.discard_base:
            s, k = divmod(a - self.retrieve_base, 14)
            return f"RETRIEVE[{s}, {k}]"
        if self.discard_base <= a < self.num_actions:
            return f"DISCARD[{card_to_str(a - self.discard_base)}]"
        return f"<invalid action {a}>"

    @cached_property
    def pieces(self) -> tuple[Piece, ...]:
        """Named observation pieces, in order (seat-relative: index 0 is the observer)."""
        p, d, m = self.num_players, self.deck_size, self.max_melds
        copies = (0.0, 2.0)  # two copies of each natural, four jokers
        specs = (
            ("hand", (NUM_TYPES,), "count of each card type in the observer's hand / 2", copies),
            (
                "pile_sequence",
                (d,),
                "discard pile from the top: (card type + 1) / 53, 0 past the end",
            ),
            ("pile_counts", (NUM_TYPES,), "count of each type in the discard pile / 2", copies),
            (
                "known",
                (p - 1, NUM_TYPES),
                "cards each other player is known to hold / 2",
                copies,
            ),
            *table_specs(m, p),
            ("hand_sizes", (p,), "cards in each player's hand / 13", (0.0, self.deck_size / 13)),
            ("stock_size", (1,), "cards in the stock / 108"),
            ("opened", (p,), "1 for players who have laid down their opening"),
            ("penalties", (p,), "match penalty totals / elimination", (0.0, np.inf)),
            ("eliminated", (p,), "1 for players out of the match"),
            ("dealer", (p,), "one-hot of the dealer"),
            ("phase", (NUM_PHASES,), "one-hot phase"),
            (
                "opening_points",
                (1,),
                "points of new melds laid this turn towards the opening / 51",
                (0.0, np.inf),
            ),
            ("obligation", (NUM_TYPES,), "one-hot of the taken discard owed to the opening melds"),
            (
                "taken_single",
                (NUM_TYPES,),
                "one-hot of the discard taken this turn (not discardable)",
            ),
            ("owed_jokers", (1,), "retrieved jokers still to be melded this turn / 4"),
            ("reshuffles_left", (1,), "pile reshuffles left before the hand ends as a draw / max"),
        )
        return build_pieces(specs)
