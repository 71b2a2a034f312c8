"""Gin Rummy rule options (RULES.md §1), validated at construction."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from rummy_env.core.validate import check_int
from rummy_env.rules.options import RuleOptions

NEXT_DEALER = ("loser", "winner", "alternate")
SHUTOUT = ("bonus_200", "double_total")
EPISODE = ("hand", "match")
REWARD = ("raw", "normalized")


@dataclass(frozen=True)
class GinRummyConfig(RuleOptions):
    """Every rule option of Gin Rummy; the defaults are the standard game of RULES.md §1.

    Attributes:
        knock_limit: highest deadwood with which a player may knock (ignored under ``oklahoma``).
        gin_bonus: bonus for going gin (RULES: 20 or 25).
        undercut_bonus: bonus for undercutting the knocker (10, 20 or 25).
        box_bonus: points per box (hand won) added at the end of a match (20 or 25).
        game_bonus: bonus to the match winner.
        shutout: ``"bonus_200"`` doubles the game bonus when the loser scored nothing;
            ``"double_total"`` doubles the winner's final total instead.
        target: cumulative score that ends a match; ``None`` (default) means 100, or 125 with
            4 players (Oklahoma usually 150).
        next_dealer: dealer of the next hand: ``"loser"`` | ``"winner"`` | ``"alternate"``
            (2 players; with 3 and 4 players RULES.md §1.10 fixes the dealers, so it must be
            ``"loser"``).
        eleven_card_deal: non-dealer gets 11 cards, no upcard; its first move is a discard.
        allow_discard_of_drawn_upcard: a card just taken from the pile may be discarded again.
        fiftieth_card_action: after the discard that leaves 2 stock cards, the other player may
            take that card only to knock with it (and may discard it face down).
        oklahoma: the upcard sets the knock limit; a spade upcard doubles the hand score.
        oklahoma_ace_gin_only: under ``oklahoma``, an ace upcard allows only gin.
        oklahoma_extra_boxes: under ``oklahoma``, undercut earns 1 extra box (2 on spades), gin 2
            (4 on spades).
        episode: ``"hand"`` (one hand per episode) or ``"match"`` (hands until ``target``).
        reward: ``"raw"`` (game points, zero-sum) or ``"normalized"`` (in [-1, 1]).
        auto_meld: the environment arranges the knocker's melds (minimum deadwood) and the
            defender's melds and lay-offs (minimum deadwood); ``False`` makes each a decision.
        max_steps: truncate an episode after this many decisions (``None``: never).
        max_pile_draws: after this many draws from the discard pile in a hand, players must draw
            from the stock (so every hand ends; OpenSpiel uses the same limit of 50).
        num_players: 2, 3 (the dealer sits out) or 4 (two partnerships at two tables);
            RULES.md §1.10. Every other option applies to each 2-player hand played.

    """

    knock_limit: int = 10
    gin_bonus: int = 20
    undercut_bonus: int = 10
    box_bonus: int = 20
    game_bonus: int = 100
    shutout: str = "bonus_200"
    target: int | None = None
    next_dealer: str = "loser"
    eleven_card_deal: bool = False
    allow_discard_of_drawn_upcard: bool = False
    fiftieth_card_action: bool = False
    oklahoma: bool = False
    oklahoma_ace_gin_only: bool = False
    oklahoma_extra_boxes: bool = False
    episode: str = "hand"
    reward: str = "raw"
    auto_meld: bool = True
    max_steps: int | None = None
    max_pile_draws: int = 50
    num_players: int = 2

    GAME_NAME = "Gin Rummy"

    def __post_init__(self) -> None:
        _int, _choice, _bool = self._check_int, self._check_choice, self._check_bool
        check_int("num_players", self.num_players, 2, 4)  # first: the target default needs it
        _int("knock_limit", 0, 100)
        _int("gin_bonus", 0, 1000)
        _int("undercut_bonus", 0, 1000)
        _int("box_bonus", 0, 1000)
        _int("game_bonus", 0, 10000)
        if self.target is None:
            # resolved here so that ``config.target`` is always the number in force
            object.__setattr__(self, "target", 125 if self.num_players == 4 else 100)
            object.__setattr__(self, "_target_by_players", True)
        _int("target", 1, 100000)
        _choice("shutout", SHUTOUT)
        _choice("next_dealer", NEXT_DEALER)
        _choice("episode", EPISODE)
        _choice("reward", REWARD)
        for name in (
            "eleven_card_deal",
            "allow_discard_of_drawn_upcard",
            "fiftieth_card_action",
            "oklahoma",
            "oklahoma_ace_gin_only",
            "oklahoma_extra_boxes",
            "auto_meld",
        ):
            _bool(name)
        if self.max_steps is not None:
            _int("max_steps", 1, 10**9)
        _int("max_pile_draws", 0, 10**6)
        if self.num_players != 2 and self.next_dealer != "loser":
            raise ValueError(
                f"next_dealer={self.next_dealer!r} needs num_players=2: with 3 and 4 players the "
                "dealers follow RULES.md §1.10 (3: the loser deals; 4: the team that did not "
                "score deals), so next_dealer must be 'loser'"
            )
        if self.oklahoma and self.eleven_card_deal:
            raise ValueError(
                "oklahoma cannot be combined with eleven_card_deal: the 11-card deal has no "
                "upcard to set the knock limit"
            )
        if self.oklahoma_ace_gin_only and not self.oklahoma:
            raise ValueError("oklahoma_ace_gin_only requires oklahoma=True")
        if self.oklahoma_extra_boxes and not self.oklahoma:
            raise ValueError("oklahoma_extra_boxes requires oklahoma=True")

    def replace(self, **kwargs: Any) -> GinRummyConfig:
        """A copy with some options changed (validated); a target that came from the seat
        count follows a new ``num_players``.
        """
        if getattr(self, "_target_by_players", False) and "target" not in kwargs:
            kwargs["target"] = None
        return dataclasses.replace(self, **kwargs)

    def hand_config(self) -> GinRummyConfig:
        """The 2-player options of the hands played inside a 3- or 4-player match (one hand
        per episode, raw points): what a 2-player agent seated at one table plays by.
        """
        return dataclasses.replace(
            self, num_players=2, episode="hand", reward="raw", max_steps=None,
            next_dealer="loser", target=self.target,
        )  # fmt: skip

    def hand_score_scale(self) -> int:
        """Largest possible hand score: bonus plus 100 deadwood points, doubled on spades."""
        return (max(self.gin_bonus, self.undercut_bonus) + 100) * (2 if self.oklahoma else 1)

    def to_array(self) -> np.ndarray:
        """The options as the int64 vector the compiled kernels read (indices in ``CFG``).

        With 3 and 4 players the first ``CFG.SIZE`` entries are those of the 2-player hands
        (``hand_config``: the tables' kernels read them) and the match options follow (``MP``).
        """
        if self.num_players != 2:
            a = np.zeros(MP.SIZE, dtype=np.int64)
            a[: CFG.SIZE] = self.hand_config().to_array()
            a[MP.PLAYERS] = self.num_players
            a[MP.MATCH] = self.episode == "match"
            a[MP.NORMALIZED] = self.reward == "normalized"
            a[MP.MAX_STEPS] = self.max_steps if self.max_steps is not None else 0
            return a
        a = np.zeros(CFG.SIZE, dtype=np.int64)
        a[CFG.KNOCK_LIMIT] = self.knock_limit
        a[CFG.GIN_BONUS] = self.gin_bonus
        a[CFG.UNDERCUT_BONUS] = self.undercut_bonus
        a[CFG.BOX_BONUS] = self.box_bonus
        a[CFG.GAME_BONUS] = self.game_bonus
        a[CFG.SHUTOUT_DOUBLE_TOTAL] = self.shutout == "double_total"
        assert self.target is not None  # __post_init__ set the default by players
        a[CFG.TARGET] = self.target
        a[CFG.NEXT_DEALER] = NEXT_DEALER.index(self.next_dealer)
        a[CFG.ELEVEN] = self.eleven_card_deal
        a[CFG.ALLOW_UPCARD_DISCARD] = self.allow_discard_of_drawn_upcard
        a[CFG.FIFTIETH] = self.fiftieth_card_action
        a[CFG.OKLAHOMA] = self.oklahoma
        a[CFG.OK_ACE_GIN] = self.oklahoma_ace_gin_only
        a[CFG.OK_EXTRA_BOXES] = self.oklahoma_extra_boxes
        a[CFG.MATCH] = self.episode == "match"
        a[CFG.NORMALIZED] = self.reward == "normalized"
        a[CFG.AUTO_MELD] = self.auto_meld
        a[CFG.MAX_STEPS] = self.max_steps if self.max_steps is not None else 0
        a[CFG.SCORE_SCALE] = self.hand_score_scale()
        a[CFG.MAX_PILE_DRAWS] = self.max_pile_draws
        return a


class CFG:
    """Indices of the config vector read by the kernels."""

    KNOCK_LIMIT = 0
    GIN_BONUS = 1
    UNDERCUT_BONUS = 2
    BOX_BONUS = 3
    GAME_BONUS = 4
    SHUTOUT_DOUBLE_TOTAL = 5
    TARGET = 6
    NEXT_DEALER = 7
    ELEVEN = 8
    ALLOW_UPCARD_DISCARD = 9
    FIFTIETH = 10
    OKLAHOMA = 11
    OK_ACE_GIN = 12
    OK_EXTRA_BOXES = 13
    MATCH = 14
    NORMALIZED = 15
    AUTO_MELD = 16
    MAX_STEPS = 17
    SCORE_SCALE = 18
    MAX_PILE_DRAWS = 19
    SIZE = 20


class MP:
    """Indices of the match options after the hand options (3 and 4 players)."""

    PLAYERS = CFG.SIZE
    MATCH = CFG.SIZE + 1
    NORMALIZED = CFG.SIZE + 2
    MAX_STEPS = CFG.SIZE + 3
    SIZE = CFG.SIZE + 4
