"""Batched 3- and 4-player Gin Rummy (RULES.md §1.10), on the 2-player hands' kernels.

``GinRummyMultiGame`` is the engine of ``gin_rummy_v0`` with ``num_players=3`` or ``4``; the
rules of each hand are those of the 2-player game (``kernels``), the match around them is
``multi_kernels``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_env.core.cards import make_deck, validate_deck
from rummy_env.core.validate import (
    ArgumentTypeError,
    _show,
    check_int,
    check_sample_worlds,
    is_int,
)
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.base import BatchedGame
from rummy_env.rules.gin_rummy import multi_kernels as MK
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.gin_rummy.game import (
    GinRummyGame,
    explain_illegal,
    hidden_cards,
    resample_hidden,
)
from rummy_env.rules.gin_rummy.multi_state import new_multi_states

TEAMS = ((0, 2), (1, 3))
"""The 4-player partnerships: team A = seats 0 and 2, team B = seats 1 and 3."""


def table_pairs(round_index: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two tables of a 4-player round: ((0, 1), (2, 3)) in even rounds, ((0, 3), (2, 1))
    in odd ones (table 0 is player_0's).
    """
    opp = 1 if round_index % 2 == 0 else 3
    return (0, opp), (2, 4 - opp)


def _is_sequence(value: Any, ndim: tuple[int, ...] = (1,)) -> bool:
    """A list, tuple or numpy array with ``ndim`` dimensions (no str, dict, set or iterator:
    their order or length is not a deck's or a pair's).
    """
    if isinstance(value, np.ndarray):
        return value.ndim in ndim
    return isinstance(value, (list, tuple))


def _is_pair(value: Any, ndim: tuple[int, ...] = (1,)) -> bool:
    """A sequence (``_is_sequence``) of exactly two entries: one per table."""
    return _is_sequence(value, ndim) and len(value) == 2


