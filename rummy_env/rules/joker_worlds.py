"""Information sets of the joker games (500 Rum, Rummy 51): which cards a player cannot place,
and full game states ("worlds") consistent with what the player knows, dealt by the compiled
``core.worlds`` helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from rummy_env.core import batch
from rummy_env.core.validate import check_sample_worlds

NUM_TYPES = 53  # card types: 0..51 naturals, 52 the joker


class JokerWorldsMixin:
    """``hidden_cards`` and ``sample_worlds`` for a :class:`rummy_env.rules.base.BatchedGame`
    whose records hold ``hands`` and ``known`` (players, 53) counts and a ``deck`` dealt from
    ``deck_pos`` on. The deal is ``core.batch.deal_worlds``, with the game's ``world_ok`` hook
    (does the player to act have a legal move).
    """

    states: np.ndarray
    config: Any
    num_players: int
    cfg: np.ndarray
    tables: tuple[np.ndarray, ...]
    deck: np.ndarray

    if TYPE_CHECKING:  # what the engine this mixes into has (``BatchedGame``)

        def __init__(self, config: Any, num_games: int) -> None: ...

        def refresh_masks(self) -> None:
            """Recompute every mask from the states."""

    def _deal_worlds(
        self,
        states: np.ndarray,
        base: np.ndarray,
        hidden_n: np.ndarray,
        pool: np.ndarray,
        max_tries: int,
        check: bool,
    ) -> np.ndarray:
        """Deal ``pool`` into ``states`` in place (``core.worlds``); returns the deals tried per
        world, -1 where none gave the player to act a legal move.
        """
        counts = np.bincount(self.deck, minlength=NUM_TYPES).astype(np.int64)
        return batch.deal_worlds(
            states, self.cfg, self.tables, base, hidden_n, pool, counts, max_tries, check
        )

    def hidden_cards(self, i: int, player: int) -> list[int]:
        """Cards whose place ``player`` cannot know in game ``i``: the other players' cards not
        publicly known to be held (``known``: taken from the discard pile and not played since)
        and the stock. Card types (52: joker), repeated per copy, sorted.
        """
        s = self.states[i]
        hidden = self._hidden_counts(s, player).sum(0)
        out = np.repeat(np.arange(NUM_TYPES), hidden).tolist()
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
    ) -> Any:
        """``n`` full game states consistent with what ``player`` knows in game ``i``.

        Each world keeps everything ``player`` can see (own hand, pile, table melds, the other
        players' cards publicly known to be held, hand sizes, scores, phase) and deals the hidden
        cards (``hidden_cards``) anew at random: the other players' unknown cards (every hand
        keeps its size) and the stock order. Each world gets a fresh random stream for later
        deals and its masks are refreshed. The worlds are an independent batch of the same game
        and config to continue playing from, e.g. for rollouts in a search.

        When another player is to act, the rules already tell ``player`` that this player has a
        legal move (a turn that can be completed, e.g. melding a discard it had to take; a 500
        Rum "Rummy!" call when offered one), so deals without one are redrawn (up to
        ``max_tries`` per world). A world where every try fails takes that player's hidden
        cards from another world whose deal passed (the rest is dealt anew); should none pass
        at all, ``RuntimeError``. No world ever reads the real hidden cards: worlds sampled from
        two games that ``player`` cannot tell apart are identical for the same ``seed``. What
        earlier decisions suggest about hands (who passed a call, what was
        discarded) is not taken into account, nor (Rummy 51) which cards of a reshuffled pile
        the stock still holds: only what the observation shows.

        Raises:
            TypeError: (``ArgumentTypeError``) for a game, player or ``n`` that is not an
                integer, or a seed that is not None, an int or a numpy ``Generator``.
            ValueError: for a game or player out of range, ``n < 1`` or a negative seed.
            RuntimeError: if no deal in ``max_tries`` gives the player to act a legal move.
        """
        check_sample_worlds(self, i, player, n, seed)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        src = self.states[i]
        worlds = type(self)(self.config, n)
        worlds.states[:] = src
        hidden = self._hidden_counts(src, player)
        base = src["hands"] - hidden.astype(np.int8)  # own hand and the known cards
        hidden_n = hidden.sum(1)
        pool = np.array(self.hidden_cards(i, player), dtype=np.int8)
        cur = int(src["cur"])
        check = not src["done"] and cur != player
        worlds.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        tries = self._deal_worlds(worlds.states, base, hidden_n, pool, max_tries, check)
        failed = np.flatnonzero(tries < 0)
        if failed.size:
            passed = np.flatnonzero(tries >= 0)
            if not passed.size:
                raise RuntimeError(
                    f"no deal of the hidden cards in {max_tries} tries per world gave "
                    f"player {cur} a legal move; raise max_tries"
                )
            # the player to act takes the hand of a passing world (a sample of what the
            # player's information allows); the other hidden cards are dealt from the rest
            pool_counts = np.bincount(pool, minlength=NUM_TYPES)
            hidden_n[cur] = 0
            for w, v in zip(failed, rng.choice(passed, size=failed.size), strict=True):
                hand = worlds.states["hands"][v, cur]
                base[cur] = hand
                rest = pool_counts - (hand.astype(np.int64) - src["hands"][cur] + hidden[cur])
                rest_pool = np.repeat(np.arange(NUM_TYPES), rest).astype(np.int8)
                sub = worlds.states[w : w + 1]
                self._deal_worlds(sub, base, hidden_n, rest_pool, 1, False)
                worlds.states[w : w + 1] = sub
        worlds.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        worlds.refresh_masks()
        return worlds
