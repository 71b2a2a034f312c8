"""Batched Rummy 51 engine (the AEC env is a batch of one; the vector env any N)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_env.core.cards import card_to_str
from rummy_env.core.jmelds import TPL_A, TPL_B, TPL_C, TPL_KIND, template_needs
from rummy_env.encodings import rummy51 as E
from rummy_env.rules.base import BatchedGame
from rummy_env.rules.joker_worlds import JokerWorldsMixin
from rummy_env.rules.rummy51 import kernels as K
from rummy_env.rules.rummy51.config import Rummy51Config
from rummy_env.rules.rummy51.state import JOKER, make_state_dtype


class Rummy51Game(JokerWorldsMixin, BatchedGame):
    """``num_games`` games of Rummy 51 with one config."""

    kernels = K

    def __init__(self, config: Rummy51Config, num_games: int) -> None:
        self.layout = E.Layout(config.num_players, config.deck_size)
        self.num_players = config.num_players
        self.num_actions = self.layout.num_actions
        self.obs_size = self.layout.obs_size
        self.pieces = self.layout.pieces
        naturals = np.tile(np.arange(52, dtype=np.int8), config.decks)
        self.deck = np.concatenate([naturals, np.full(config.jokers, JOKER, np.int8)])
        self.final_fields = (
            *(f"final_penalty_{q}" for q in range(self.num_players)),
            "outcome",
            "episode_length",
            "winner",
            "rummy",
        )
        dtype = make_state_dtype(config.num_players, config.deck_size, config.max_melds)
        states = np.zeros(num_games, dtype=dtype)
        self._setup(config, num_games, states, self.num_actions)

    def _final_info(self, info: dict[str, Any], final_info: np.ndarray) -> None:
        p = self.num_players
        info["final_penalty"] = final_info[:, :p]
        info["outcome"] = final_info[:, p]
        info["episode_length"] = final_info[:, p + 1]
        info["winner"] = final_info[:, p + 2]
        info["rummy"] = final_info[:, p + 3]

    # information sets: hidden_cards, sample_worlds (JokerWorldsMixin, worlds dealt by core.batch)

    def explain_illegal(self, i: int, a: int) -> str:
        """Why action ``a`` is not legal now in game ``i``."""
        lay = self.layout
        if not 0 <= a < self.num_actions:
            return f"action {a} is out of range 0..{self.num_actions - 1}"
        s = self.states[i]
        name = lay.action_name(a)
        if s["done"]:
            return f"{name}: the episode is over; call reset()"
        ph = int(s["phase"])
        prefix = f"{name} is illegal in phase {E.PHASE_NAMES[ph]!r}"
        p = int(s["cur"])
        hand = s["hands"][p]
        opened = bool(s["opened"][p])
        ob = int(s["oblig"])
        thresh = self.config.opening_threshold
        if ph == E.PH_DRAW:
            if a == 1:
                if int(s["pile_draws"]) >= self.config.max_pile_draws:
                    return f"{prefix}: max_pile_draws reached; draw from the stock"
                return (
                    f"{prefix}: the top discard could not be used in opening melds worth "
                    f"{thresh} this turn (discard_draw_requires_opening)"
                )
            return f"{prefix}: draw first (DRAW_STOCK or TAKE_DISCARD)"
        if a <= 1:
            return f"{prefix}: the draw is over; meld, lay off or discard"
        if lay.discard_base <= a:
            c = a - lay.discard_base
            if hand[c] < 1:
                return f"{prefix}: {card_to_str(c)} is not in the hand"
            if ob >= 0:
                return f"{prefix}: {card_to_str(ob)} taken from the pile must go into the opening"
            if int(s["owed"]) > 0:
                return f"{prefix}: a retrieved joker must be melded first"
            if not opened and int(s["open_pts"]) > 0:
                return (
                    f"{prefix}: the opening laid this turn ({int(s['open_pts'])} points) is "
                    f"short of {thresh}"
                )
            return f"{prefix}: the card just taken from the pile may not be discarded"
        if lay.meld_base <= a < lay.layoff_base:
            t = a - lay.meld_base
            if template_needs(t, hand, TPL_KIND, TPL_A, TPL_B, TPL_C) < 0:
                return f"{prefix}: the hand lacks its cards or jokers"
            if not opened:
                return (
                    f"{prefix}: after it the opening ({thresh} points in new melds this turn) "
                    "could not be completed with a card left to discard"
                )
            return f"{prefix}: it would leave no card to discard"
        if not opened:
            return f"{prefix}: lay-offs and joker retrievals need the opening ({thresh} points)"
        if lay.layoff_base <= a < lay.joker_base:
            c = (a - lay.layoff_base) // lay.max_melds
            if hand[c] < 1:
                return f"{prefix}: {card_to_str(c)} is not in the hand"
            return f"{prefix}: it does not fit that meld (or that slot is empty)"
        if lay.joker_base <= a < lay.retrieve_base:
            if hand[JOKER] < 1:
                return f"{prefix}: no joker in the hand"
            return f"{prefix}: a joker does not fit there (or that slot is empty)"
        if lay.retrieve_base <= a < lay.discard_base:
            return (
                f"{prefix}: there is no joker to take back there (groups of 4 keep theirs) or "
                "the hand lacks the natural card it stands for"
            )
        return f"{prefix}: it would leave the turn impossible to complete"
