"""Test helpers shared by the joker games (500 Rum, Rummy 51): card accounting and a redeal
of the cards hidden from one player, over the state records both games use (``hands``,
``known``, ``deck``/``deck_pos``, ``pile``/``pile_n`` and the table slots).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import strategies as st
from reference_five_hundred_rum import meld_cards, table_of


def deck_counts(config) -> Counter:
    """The deck of ``config`` as card-type counts (jokers as type 52)."""
    c = Counter({card: config.decks for card in range(52)})
    if config.jokers:
        c[52] = config.jokers
    return c


def all_cards(rec, config) -> Counter:
    """Hands + stock + pile + table (jokers as type 52): must always be the whole deck."""
    c: Counter = Counter()
    for q in range(config.num_players):
        for t in range(53):
            c[t] += int(rec["hands"][q][t])
    c.update(int(x) for x in rec["deck"][int(rec["deck_pos"]) :])
    c.update(int(x) for x in rec["pile"][: int(rec["pile_n"])])
    for meld in table_of(rec):
        c.update(meld_cards(meld))
    return +c


def hidden_shuffle(rec, p: int, n_p: int, rng: np.random.Generator):
    """A copy of the record where the cards hidden from ``p`` (the other players' cards not
    publicly known, and the stock) are dealt differently.
    """
    r = rec.copy()
    others = [q for q in range(n_p) if q != p]
    hidden = {
        q: np.array(r["hands"][q], np.int64) - np.array(r["known"][q], np.int64) for q in others
    }
    pos = int(r["deck_pos"])
    pool = [int(c) for c in r["deck"][pos:]]
    for q in others:
        assert (hidden[q] >= 0).all()
        pool += [c for c in range(53) for _ in range(int(hidden[q][c]))]
    pool = list(rng.permutation(pool)) if pool else []
    k = 0
    for q in others:
        n = int(hidden[q].sum())
        new = np.array(r["known"][q], np.int64)
        for c in pool[k : k + n]:
            new[int(c)] += 1
        k += n
        r["hands"][q] = new.astype(np.int8)
    r["deck"][pos:] = np.array(pool[k:], np.int8)
    return r


def check_seeded_sampling(env) -> None:
    """``sample_worlds`` for ``player_1`` of a running env: reproducible for a seed (an int or
    a Generator, through the game or the env), different for another seed, worlds that differ
    in hidden cards and random streams, the real game untouched, a bad player refused.
    """
    game = env.game
    before = game.states.copy(), game.masks.copy()
    a = game.sample_worlds(0, 1, 8, seed=11)
    b = game.sample_worlds(0, 1, 8, seed=11)
    c = env.sample_worlds("player_1", 8, seed=np.random.default_rng(11))
    d = game.sample_worlds(0, 1, 8, seed=12)
    assert a.states.tobytes() == b.states.tobytes() == c.states.tobytes()
    assert np.array_equal(a.masks, b.masks)
    assert a.states.tobytes() != d.states.tobytes()
    # the worlds differ from each other, in the hidden cards and in their random streams
    assert len({a.states[w]["hands"].tobytes() for w in range(8)}) > 1
    assert len({a.states[w]["deck"].tobytes() for w in range(8)}) > 1
    assert len(set(a.states["rng"].tolist())) == 8
    assert not (a.states["rng"] == game.states[0]["rng"]).any()
    # the real game is untouched
    assert game.states.tobytes() == before[0].tobytes()
    assert np.array_equal(game.masks, before[1])
    with pytest.raises(ValueError, match="player"):
        game.sample_worlds(0, game.num_players, 2)


def play_worlds_to_end(worlds, max_steps: int, seed: int = 0) -> None:
    """Random legal play in every sampled world until each has finished an episode."""
    rng = np.random.default_rng(seed)
    finished = np.zeros(worlds.num_games, bool)
    for _ in range(max_steps):
        masks = worlds.masks[:, : worlds.num_actions]
        assert (masks.sum(1) > 0).all()
        actions = (rng.random(masks.shape) * masks).argmax(1)
        _, _, term, trunc, _ = worlds.step(actions, autoreset=True)
        finished |= term | trunc
        if finished.all():
            break
    assert finished.all()


@st.composite
def melds(draw: st.DrawFn) -> list[int]:
    """A legal table meld in the engine's layout."""
    if draw(st.booleans()):
        r = draw(st.integers(0, 12))
        nat = draw(st.integers(1, 15))
        n = bin(nat).count("1")
        jok = draw(st.integers(max(0, 3 - n), 4 - n))
        return [1, r, 0, 0, nat, jok]
    s = draw(st.integers(0, 3))
    lo = draw(st.integers(0, 11))
    hi = draw(st.integers(lo + 2, 13 if lo > 0 else 12))
    window = (1 << (hi + 1)) - (1 << lo)
    jok = draw(st.integers(0, (1 << 14) - 1)) & window
    if jok == window:
        jok &= ~(1 << lo)  # a meld has a natural
    return [2, s, lo, hi, window & ~jok, jok]
