"""Helpers shipped for users' and our own tests: stacked decks and the contract checker."""

from rummy_env.testing.api import check_aec_env
from rummy_env.testing.decks import gin_deck, gin_deck_3p, gin_decks_4p, joker_deck

__all__ = ["check_aec_env", "gin_deck", "gin_deck_3p", "gin_decks_4p", "joker_deck"]
