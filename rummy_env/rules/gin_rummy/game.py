"""Batched Gin Rummy engine: N games as numpy arrays, driven by the compiled kernels.

Both ``envs.gin_rummy.raw_env`` (N = 1) and ``vector.VectorEnv`` (any N) run on this class, so
there is one implementation of every rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rummy_env.core import rng as _rng
from rummy_env.core.cards import card_to_str, cards_to_str, make_deck, validate_deck
from rummy_env.core.melds import GIN_MELD_MASKS, NUM_GIN_MELDS
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy import kernels as K
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.gin_rummy.state import new_states

PARALLEL_MIN_BATCH = 256


class GinRummyGame:
    """``num_games`` independent Gin Rummy games stepped together.

    Attributes:
        config: the rule options.
        states: (N,) structured array of game records (``GIN_STATE_DTYPE``).
        masks: (N, num_actions) int8 legal-action mask of the player to act in each game.

    """

    num_players = 2

    def __init__(self, config: GinRummyConfig, num_games: int) -> None:
        if num_games < 1:
            raise ValueError(f"num_games must be at least 1, got {num_games}")
        self.config = config
        self.cfg = config.to_array()
        self.num_games = num_games
        self.num_actions = E.num_actions(config.auto_meld)
        self.obs_size = E.observation_size(config.auto_meld)
        self.states = new_states(num_games)
        self.states["rng"] = _rng.seed_states(None, num_games)
        self.masks = np.zeros((num_games, E.NUM_ACTIONS_MANUAL), dtype=np.int8)
        self._step = K.step_batch_parallel if num_games >= PARALLEL_MIN_BATCH else K.step_batch

    # -- seeding and reset ------------------------------------------------------------------
    def seed(self, seed: int | Sequence[int] | None) -> None:
        """Seed every game's stream (game ``i`` gets ``seed + i`` for an int seed)."""
        self.states["rng"] = _rng.seed_states(seed, self.num_games)

    def reset(
        self,
        seed: int | Sequence[int] | None = None,
        dealers: Sequence[int] | None = None,
        decks: Sequence[Any] | None = None,
        write_obs: bool = True,
    ) -> np.ndarray:
        """Start a new episode in every game; returns (N, obs_size) observations of the players
        to act. ``decks[i]`` (if given and not None) is a stacked deck, top card first.
        """
        if seed is not None:
            self.seed(seed)
        n = self.num_games
        dl = np.full(n, -1, dtype=np.int64)
        if dealers is not None:
            for i, d in enumerate(dealers):
                if d is None:
                    continue
                if d not in (0, 1):
                    raise ValueError(f"dealer must be 0 or 1, got {d!r}")
                dl[i] = d
        stacked = np.zeros(n, dtype=np.bool_)
        if decks is not None:
            expected = make_deck(1, 0)
            for i, deck in enumerate(decks):
                if deck is None:
                    continue
                self.states["deck"][i] = validate_deck(deck, expected)
                stacked[i] = True
        obs = np.empty((n, self.obs_size), dtype=np.float32)
        K.reset_batch(self.states, self.cfg, K.TABLES, dl, stacked, self.masks, obs, write_obs)
        return obs

    # -- stepping ---------------------------------------------------------------------------
    def check_actions(self, actions: np.ndarray) -> None:
        """Raise ``ValueError`` naming the first game whose action is not legal."""
        a = np.asarray(actions)
        if a.shape != (self.num_games,):
            raise ValueError(f"actions must have shape ({self.num_games},), got {a.shape}")
        if not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be integers, got dtype {a.dtype}")
        out = (a < 0) | (a >= self.num_actions)
        ok = np.zeros(self.num_games, dtype=bool)
        ok[~out] = self.masks[np.flatnonzero(~out), a[~out]] == 1
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"game {i}: {self.explain_illegal(i, int(a[i]))}")

    def step(
        self, actions: np.ndarray, autoreset: bool, write_obs: bool = True, check: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply one action per game. Returns (obs, rewards (N, 2), terminated, truncated, info).

        With ``autoreset`` finished games start a new episode in the same call (Gymnasium's
        SAME_STEP mode): ``obs`` is then the new episode's first observation and
        ``info["final_observation"]`` (N, 2, obs_size), ``info["final_points"]`` (N, 2),
        ``info["outcome"]``, ``info["episode_length"]`` and ``info["final_deadwood"]`` describe
        the finished episode (rows of unfinished games are meaningless).
        """
        a = np.asarray(actions)
        if check:
            self.check_actions(a)
        a = a.astype(np.int64, copy=False)
        n = self.num_games
        obs = np.empty((n, self.obs_size), dtype=np.float32)
        rewards = np.empty((n, 2), dtype=np.float32)
        term = np.empty(n, dtype=np.bool_)
        trunc = np.empty(n, dtype=np.bool_)
        final_obs = np.zeros((n, 2, self.obs_size) if autoreset else (1, 2, 1), dtype=np.float32)
        final_info = np.zeros((n, 6) if autoreset else (1, 6), dtype=np.int64)
        self._step(
            self.states, self.cfg, K.TABLES, a, self.masks, obs, rewards, term, trunc,
            final_obs, final_info, autoreset, write_obs,
        )  # fmt: skip
        info: dict[str, Any] = {"current_player": self.states["cur"].astype(np.int64)}
        if autoreset:
            info["final_observation"] = final_obs
            info["final_points"] = final_info[:, :2]
            info["outcome"] = final_info[:, 2]
            info["episode_length"] = final_info[:, 3]
            info["final_deadwood"] = final_info[:, 4:6]
        return obs, rewards, term, trunc, info

    def observe(self, i: int, player: int) -> np.ndarray:
        """Observation vector of ``player`` in game ``i`` (a fresh array)."""
        out = np.empty(self.obs_size, dtype=np.float32)
        K.write_obs_at(self.states, self.cfg, i, player, out)
        return out

    def step_one(self, i: int, a: int) -> tuple[bool, bool, int, int, float, float]:
        """Apply a legal action in game ``i`` only (no output arrays; the AEC env's step).

        Returns:
            (done, truncated, player to act, hands played, reward of seat 0, reward of seat 1).
        """
        return K.step_single(self.states, self.cfg, K.TABLES, i, a, self.masks)

    def is_legal(self, i: int, a: int) -> bool:
        """True if action ``a`` is legal now in game ``i``."""
        return 0 <= a < self.num_actions and self.masks[i, a] == 1

    def action_mask(self, i: int) -> np.ndarray:
        """Legal-action mask (fresh int8 array) of the player to act in game ``i``."""
        return self.masks[i, : self.num_actions].copy()

    # -- information sets -------------------------------------------------------------------
    def hidden_cards(self, i: int, player: int) -> list[int]:
        """Cards whose place ``player`` cannot know in game ``i``: the opponent's cards not
        publicly known to be held, the stock, and a knocker's face-down discard.
        """
        s = self.states[i]
        o = 1 - player
        opp = int(s["hands"][o]) & ~int(s["known"][o])
        out = [c for c in range(52) if opp >> c & 1]
        out += [int(c) for c in s["deck"][int(s["deck_pos"]) :]]
        if int(s["knocker"]) == o and int(s["knock_card"]) >= 0:
            out.append(int(s["knock_card"]))
        return sorted(out)

    def sample_worlds(
        self, i: int, player: int, n: int, seed: int | np.random.Generator | None = None
    ) -> GinRummyGame:
        """``n`` full game states consistent with what ``player`` knows in game ``i``.

        Each world keeps everything ``player`` can see (own hand, pile, melds, the opponent's
        known cards, counts, scores, phase) and deals the hidden cards (``hidden_cards``) anew at
        random, and gets a fresh random stream for later deals. The worlds are an independent
        batch (same config) to continue playing from, e.g. for rollouts in a search.
        """
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        worlds = GinRummyGame(self.config, n)
        src = self.states[i]
        worlds.states[:] = src
        s = self.states[i]
        o = 1 - player
        opp_hidden = int(s["hands"][o]) & ~int(s["known"][o])
        n_opp = bin(opp_hidden).count("1")
        pos = int(s["deck_pos"])
        face_down = int(s["knocker"]) == o and int(s["knock_card"]) >= 0
        pool = np.array(self.hidden_cards(i, player), dtype=np.int64)
        for w in range(n):
            perm = rng.permutation(pool)
            hand = int(s["hands"][o]) & ~opp_hidden
            for c in perm[:n_opp]:
                hand |= 1 << int(c)
            worlds.states["hands"][w, o] = np.uint64(hand)
            k = n_opp
            if face_down:
                worlds.states["knock_card"][w] = perm[k]
                k += 1
            worlds.states["deck"][w, pos:] = perm[k:]
        worlds.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        K.refresh_masks(worlds.states, worlds.cfg, K.TABLES, worlds.masks)
        return worlds

    # -- explanations -----------------------------------------------------------------------
    def explain_illegal(self, i: int, a: int) -> str:
        """Why action ``a`` is not legal now in game ``i`` (for error messages)."""
        s = self.states[i]
        name = E.action_name(a)
        if not 0 <= a < self.num_actions:
            extra = (
                " (manual-meld actions need auto_meld=False)" if a < E.NUM_ACTIONS_MANUAL else ""
            )
            return f"action {a} is out of range 0..{self.num_actions - 1}{extra}"
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
            if a == E.TAKE_DISCARD and int(s["pile_draws"]) >= self.config.max_pile_draws:
                return f"{prefix}: {self.config.max_pile_draws} pile draws this hand; draw stock"
            return f"{prefix}: draw from the stock or take the top discard first"
        if ph in (E.PH_DISCARD, E.PH_FIFTY_KNOCK):
            if E.DISCARD_BASE <= a < E.MELD_BASE:
                knock = a >= E.KNOCK_BASE
                c = a - (E.KNOCK_BASE if knock else E.DISCARD_BASE)
                if not card_in_hand(c):
                    return f"{prefix}: {card_to_str(c)} is not in the hand"
                if ph == E.PH_FIFTY_KNOCK and not knock:
                    return f"{prefix}: the 50th card may be taken only to knock"
                if c == s["taken"] and not self.config.allow_discard_of_drawn_upcard:
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
                return (
                    f"{prefix}: the rest of the hand would keep {dw} deadwood > knock limit {lim}"
                )
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
