"""Batched 500 Rum engine (the AEC env is a batch of one; the vector env any N)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_env.core.cards import card_to_str
from rummy_env.core.jmelds import TPL_A, TPL_B, TPL_C, TPL_KIND, template_needs
from rummy_env.encodings import five_hundred_rum as E
from rummy_env.rules.base import BatchedGame
from rummy_env.rules.five_hundred_rum import kernels as K
from rummy_env.rules.five_hundred_rum.config import FiveHundredRumConfig
from rummy_env.rules.five_hundred_rum.state import JOKER, make_state_dtype
from rummy_env.rules.joker_worlds import JokerWorldsMixin


class FiveHundredRumGame(JokerWorldsMixin, BatchedGame):
    """``num_games`` games of 500 Rum with one config."""

    kernels = K

    def __init__(self, config: FiveHundredRumConfig, num_games: int) -> None:
        self.layout = E.Layout(config.num_players, config.deck_size)
        self.num_players = config.num_players
        self.num_actions = self.layout.num_actions
        self.obs_size = self.layout.obs_size
        self.pieces = self.layout.pieces
        naturals = np.tile(np.arange(52, dtype=np.int8), config.decks)
        self.deck = np.concatenate([naturals, np.full(config.jokers, JOKER, np.int8)])
        self.final_fields = (
            *(f"final_points_{q}" for q in range(self.num_players)),
            "outcome",
            "episode_length",
        )
        dtype = make_state_dtype(config.num_players, config.deck_size, config.max_melds)
        states = np.zeros(num_games, dtype=dtype)
        self._setup(config, num_games, states, self.num_actions)

    def _final_info(self, info: dict[str, Any], final_info: np.ndarray) -> None:
        p = self.num_players
        info["final_points"] = final_info[:, :p]
        info["outcome"] = final_info[:, p]
        info["episode_length"] = final_info[:, p + 1]

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
        ob = int(s["oblig"])
        stock = int(self.cfg[K.C_D]) - int(s["deck_pos"])
        if ph == E.PH_DRAW:
            if a == lay.pass_action:
                return f"{prefix}: passing is allowed only when the stock is empty"
            if a == 0:
                return f"{prefix}: the stock is empty"
            if lay.take_base <= a < lay.meld_base:
                d = a - lay.take_base
                if d >= int(s["pile_n"]):
                    return f"{prefix}: the discard pile has only {int(s['pile_n'])} cards"
                x = int(s["pile"][int(s["pile_n"]) - 1 - d])
                return (
                    f"{prefix}: the deepest card taken, {card_to_str(x)}, could not be melded "
                    "this turn (or the turn could not be completed)"
                )
            return f"{prefix}: draw first (DRAW_STOCK or TAKE_DISCARD[d])"
        if ph == E.PH_CALL:
            return f"{prefix}: only a Rummy! call (TAKE_DISCARD to a callable card) or PASS"
        if lay.discard_base <= a < lay.pass_action:
            c = a - lay.discard_base
            if hand[c] < 1:
                return f"{prefix}: {card_to_str(c)} is not in the hand"
            if ob >= 0:
                return f"{prefix}: {card_to_str(ob)} taken from the pile must be melded first"
            if c == int(s["taken_single"]):
                return f"{prefix}: the single card just taken from the pile may not be discarded"
            return f"{prefix}: a playable last card must be melded (unplayable_discard)"
        if lay.meld_base <= a < lay.layoff_base:
            t = a - lay.meld_base
            if template_needs(t, hand, TPL_KIND, TPL_A, TPL_B, TPL_C) < 0:
                return f"{prefix}: the hand lacks its cards or jokers"
        elif lay.layoff_base <= a < lay.discard_base:
            if a < lay.joker_base:
                c = (a - lay.layoff_base) // lay.max_melds
            else:
                c = JOKER
            if hand[c] < 1:
                return f"{prefix}: {card_to_str(c)} is not in the hand"
            return f"{prefix}: it does not fit that meld (or that slot is empty)"
        if a == lay.pass_action or a == 0 or lay.take_base <= a < lay.meld_base:
            return f"{prefix}: the draw is over; meld, lay off or discard"
        return (
            f"{prefix}: it would leave the turn impossible to complete "
            f"(obligation {card_to_str(ob) if ob >= 0 else 'none'}, {stock} stock cards)"
        )
