"""Rummy 51 rule options (RULES.md §3), validated at construction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rummy_env.encodings import rummy51 as E
from rummy_env.rules.options import RuleOptions

EPISODE = ("hand", "match")
REWARD = ("penalty", "zero_sum", "normalized", "payout")


@dataclass(frozen=True)
class Rummy51Config(RuleOptions):
    """Every rule option of Rummy 51; defaults are the standard game of RULES.md §3.

    Two decks with four jokers (108 cards), 13 cards each.

    Attributes:
        num_players: 2 to 6.
        opening_threshold: points of new melds a player's first melding turn must lay down (51).
        max_reshuffles: times the discard pile (but its top card) may become the stock again;
            when the stock runs out once more the hand ends as a draw.
        retrieved_joker_must_be_melded: a joker taken back from a meld must be melded again in
            the same turn.
        discard_draw_requires_opening: a player who has not opened may take the top discard only
            to use it in the opening melds of that turn.
        episode: ``"hand"`` or ``"match"`` (an extension: penalties add up over hands, a player
            reaching ``elimination`` points is out, the last player left wins).
        elimination: penalty total that puts a player out of a match (101).
        reward: ``"penalty"`` (minus the hand's penalty), ``"zero_sum"`` (each player's mean
            penalty difference to the others), ``"normalized"`` (zero-sum / 100 clipped to
            [-1, 1]; matches: +1 to the winner, -1/(P-1) to the others at the end) or
            ``"payout"`` (the ring-game pot of RULES.md §3.8; hands only).
        max_steps: truncate an episode after this many decisions (``None``: never).
        max_pile_draws: after this many draws of the top discard in a hand, players must draw
            from the stock (two players could otherwise trade the top discard for ever).
    """

    num_players: int = 2
    opening_threshold: int = 51
    max_reshuffles: int = 2
    retrieved_joker_must_be_melded: bool = False
    discard_draw_requires_opening: bool = False
    episode: str = "hand"
    elimination: int = 101
    reward: str = "penalty"
    max_steps: int | None = None
    max_pile_draws: int = 100

    GAME_NAME = "Rummy 51"

    def __post_init__(self) -> None:
        _int = self._check_int
        _int("num_players", 2, 6)
        _int("opening_threshold", 0, 1000)
        _int("max_reshuffles", 0, 1000)
        self._check_bool("retrieved_joker_must_be_melded", "discard_draw_requires_opening")
        self._check_choice("episode", EPISODE)
        _int("elimination", 1, 100000)
        self._check_choice("reward", REWARD)
        if self.max_steps is not None:
            _int("max_steps", 1, 10**9)
        _int("max_pile_draws", 0, 10**6)
        if self.reward == "payout" and self.episode != "hand":
            raise ValueError(
                "reward='payout' is the per-hand ring-game payout; use it with episode='hand'"
            )

    @property
    def deck_size(self) -> int:
        """Cards in play: two decks and four jokers."""
        return 108

    @property
    def jokers(self) -> int:
        """Jokers in play."""
        return 4

    @property
    def decks(self) -> int:
        """Decks in play."""
        return 2

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player."""
        return 13

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
        a[C_THRESH] = self.opening_threshold
        a[C_MAX_RESH] = self.max_reshuffles
        a[C_RJ_MELD] = self.retrieved_joker_must_be_melded
        a[C_DD_OPEN] = self.discard_draw_requires_opening
        a[C_MATCH] = self.episode == "match"
        a[C_ELIM] = self.elimination
        a[C_REWARD] = REWARD.index(self.reward)
        a[C_MAX_STEPS] = self.max_steps or 0
        a[C_MELD] = lay.meld_base
        a[C_LAYOFF] = lay.layoff_base
        a[C_JOKER] = lay.joker_base
        a[C_RETRIEVE] = lay.retrieve_base
        a[C_DISCARD] = lay.discard_base
        a[C_NA] = lay.num_actions
        a[C_MAX_PILE] = self.max_pile_draws
        assert len(lay.pieces) == N_PIECES
        for k, piece in enumerate(lay.pieces):
            a[C_OBS + k] = piece.offset
        return a


def config_vector(config: Rummy51Config) -> np.ndarray:
    """``config.to_array()``: the int64 vector the kernels read."""
    return config.to_array()


# -- indices of the config vector -----------------------------------------------------------
C_P = 0
C_D = 1
C_M = 2
C_HAND = 3
C_THRESH = 4
C_MAX_RESH = 5
C_RJ_MELD = 6  # retrieved_joker_must_be_melded
C_DD_OPEN = 7  # discard_draw_requires_opening
C_MATCH = 8
C_ELIM = 9
C_REWARD = 10  # REWARD index: 0 penalty, 1 zero_sum, 2 normalized, 3 payout
C_MAX_STEPS = 11
C_MELD = 12
C_LAYOFF = 13
C_JOKER = 14
C_RETRIEVE = 15
C_DISCARD = 16
C_NA = 17
C_MAX_PILE = 18
C_OBS = 19  # obs piece offsets start here (in E.Layout.pieces order)
N_PIECES = 21
C_SIZE = C_OBS + N_PIECES
