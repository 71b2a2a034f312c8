"""Rummy 51: PettingZoo conformance, our env contract, and batch-of-N = N single games."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest

import rummy_env
from rummy_env import rummy51_v1
from rummy_env.testing import check_aec_env

CONFIGS = [
    {},
    {"num_players": 4},
    {"num_players": 6},
    {"retrieved_joker_must_be_melded": True},
    {"discard_draw_requires_opening": True},
    {"max_reshuffles": 0, "opening_threshold": 30},
    {"episode": "match", "elimination": 60, "reward": "normalized"},
    {"num_players": 3, "reward": "zero_sum"},
    {"reward": "payout", "max_pile_draws": 3},
]


@pytest.mark.parametrize(
    "options", CONFIGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default"
)
def test_pettingzoo_api_seed_and_contract(options):
    check_aec_env(lambda: rummy51_v1.env(**options), num_cycles=150, episodes=2)


def test_registered_and_renders():
    env = pettingzoo.make("aec", "rummy/rummy51-v1", num_players=3, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "player_2" in text and "discard pile" in text and "not opened" in text


def test_batch_sizes_and_spaces():
    venv = rummy_env.make_vec("rummy51", 3, seed=0, num_players=4)
    obs, info = venv.reset()
    lay = venv.game.layout
    assert obs["observation"].shape == (3, lay.obs_size)
    assert obs["action_mask"].shape == (3, 3188) == (3, lay.num_actions)
    assert venv.single_observation_space["observation"].contains(obs["observation"][0])


@pytest.mark.parametrize("options", [{}, {"num_players": 3, "episode": "match", "elimination": 40}])
def test_batch_of_n_equals_n_single_games(options):
    n, seed = 4, 77
    venv = rummy_env.make_vec("rummy51", n, seed=seed, **options)
    obs, info = venv.reset()
    envs = [rummy51_v1.raw_env(**options) for _ in range(n)]
    for i, e in enumerate(envs):
        e.reset(seed=seed + i)
    rngs = [np.random.default_rng(i) for i in range(n)]
    lay = venv.game.layout
    finished = 0
    for _ in range(400):
        actions = np.empty(n, np.int64)
        for i, e in enumerate(envs):
            o = e.observe(e.agent_selection)
            assert info["current_player"][i] == e.possible_agents.index(e.agent_selection)
            assert np.array_equal(o["observation"], obs["observation"][i])
            assert np.array_equal(o["action_mask"], obs["action_mask"][i])
            legal = np.flatnonzero(o["action_mask"])
            places = legal[(legal >= lay.meld_base) & (legal < lay.discard_base)]
            pick = places if places.size and rngs[i].random() < 0.8 else legal
            actions[i] = int(rngs[i].choice(pick))
        obs, rewards, term, trunc, info = venv.step(actions)
        for i, e in enumerate(envs):
            agent = e.agent_selection
            e.step(int(actions[i]))
            assert [e.rewards[a] for a in e.possible_agents] == list(rewards[i])
            assert e.terminations[agent] == bool(term[i])
            if term[i] or trunc[i]:
                finished += 1
                rec = e.state_record
                assert list(info["final_penalty"][i]) == list(
                    rec["penalties"] if e.config.episode == "match" else rec["hand_penalty"]
                )
                assert info["winner"][i] == (
                    rec["winner"] if e.config.episode == "match" else rec["hand_winner"]
                )
                assert info["rummy"][i] == rec["rummy"]
                e.reset()
    assert finished >= 1


def test_illegal_vector_actions_raise_before_any_game_moves():
    venv = rummy_env.make_vec("rummy51", 2, seed=0)
    venv.reset()
    before = venv.game.states.copy()
    with pytest.raises(ValueError, match=r"game 1: DISCARD\[.*\] is illegal in phase 'draw'"):
        venv.step(np.array([0, venv.game.layout.discard_base]))
    assert np.array_equal(before, venv.game.states)
