"""The framework integrations: the RLlib multi-agent env (rummy_agents.integrations.rllib), the
Tianshou wrapper, the framework-free evaluation, and the examples in examples/ (each run in its
``--smoke`` mode in a subprocess).

Each test needing a framework is skipped, with the extra to install, when it is missing:
``pip install -c constraints.txt -e ".[rllib]"`` (ray[rllib]), ``".[tianshou]"``, ``".[train]"``
(sb3-contrib).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from eval_line import EVAL_LINE

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SMOKE_TIMEOUT = 900  # seconds: a cold numba cache compiles the game's kernels first

RLLIB_REASON = "needs Ray RLlib: pip install -c constraints.txt -e '.[rllib]'"
TIANSHOU_REASON = "needs Tianshou: pip install -c constraints.txt -e '.[tianshou]'"
SB3_REASON = "needs sb3-contrib: pip install -c constraints.txt -e '.[train]'"


def _run(args: list[str], timeout: float = SMOKE_TIMEOUT) -> subprocess.CompletedProcess:
    """Run Python in a subprocess with this checkout first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("RAY_ADDRESS", None)  # the smoke runs on a local Ray instance, never a cluster
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )


SMOKE_EPISODES = 20  # the evaluation episodes of --smoke
SMOKE_SETTING = "gin_rummy knock_limit=30 reward=normalized"  # the examples' default game


def _check_smoke(proc: subprocess.CompletedProcess, labels: list[str]) -> None:
    """The example ran, and printed one evaluation line per label (in order) whose counts add
    up to the episodes played, against uniformly random play in the default setting.
    """
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    lines = list(EVAL_LINE.finditer(proc.stdout))
    assert [m["label"] for m in lines] == labels, proc.stdout
    for m in lines:
        episodes = int(m["episodes"])
        counts = [int(m[k] or 0) for k in ("wins", "losses", "draws", "truncated")]
        assert episodes == SMOKE_EPISODES and sum(counts) == episodes, m.group(0)
        assert m["truncated"] is None  # no max_steps: no episode is cut
        assert float(m["rate"]) == pytest.approx(100 * counts[0] / episodes, abs=0.051)
        assert m["opponent"] == "random" and m["setting"] == SMOKE_SETTING, m.group(0)
        assert -1.0 <= float(m["mean"]) <= 1.0  # normalized rewards


# -- the examples ---------------------------------------------------------------------------------


def test_rllib_example_smoke():
    pytest.importorskip("ray.rllib", reason=RLLIB_REASON)
    pytest.importorskip("torch", reason=RLLIB_REASON)
    _check_smoke(
        _run([str(EXAMPLES / "rllib_ppo_masked.py"), "--smoke"]),
        ["shared before training", "shared after training"],
    )


def test_tianshou_example_smoke():
    pytest.importorskip("tianshou", reason=TIANSHOU_REASON)
    _check_smoke(
        _run([str(EXAMPLES / "tianshou_dqn_masked.py"), "--smoke"]),
        ["before training", "after training"],
    )


def test_sb3_example_smoke():
    pytest.importorskip("sb3_contrib", reason=SB3_REASON)
    _check_smoke(
        _run([str(EXAMPLES / "sb3_maskable_ppo.py"), "--smoke"]),
        ["before training", "after training"],
    )


