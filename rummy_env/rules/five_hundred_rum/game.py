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


class FiveHundredRumGame(BatchedGame):
    """``num_games`` games of 500 Rum with one config."""

    kernels = K

    def __init__(self, config: FiveHundredRumConfig, num_games: int) -> None:
        self.layout = E.Layout(config.num_players, config.deck_size)
        self.num_players = config.num_players
        self.num_actions = self.layout.num_actions
        self.obs_size = self.layout.obs_size
        self.cfg = K.config_vector(config)
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

    # -- information sets -------------------------------------------------------------------
    def hidden_cards(self, i: int, player: int) -> list[int]:
        """Cards whose place ``player`` cannot know in game ``i``: the other players' cards not
        publicly known to be held (``known``: taken from the discard pile and not played since)
        and the stock. Card types (52: joker), repeated per copy, sorted.
        """
        s = self.states[i]
        hidden = self._hidden_counts(s, player).sum(0)
        out = np.repeat(np.arange(53), hidden).tolist()
        out += [int(c) for c in s["deck"][int(s["deck_pos"]) :]]
        return sorted(out)

    def _hidden_counts(self, s: np.void, player: int) -> np.ndarray:
        """(players, 53) counts of each player's cards hidden from ``player`` (0 for its own)."""
        hidden = s["hands"].astype(np.int64) - s["known"].astype(np.int64)
        hidden[player] = 0
        return hidden

    def sample_worlds(
        self,
        i: int,
        player: int,
        n: int,
        seed: int | np.random.Generator | None = None,
        max_tries: int = 10_000,
    ) -> FiveHundredRumGame:
        """``n`` full game states consistent with what ``player`` knows in game ``i``.

        Each world keeps everything ``player`` can see (own hand, pile, table melds, the other
        players' cards publicly known to be held, hand sizes, scores, phase) and deals the hidden
        cards (``hidden_cards``) anew at random: the other players' unknown cards (every hand
        keeps its size) and the stock order. Each world gets a fresh random stream for later
        deals and its masks are refreshed. The worlds are an independent batch (same config) to
        continue playing from, e.g. for rollouts in a search.

        When another player is to act, the rules already tell ``player`` that this player has a
        legal move (a turn that can be completed, e.g. melding the deep discard taken; a
        "Rummy!" call when offered one), so deals without one are redrawn (up to ``max_tries``
        per world; should every try fail, that player keeps the real cards in that world).
        What earlier decisions suggest about hands (who passed a call, what was discarded) is
        not taken into account.
        """
        if not 0 <= player < self.num_players:
            raise ValueError(f"player must be in 0..{self.num_players - 1}, got {player!r}")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        src = self.states[i]
        worlds = FiveHundredRumGame(self.config, n)
        worlds.states[:] = src
        hidden = self._hidden_counts(src, player)
        base = src["hands"] - hidden.astype(np.int8)  # own hand and the known cards
        hidden_n = hidden.sum(1)
        pool = np.array(self.hidden_cards(i, player), dtype=np.int8)
        cur = int(src["cur"])
        check = not src["done"] and cur != player
        worlds.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        tries = K.deal_worlds(worlds.states, self.cfg, base, hidden_n, pool, max_tries, check)
        failed = np.flatnonzero(tries < 0)
        if failed.size:
            # the player to act keeps the real cards; the others are dealt from the rest
            base[cur] = src["hands"][cur]
            rest = hidden.sum(0) - hidden[cur]
            rest_pool = np.concatenate(
                [np.repeat(np.arange(53), rest), src["deck"][int(src["deck_pos"]) :]]
            ).astype(np.int8)
            hidden_n[cur] = 0
            sub = worlds.states[failed]
            K.deal_worlds(sub, self.cfg, base, hidden_n, rest_pool, 1, False)
            worlds.states[failed] = sub
        worlds.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        worlds.refresh_masks()
        return worlds

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
