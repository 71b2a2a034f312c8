"""500 Rum action table and observation pieces (the versioned contract of five_hundred_rum_v1).

Sizes follow the config: ``D`` cards in play (54, 52, 108 or 104), ``M = D // 3`` table meld
slots, ``P`` players. Card types: 0..51 naturals, 52 the joker.

==================  =====================  =========================================================
name                count                  meaning
==================  =====================  =========================================================
DRAW_STOCK          1                      draw the top stock card
TAKE_DISCARD[d]     D                      take the discard pile down to depth ``d`` (0 = top), as
                                           the draw or, when offered, as a "Rummy!" call
MELD[t]             685                    lay a new meld by template ``t`` (``core.jmelds``)
LAYOFF[c, m]        52 * M                 lay natural card ``c`` off on table meld slot ``m``
LAYOFF_JOKER[m, e]  2 * M                  lay a joker off on slot ``m``: e=0 group / run low end,
                                           e=1 run high end
DISCARD[c]          53                     discard card type ``c`` (ends the turn)
PASS                1                      decline a "Rummy!" call, or (stock empty) not draw from
                                           the pile, which ends the hand
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

PH_DRAW = 0
PH_PLAY = 1
PH_CALL = 2
PH_CALL_LAYOFF = 3
PH_OVER = 4
NUM_PHASES = 5
PHASE_NAMES = ("draw", "play", "rummy_call_offer", "rummy_call_layoff", "hand_over")

OUT_NONE = 0
OUT_WENT_OUT = 1
OUT_STOCK = 2
OUTCOME_NAMES = ("none", "went_out", "stock_exhausted")


@dataclass(frozen=True)
class Layout(PieceLayout):
    """Action ids and observation offsets of one (players, deck size) combination."""

    num_players: int
    deck_size: int

    @cached_property
    def max_melds(self) -> int:
        """Table meld slots."""
        return self.deck_size // 3

    @cached_property
    def draw_stock(self) -> int:
        """Id of DRAW_STOCK."""
        return 0

    @cached_property
    def take_base(self) -> int:
        """First TAKE_DISCARD id."""
        return 1

    @cached_property
    def meld_base(self) -> int:
        """First MELD id."""
        return self.take_base + self.deck_size

    @cached_property
    def layoff_base(self) -> int:
        """First LAYOFF id (``layoff_base + c * M + m``)."""
        return self.meld_base + NUM_TEMPLATES

    @cached_property
    def joker_base(self) -> int:
        """First LAYOFF_JOKER id (``joker_base + 2 * m + e``)."""
        return self.layoff_base + 52 * self.max_melds

    @cached_property
    def discard_base(self) -> int:
        """First DISCARD id."""
        return self.joker_base + 2 * self.max_melds

    @cached_property
    def pass_action(self) -> int:
        """Id of PASS."""
        return self.discard_base + NUM_TYPES

    @cached_property
    def num_actions(self) -> int:
        """Size of the action space."""
        return self.pass_action + 1

    def action_ranges(self) -> tuple[tuple[str, int, int], ...]:
        """(name, first id, count) of each action range."""
        m = self.max_melds
        return (
            ("DRAW_STOCK", 0, 1),
            ("TAKE_DISCARD[d]", self.take_base, self.deck_size),
            ("MELD[t]", self.meld_base, NUM_TEMPLATES),
            ("LAYOFF[c, m]", self.layoff_base, 52 * m),
            ("LAYOFF_JOKER[m, e]", self.joker_base, 2 * m),
            ("DISCARD[c]", self.discard_base, NUM_TYPES),
            ("PASS", self.pass_action, 1),
        )

    def action_name(self, a: int) -> str:
        """Readable name of an action id."""
        a = int(a)
        m = self.max_melds
        if a == 0:
            return "DRAW_STOCK"
        if self.take_base <= a < self.meld_base:
            return f"TAKE_DISCARD[{a - self.take_base}]"
        if self.meld_base <= a < self.layoff_base:
            return f"MELD[{template_str(a - self.meld_base)}]"
        if self.layoff_base <= a < self.joker_base:
            c, s = divmod(a - self.layoff_base, m)
            return f"LAYOFF[{card_to_str(c)}, {s}]"
        if self.joker_base <= a < self.discard_base:
            s, e = divmod(a - self.joker_base, 2)
            return f"LAYOFF_JOKER[{s}, {'high' if e else 'low'}]"
        if self.discard_base <= a < self.pass_action:
            return f"DISCARD[{card_to_str(a - self.discard_base)}]"
        if a == self.pass_action:
            return "PASS"
        return f"<invalid action {a}>"

    @cached_property
    def pieces(self) -> tuple[Piece, ...]:
        """Named observation pieces, in order (seat-relative: index 0 is the observer)."""
        p, d, m = self.num_players, self.deck_size, self.max_melds
        decks = d // 52
        copies = (0.0, max(decks, d - 52 * decks) / 2)  # most copies of a type (jokers: 2 a deck)
        specs = (
            ("hand", (NUM_TYPES,), "count of each card type in the observer's hand / 2", copies),
            (
                "pile_sequence",
                (d,),
                "discard pile from the top: (card type + 1) / 53, 0 past the end",
            ),
            ("pile_counts", (NUM_TYPES,), "count of each type in the discard pile / 2", copies),
            (
                "pile_depth",
                (NUM_TYPES,),
                "1 - depth/D of the shallowest copy of each type, 0 if absent",
            ),
            (
                "known",
                (p - 1, NUM_TYPES),
                "cards each other player is known to hold / 2",
                copies,
            ),
            *table_specs(m, p),
            ("hand_sizes", (p,), "cards in each player's hand / 13", (0.0, d / 13)),
            ("stock_size", (1,), "cards in the stock / D"),
            ("melded_points", (p,), "points each player melded this hand / 100", (0.0, np.inf)),
            ("scores", (p,), "game scores / target (negative totals allowed)", (-np.inf, np.inf)),
            ("floating", (p,), "1 for players who melded every card and float"),
            ("dealer", (p,), "one-hot of the dealer"),
            ("phase", (NUM_PHASES,), "one-hot phase"),
            ("obligation", (NUM_TYPES,), "one-hot of the card type that must be melded this turn"),
            (
                "taken_single",
                (NUM_TYPES,),
                "one-hot of the single top discard taken (not discardable)",
            ),
        )
        return build_pieces(specs)