def test_rllib_module_without_ray_names_the_extra():
    code = (
        "import sys\n"
        "sys.modules['ray'] = None  # as if Ray were not installed\n"
        "try:\n"
        "    import rummy_agents.integrations.rllib\n"
        "except ImportError as exc:\n"
        "    print('IMPORT ERROR:', exc)\n"
        "import rummy_agents, rummy_agents.integrations, rummy_env\n"
        "print('ray' in sys.modules and sys.modules['ray'] is not None)\n"
    )
    proc = _run(["-c", code], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "IMPORT ERROR:" in proc.stdout, proc.stdout
    assert "rummy_env[rllib]" in proc.stdout and "ray[rllib]" in proc.stdout, proc.stdout
    assert proc.stdout.strip().endswith("False")  # the other modules never import ray


# -- the RLlib multi-agent env ------------------------------------------------------------------


@pytest.fixture(scope="module")
def rl():
    pytest.importorskip("ray.rllib", reason=RLLIB_REASON)
    import rummy_agents.integrations.rllib as rl

    return rl


def _play(env, aec, seed: int, rng: np.random.Generator, max_steps: int = 100_000):
    """One episode of uniformly random legal play in the RLlib env and, in lockstep, in a plain
    AEC env of the same game; checks the turn protocol at every step and returns
    (RLlib rewards summed per agent, AEC rewards summed per agent, last step's output).
    """
    obs, infos = env.reset(seed=seed)
    aec.reset(seed=seed)
    assert list(obs) == [aec.agent_selection] and list(infos) == list(obs)
    got = dict.fromkeys(env.possible_agents, 0.0)
    want = dict.fromkeys(env.possible_agents, 0.0)
    for _ in range(max_steps):
        ((agent, o),) = obs.items()  # exactly one agent observes: the one to act
        assert agent == aec.agent_selection
        assert env.observation_spaces[agent].contains(o)
        assert set(o) == {"observations", "action_mask"}
        mask = aec.observe(agent)["action_mask"]
        np.testing.assert_array_equal(o["action_mask"], mask.astype(np.float32))
        np.testing.assert_array_equal(o["observations"], aec.observe(agent)["observation"])
        legal = np.flatnonzero(o["action_mask"])
        assert legal.size > 0
        action = int(rng.choice(legal))
        aec.step(action)
        for a in want:
            want[a] += aec.rewards[a]
        obs, rewards, terms, truncs, infos = env.step({agent: np.int64(action)})
        assert set(rewards) == set(obs) == set(infos) == set(terms) - {"__all__"}
        assert set(truncs) == set(terms)
        for a, r in rewards.items():
            assert isinstance(r, float)
            got[a] += r
        if terms["__all__"] or truncs["__all__"]:
            assert set(obs) == set(env.possible_agents)  # everyone's last observation
            for o in obs.values():
                assert not o["action_mask"].any()
            return got, want, (obs, rewards, terms, truncs, infos)
        assert not any(terms.values()) and not any(truncs.values())
    raise AssertionError("episode did not end")


@pytest.mark.parametrize(
    "config",
    [
        {"game": "gin_rummy"},
        {"game": "gin_rummy", "episode": "match", "target": 50},
        {"game": "gin_rummy", "num_players": 3, "episode": "match", "target": 30},
        {"game": "gin_rummy", "num_players": 4},
        {"game": "five_hundred_rum", "num_players": 3},
        {"game": "rummy51", "num_players": 3},
    ],
    ids=lambda c: "-".join(str(v) for v in c.values()),
)
def test_rllib_env_turns_masks_and_rewards(rl, config):
    from rummy_env import ENV_MODULES

    env = rl.RummyMultiAgentEnv(config)
    options = {k: v for k, v in config.items() if k != "game"}
    aec = ENV_MODULES[config["game"]].raw_env(**options)
    rng = np.random.default_rng(0)
    for seed in range(3):
        got, want, (_, _, terms, truncs, infos) = _play(env, aec, seed, rng)
        assert terms["__all__"] and not truncs["__all__"]
        # each agent's rewards sum to its result in the AEC env
        assert got == pytest.approx(want)
        if config["game"] == "gin_rummy":  # zero-sum
            assert sum(got.values()) == pytest.approx(0.0, abs=1e-9)
        for a in env.possible_agents:
            assert infos[a] == {k: v for k, v in aec.infos[a].items()}
    assert env.num_illegal_actions == 0


def test_rllib_env_gin_hand_rewards_are_the_hand_points(rl):
    env = rl.RummyMultiAgentEnv({"game": "gin_rummy"})
    aec = env.aec.__class__()
    rng = np.random.default_rng(1)
    decided = 0
    for seed in range(12):
        got, _, (_, _, _, _, infos) = _play(env, aec, seed, rng)
        for a in env.possible_agents:
            points = infos[a]["hand_points"]
            other = [b for b in env.possible_agents if b != a][0]
            assert got[a] == points - infos[other]["hand_points"]
        decided += infos["player_0"]["outcome"] != "dead_hand"
    assert decided  # some hand was scored, not only dead hands


def test_rllib_env_truncation_gives_every_agent_a_last_observation(rl):
    env = rl.RummyMultiAgentEnv({"game": "gin_rummy", "max_steps": 5})
    aec = env.aec.__class__(max_steps=5)
    got, want, (obs, _, terms, truncs, _) = _play(env, aec, 0, np.random.default_rng(0))
    assert truncs["__all__"] and not terms["__all__"]
    assert all(truncs[a] and not terms[a] for a in env.possible_agents)
    assert set(obs) == set(env.possible_agents)
    assert got == want
    with pytest.raises(RuntimeError, match="reset"):
        env.step({env.aec.agent_selection: 0})


def test_rllib_env_config_reaches_the_game(rl):
    env = rl.RummyMultiAgentEnv({"game": "gin_rummy", "knock_limit": 5, "gin_bonus": 25})
    assert env.aec.config.knock_limit == 5 and env.aec.config.gin_bonus == 25
    obs, _ = env.reset(seed=0)
    (o,) = obs.values()
    assert o["observations"][210] == pytest.approx(0.5)  # the knock_limit piece: 5 / 10
    env = rl.RummyMultiAgentEnv({"game": "rummy51", "num_players": 4})
    assert env.possible_agents == [f"player_{i}" for i in range(4)]
    assert env.aec.config.num_players == 4
    env = rl.RummyMultiAgentEnv({"game": "gin_rummy", "auto_meld": False})
    assert env.action_spaces["player_0"].n == 569
    assert env.observation_spaces["player_0"]["observations"].shape == (537,)
    # an RLlib EnvContext is a dict with extra attributes
    from ray.rllib.env.env_context import EnvContext

    ctx = EnvContext({"game": "five_hundred_rum", "num_players": 3}, worker_index=2)
    env = rl.env_creator(ctx)
    assert env.game == "five_hundred_rum" and len(env.possible_agents) == 3


@pytest.mark.parametrize(
    "config, match",
    [
        ({"game": "poker"}, r"env_config\['game'\].*poker"),
        ({"knok_limit": 3}, "knok_limit"),
        ({"game": "rummy51", "num_players": 9}, "num_players"),
        ({"knock_limit": "high"}, "knock_limit"),
        ({"illegal_action": "ignore"}, r"env_config\['illegal_action'\]"),
    ],
)
def test_rllib_bad_env_config_raises_naming_the_key(rl, config, match):
    with pytest.raises(ValueError, match=match):
        rl.RummyMultiAgentEnv(config)


def test_rllib_env_config_must_be_a_dict(rl):
    with pytest.raises(TypeError, match="env_config"):
        rl.RummyMultiAgentEnv(["gin_rummy"])


def test_rllib_illegal_actions(rl):
    env = rl.RummyMultiAgentEnv({"game": "gin_rummy"})
    obs, _ = env.reset(seed=0)
    ((agent, o),) = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="action_dict must hold an action for"):
        env.step({"nobody": 0})
    env.step({agent: illegal})  # replaced by a random legal action, counted, flagged
    assert env.num_illegal_actions == 1
    strict = rl.RummyMultiAgentEnv({"game": "gin_rummy", "illegal_action": "raise"})
    obs, _ = strict.reset(seed=0)
    with pytest.raises(ValueError, match="not legal.*action_mask"):
        strict.step({agent: illegal})


