"""Every observation lies inside its declared space (AEC and vector), in random games of every
game over random rule configurations: the bounds of each named piece are the true ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_env import five_hundred_rum_v1, gin_rummy_v0, rummy51_v1

GIN = st.fixed_dictionaries(
    {},
    optional={
        "oklahoma": st.booleans(),
        "auto_meld": st.booleans(),
        "episode": st.sampled_from(["hand", "match"]),
        "target": st.sampled_from([10, 50, 100]),
        "reward": st.sampled_from(["raw", "normalized"]),
        "fiftieth_card_action": st.booleans(),
        "knock_limit": st.sampled_from([0, 10, 100]),
        "num_players": st.sampled_from([2, 3, 4]),
    },
)
# player counts whose state layouts the rest of the suite compiles too (each count is a numba
# specialisation, about 40 s to compile in a fresh clone); both deck sizes among them
FIVE_HUNDRED = st.fixed_dictionaries(
    {"num_players": st.sampled_from([2, 3, 4, 5, 8])},
    optional={
        "no_jokers": st.booleans(),
        "values_5_10_15": st.booleans(),
        "rummy_call": st.sampled_from(["full", "layoff_only", "none"]),
        "going_out": st.sampled_from(["any", "discard_required", "floating", "unplayable_discard"]),
        "episode": st.just("game"),
        "target": st.sampled_from([50, 150, 500]),
        "reward": st.sampled_from(["raw", "normalized"]),
        "must_meld_discard": st.booleans(),
    },
)
RUMMY51 = st.fixed_dictionaries(
    {"num_players": st.sampled_from([2, 3, 4, 6])},
    optional={
        "episode": st.sampled_from(["hand", "match"]),
        "elimination": st.sampled_from([30, 101]),
        "opening_threshold": st.sampled_from([0, 20, 51]),
        "max_reshuffles": st.integers(0, 3),
        "reward": st.sampled_from(["penalty", "zero_sum", "normalized"]),
    },
)
GAMES = {
    "gin_rummy": (gin_rummy_v0, GIN),
    "five_hundred_rum": (five_hundred_rum_v1, FIVE_HUNDRED),
    "rummy51": (rummy51_v1, RUMMY51),
}


def _outside(space, obs: np.ndarray) -> str:
    low, high = space.low, space.high
    bad = np.flatnonzero((obs < low) | (obs > high))
    return f"{bad.size} values outside, e.g. index {bad[:5]}: {obs[bad[:5]]}"


def play_vector(name: str, options: dict, num_envs: int, steps: int, seed: int) -> int:
    """Random legal play in the vector env; every observation checked. Returns rows checked."""
    venv = rummy_env.make_vec(name, num_envs, seed=seed, **options)
    space = venv.single_observation_space
    obs, _ = venv.reset()
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(steps):
        assert venv.observation_space.contains(obs)
        for i in range(num_envs):
            row = {"observation": obs["observation"][i], "action_mask": obs["action_mask"][i]}
            assert space.contains(row), _outside(space["observation"], row["observation"])
        checked += num_envs
        masks = obs["action_mask"]
        actions = (rng.random(masks.shape) * masks).argmax(1)
        obs, _, term, trunc, info = venv.step(actions)
        for i in np.flatnonzero(term | trunc):
            for row in info["final_observation"][i]:
                assert space["observation"].contains(row), _outside(space["observation"], row)
    return checked


def play_aec(module, options: dict, seed: int, max_steps: int = 1500) -> int:
    """A random AEC episode; every agent's observation checked at every step."""
    env = module.raw_env(**options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(max_steps):
        for agent in env.agents:
            obs = env.observe(agent)
            space = env.observation_space(agent)
            assert space.contains(obs), _outside(space["observation"], obs["observation"])
            checked += 1
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    return checked


@pytest.mark.parametrize("name", list(GAMES))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_observations_stay_inside_their_spaces(name, data, seed):
    module, options_st = GAMES[name]
    options = data.draw(options_st)
    assert play_vector(name, options, 16, 200, seed) > 0
    assert play_aec(module, options, seed) > 0


def test_500_rum_game_scores_below_zero_are_inside_the_space():
    """The review's case: negative 500 Rum game totals (random play) within the space."""
    venv = rummy_env.make_vec("five_hundred_rum", 256, seed=0, episode="game", target=150)
    lay = venv.game.layout
    scores = lay.offset("scores")
    obs, _ = venv.reset()
    rng = np.random.default_rng(0)
    lowest = 0.0
    for _ in range(300):
        assert venv.observation_space.contains(obs)
        lowest = min(lowest, float(obs["observation"][:, scores].min()))
        masks = obs["action_mask"]
        obs, *_ = venv.step((rng.random(masks.shape) * masks).argmax(1))
    assert lowest < 0
