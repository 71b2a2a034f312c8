"""Cards as rich text for the terminal (:class:`Painter`: rank and suit symbol, the red suits
in red, jokers with what they stand for) and the display order of cards. The one module that
imports ``rich``: without the extra ``play`` its names are None and only the command's parser
works.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from rummy_env.core.cards import RANKS, SUIT_SYMBOLS, str_to_card
from rummy_env.render.table import meld_cards

try:  # the extra "play"; without it only the parser works, and the command says what to install
    from rich.columns import Columns
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text
except ImportError:  # pragma: no cover - checked in a subprocess with rich blocked
    Columns = Console = Group = Panel = Table = Text = None  # type: ignore[assignment,misc]


SUIT_ORDER = (3, 2, 0, 1)
"""Display order of the suits, spades hearts clubs diamonds: the colours alternate."""

STYLE_BLACK = "bold"
STYLE_RED = "bold red"
STYLE_JOKER = "bold magenta"
STYLE_ME = "bold cyan"


_WORD_CARD = re.compile(rf"(?<![0-9A-Za-z])(?:(10|[2-9AJQK])([{SUIT_SYMBOLS}])|JK)(?![0-9A-Za-z])")
"""A card in :mod:`rummy_agents.move_words`' words: ``10♠``, ``7♥``, ``JK``."""


def card_key(c: int) -> tuple[int, int]:
    """Sort key of a card in display order: by suit (spades, hearts, clubs, diamonds), then
    rank; jokers last.
    """
    return (4, 0) if c >= 52 else (SUIT_ORDER.index(c // 13), c % 13)


def sort_cards(cards: Iterable[int]) -> list[int]:
    """Cards in display order (:func:`card_key`)."""
    return sorted(cards, key=card_key)


def mask_cards(mask: int) -> list[int]:
    """The cards of a 52-bit Gin mask, ascending."""
    m = int(mask)
    return [c for c in range(52) if m >> c & 1]


def count_cards(counts: np.ndarray) -> list[int]:
    """The cards of a count vector over card types (53: 52 is the joker), one per copy."""
    return [int(c) for c in np.repeat(np.arange(len(counts)), np.maximum(counts, 0))]


class Painter:
    """Cards as rich text: rank and suit symbol, ``♠ ♣`` in one colour, ``♥ ♦`` in red.

    Args:
        symbols: the suit symbols (``♣♦♥♠``), or the suit letters (``cdhs``) for a terminal
            that cannot show them.
    """

    def __init__(self, symbols: str = SUIT_SYMBOLS) -> None:
        self.symbols = symbols

    def name(self, c: int) -> str:
        """Plain text of a card (``7♥``, ``JK``)."""
        return "JK" if c >= 52 else RANKS[c % 13] + self.symbols[c // 13]

    def card(self, c: int) -> Text:
        """One card, coloured."""
        if c >= 52:
            return Text("JK", style=STYLE_JOKER)
        return Text(self.name(c), style=STYLE_RED if c // 13 in (1, 2) else STYLE_BLACK)

    def cards(self, cards: Iterable[int], sort: bool = False) -> Text:
        """Cards separated by spaces (``-`` for none)."""
        cards = sort_cards(cards) if sort else list(cards)
        if not cards:
            return Text("-", style="dim")
        return Text(" ").join(self.card(c) for c in cards)

    def stand_in(self, text: str, card: int | None = None) -> Text:
        """A joker standing for a card (or a rank): ``JK(7♥)``."""
        inner = self.card(card) if card is not None else Text(text, style="bold")
        return Text.assemble(Text("JK(", style=STYLE_JOKER), inner, Text(")", style=STYLE_JOKER))

    def table_meld(self, rec: np.void, m: int) -> Text:
        """Slot ``m`` of a joker game's table: its cards, each joker with its stand-in."""
        parts = []
        for c in meld_cards(rec, m):
            if c.face < 52:
                parts.append(self.card(c.face))
            elif len(c.stand_in) > 1:  # in a run: the very card
                parts.append(self.stand_in("", str_to_card(c.stand_in)))
            else:  # in a group: the rank
                parts.append(self.stand_in(c.stand_in))
        return Text(" ").join(parts)

    def words(self, text: str) -> Text:
        """A move or hint in words (:mod:`rummy_agents.move_words`) with its cards painted as
        :meth:`card` paints them (``10♠`` as ``T♠``, the suit letters on a terminal without
        the symbols).
        """
        out = Text()
        pos = 0
        for m in _WORD_CARD.finditer(text):
            out.append(text[pos : m.start()])
            if m.group(1) is None:
                out.append_text(self.card(52))
            else:
                rank = "T" if m.group(1) == "10" else m.group(1)
                out.append_text(self.card(SUIT_SYMBOLS.index(m.group(2)) * 13 + RANKS.index(rank)))
            pos = m.end()
        out.append(text[pos:])
        return out