def test_rllib_own_env_check_and_registration(rl):
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments
    from ray.tune.registry import ENV_CREATOR, _global_registry

    check_multiagent_environments(rl.RummyMultiAgentEnv({"game": "rummy51"}))
    assert rl.ENV_NAME == "rummy_env"
    creator = _global_registry.get(ENV_CREATOR, rl.ENV_NAME)
    env = creator({"game": "gin_rummy", "oklahoma": True})
    assert isinstance(env, rl.RummyMultiAgentEnv) and env.aec.config.oklahoma


def test_rllib_masking_module_reads_the_observations(rl):
    """RLlib's ActionMaskingTorchRLModule builds on this env's spaces and never picks an
    illegal action (the ``KeyError: 'observations'`` of PettingZooEnv does not happen).
    """
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    env = rl.RummyMultiAgentEnv({"game": "gin_rummy"})
    spec = RLModuleSpec(
        module_class=rl.action_masking_module_class(),
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"fcnet_hiddens": [16]},
    )
    module = spec.build()
    policy = rl.RLModulePolicy(module)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    for _ in range(50):
        ((agent, o),) = obs.items()
        batch = {
            "obs": {k: torch.as_tensor(np.repeat(v[None], 64, 0)) for k, v in o.items()},
        }
        out = module.forward_exploration(batch)
        dist = module.get_exploration_action_dist_cls().from_logits(out["action_dist_inputs"])
        sampled = dist.sample().numpy()
        assert o["action_mask"][sampled].all()
        action = policy(o["observations"], o["action_mask"])
        assert o["action_mask"][action] == 1
        obs, _, terms, truncs, _ = env.step({agent: int(rng.choice(sampled))})
        if terms["__all__"] or truncs["__all__"]:
            obs, _ = env.reset()


# -- Tianshou wrapper and the framework-free evaluation ------------------------------------------


def test_tianshou_wrapper_puts_the_mask_in_the_observation():
    from rummy_agents.integrations.tianshou import TianshouMaskedEnv, make_env

    env = make_env("gin_rummy", reward="normalized")
    obs, info = env.reset(seed=0)
    assert set(obs) == {"obs", "mask"} and env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs["mask"], env.unwrapped.action_masks())
    rng = np.random.default_rng(0)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
        assert set(info) == {"learner_seat", "illegal_action"}  # same keys every step
        done = terminated or truncated
    with pytest.raises(TypeError, match="action_masks"):
        import gymnasium as gym

        TianshouMaskedEnv(gym.make("CartPole-v1"))


def test_evaluate_a_masked_policy():
    from rummy_agents.integrations import evaluate

    calls = []

    def first_legal(observation, mask):
        calls.append(observation.shape)
        return int(np.flatnonzero(mask)[0])

    result = evaluate(first_legal, "rummy51", None, episodes=3, seed=0, num_players=3)
    assert result["episodes"] == 3 and calls
    assert 0 <= result["win_rate"] <= 1 and 0 <= result["loss_rate"] <= 1
    counts = [result[k] for k in ("wins", "losses", "draws", "truncated")]
    assert sum(counts) == 3 and min(counts) >= 0  # each episode once
    assert result["win_rate"] == result["wins"] / 3 and result["loss_rate"] == result["losses"] / 3
    again = evaluate(first_legal, "rummy51", None, episodes=3, seed=0, num_players=3)
    assert again == result  # seeded
