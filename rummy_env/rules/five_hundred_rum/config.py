"""500 Rum rule options (RULES.md §2), validated at construction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rummy_env.encodings import five_hundred_rum as E
from rummy_env.rules.options import RuleOptions

RUMMY_CALL = ("full", "layoff_only", "none")
GOING_OUT = ("any", "discard_required", "floating", "unplayable_discard")
EPISODE = ("hand", "game")
REWARD = ("raw", "normalized")


@dataclass(frozen=True)
class FiveHundredRumConfig(RuleOptions):
    """Every rule option of 500 Rum; defaults are the standard game of RULES.md §2.

    Attributes:
        num_players: 2 to 8.
        num_decks: 1 or 2; ``None`` picks 1 for up to 4 players and 2 for 5 or more.
        no_jokers: play without jokers (52 or 104 cards).
        values_5_10_15: 2-9 worth 5, 10/J/Q/K 10, aces and jokers 15, a low ace 5.
        rummy_call: ``"full"`` | ``"layoff_only"`` | ``"none"`` (RULES §2.5).
        must_meld_discard: taking from the pile always obliges melding the deepest card taken.
        deepest_card_new_meld: the deepest card taken must go into a new meld (no lay-off).
        going_out: ``"any"`` | ``"discard_required"`` | ``"floating"`` | ``"unplayable_discard"``.
        must_go_out_to_win: only the player who goes out with ``target`` or more wins.
        target: total that ends the game (500).
        episode: ``"hand"`` or ``"game"`` (hands until a single player leads at ``target``).
        reward: ``"raw"`` points or ``"normalized"`` (hand: / 100 clipped; game: +1/-1 placing).
        max_steps: truncate an episode after this many decisions (``None``: never).
        max_pile_draws: after this many draws from the discard pile in a hand, players must draw
            from the stock (so every hand ends: two players could otherwise keep taking the top
            discard for ever).
    """

    num_players: int = 2
    num_decks: int | None = None
    no_jokers: bool = False
    values_5_10_15: bool = False
    rummy_call: str = "full"
    must_meld_discard: bool = False
    deepest_card_new_meld: bool = False
    going_out: str = "any"
    must_go_out_to_win: bool = False
    target: int = 500
    episode: str = "hand"
    reward: str = "raw"
    max_steps: int | None = None
    max_pile_draws: int = 100

    GAME_NAME = "500 Rum"

    def __post_init__(self) -> None:
        _int, _choice = self._check_int, self._check_choice

        _int("num_players", 2, 8)
        if self.num_decks is not None:
            _int("num_decks", 1, 2)
        self._check_bool(
            "no_jokers",
            "values_5_10_15",
            "must_meld_discard",
            "deepest_card_new_meld",
            "must_go_out_to_win",
        )
        _choice("rummy_call", RUMMY_CALL)
        _choice("going_out", GOING_OUT)
        _choice("episode", EPISODE)
        _choice("reward", REWARD)
        _int("target", 1, 100000)
        if self.max_steps is not None:
            _int("max_steps", 1, 10**9)
        _int("max_pile_draws", 0, 10**6)
        need = self.num_players * self.hand_size + 1
        if need > self.deck_size:
            raise ValueError(
                f"num_decks={self.decks}: {self.deck_size} cards cannot deal {self.hand_size} "
                f"cards to {self.num_players} players plus an upcard; use num_decks=2"
            )

    @property
    def decks(self) -> int:
        """Number of decks in play."""
        if self.num_decks is not None:
            return int(self.num_decks)
        return 1 if self.num_players <= 4 else 2

    @property
    def jokers(self) -> int:
        """Number of jokers in play (two per deck unless ``no_jokers``)."""
        return 0 if self.no_jokers else 2 * self.decks

    @property
    def deck_size(self) -> int:
        """Cards in play."""
        return 52 * self.decks + self.jokers

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player: 13 with two players, 7 otherwise."""
        return 13 if self.num_players == 2 else 7

    @property
    def max_melds(self) -> int:
        """Table meld slots: enough for every card in melds of three."""
        return self.deck_size // 3

    def to_array(self) -> np.ndarray:
        """The options as the int64 vector the compiled kernels read (indices ``C_*``)."""
        lay = E.Layout(self.num_players, self.deck_size)
        a = np.zeros(C_SIZE, np.int64)
        a[C_P] = self.num_players
        a[C_D] = self.deck_size
        a[C_M] = self.max_melds
        a[C_HAND] = self.hand_size
        a[C_JOKERS] = self.jokers
        a[C_V51015] = self.values_5_10_15
        a[C_CALL] = RUMMY_CALL.index(self.rummy_call)
        a[C_MUST_MELD] = self.must_meld_discard
        a[C_NEW_MELD] = self.deepest_card_new_meld
        a[C_GOOUT] = GOING_OUT.index(self.going_out)
        a[C_OUT_TO_WIN] = self.must_go_out_to_win
        a[C_TARGET] = self.target
        a[C_GAME] = self.episode == "game"
        a[C_NORM] = self.reward == "normalized"
        a[C_MAX_STEPS] = self.max_steps or 0
        a[C_TAKE] = lay.take_base
        a[C_MELD] = lay.meld_base
        a[C_LAYOFF] = lay.layoff_base
        a[C_JOKER] = lay.joker_base
        a[C_DISCARD] = lay.discard_base
        a[C_PASS] = lay.pass_action
        a[C_NA] = lay.num_actions
        a[C_MAX_PILE] = self.max_pile_draws
        assert len(lay.pieces) == N_PIECES
        for k, piece in enumerate(lay.pieces):
            a[C_OBS + k] = piece.offset
        return a


def config_vector(config: FiveHundredRumConfig) -> np.ndarray:
    """``config.to_array()``: the int64 vector the kernels read."""
    return config.to_array()


# -- indices of the config vector -----------------------------------------------------------
C_P = 0
C_D = 1
C_M = 2
C_HAND = 3
C_JOKERS = 4
C_V51015 = 5
C_CALL = 6  # RUMMY_CALL index: 0 full, 1 layoff_only, 2 none
C_MUST_MELD = 7
C_NEW_MELD = 8
C_GOOUT = 9  # GOING_OUT index: 0 any, 1 discard_required, 2 floating, 3 unplayable_discard
C_OUT_TO_WIN = 10
C_TARGET = 11
C_GAME = 12
C_NORM = 13
C_MAX_STEPS = 14
C_TAKE = 15
C_MELD = 16
C_LAYOFF = 17
C_JOKER = 18
C_DISCARD = 19
C_PASS = 20
C_NA = 21
C_MAX_PILE = 22
C_OBS = 23  # obs piece offsets start here (in E.Layout.pieces order)
N_PIECES = 19
C_SIZE = C_OBS + N_PIECES
