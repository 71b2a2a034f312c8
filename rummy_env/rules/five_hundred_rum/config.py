"""500 Rum rule options (RULES.md §2), validated at construction."""

from __future__ import annotations

from dataclasses import dataclass

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
