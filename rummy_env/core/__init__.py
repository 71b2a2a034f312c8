"""Cards, deck, meld tables, the exact deadwood solver and random streams, shared by all games."""

from rummy_env.core import records  # noqa: F401  (first: stable record names before any compile)
from rummy_env.core.cards import (
    card_to_str,
    cards_to_counts,
    cards_to_mask,
    cards_to_str,
    make_deck,
    mask_to_cards,
    parse_cards,
    str_to_card,
)
from rummy_env.core.melds import deadwood, deadwood_after_discard

__all__ = [
    "records",
    "card_to_str",
    "cards_to_counts",
    "cards_to_mask",
    "cards_to_str",
    "deadwood",
    "deadwood_after_discard",
    "make_deck",
    "mask_to_cards",
    "parse_cards",
    "str_to_card",
]
