"""Contract checker for rummy_env environments (in the spirit of ``pgx.api_test``).

``check_aec_env(env_fn)`` runs PettingZoo's ``api_test`` and ``seed_test`` and then the
contract of this suite on top: observations are fresh arrays inside their space, only the agent
to act has a non-zero mask, every masked action is accepted and every unmasked one is rejected by
the raw env with a ``ValueError``, and episodes end.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from pettingzoo.test import api_test, seed_test

from rummy_env.core.validate import ArgumentTypeError, _show, check_int


def _rejects_unmasked(raw: Any, mask: np.ndarray, rng: np.random.Generator, k: int = 3) -> None:
    """A few unmasked actions must raise ``ValueError`` and leave the game unchanged."""
    illegal = np.flatnonzero(mask == 0)
    if illegal.size == 0:
        return
    before = raw.game.states.copy()
    for a in rng.choice(illegal, size=min(k, illegal.size), replace=False):
        try:
            raw.step(int(a))
        except ValueError:
            pass
        else:  # pragma: no cover - a contract violation
            raise AssertionError(f"unmasked action {int(a)} was accepted")
        assert np.array_equal(before, raw.game.states), "a rejected action changed the state"


def check_aec_env(
    env_fn: Callable[..., Any], num_cycles: int = 300, episodes: int = 3, seed: int = 0
) -> None:
    """Check an env factory (``env()`` with wrappers) against PettingZoo's and our contract.

    Args:
        env_fn: a callable that returns a new env (an AEC env, wrappers included).
        num_cycles: cycles PettingZoo's ``api_test`` and ``seed_test`` play (an integer >= 1).
        episodes: episodes played on top with random legal actions (an integer >= 0).
        seed: seed of the first of those episodes (the next ones: ``seed + 1``, ...) and of
            the actions drawn (an integer >= 0).

    Raises:
        TypeError: (``ArgumentTypeError``) for an ``env_fn`` that is not callable or a count or
            seed that is not an integer (checked before ``env_fn`` is called).
        ValueError: for a count or seed out of range.
        AssertionError: on the first violation.
    """
    if not callable(env_fn):
        raise ArgumentTypeError(
            f"env_fn must be a callable that returns a new env, got {_show(env_fn)}"
        )
    num_cycles = check_int("num_cycles", num_cycles, 1)
    episodes = check_int("episodes", episodes, 0)
    seed = check_int("seed", seed, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env_fn(), num_cycles=num_cycles)
        seed_test(env_fn, num_cycles=num_cycles)
    env = env_fn()
    raw = env.unwrapped
    rng = np.random.default_rng(seed)
    for ep in range(episodes):
        env.reset(seed=seed + ep)
        steps = 0
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            space = env.observation_space(agent)
            assert space.contains(obs), f"observation of {agent} is outside its space"
            again = env.observe(agent)
            assert again["observation"] is not obs["observation"], "arrays must be fresh"
            for other in env.agents:
                if other != agent:
                    assert not env.observe(other)["action_mask"].any(), "idle agent has a mask"
            if term or trunc:
                env.step(None)
                continue
            mask = obs["action_mask"]
            assert mask.any(), f"{agent} must act but has no legal action"
            if steps % 7 == 0:
                _rejects_unmasked(raw, mask, rng)
            env.step(int(rng.choice(np.flatnonzero(mask))))
            steps += 1
            assert steps < 100_000, "episode did not end"
    copy.deepcopy(raw.config)  # configs are plain frozen dataclasses
