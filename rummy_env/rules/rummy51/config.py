"""Rummy 51 rule options (RULES.md §3), validated at construction."""

from __future__ import annotations

from dataclasses import dataclass

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
