"""Training wrappers: check_env, masks, opponents, the SB3 vectorised form, features."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import rummy_env
from rummy_agents.gin_rules import deadwood_per_discard, hand_deadwood, mask_of
from rummy_env.wrappers import RummySingleAgentEnv, add_features, feature_size


@pytest.mark.parametrize(
    ("game", "kwargs"),
    [
        ("gin_rummy", {"opponents": "simple", "features": "gin_deadwood"}),
        ("gin_rummy", {"opponents": "random", "reward": "normalized"}),
        ("five_hundred_rum", {"opponents": "random"}),
    ],
)
def test_check_env(game: str, kwargs: dict) -> None:
    env = RummySingleAgentEnv(game, **kwargs)
    check_env(env, skip_render_check=True)


def test_episode_learner_only_acts_on_its_turn_and_rewards_follow_the_hand() -> None:
    env = RummySingleAgentEnv("gin_rummy", opponents="simple", learner_seat=1)
    rng = np.random.default_rng(0)
    for ep in range(5):
        obs, info = env.reset(seed=ep)
        assert info["learner_seat"] == 1
        total, done, steps = 0.0, False, 0
        while not done:
            mask = env.action_masks()
            assert mask.any() and env.aec.agent_selection == "player_1"
            obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert not info["illegal_action"]
            assert r == 0.0 or term or trunc  # Gin pays only when the hand ends
            total += r
            done = term or trunc
            steps += 1
        assert steps > 0 and not env.action_masks().any()
        # zero-sum hand: the learner's total is minus what the opponent's seat received
        assert total == -env.aec.rewards["player_0"]
        with pytest.raises(RuntimeError):
            env.step(0)


def test_seeded_reset_replays_and_illegal_action_policy() -> None:
    a = RummySingleAgentEnv("gin_rummy", opponents="simple")
    b = RummySingleAgentEnv("gin_rummy", opponents="simple")
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset(seed=7)
    np.testing.assert_array_equal(oa, ob)
    illegal = int(np.flatnonzero(~a.action_masks())[0])
    _, _, _, _, info = a.step(illegal)
    assert info["illegal_action"]
    strict = RummySingleAgentEnv("gin_rummy", illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError):
        strict.step(int(np.flatnonzero(~strict.action_masks())[0]))


def test_gin_deadwood_features_match_rule_helpers() -> None:
    venv = rummy_env.make_vec("gin_rummy", 64, seed=3)
    obs, _ = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(12):  # reach draw and discard phases
        x = add_features("gin_deadwood", obs["observation"])
        assert x.shape == (64, 225 + feature_size("gin_deadwood"))
        for i in range(64):
            hand = mask_of(obs["observation"][i, :52])
            n = bin(hand).count("1")
            f = x[i, 225:]
            if n == 11:
                dw = deadwood_per_discard(hand)
                for c in range(52):
                    want = min(dw[c], 100) / 100 if hand >> c & 1 else 1.0
                    assert f[c] == pytest.approx(want)
            elif n == 10:
                assert f[52] == pytest.approx(min(hand_deadwood(hand), 100) / 100)
        acts = (rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(1)
        obs, *_ = venv.step(acts)


def test_sb3_vec_env_and_maskable_ppo_smoke(tmp_path) -> None:
    pytest.importorskip("torch")
    sb3c = pytest.importorskip("sb3_contrib")
    from rummy_env.wrappers import make_sb3_vec_env

    venv = make_sb3_vec_env("gin_rummy", 4, seed=0, opponents="random", features="gin_deadwood")
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (4, 107) and masks.any(axis=1).all()
    model = sb3c.MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    assert model.num_timesteps >= 256
