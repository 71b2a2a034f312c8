"""Helpers shipped for users' and our own tests: stacked decks and contract checks."""

from rummy_env.testing.decks import gin_deck

__all__ = ["gin_deck"]
