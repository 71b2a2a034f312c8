"""The vector env's reused step buffers (observations, final observations, the masks of
``info`` and ``action_masks()``): a step takes one back only when nothing the user holds
references it, and hands out exactly what fresh arrays would hold (hypothesis over what the
user keeps from each step and how often it asks for the masks).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rummy_env  # noqa: F401 - registers the ids
from rummy_env.wrappers import single_agent_vec

IDS = ["rummy/GinRummy-v0", "rummy/FiveHundredRum-v1", "rummy/Rummy51-v1"]
KEEP = ["nothing", "obs", "info", "row", "final", "all", "masks"]


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def _kept(keep: str, obs: np.ndarray, info: dict, asked: list[np.ndarray]) -> list:
    """What a user keeps of a step: the arrays themselves, not copies."""
    if keep == "masks":
        return asked
    if keep == "obs":
        return [obs]
    if keep == "info":
        return [info]
    if keep == "row":
        return [obs[0]]  # a view holds its base
    if keep == "final":
        return [info["final_obs"]] if "final_obs" in info else []
    if keep == "all":
        return [obs, info]
    return []


def _snapshot(obj) -> list[np.ndarray]:
    if isinstance(obj, dict):
        return [np.array(v, copy=True) for v in obj.values() if isinstance(v, np.ndarray)]
    return [np.array(obj, copy=True)]


def _play(
    gym_id: str, n: int, seed: int, keeps: list[str], asks: list[int] | None = None
) -> list[tuple]:
    """Every step's returns (copied) of a seeded run keeping ``keeps[t]`` of step ``t`` and
    asking ``action_masks()`` ``asks[t]`` times after it (each answer kept with "masks");
    checks that nothing kept changed by the end and that the masks a step hands out are the
    live ones, each its own array.
    """
    venv = gym.make_vec(gym_id, num_envs=n)
    rng = np.random.default_rng(seed)
    obs, info = venv.reset(seed=seed)
    out, held = [], []
    for t, keep in enumerate(keeps):
        obs, rew, term, trunc, info = venv.step(random_legal(info["action_mask"], rng))
        asked = [venv.unwrapped.action_masks() for _ in range((asks or [0] * len(keeps))[t])]
        live = venv.unwrapped.game.masks[:, : venv.unwrapped.num_actions] == 1
        handed = [info["action_mask"], *asked]
        assert len({id(m) for m in handed}) == len(handed)  # each its own array
        for m in handed:
            assert m.dtype == np.bool_ and m.flags.owndata
            np.testing.assert_array_equal(m, live)
        out.append(
            (obs.copy(), rew.copy(), term.copy(), trunc.copy())
            + tuple(np.array(v, copy=True) for v in info.values() if isinstance(v, np.ndarray))
            + (info["final_obs"].copy() if "final_obs" in info else None,)
            + tuple(m.copy() for m in asked)
        )
        for obj in _kept(keep, obs, info, asked):
            held.append((obj, _snapshot(obj)))
    for obj, then in held:
        for now, was in zip(_snapshot(obj), then, strict=True):
            np.testing.assert_array_equal(now, was)
    venv.close()
    return out


def _same(a: list[tuple], b: list[tuple]) -> None:
    assert len(a) == len(b)
    for step_a, step_b in zip(a, b, strict=True):
        assert len(step_a) == len(step_b)
        for x, y in zip(step_a, step_b, strict=True):
            if x is None or y is None:
                assert x is None and y is None
            else:
                np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("gym_id", IDS)
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 2**16),
    n=st.sampled_from([1, 2, 5, 12, single_agent_vec.PARALLEL_MIN_BATCH]),
    keeps=st.lists(st.sampled_from(KEEP), min_size=30, max_size=60),
    data=st.data(),
)
def test_reused_buffers_hand_out_what_fresh_arrays_would(gym_id, seed, n, keeps, data, monkeypatch):
    asks = data.draw(st.lists(st.integers(0, 2), min_size=len(keeps), max_size=len(keeps)))
    got = _play(gym_id, n, seed, keeps, asks)
    with monkeypatch.context() as m:
        # every step's arrays new, as before the pools, and every mask a copy when asked
        m.setattr(single_agent_vec, "POOL", 0)
        m.setattr(single_agent_vec, "MASK_POOL", 0)
        env_cls = single_agent_vec.RummySingleAgentVectorEnv
        m.setattr(env_cls, "_step_masks", lambda self: self.action_masks())
        want = _play(gym_id, n, seed, keeps, asks)
    _same(got, want)


def test_a_dropped_step_buffer_is_taken_again_and_a_held_one_never():
    venv = gym.make_vec("rummy/Rummy51-v1", num_envs=8)
    env = venv.unwrapped
    rng = np.random.default_rng(0)
    _, info = venv.reset(seed=0)
    ids = []
    for _ in range(6):  # the user drops each step's returns at once: buffers come back
        ids.append(id(venv.step(random_legal(env.action_masks(), rng))[0]))
    assert len(set(ids)) <= 2  # the env holds the current one; one more suffices
    held = [venv.step(random_legal(env.action_masks(), rng)) for _ in range(5)]
    assert len({id(h[0]) for h in held}) == 5  # every held observation is its own array
    finals = [h[4]["final_obs"] for h in held if "final_obs" in h[4]]
    assert len({id(f) for f in finals}) == len(finals)


@pytest.mark.parametrize("n", [3, single_agent_vec.PARALLEL_MIN_BATCH])
def test_action_masks_after_a_step_or_a_reset_are_the_live_ones(n):
    """The copy a step makes for the next ``action_masks()`` is handed out once, and never
    after a reset changed the masks (nor by a step that raised before its end).
    """
    venv = gym.make_vec("rummy/Rummy51-v1", num_envs=n)
    env = venv.unwrapped
    rng = np.random.default_rng(1)

    def live() -> np.ndarray:
        return env.game.masks[:, : env.num_actions] == 1

    _, info = venv.reset(seed=1)
    for seed in range(3):
        _, _, _, _, info = venv.step(random_legal(env.action_masks(), rng))
        first, second = env.action_masks(), env.action_masks()
        assert first is not second and first is not info["action_mask"]
        np.testing.assert_array_equal(first, live())
        np.testing.assert_array_equal(second, live())
        venv.step(random_legal(first, rng))
        _, info = venv.reset(seed=100 + seed)  # new deals: the step's copy is stale
        np.testing.assert_array_equal(info["action_mask"], live())
        np.testing.assert_array_equal(env.action_masks(), live())
        venv.step(random_legal(live(), rng))
        with pytest.raises(ValueError):
            venv.step(np.zeros(n + 1, np.int64))  # refused before anything changed
        np.testing.assert_array_equal(env.action_masks(), live())
    venv.close()
