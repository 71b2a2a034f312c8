"""The vector env runs the same rules as the AEC env: a batch of N equals N single games."""

from __future__ import annotations

import numpy as np
import pytest

import rummy_env
from rummy_env import gin_rummy_v0
from rummy_env.testing import gin_deck


def _pick(rng: np.random.Generator, mask: np.ndarray) -> int:
    """Random legal action, knocking whenever possible (so hands and matches end)."""
    legal = np.flatnonzero(mask)
    knocks = legal[(legal >= 55) & (legal < 107)]
    return int(rng.choice(knocks if knocks.size else legal))


@pytest.mark.parametrize(
    "options",
    [{}, {"auto_meld": False}, {"episode": "match", "target": 30}, {"oklahoma": True}],
)
def test_batch_of_n_equals_n_single_games(options):
    n, seed, steps = 6, 1234, 700
    venv = rummy_env.make_vec("gin_rummy", n, seed=seed, **options)
    obs, info = venv.reset()
    envs = [gin_rummy_v0.raw_env(**options) for _ in range(n)]
    for i, e in enumerate(envs):
        e.reset(seed=seed + i)
    rngs = [np.random.default_rng(i) for i in range(n)]
    finished = 0
    for _ in range(steps):
        actions = np.empty(n, np.int64)
        for i, e in enumerate(envs):
            agent = e.agent_selection
            assert info["current_player"][i] == e.possible_agents.index(agent)
            o = e.observe(agent)
            assert np.array_equal(o["observation"], obs["observation"][i])
            assert np.array_equal(o["action_mask"], obs["action_mask"][i])
            actions[i] = _pick(rngs[i], o["action_mask"])
        obs, rewards, term, trunc, info = venv.step(actions)
        assert np.array_equal(info["_final_observation"], term | trunc)
        for i, e in enumerate(envs):
            agent = e.agent_selection
            e.step(int(actions[i]))
            assert [e.rewards[a] for a in e.possible_agents] == list(rewards[i])
            assert e.terminations[agent] == bool(term[i])
            assert e.truncations[agent] == bool(trunc[i])
            if term[i] or trunc[i]:
                finished += 1
                for q, a in enumerate(e.possible_agents):
                    assert np.array_equal(
                        e.observe(a)["observation"], info["final_observation"][i, q]
                    )
                e.reset()
    assert finished >= n  # every game finished at least one episode


def test_vector_env_shapes_spaces_and_fresh_arrays():
    venv = rummy_env.make_vec("gin_rummy", 16, seed=0)
    obs, info = venv.reset()
    assert obs["observation"].shape == (16, 225) and obs["observation"].dtype == np.float32
    assert obs["action_mask"].shape == (16, 107) and obs["action_mask"].dtype == np.int8
    assert venv.single_action_space.n == 107
    assert info["current_player"].shape == (16,)
    a = (np.random.default_rng(0).random((16, 107)) * obs["action_mask"]).argmax(1)
    obs2, rewards, term, trunc, info2 = venv.step(a)
    assert rewards.shape == (16, 2) and term.shape == (16,) and trunc.shape == (16,)
    assert obs2["observation"] is not obs["observation"]
    obs2["action_mask"][:] = 0  # mutating a returned array does not touch the env
    assert venv.action_masks().sum() > 0


def test_vector_env_rejects_illegal_actions_before_moving():
    venv = rummy_env.make_vec("gin_rummy", 4, seed=0)
    obs, _ = venv.reset()
    before = venv.game.states.copy()
    actions = obs["action_mask"].argmax(1)
    actions[2] = 3 + 51  # DISCARD[Ks] during the upcard offer
    with pytest.raises(ValueError, match="game 2: DISCARD"):
        venv.step(actions)
    assert np.array_equal(before, venv.game.states)
    with pytest.raises(ValueError, match="shape"):
        venv.step(actions[:3])


def test_vector_env_stacked_decks_and_unknown_game():
    deck = gin_deck("Ac 2c 3c 5d 6d 7d 9h 9s 9c Kd", "4h 5h Qs Js 2d 8c Tc Th 3s 6s", "4c")
    venv = rummy_env.make_vec("gin_rummy", 2, seed=0)
    venv.reset(options={"decks": [deck, None], "dealers": [1, None]})
    assert int(venv.game.states["hands"][0][0]) >> 0 & 1  # player_0 holds A♣
    obs, rewards, term, trunc, info = venv.step(np.array([1, 2]))  # game 0 takes 4♣
    obs, rewards, term, trunc, info = venv.step(
        np.array([55 + 13 + 12, 2 if obs["action_mask"][1, 2] else 0])
    )
    assert term[0] and rewards[0, 0] == 88.0
    assert info["outcome"][0] == 2 and list(info["final_points"][0]) == [88, 0]
    with pytest.raises(ValueError, match="unknown game"):
        rummy_env.make_vec("canasta", 2)
    with pytest.raises(ValueError, match="knock_limit"):
        rummy_env.make_vec("gin_rummy", 2, knock_limit=-3)
