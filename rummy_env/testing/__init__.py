"""Helpers shipped for users' and our own tests: stacked decks and the contract checker."""

from rummy_env.renamed import renamed_attributes
from rummy_env.testing.api import check_aec_env
from rummy_env.testing.decks import gin_deck, gin_deck_3p, gin_decks_4p, joker_deck

# rum_deck: joker_deck's name before 0.1.0's one-name-per-game rename, deprecated (CHANGELOG)
__getattr__ = renamed_attributes(__name__, {"rum_deck": "joker_deck"})

__all__ = ["check_aec_env", "gin_deck", "gin_deck_3p", "gin_decks_4p", "joker_deck"]
