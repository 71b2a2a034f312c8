"""500 Rum: PettingZoo conformance, our env contract, batch-of-N = N single games, and the
threaded and serial vector steps (the faster one is picked) playing alike."""

from __future__ import annotations

import time

import numpy as np
import pettingzoo
import pytest

import rummy_env
from rummy_env import five_hundred_rum_v1
from rummy_env.rules.base import FastestStep
from rummy_env.testing import check_aec_env

CONFIGS = [
    {},
    {"num_players": 4},
    {"num_players": 8},
    {"num_players": 3, "no_jokers": True, "values_5_10_15": True},
    {"rummy_call": "layoff_only"},
    {"rummy_call": "none", "must_meld_discard": True},
    {"deepest_card_new_meld": True},
    {"going_out": "discard_required"},
    {"going_out": "floating"},
    {"going_out": "unplayable_discard"},
    {"episode": "game", "target": 150, "must_go_out_to_win": True},
    {"num_players": 5, "num_decks": 1, "reward": "normalized"},
]


@pytest.mark.parametrize(
    "options", CONFIGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default"
)
def test_pettingzoo_api_seed_and_contract(options):
    check_aec_env(lambda: five_hundred_rum_v1.env(**options), num_cycles=150, episodes=2)


def test_registered_and_renders():
    env = pettingzoo.make("aec", "rummy/five_hundred_rum-v1", num_players=3, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "player_2" in text and "discard pile" in text


@pytest.mark.parametrize(
    "options,match",
    [
        ({"num_players": 9}, "num_players"),
        ({"num_players": 8, "num_decks": 1}, "num_decks"),
        ({"rummy_call": "sometimes"}, "rummy_call"),
        ({"going_out": "never"}, "going_out"),
        ({"episode": "match"}, "episode"),
        ({"num_decks": 3}, "num_decks"),
        ({"no_jokers": "yes"}, "no_jokers"),
        ({"target": 0}, "target"),
        ({"jokers": 4}, "jokers"),
    ],
)
def test_bad_options_raise_naming_the_option(options, match):
    with pytest.raises(ValueError, match=match):
        five_hundred_rum_v1.raw_env(**options)


def test_deck_sizes_and_hand_sizes():
    for opts, d, h in [
        ({}, 54, 13),
        ({"num_players": 4}, 54, 7),
        ({"num_players": 5}, 108, 7),
        ({"num_players": 5, "num_decks": 1}, 54, 7),
        ({"no_jokers": True}, 52, 13),
        ({"num_players": 6, "no_jokers": True}, 104, 7),
    ]:
        env = five_hundred_rum_v1.raw_env(**opts)
        env.reset(seed=0)
        rec = env.state_record
        assert env.config.deck_size == d and env.config.hand_size == h
        assert all(int(rec["hands"][q].sum()) == h for q in range(env.config.num_players))
        stock = d - int(rec["deck_pos"])
        assert stock == d - h * env.config.num_players - 1 and int(rec["pile_n"]) == 1


@pytest.mark.parametrize("options", [{}, {"num_players": 3, "rummy_call": "layoff_only"}])
def test_batch_of_n_equals_n_single_games(options):
    n, seed = 4, 77
    venv = rummy_env.make_vec("five_hundred_rum", n, seed=seed, **options)
    obs, info = venv.reset()
    envs = [five_hundred_rum_v1.raw_env(**options) for _ in range(n)]
    for i, e in enumerate(envs):
        e.reset(seed=seed + i)
    rngs = [np.random.default_rng(i) for i in range(n)]
    finished = 0
    for _ in range(250):
        actions = np.empty(n, np.int64)
        for i, e in enumerate(envs):
            o = e.observe(e.agent_selection)
            assert info["current_player"][i] == e.possible_agents.index(e.agent_selection)
            assert np.array_equal(o["observation"], obs["observation"][i])
            assert np.array_equal(o["action_mask"], obs["action_mask"][i])
            actions[i] = int(rngs[i].choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, term, trunc, info = venv.step(actions)
        for i, e in enumerate(envs):
            agent = e.agent_selection
            e.step(int(actions[i]))
            assert [e.rewards[a] for a in e.possible_agents] == list(rewards[i])
            assert e.terminations[agent] == bool(term[i])
            if term[i] or trunc[i]:
                finished += 1
                e.reset()
    assert finished >= 1


def test_the_vector_step_runs_the_faster_kernel():
    calls = []

    def slow(*args):
        time.sleep(0.005)
        calls.append("slow")

    def fast(*args):
        calls.append("fast")

    step = FastestStep([slow, fast], period=10, trials=2)
    for _ in range(20):
        step()
    # timed trials of each, in pairs (first calls untimed), then the faster one until the
    # next trial
    assert calls[:10] == ["slow", "slow", "fast", "fast"] + ["fast"] * 6
    assert calls[10:] == calls[:10]
    calls.clear()
    step = FastestStep([fast, slow], period=10, trials=2)
    for _ in range(10):
        step()
    assert calls == ["fast", "fast", "slow", "slow"] + ["fast"] * 6


def test_the_vector_step_warms_up_the_first_kernel_before_its_first_trial():
    calls = []

    def threaded(*args):
        calls.append("threaded")

    def serial(*args):
        time.sleep(0.005)
        calls.append("serial")

    step = FastestStep([threaded, serial], period=10, trials=2, warmup=3)
    for _ in range(23):
        step()
    # three untimed calls of the first kernel, then the trials and periods as without warmup
    assert calls[:3] == ["threaded"] * 3
    assert calls[3:13] == ["threaded", "threaded", "serial", "serial"] + ["threaded"] * 6
    assert calls[13:] == calls[3:13]


def test_the_vector_step_trial_is_not_fooled_by_calls_alternating_cheap_and_dear():
    """A learner env's calls alternate cheap and dear; the trial's ABBA pairs give each kernel
    as many of both, so the kernel slower on every call is not chosen (timing the kernels in
    turns, call by call, gave the slower one every cheap call).
    """
    calls = []
    n = [0]

    def work(extra: float) -> None:
        n[0] += 1
        time.sleep(0.012 * (n[0] % 2) + extra)

    def faster(*args):
        work(0.0)
        calls.append("faster")

    def slower(*args):
        work(0.004)
        calls.append("slower")

    step = FastestStep([faster, slower], period=100, trials=6)
    for _ in range(16):
        step()
    assert calls[:12] == ["faster"] * 2 + ["slower"] * 4 + ["faster"] * 4 + ["slower"] * 2
    assert step.best == 0
    assert calls[12:] == ["faster"] * 4


def test_threaded_and_serial_steps_agree():
    """A batch large enough to be stepped with threads plays exactly as with the serial kernel."""
    n = 256
    venvs = [rummy_env.make_vec("five_hundred_rum", n, seed=9, num_players=3) for _ in range(2)]
    kernels = venvs[0].game.kernels
    assert isinstance(venvs[0].game._step, FastestStep)
    venvs[0].game._step = kernels.step_batch_parallel
    venvs[1].game._step = kernels.step_batch
    obs = [v.reset()[0] for v in venvs]
    rng = np.random.default_rng(9)
    for _ in range(200):
        mask = obs[0]["action_mask"]
        actions = (rng.random(mask.shape) * mask).argmax(1)
        out = [v.step(actions) for v in venvs]
        obs = [o[0] for o in out]
        assert np.array_equal(obs[0]["observation"], obs[1]["observation"])
        assert np.array_equal(obs[0]["action_mask"], obs[1]["action_mask"])
        assert np.array_equal(out[0][1], out[1][1])
    assert venvs[0].game.states.tobytes() == venvs[1].game.states.tobytes()