class GinRummyMultiGame(BatchedGame):
    """``num_games`` independent 3- or 4-player Gin Rummy matches stepped together.

    Attributes:
        config: the rule options (``num_players`` 3 or 4).
        num_tables: tables per game (1 with 3 players, 2 with 4).
        states: (N,) structured array of match records (``multi_state_dtype``); the 2-player
            hand at table ``t`` of game ``i`` is ``states["boards"][i, t]``.
        masks: (N, 569) int8 legal-action masks of the players to act.
    """

    kernels = MK

    def __init__(self, config: GinRummyConfig, num_games: int) -> None:
        if config.num_players not in (3, 4):
            raise ValueError(f"GinRummyMultiGame plays 3 or 4 players, got {config.num_players}")
        p = config.num_players
        self.num_players = p
        self.num_tables = 1 if p == 3 else 2
        self.num_actions = E.num_actions(config.auto_meld)
        self.obs_size = E.observation_size(config.auto_meld, p)
        self.pieces = E.observation_pieces(config.auto_meld, p)
        self.deck = make_deck(1, 0)
        self.final_fields = (
            tuple(f"points_{q}" for q in range(p))
            + ("outcome", "episode_length")
            + tuple(f"deadwood_{q}" for q in range(p))
        )
        self.hand_config = config.hand_config()
        self._setup(config, num_games, new_multi_states(p, num_games), E.NUM_ACTIONS_MANUAL)

    def _final_info(self, info: dict[str, Any], final_info: np.ndarray) -> None:
        p = self.num_players
        info["final_points"] = final_info[:, :p]
        info["outcome"] = final_info[:, p]
        info["episode_length"] = final_info[:, p + 1]
        info["final_deadwood"] = final_info[:, p + 2 : 2 * p + 2]

    # -- reset arguments --------------------------------------------------------------------
    def check_dealer(self, name: str, dealer: Any) -> int:
        """3 players: the seat that deals first (and sits out). 4 players: the two first
        dealers, ``[seat at table 0 (0 or 1), seat at table 1 (2 or 3)]`` (a list, tuple or 1-d
        array of Python or numpy integers).

        Raises:
            TypeError: (``ArgumentTypeError``) for a value of the wrong type.
            ValueError: for seats that cannot deal there, naming ``name``.
        """
        if self.num_players == 3:
            return check_int(name, dealer, 0, 2)
        if not _is_pair(dealer):
            raise ArgumentTypeError(
                f"{name} must be [dealer at table 0 (0 or 1), dealer at table 1 (2 or 3)] with "
                f"4 players, got {_show(dealer)}"
            )
        d0 = check_int(f"{name}[0]", dealer[0], 0, 1)
        d1 = check_int(f"{name}[1]", dealer[1], 2, 3)
        return d0 | ((d1 - 2) << 1)

    def check_deck(self, name: str, deck: Any) -> np.ndarray:
        """3 players: one stacked deck (dealt from the top, one card at a time starting with the
        seat after the dealer). 4 players: two decks, table 0's then table 1's (a list, tuple or
        (2, 52) array); each in any form a 2-player deck takes (a list, tuple or 1-d array of
        card ids or texts like ``"As"``, or one space-separated text).

        Raises:
            TypeError: (``ArgumentTypeError``) for a value of the wrong type.
            ValueError: for a deck that is not a full 52-card deck, naming ``name``.
        """
        if self.num_players == 3:
            return validate_deck(deck, self.deck, name)[None, :]
        form = (
            f"{name} must be [table 0's deck, table 1's deck] with 4 players, each a stacked "
            "deck of 52 cards (a list of card ids or texts like 'As', or one space-separated "
            "text)"
        )
        if not _is_pair(deck, ndim=(1, 2)):
            got = _show(deck)
            if isinstance(deck, str) or (_is_sequence(deck) and len(deck) == self.deck.size):
                got = f"a single deck {got}"  # a 2-player deck form: say what is missing
            raise ArgumentTypeError(f"{form}, got {got}")
        for t in range(2):
            if not isinstance(deck[t], str) and not _is_sequence(deck[t]):
                card = is_int(deck[t]) or (isinstance(deck[t], np.ndarray) and deck[t].ndim == 0)
                what = "a single card" if card else "not a deck"
                raise ArgumentTypeError(f"{form}; {name}[{t}] is {what}: {_show(deck[t])}")
        return np.stack([validate_deck(deck[t], self.deck, f"{name}[{t}]") for t in range(2)])

    def _place_deck(self, i: int, row: np.ndarray) -> None:
        self.states["boards"]["deck"][i] = row

    # -- seats ------------------------------------------------------------------------------
    def table_of(self, i: int, player: int) -> int:
        """Table of ``player`` in game ``i`` now (-1: sitting out)."""
        return int(self.states["board_of"][i, player])

    def table_record(self, i: int, table: int) -> np.void:
        """The 2-player hand record of ``table`` in game ``i`` (a view; referee's view)."""
        return self.states["boards"][i, table]

    def table_game(self, i: int, player: int) -> GinRummyGame:
        """The hand ``player`` sits in, as a 2-player game of one (a copy, with the hand
        options ``config.hand_config()``); its seats are table-local, ``table_seat`` says
        which is ``player``.

        Raises:
            ValueError: if ``player`` sits out this hand.
        """
        t = self.table_of(i, player)
        if t < 0:
            raise ValueError(f"player {player} sits out this hand (it plays at no table)")
        g = GinRummyGame(self.hand_config, 1)
        g.states[0] = self.states["boards"][i, t]
        g.refresh_masks()
        return g

    def table_seat(self, i: int, player: int) -> int:
        """Table-local seat (0 or 1) of ``player`` in game ``i``, -1 while sitting out."""
        return int(self.states["local"][i, player])

    # -- information sets -------------------------------------------------------------------
    def hidden_cards(self, i: int, player: int) -> list[int]:
        """Cards at ``player``'s table (3 players: also when it sits out) whose place it cannot
        know: the other hands' cards not publicly known, the stock and a face-down knock
        discard. With 4 players every card of the other table is hidden as well (not listed).
        """
        t = max(self.table_of(i, player), 0)
        return hidden_cards(self.states["boards"][i, t], self.table_seat(i, player))

    def sample_worlds(
        self, i: int, player: int, n: int, seed: int | np.random.Generator | None = None
    ) -> GinRummyMultiGame:
        """``n`` full match states consistent with what ``player`` knows in game ``i``.

        At ``player``'s table (3 players: the one table, also while sitting out) the hidden
        cards (``hidden_cards``) are dealt anew as in the 2-player game. With 4 players nothing
        of the other table's cards is known, so each world deals that table's hand anew from
        its dealer (a hand already over keeps only its public result: outcome and points; its
        boxes as if its upcard was no spade). Every world gets fresh random streams.
        """
        check_sample_worlds(self, i, player, n, seed)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        worlds = GinRummyMultiGame(self.config, n)
        src = self.states[i]
        worlds.states[:] = src
        t = max(self.table_of(i, player), 0)
        boards = worlds.states["boards"]
        own = np.ascontiguousarray(boards[:, t])
        resample_hidden(src["boards"][t], self.table_seat(i, player), own, rng)
        boards[:, t] = own
        worlds.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        if self.num_tables == 2:
            o = 1 - t
            real = src["boards"][o]
            other = GinRummyGame(self.hand_config, n)
            other.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
            other.reset(dealers=[int(real["dealer"])] * n, write_obs=False)
            fresh = other.states
            if real["done"]:
                # only what the partner's result shows (who won, how, the points); the boxes
                # it earned follow from the outcome alone (a spade upcard there is not known)
                for f in ("done", "phase", "outcome", "knocker", "gin", "hand_points"):
                    fresh[f] = real[f]
                fresh["deadwood"] = 0
                fresh["boxes"] = 0
                won = int(real["outcome"])
                if won in (E.OUT_KNOCK, E.OUT_GIN, E.OUT_UNDERCUT):
                    w = int(real["knocker"]) if won != E.OUT_UNDERCUT else 1 - int(real["knocker"])
                    extra = {E.OUT_GIN: 2, E.OUT_UNDERCUT: 1}.get(won, 0)
                    fresh["boxes"][:, w] = 1 + (extra if self.config.oklahoma_extra_boxes else 0)
            boards[:, o] = fresh
        boards["rng"] = rng.integers(0, 2**63, size=boards["rng"].shape, dtype=np.uint64)
        worlds.refresh_masks()
        return worlds

    # -- explanations -----------------------------------------------------------------------
    def explain_illegal(self, i: int, a: int) -> str:
        """Why action ``a`` is not legal now in game ``i`` (for error messages)."""
        s = self.states[i]
        if s["done"] and 0 <= a < self.num_actions:
            return f"{E.action_name(a)}: the episode is over; call reset()"
        board = s["boards"][int(s["turn"])]
        return explain_illegal(board, self.hand_config, self.num_actions, a)


def make_gin_game(config: GinRummyConfig, num_games: int) -> GinRummyGame | GinRummyMultiGame:
    """The Gin Rummy engine for ``config.num_players`` (2: ``GinRummyGame``, 3 or 4:
    ``GinRummyMultiGame``) with ``num_games`` games.
    """
    if config.num_players == 2:
        return GinRummyGame(config, num_games)
    return GinRummyMultiGame(config, num_games)


__all__ = ["TEAMS", "GinRummyMultiGame", "make_gin_game", "table_pairs"]
