"""Shared helpers for the Gin Rummy tests: stacked tables and actions by name."""

from __future__ import annotations

import numpy as np

from rummy_env import gin_rummy_v0
from rummy_env.core.cards import cards_to_mask, mask_to_cards, parse_cards
from rummy_env.encodings import gin_rummy as E
from rummy_env.testing import gin_deck

P0, P1 = "player_0", "player_1"


def table(non_dealer, dealer, upcard=None, stock=(), dealer_seat=1, **options):
    """A raw env dealt from a stacked deck; with dealer_seat=1, player_0 is the non-dealer."""
    env = gin_rummy_v0.raw_env(**options)
    env.reset(options={"deck": gin_deck(non_dealer, dealer, upcard, stock), "dealer": dealer_seat})
    return env


def play(env, *names):
    """Step the named actions in order (raises on an illegal one)."""
    for n in names:
        env.step(E.action_id(n))


def legal(env) -> set[str]:
    """Names of the legal actions of the agent to act."""
    mask = env.observe(env.agent_selection)["action_mask"]
    return {E.action_name(a) for a in np.flatnonzero(mask)}


def hand(env, seat: int) -> int:
    """Hand of a seat as a mask."""
    return int(env.state_record["hands"][seat])


def cards(text) -> int:
    return cards_to_mask(text)


def stock_cards(env) -> list[int]:
    rec = env.state_record
    return [int(c) for c in rec["deck"][int(rec["deck_pos"]) :]]


def remaining_cards(*used) -> list[int]:
    """Cards not in any of the given texts, ascending."""
    taken = set()
    for u in used:
        taken |= set(parse_cards(u))
    return [c for c in range(52) if c not in taken]


def draw_and_discard_drawn(env):
    """The player to act draws from the stock and discards the card drawn."""
    seat = 0 if env.agent_selection == P0 else 1
    before = hand(env, seat)
    play(env, "DRAW_STOCK")
    (drawn,) = mask_to_cards(hand(env, seat) & ~before)
    env.step(E.DISCARD_BASE + drawn)
    return drawn
