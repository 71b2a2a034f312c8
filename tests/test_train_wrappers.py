"""Training wrappers: check_env, masks, opponents, the SB3 vectorised form, features."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import rummy_env
from rummy_agents import RandomAgent, agent_spec
from rummy_agents.features import FeatureSet, add_features, feature_size
from rummy_agents.gin_rummy_rules import deadwood_per_discard, hand_deadwood, mask_of
from rummy_env.wrappers import RummySingleAgentEnv


@pytest.mark.parametrize(
    ("game", "kwargs"),
    [
        (
            "gin_rummy",
            {
                "opponents": agent_spec("simple"),
                "features": FeatureSet("gin_rummy", "gin_deadwood"),
            },
        ),
        ("gin_rummy", {"opponents": None, "reward": "normalized"}),
        ("five_hundred_rum", {"opponents": agent_spec("random")}),
        ("rummy51", {"opponents": lambda obs, view: int(obs["action_mask"].argmax())}),
    ],
)
def test_check_env(game: str, kwargs: dict) -> None:
    env = RummySingleAgentEnv(game, **kwargs)
    check_env(env, skip_render_check=True)


def test_episode_learner_only_acts_on_its_turn_and_rewards_follow_the_hand() -> None:
    env = RummySingleAgentEnv("gin_rummy", opponents=agent_spec("simple"), learner_seat=1)
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
    a = RummySingleAgentEnv("gin_rummy", opponents=agent_spec("simple"))
    b = RummySingleAgentEnv("gin_rummy", opponents=agent_spec("simple"))
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


@pytest.mark.parametrize("players", [2, 3, 4])
def test_gin_relative_deadwood_matches_rule_helpers(players: int) -> None:
    """``gin_deadwood_relative``: per card, (deadwood after discarding it - the best discard's) /
    10, capped at 1 (1 where it cannot be discarded; a 10-card hand: after taking the top
    discard, which it cannot discard), so the best discards read exactly 0; at the top discard
    of a 10-card hand what taking it gains in points / 10, within [-1, 1]. The first entries of
    the set are ``gin_deadwood``'s, byte for byte."""
    fs = FeatureSet("gin_rummy", "gin_deadwood_relative", {"num_players": players})
    plain = FeatureSet("gin_rummy", "gin_deadwood", {"num_players": players})
    venv = rummy_env.make_vec("gin_rummy", 48, seed=11, num_players=players)
    obs, _ = venv.reset()
    rng = np.random.default_rng(1)
    o_top = fs.card_layout()[0][1]  # the observation's discard_top plane
    seen = {10: 0, 11: 0}
    for _ in range(40):
        x = fs(obs["observation"])
        np.testing.assert_array_equal(
            x[:, : plain.obs_size + plain.size], plain(obs["observation"])
        )
        for i in range(x.shape[0]):
            o = obs["observation"][i]
            hand = mask_of(o[:52])
            n = bin(hand).count("1")
            rel = x[i, fs.offset("gin_deadwood_relative") :]
            assert rel.shape == (104,) and (rel[:52] >= 0).all() and (rel[:52] <= 1).all()
            want = np.ones(52, np.float32)
            take = np.zeros(52, np.float32)
            tops = np.flatnonzero(o[o_top : o_top + 52] > 0.5)
            if n == 11:
                dw = deadwood_per_discard(hand)
                held = [c for c in range(52) if hand >> c & 1]
                best = min(dw[c] for c in held)
                for c in held:
                    want[c] = min(dw[c] - best, 10) / 10
            elif n == 10 and tops.size and not hand >> int(tops[0]) & 1:
                top = int(tops[0])
                dw = deadwood_per_discard(hand | 1 << top)
                held = [c for c in range(52) if hand >> c & 1]
                best = min(dw[c] for c in held)
                for c in held:
                    want[c] = min(dw[c] - best, 10) / 10
                take[top] = np.clip((hand_deadwood(hand) - best) / 10, -1, 1)
            seen[n] = seen.get(n, 0) + 1
            np.testing.assert_allclose(rel[:52], want, atol=1e-6)
            np.testing.assert_allclose(rel[52:], take, atol=1e-6)
        acts = (rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(1)
        obs, *_ = venv.step(acts)
    assert seen[10] > 100 and seen[11] > 100


def test_sb3_vec_env_and_maskable_ppo_smoke(tmp_path) -> None:
    pytest.importorskip("torch")
    sb3c = pytest.importorskip("sb3_contrib")
    from rummy_env.wrappers import make_sb3_vec_env

    feats = FeatureSet("gin_rummy", "gin_deadwood")
    venv = make_sb3_vec_env("gin_rummy", 4, seed=0, opponents=None, features=feats)
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (4, 107) and masks.any(axis=1).all()
    model = sb3c.MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    assert model.num_timesteps >= 256


@pytest.mark.parametrize("bad", ["simple", 3, ["random"]])
def test_opponents_by_name_are_refused_with_the_agents_side_hint(bad) -> None:
    with pytest.raises(TypeError, match="opponents"):
        RummySingleAgentEnv("gin_rummy", opponents=bad)
    if isinstance(bad, str):
        with pytest.raises(TypeError, match=r"agent_spec\('simple'\)"):
            RummySingleAgentEnv("gin_rummy", opponents=bad)


def test_features_must_be_a_feature_set() -> None:
    with pytest.raises(TypeError, match="features"):
        RummySingleAgentEnv("gin_rummy", features="gin_deadwood")


def test_agent_factory_opponents_are_reseeded_every_reset() -> None:
    env = RummySingleAgentEnv("gin_rummy", opponents=agent_spec("novice"), learner_seat=0)
    first = [env.reset(seed=s)[0] for s in (1, 2)]
    again = [env.reset(seed=s)[0] for s in (1, 2)]
    for x, y in zip(first, again, strict=True):
        np.testing.assert_array_equal(x, y)


def test_agent_objects_are_used_as_given() -> None:
    opp = RandomAgent(seed=0)
    env = RummySingleAgentEnv("five_hundred_rum", opponents=opp, learner_seat=1)
    env.reset(seed=0)
    assert env._opponents["player_0"] is opp
