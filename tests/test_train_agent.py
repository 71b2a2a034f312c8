"""The PPO checkpoint agent: save/reload, masked play, batched play, arena registration."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import rummy_env  # noqa: E402
from rummy_agents.arena.play import make_env, play_game  # noqa: E402
from rummy_agents.arena.registry import make_agent  # noqa: E402
from rummy_agents.features import card_layout, feature_size  # noqa: E402
from rummy_agents.ppo_agent import PPOAgent  # noqa: E402
from rummy_agents.ppo_net import MaskedActorCritic, build_checkpoint, load_network  # noqa: E402


def _checkpoint(
    path, game: str = "gin_rummy", features: str = "gin_deadwood", seed: int = 0, cards=False
):
    venv = rummy_env.make_vec(game, 1)
    raw = venv.single_observation_space["observation"].shape[0]
    o = raw + feature_size(features)
    a = venv.single_action_space.n
    torch.manual_seed(seed)
    planes, blocks, select = card_layout(game, features, raw) if cards else ([], [], [])
    net = MaskedActorCritic(o, a, 32, 2, planes, blocks, 16, select)
    if cards:  # the card head starts near zero: make it matter
        torch.nn.init.normal_(net.card_out.weight, std=3.0)
    # a large policy head makes the untrained net prefer some illegal actions
    torch.nn.init.normal_(net.policy.weight, std=3.0)
    meta = {"game": game, "options": {}, "features": features, "obs_size": o,
            "num_actions": int(a), "hidden": 32, "layers": 2, "card_inputs": planes,
            "card_actions": blocks, "card_select": select, "card_hidden": 16}  # fmt: skip
    torch.save(build_checkpoint(net, meta), path)
    return net


def _states(game: str, n: int, steps: int, seed: int = 0):
    venv = rummy_env.make_vec(game, n, seed=seed)
    obs, _ = venv.reset()
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        out.append((obs["observation"], obs["action_mask"]))
        acts = (rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(1)
        obs, *_ = venv.step(acts)
    return out


def test_never_masked_single_equals_batch(tmp_path) -> None:
    path = tmp_path / "a.pt"
    net = _checkpoint(path)
    agent = PPOAgent(checkpoint=str(path))
    for obs, mask in _states("gin_rummy", 64, 40):
        acts = agent.act_batch(obs, mask)
        assert (mask[np.arange(len(acts)), acts] == 1).all()
        for i in range(0, 64, 16):
            assert agent.act({"observation": obs[i], "action_mask": mask[i]}) == acts[i]
    # unmasked, the same network would often choose an illegal action: the mask matters
    obs, mask = _states("gin_rummy", 64, 5)[-1]
    from rummy_agents.features import add_features

    with torch.no_grad():
        raw = net.policy(net.trunk(torch.from_numpy(add_features("gin_deadwood", obs))))
    assert (mask[np.arange(64), raw.argmax(1).numpy()] == 0).any()


def test_save_reload_acts_identically(tmp_path) -> None:
    p1, p2 = tmp_path / "a.pt", tmp_path / "b.pt"
    net = _checkpoint(p1, seed=3, cards=True)
    played = PPOAgent(checkpoint=str(p1))
    meta = {k: v for k, v in played.meta.items() if k != "format"}
    weights = {k: torch.from_numpy(v) for k, v in played.policy.weights.items()}
    loaded = load_network({**meta, "state_dict": weights})  # the torch net of what was played
    torch.save(build_checkpoint(loaded, meta), p2)
    a, b = PPOAgent(checkpoint=str(p1)), PPOAgent(checkpoint=str(p2))
    for obs, mask in _states("gin_rummy", 32, 30, seed=1):
        np.testing.assert_array_equal(a.act_batch(obs, mask), b.act_batch(obs, mask))
    for k, v in net.state_dict().items():
        torch.testing.assert_close(v, torch.from_numpy(b.policy.weights[k]))
    # sampling mode is seeded: same seed, same choices, all legal
    s1 = PPOAgent(seed=5, checkpoint=str(p1), deterministic=False)
    s2 = PPOAgent(seed=5, checkpoint=str(p2), deterministic=False)
    for obs, mask in _states("gin_rummy", 32, 10, seed=2):
        x1, x2 = s1.act_batch(obs, mask), s2.act_batch(obs, mask)
        np.testing.assert_array_equal(x1, x2)
        assert (mask[np.arange(32), x1] == 1).all()


@pytest.mark.parametrize("game", ["gin_rummy", "five_hundred_rum"])
def test_arena_registry_plays_games(tmp_path, game: str) -> None:
    path = tmp_path / f"{game}.pt"
    _checkpoint(path, game=game, features="gin_deadwood" if game == "gin_rummy" else "none")
    agent = make_agent(f"ppo@checkpoint={path}", seed=0)
    assert isinstance(agent, PPOAgent)
    env = make_env(game, {})
    rec = play_game(env, [agent, make_agent("random", seed=1)], seed=0, max_decisions=5000)
    assert rec["decisions"] > 0  # play_game raises if a masked action is chosen


def test_checkpoint_of_another_game_is_a_clear_error(tmp_path) -> None:
    """A Gin Rummy checkpoint asked to play Rummy 51 says so instead of failing inside torch."""
    path = tmp_path / "gin.pt"
    _checkpoint(path)
    agent = PPOAgent(checkpoint=str(path))
    obs, mask = _states("rummy51", 4, 1)[0]
    with pytest.raises(ValueError, match="trained on gin_rummy"):
        agent.act_batch(obs, mask)
    with pytest.raises(ValueError, match="trained on gin_rummy"):
        agent.act({"observation": obs[0], "action_mask": mask[0]})


def test_averaged_agents_mean_their_weights(tmp_path) -> None:
    """``experiments/average_agents.py`` writes the mean of the players' weights as a player
    of the same network; players of different networks are refused."""
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "experiments" / "average_agents.py"
    spec = importlib.util.spec_from_file_location("average_agents", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    nets = [_checkpoint(tmp_path / f"a{s}.pt", seed=s) for s in range(3)]
    out = tmp_path / "avg.pt"
    mod.main([str(tmp_path / f"a{s}.pt") for s in range(3)] + ["--out", str(out)])
    agent = PPOAgent(checkpoint=str(out))
    for name, w in agent.policy.weights.items():
        mean = sum(n.state_dict()[name] for n in nets) / 3
        torch.testing.assert_close(torch.from_numpy(w), mean)
    for obs, mask in _states("gin_rummy", 16, 10):
        acts = agent.act_batch(obs, mask)
        assert (mask[np.arange(16), acts] == 1).all()
    # one player averaged alone is itself
    one = mod.average_checkpoints([tmp_path / "a1.pt"])["state_dict"]
    for name, w in nets[1].state_dict().items():
        torch.testing.assert_close(one[name], w)
    _checkpoint(tmp_path / "other.pt", features="none")
    with pytest.raises(ValueError, match="features"):
        mod.average_checkpoints([tmp_path / "a0.pt", tmp_path / "other.pt"])
    with pytest.raises(ValueError, match="at least one"):
        mod.average_checkpoints([])
