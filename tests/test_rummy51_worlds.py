"""Rummy 51 sampled worlds (``Rummy51Game.sample_worlds``): consistent with what the player
knows, the hidden cards redealt, reproducible, and playable to the end.

A world must never contradict the player's observation (its observation vector is the real
one), hold exactly the 108 cards, keep every card the player can place (own hand, pile, table,
the others' cards known from the pile), deal the rest (the others' hidden cards and the stock)
from the same cards as the real game, and leave the player to act a legal move, since the rules
already tell everyone that player has one (after taking the top discard before opening, an
opening with it). Masks are compared with the slow reference (``reference_rummy51``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from joker_helpers import all_cards, check_seeded_sampling, play_worlds_to_end
from reference_rummy51 import reference_mask

from rummy_env import rummy51_v1
from rummy_env.testing import joker_deck

DECK = Counter({c: 2 for c in range(52)} | {52: 4})

SHAPES = [
    {"num_players": 2},
    {"num_players": 3, "discard_draw_requires_opening": True},
    {"num_players": 4, "max_reshuffles": 2},
    {"num_players": 6, "opening_threshold": 30},
    {"num_players": 2, "retrieved_joker_must_be_melded": True, "episode": "match"},
]


def _hidden(rec, player, num_players) -> Counter:
    """The cards ``player`` cannot place: the others' unknown cards and the stock."""
    c: Counter = Counter(int(x) for x in rec["deck"][int(rec["deck_pos"]) :])
    for q in range(num_players):
        if q != player:
            hidden = rec["hands"][q].astype(int) - rec["known"][q].astype(int)
            c.update({t: int(hidden[t]) for t in range(53)})
    return +c


def _play(env, steps, rng):
    """Random legal actions biased towards melds, lay-offs and top-discard draws (openings,
    known cards and obligations pending for other players)."""
    lay = env.layout
    for _ in range(steps):
        if env.state_record["done"]:
            return
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        places = [a for a in legal if lay.meld_base <= a < lay.discard_base]
        if places and rng.random() < 0.8:
            a = rng.choice(places)
        elif 1 in legal and rng.random() < 0.4:
            a = 1
        else:
            a = rng.choice(legal)
        env.step(int(a))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), shape=st.sampled_from(SHAPES), steps=st.integers(0, 250))
def test_sampled_worlds_never_contradict_the_observation(seed, shape, steps):
    env = rummy51_v1.raw_env(**shape)
    env.reset(seed=seed)
    _play(env, steps, np.random.default_rng(seed))
    game, config = env.game, env.config
    n_p = config.num_players
    real = game.states[0].copy()
    cur = int(real["cur"])
    for q in range(n_p):
        worlds = game.sample_worlds(0, q, 4, seed=seed)
        hidden = game.hidden_cards(0, q)
        assert Counter(hidden) == _hidden(real, q, n_p)
        differs = False
        for w in range(4):
            rec = worlds.states[w]
            # nothing the player sees changes
            assert np.array_equal(worlds.observe(w, q), game.observe(0, q))
            assert np.array_equal(rec["hands"][q], real["hands"][q])
            assert np.array_equal(rec["known"], real["known"])
            assert (rec["hands"] >= rec["known"]).all()
            assert list(rec["hands"].sum(1)) == list(real["hands"].sum(1))
            # the 108 cards, and the cards hidden from the player, are the real ones dealt anew
            assert Counter(all_cards(rec, config)) == DECK
            assert Counter(int(c) for c in rec["deck"]) == DECK
            assert _hidden(rec, q, n_p) == Counter(hidden)
            differs |= not np.array_equal(rec["hands"], real["hands"]) or not np.array_equal(
                rec["deck"][int(rec["deck_pos"]) :], real["deck"][int(real["deck_pos"]) :]
            )
            # masks: refreshed, exact, the player's own unchanged, a legal move for whoever acts
            mask = worlds.action_mask(w)
            if not rec["done"]:
                if w == 0:  # the reference is slow: one world per player
                    assert set(np.flatnonzero(mask).tolist()) == reference_mask(rec, config)
                assert mask.any()
            if q == cur:
                assert np.array_equal(mask, game.action_mask(0))
        if len(hidden) > 12:
            assert differs  # with many hidden cards, some world deals them differently


