"""Sampled worlds: consistent with the player's information, and playable."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env import gin_rummy_v0
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy import kernels as K


def _cards(rec) -> list[int]:
    out = [c for p in range(2) for c in range(52) if int(rec["hands"][p]) >> c & 1]
    for p in range(2):
        for s in range(int(rec["n_melds"][p])):
            out += [c for c in range(52) if int(rec["melds"][p][s]) >> c & 1]
    out += [int(c) for c in rec["pile"][: int(rec["pile_n"])]]
    out += [int(c) for c in rec["deck"][int(rec["deck_pos"]) :]]
    if int(rec["knocker"]) >= 0 and int(rec["knock_card"]) >= 0:
        out.append(int(rec["knock_card"]))
    return sorted(out)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), steps=st.integers(0, 80), auto=st.booleans())
def test_sampled_worlds_never_contradict_the_observation(seed, steps, auto):
    env = gin_rummy_v0.raw_env(auto_meld=auto)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if env.state_record["done"]:
            break
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    for q, agent in enumerate(env.possible_agents):
        worlds = env.sample_worlds(agent, 8, seed=seed)
        real = env.observe(agent)
        differs = False
        for w in range(8):
            obs = worlds.observe(w, q)
            assert np.array_equal(obs, real["observation"])
            rec = worlds.states[w]
            assert _cards(rec) == list(range(52))
            if agent == env.agent_selection:
                assert np.array_equal(worlds.action_mask(w), real["action_mask"])
            # the other player's mask is recomputed from its sampled hand
            m = np.zeros(E.NUM_ACTIONS_MANUAL, np.int8)
            K.legal_mask(rec, worlds.cfg, K.TABLES, m)
            assert np.array_equal(m[: worlds.num_actions], worlds.action_mask(w))
            pos = int(rec["deck_pos"])
            differs |= int(rec["hands"][1 - q]) != int(env.state_record["hands"][1 - q])
            differs |= not np.array_equal(rec["deck"][pos:], env.state_record["deck"][pos:])
        hidden = env.game.hidden_cards(0, q)
        if len(hidden) > 12 and not env.state_record["done"]:
            assert differs  # with many hidden cards, some world deals them differently


def test_worlds_can_be_played_to_the_end():
    env = gin_rummy_v0.raw_env()
    env.reset(seed=3)
    worlds = env.sample_worlds(env.agent_selection, 16, seed=0)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(400):
        masks = worlds.masks[:, : worlds.num_actions]
        actions = (rng.random(masks.shape) * masks).argmax(1)
        _, _, term, trunc, _ = worlds.step(actions, autoreset=True)
        finished += int((term | trunc).sum())
    assert finished >= 16


def test_hidden_cards_are_dealt_uniformly():
    """Each hidden card lands in the opponent's hand with probability (its unknown cards) /
    (hidden cards), in the stock otherwise; the cards dealt before the stock keep no trace of
    the real deal order (each dealt card is equally likely first). 4,000 worlds, 6 standard errors.
    """
    env = gin_rummy_v0.raw_env()
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(9):  # a few draws and discards: a pile, a stock, a known card or not
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    me = env.agent_selection
    q = env.possible_agents.index(me)
    rec = env.state_record
    hidden = env.game.hidden_cards(0, q)
    unknown = int(rec["hands"][1 - q]) & ~int(rec["known"][1 - q])
    n = 4000
    worlds = env.sample_worlds(me, n, seed=1)
    held = (worlds.states["hands"][:, 1 - q][:, None] >> np.arange(52, dtype=np.uint64)) & 1
    p = unknown.bit_count() / len(hidden)
    freq = held[:, hidden].mean(0)
    assert np.all(np.abs(freq - p) < 6 * np.sqrt(p * (1 - p) / n))
    pos = int(rec["deck_pos"])
    dealt = worlds.states["deck"][:, :pos]
    assert all(
        sorted(set(range(52)) - set(worlds.states["deck"][w, pos:].tolist())) == sorted(dealt[w])
        for w in range(20)
    )
    first = np.bincount(dealt[:, 0].astype(np.int64), minlength=52) / n
    expected = np.full(52, 1 / pos)  # every card not hidden was dealt ...
    expected[hidden] = p / pos  # ... a hidden one only when it went to the opponent
    assert np.all(np.abs(first - expected) < 6 * np.sqrt(expected / n))
