"""Batched Gin Rummy engine: N games as numpy arrays, driven by the compiled kernels.

Both ``envs.gin_rummy.raw_env`` (N = 1) and ``vector.VectorEnv`` (any N) run on this class, so
there is one implementation of every rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_env.core.cards import card_to_str, cards_to_str, make_deck
from rummy_env.core.melds import GIN_MELD_MASKS, NUM_GIN_MELDS
from rummy_env.core.validate import check_sample_worlds
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.base import BatchedGame
from rummy_env.rules.gin_rummy import kernels as K
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.gin_rummy.state import new_states


class GinRummyGame(BatchedGame):
    """``num_games`` independent Gin Rummy games stepped together.

    Attributes:
        config: the rule options.
        states: (N,) structured array of game records (``GIN_STATE_DTYPE``).
        masks: (N, 569) int8 legal-action masks of the players to act (the first
            ``num_actions`` columns are the action space).
    """

    kernels = K
    num_players = 2
    final_fields = ("points_0", "points_1", "outcome", "episode_length", "deadwood_0", "deadwood_1")

    def __init__(self, config: GinRummyConfig, num_games: int) -> None:
        self.num_actions = E.num_actions(config.auto_meld)
        self.obs_size = E.observation_size(config.auto_meld)
        self.pieces = E.observation_pieces(config.auto_meld)
        self.deck = make_deck(1, 0)
        self._setup(config, num_games, new_states(num_games), E.NUM_ACTIONS_MANUAL)

    def _final_info(self, info: dict[str, Any], final_info: np.ndarray) -> None:
        info["final_points"] = final_info[:, :2]
        info["outcome"] = final_info[:, 2]
        info["episode_length"] = final_info[:, 3]
        info["final_deadwood"] = final_info[:, 4:6]

    def step_one(self, i: int, a: int) -> tuple[bool, bool, int, int, float, float]:
        """Apply a legal action in game ``i`` only (no output arrays; the AEC env's step).

        Returns:
            (done, truncated, player to act, hands played, reward of seat 0, reward of seat 1).
        """
        done, trunc, cur, hands = self.step_single(i, a)
        r = self.states[i]["rewards"]
        return done, trunc, cur, hands, float(r[0]), float(r[1])

    # -- information sets -------------------------------------------------------------------
    def hidden_cards(self, i: int, player: int) -> list[int]:
        """Cards whose place ``player`` cannot know in game ``i``: the opponent's cards not
        publicly known to be held, the stock, and a knocker's face-down discard.
        """
        return hidden_cards(self.states[i], player)

    def sample_worlds(
        self, i: int, player: int, n: int, seed: int | np.random.Generator | None = None
    ) -> GinRummyGame:
        """``n`` full game states consistent with what ``player`` knows in game ``i``.

        Each world keeps everything ``player`` can see (own hand, pile, melds, the opponent's
        known cards, counts, scores, phase) and deals the hidden cards (``hidden_cards``) anew at
        random, and gets a fresh random stream for later deals. The worlds are an independent
        batch (same config) to continue playing from, e.g. for rollouts in a search.
        """
        check_sample_worlds(self, i, player, n, seed)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        worlds = GinRummyGame(self.config, n)
        worlds.states[:] = self.states[i]
        resample_hidden(self.states[i], player, worlds.states, rng)
        worlds.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        worlds.refresh_masks()
        return worlds

    # -- explanations -----------------------------------------------------------------------
    def explain_illegal(self, i: int, a: int) -> str:
        """Why action ``a`` is not legal now in game ``i`` (for error messages)."""
        return explain_illegal(self.states[i], self.config, self.num_actions, a)


def hidden_cards(s: np.void, player: int) -> list[int]:
    """Cards of a 2-player hand record whose place ``player`` (table-local; -1: someone
    watching, who sees no hand) cannot know: the hands' cards not publicly known to be held,
    the stock, and a knocker's face-down discard.
    """
    out: list[int] = []
    for o in range(2):
        if o == player:
            continue
        opp = int(s["hands"][o]) & ~int(s["known"][o])
        out += [c for c in range(52) if opp >> c & 1]
        if int(s["knocker"]) == o and int(s["knock_card"]) >= 0:
            out.append(int(s["knock_card"]))
    out += [int(c) for c in s["deck"][int(s["deck_pos"]) :]]
    return sorted(out)


def resample_hidden(s: np.void, player: int, worlds: np.ndarray, rng: np.random.Generator) -> None:
    """Deal the cards of 2-player hand record ``s`` that ``player`` cannot see (``hidden_cards``)
    anew into each record of ``worlds`` (copies of ``s``): the hands keep their sizes and
    publicly known cards, a face-down knock discard and the stock are refilled, and the cards
    dealt before the stock are shuffled so that they keep no trace of the real deal order.
    """
    n = len(worlds)
    pool = np.array(hidden_cards(s, player), dtype=np.int64)
    # one random order of the pool per world, drawn for all worlds at once
    perm = pool[np.argsort(rng.random((n, pool.size)), axis=1)]
    k = 0
    for o in range(2):
        if o == player:
            continue
        h = int(s["hands"][o]) & ~int(s["known"][o])
        m = h.bit_count()
        bits = np.left_shift(np.uint64(1), perm[:, k : k + m].astype(np.uint64))
        worlds["hands"][:, o] = np.uint64(int(s["hands"][o]) & ~h) | np.bitwise_or.reduce(
            bits, axis=1, initial=np.uint64(0)
        )
        k += m
    if int(s["knock_card"]) >= 0 and int(s["knocker"]) != player:  # a face-down knock discard
        worlds["knock_card"][:] = perm[:, k]
        k += 1
    pos = int(s["deck_pos"])
    worlds["deck"][:, pos:] = perm[:, k:]
    # the cards dealt before the stock, in a random order: all but each world's stock
    keys = rng.random((n, 52))
    np.put_along_axis(keys, perm[:, k:], 2.0, axis=1)
    worlds["deck"][:, :pos] = np.argsort(keys, axis=1)[:, :pos]


def explain_illegal(s: np.void, config: GinRummyConfig, num_actions: int, a: int) -> str:
    """Why action ``a`` is not legal now in 2-player hand record ``s`` (for error messages)."""
    name = E.action_name(a)
    if not 0 <= a < num_actions:
        extra = (
            " (manual-meld actions need auto_meld=False)" if 0 <= a < E.NUM_ACTIONS_MANUAL else ""
        )
        return f"action {a} is out of range 0..{num_actions - 1}{extra}"
    if s["done"]:
        return f"{name}: the episode is over; call reset()"
    ph = int(s["phase"])
    phase = E.PHASE_NAMES[ph]
    hand = int(s["hands"][int(s["cur"])])
    lim = int(s["knock_limit"])

    def card_in_hand(c: int) -> bool:
        return bool(hand >> c & 1)

    prefix = f"{name} is illegal in phase {phase!r}"
    if ph in (E.PH_UPCARD, E.PH_FIFTY_OFFER):
        return f"{prefix}: only TAKE_DISCARD or PASS may be chosen"
    if ph == E.PH_DRAW:
        if a == E.TAKE_DISCARD and s["forced_stock"]:
            return f"{prefix}: both players passed the upcard, the non-dealer must draw stock"
        if a == E.TAKE_DISCARD and int(s["pile_draws"]) >= config.max_pile_draws:
            return f"{prefix}: {config.max_pile_draws} pile draws this hand; draw stock"
        return f"{prefix}: draw from the stock or take the top discard first"
    if ph in (E.PH_DISCARD, E.PH_FIFTY_KNOCK):
        if E.DISCARD_BASE <= a < E.MELD_BASE:
            knock = a >= E.KNOCK_BASE
            c = a - (E.KNOCK_BASE if knock else E.DISCARD_BASE)
            if not card_in_hand(c):
                return f"{prefix}: {card_to_str(c)} is not in the hand"
            if ph == E.PH_FIFTY_KNOCK and not knock:
                return f"{prefix}: the 50th card may be taken only to knock"
            if c == s["taken"] and not config.allow_discard_of_drawn_upcard:
                return (
                    f"{prefix}: {card_to_str(c)} was just taken from the discard pile and "
                    "may not be discarded this turn"
                )
            if knock:
                dw = int(K.mindw_check(np.uint64(hand & ~(1 << c)), K.TABLES))
                return f"{prefix}: deadwood after discarding it is {dw} > knock limit {lim}"
        return f"{prefix}: discard a card (DISCARD[c]) or knock (KNOCK[c])"
    if ph in (E.PH_KNOCKER_MELD, E.PH_DEFENDER_MELD):
        if E.MELD_BASE <= a < E.LAYOFF_BASE:
            m = int(GIN_MELD_MASKS[a - E.MELD_BASE])
            if m & hand != m:
                return f"{prefix}: the hand does not hold all cards of the meld"
            if int(s["n_melds"][int(s["cur"])]) >= E.MAX_MELD_SLOTS:
                return f"{prefix}: all {E.MAX_MELD_SLOTS} meld slots are used"
            dw = int(K.mindw_check(np.uint64(hand & ~m), K.TABLES))
            return f"{prefix}: the rest of the hand would keep {dw} deadwood > knock limit {lim}"
        if a == E.END_MELDING:
            left = cards_to_str(c for c in range(52) if hand >> c & 1)
            return f"{prefix}: unmelded cards ({left}) exceed the knock limit {lim}"
        if E.LAYOFF_BASE <= a < E.END_MELDING:
            if ph == E.PH_KNOCKER_MELD:
                return f"{prefix}: the knocker never lays off"
            if s["gin"]:
                return f"{prefix}: no lay-offs on a gin hand"
            c = (a - E.LAYOFF_BASE) // E.MAX_MELD_SLOTS
            if not card_in_hand(c):
                return f"{prefix}: {card_to_str(c)} is not in the hand"
            return f"{prefix}: {card_to_str(c)} does not fit that meld slot"
        return f"{prefix}: declare melds (MELD[t]), lay off (LAYOFF) or END_MELDING"
    return f"{prefix}"


assert NUM_GIN_MELDS == E.LAYOFF_BASE - E.MELD_BASE
