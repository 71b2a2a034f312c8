"""Info keys are the ones each env docstring documents, and spelled alike across games."""

from __future__ import annotations

import re

import numpy as np
import pytest

import rummy_env

CASES = [
    ("gin_rummy", {}),
    ("gin_rummy", {"episode": "match", "target": 40}),
    ("gin_rummy", {"num_players": 3, "episode": "match", "target": 20}),
    ("gin_rummy", {"num_players": 4}),
    ("five_hundred_rum", {"num_players": 3}),
    ("five_hundred_rum", {"episode": "game", "target": 100}),
    ("rummy51", {}),
    ("rummy51", {"episode": "match", "num_players": 3}),
]


def _section(game: str) -> str:
    doc = rummy_env.ENV_MODULES[game].__doc__ or ""
    body = doc.split("## Infos", 1)[1]
    return body.split("\n## ", 1)[0]


def documented_aec_keys(game: str) -> set[str]:
    return set(re.findall(r"^\| ``(\w+)``", _section(game), re.M))


def documented_vector_keys(game: str) -> set[str]:
    para = _section(game).split("Vector env", 1)[1]
    return set(re.findall(r"``(\w+)``", para))


@pytest.mark.parametrize(("game", "options"), CASES)
def test_aec_info_keys_are_documented(game, options):
    env = rummy_env.ENV_MODULES[game].env(**options)
    rng = np.random.default_rng(0)
    seen: set[str] = set()
    for seed in range(3):
        env.reset(seed=seed)
        for _agent in env.agent_iter(5000):
            obs, _, term, trunc, info = env.last()
            seen |= set(info)
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    documented = documented_aec_keys(game)
    assert seen <= documented, f"undocumented info keys: {seen - documented}"
    always = {"outcome", "hands_played"}
    assert always <= seen


def test_every_documented_aec_key_is_produced():
    produced: dict[str, set[str]] = {}
    for game, options in CASES:
        env = rummy_env.ENV_MODULES[game].env(**options)
        rng = np.random.default_rng(1)
        env.reset(seed=0)
        for _agent in env.agent_iter(20000):
            obs, _, term, trunc, info = env.last()
            produced.setdefault(game, set()).update(info)
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    for game in rummy_env.ENV_MODULES:
        assert documented_aec_keys(game) == produced[game], game


@pytest.mark.parametrize(("game", "options"), CASES[::2])
def test_vector_info_keys_are_documented(game, options):
    venv = rummy_env.make_vec(game, 8, seed=0, **options)
    _, info = venv.reset(seed=0)
    seen = set(info)
    rng = np.random.default_rng(0)
    for _ in range(400):
        masks = venv.action_masks()
        _, _, _, _, info = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        seen |= set(info)
    assert "_final_observation" in seen
    seen.discard("_final_observation")
    documented = documented_vector_keys(game)
    assert seen <= documented, f"undocumented vector info keys: {seen - documented}"


def test_shared_keys_are_spelled_alike():
    keys = {g: documented_aec_keys(g) for g in rummy_env.ENV_MODULES}
    shared = set.intersection(*keys.values())
    assert {"outcome", "hands_played"} <= shared
    # no game spells a shared meaning its own way
    spellings = {"hand_pts", "hand_pen", "hands", "result", "scores", "penalties"}
    assert not any(spellings & k for k in keys.values())
    vec = {g: documented_vector_keys(g) for g in rummy_env.ENV_MODULES}
    assert {"current_player", "final_observation", "outcome", "episode_length"} <= set.intersection(
        *vec.values()
    )