def test_seeding_is_reproducible_and_worlds_differ():
    env = rummy51_v1.raw_env(num_players=3)
    env.reset(seed=5)
    _play(env, 40, np.random.default_rng(5))
    check_seeded_sampling(env)


@pytest.mark.parametrize("shape", [{"num_players": 2}, {"num_players": 4}, {"num_players": 6}])
def test_worlds_can_be_played_to_the_end(shape):
    env = rummy51_v1.raw_env(**shape)
    env.reset(seed=3)
    _play(env, 30, np.random.default_rng(3))
    worlds = env.sample_worlds(env.agent_selection, 16, seed=0)
    play_worlds_to_end(worlds, 5000)


def _obliged(opening: str = "Ks Kd Jh Qh Kh"):
    """Two players, ``discard_draw_requires_opening``: player_1 took the top discard, the Kc,
    before opening, so it must open (51 points) with it this turn. Its hand holds such an
    opening (by default Kc Ks Kd, Jh Qh Kh), but player_0 sees none of its cards: whoever holds
    the player_1 seat in a world must be able to open with the Kc as well.
    """
    hands = [
        "2c 3d 5s 6c 8c 9s Qc Jd 4s Td 5c Ah 2h",
        opening + " 3c 5d 7s 9c 2d 4h 6s 8d",
    ]
    env = rummy51_v1.raw_env(num_players=2, discard_draw_requires_opening=True)
    deck = joker_deck(hands, "Kc", num_decks=2, jokers=4, dealer=0)
    env.reset(options={"deck": deck, "dealer": 0})
    assert env.agent_selection == "player_1"
    env.step(1)  # TAKE_DISCARD
    return env


def test_the_player_to_act_keeps_a_legal_move():
    env = _obliged()
    game, config = env.game, env.config
    assert game.action_mask(0).any()
    worlds = game.sample_worlds(0, 0, 64, seed=1)
    for w in range(64):
        rec = worlds.states[w]
        assert worlds.action_mask(w).any()
        if w < 4:
            assert set(np.flatnonzero(worlds.action_mask(w)).tolist()) == reference_mask(
                rec, config
            )
    assert len({worlds.states[w]["hands"][1].tobytes() for w in range(64)}) > 1
    # the check matters: dealt blindly, most worlds would leave player_1 stuck
    s = game.states[0]
    hidden = (s["hands"] - s["known"]).astype(np.int64)
    hidden[0] = 0
    base = (s["hands"] - hidden).astype(np.int8)
    pool = np.array(game.hidden_cards(0, 0), np.int8)
    blind = game.sample_worlds(0, 0, 64, seed=1)
    game._deal_worlds(blind.states, base, hidden.sum(1), pool, 1, False)
    blind.refresh_masks()
    stuck = sum(not blind.action_mask(w).any() for w in range(64))
    assert stuck > 32


def test_after_every_try_fails_the_player_to_act_takes_a_passing_worlds_hand():
    """With one try per world most deals leave player_1 stuck; those worlds take player_1's hand
    from a world whose deal passed, never the real one: the worlds of a game where player_1
    opens with Kc Ks Kh, Jd Qd Kd instead (player_0 cannot tell) are the very same.
    """
    env = _obliged()
    game = env.game
    worlds = game.sample_worlds(0, 0, 64, seed=2, max_tries=1)
    for w in range(64):
        rec = worlds.states[w]
        assert worlds.action_mask(w).any()
        assert Counter(all_cards(rec, env.config)) == DECK
        assert np.array_equal(worlds.observe(w, 0), game.observe(0, 0))
    twin = _obliged("Ks Kh Jd Qd Kd")
    assert np.array_equal(game.observe(0, 0), twin.game.observe(0, 0))
    twin_worlds = twin.game.sample_worlds(0, 0, 64, seed=2, max_tries=1)
    assert twin_worlds.states.tobytes() == worlds.states.tobytes()
    with pytest.raises(RuntimeError, match="legal move"):
        game.sample_worlds(0, 0, 4, seed=2, max_tries=0)
