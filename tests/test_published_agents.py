"""The published agents shipped in the package, and the numpy network that plays them."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import rummy_env
from rummy_agents import published_agent
from rummy_agents.arena.registry import make_agent
from rummy_agents.ppo_agent import (
    MASKED_LOGIT,
    PPOAgent,
    load_checkpoint,
    read_npz,
    write_npz,
)
from rummy_agents.published import PUBLISHED, published_path

GAMES = sorted(PUBLISHED)


def _positions(game: str, n: int = 8, steps: int = 12) -> tuple[np.ndarray, np.ndarray]:
    venv = rummy_env.make_vec(game, n, seed=3)
    obs, _ = venv.reset()
    rng = np.random.default_rng(0)
    xs, ms = [], []
    for _ in range(steps):
        xs.append(obs["observation"])
        ms.append(obs["action_mask"])
        obs, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in ms[-1]]))
    return np.concatenate(xs), np.concatenate(ms)


@pytest.mark.parametrize("game", GAMES)
def test_published_agent_ships_small_and_plays_legal_moves(game):
    path = published_path(game)
    assert path.is_file() and path.suffix == ".npz"
    assert path.stat().st_size < 2_000_000, "published agents stay small"
    meta, _ = read_npz(path)
    assert meta["game"] == game and meta["precision"] == "int8"
    obs, masks = _positions(game)
    for agent in (published_agent(game), make_agent("ppo", seed=0, game=game)):
        assert isinstance(agent, PPOAgent) and agent.checkpoint == str(path)
        acts = agent.act_batch(obs, masks)
        assert (masks[np.arange(len(acts)), acts] == 1).all()
    sampled = published_agent(game, seed=1, deterministic=False).act_batch(obs, masks)
    assert (masks[np.arange(len(sampled)), sampled] == 1).all()


@pytest.mark.parametrize("game", GAMES)
def test_logits_are_what_the_agent_plays_by(game):
    """``PPOAgent.logits``: illegal actions at ``MASKED_LOGIT``, legal ones above it, and the
    deterministic agent plays their argmax; another game's rows are refused."""
    obs, masks = _positions(game)
    agent = published_agent(game)
    logits = agent.logits(obs, masks)
    assert logits.shape == masks.shape and logits.dtype == np.float32
    legal = masks == 1
    assert (logits[~legal] == MASKED_LOGIT).all() and (logits[legal] > MASKED_LOGIT).all()
    assert np.array_equal(logits.argmax(1), agent.act_batch(obs, masks))
    other = "rummy51" if game == "gin_rummy" else "gin_rummy"
    with pytest.raises(ValueError, match=f"trained on {game}"):
        agent.logits(*_positions(other, n=2, steps=1))


def test_published_agent_errors():
    with pytest.raises(ValueError, match="checkpoint=PATH or game=NAME"):
        PPOAgent()
    with pytest.raises(ValueError, match="game must be one of"):
        PPOAgent(game="poker")
    with pytest.raises(ValueError, match="no such file"):
        PPOAgent(checkpoint="no/such/agent.npz")
    with pytest.raises(ValueError, match="trained on gin_rummy, not rummy51"):
        PPOAgent(checkpoint=published_path("gin_rummy"), game="rummy51")
    with pytest.raises(TypeError, match="checkpoint must be a path"):
        PPOAgent(checkpoint=3)
    # the shape check still names the game trained on
    obs, masks = _positions("rummy51", n=2, steps=1)
    agent = PPOAgent(checkpoint=published_path("gin_rummy"))
    with pytest.raises(ValueError, match="trained on gin_rummy"):
        agent.act_batch(obs, masks)


@pytest.mark.parametrize("game", GAMES)
def test_numpy_network_equals_torch_network(game, tmp_path):
    """The numpy forward pass (which plays every agent) computes the torch network's logits,
    with each game's card head and meld planes; a float32 .npz holds the same agent."""
    torch = pytest.importorskip("torch")
    from rummy_agents.ppo_net import build_checkpoint, load_network

    meta, _ = read_npz(published_path(game))
    meta = {**meta, "hidden": 24, "card_hidden": 8}
    torch.manual_seed(0)
    net = load_network({**meta, "state_dict": None})
    with torch.no_grad():  # non-zero gates and heads, so every path counts
        for p in net.parameters():
            p.add_(0.05 * torch.randn_like(p))
    torch.save(build_checkpoint(net, meta), tmp_path / "a.pt")
    obs, masks = _positions(game)
    agent = PPOAgent(checkpoint=tmp_path / "a.pt", game=game)
    x = agent.feature_set(obs)
    m = masks == 1
    with torch.no_grad():
        want, _ = net(torch.from_numpy(x), torch.from_numpy(m))
    got = agent.policy.logits(x, m)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-4)
    meta_pt, weights = load_checkpoint(tmp_path / "a.pt")
    write_npz(tmp_path / "a.npz", meta_pt, weights, "float32")
    again = PPOAgent(checkpoint=tmp_path / "a.npz", game=game)
    np.testing.assert_array_equal(again.policy.logits(x, m), got)


def test_npz_precisions_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    weights = {"trunk.0.weight": rng.normal(size=(6, 5)).astype(np.float32),
               "trunk.0.bias": rng.normal(size=6).astype(np.float32)}  # fmt: skip
    weights["trunk.0.weight"][2] = 0.0  # an all-zero row keeps a valid scale
    meta = {"format": "rummy_env-ppo-v1", "game": "gin_rummy", "layers": 1}
    for precision, tol in (("float32", 0.0), ("float16", 2e-3), ("int8", 1.0 / 127)):
        write_npz(tmp_path / f"{precision}.npz", meta, weights, precision)
        got_meta, got = read_npz(tmp_path / f"{precision}.npz")
        assert got_meta == {**meta, "precision": precision}
        for k, v in weights.items():
            scale = np.abs(v).max(axis=-1, keepdims=True) if v.ndim == 2 else np.abs(v).max()
            assert np.all(np.abs(got[k] - v) <= tol * np.maximum(scale, 1e-12) + 1e-7), k
    with pytest.raises(ValueError, match="precision must be one of"):
        write_npz(tmp_path / "x.npz", meta, weights, "int4")
    np.savez(tmp_path / "plain.npz", a=np.zeros(3))
    with pytest.raises(ValueError, match="not a rummy_env-ppo-v1 agent file"):
        read_npz(tmp_path / "plain.npz")


def test_published_agent_plays_without_torch():
    """Playing a published agent needs numpy only (torch is the train extra)."""
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import rummy_env\n"
        "from rummy_agents import published_agent\n"
        "env = rummy_env.gin_rummy_v0.env(); env.reset(seed=0)\n"
        "agent = published_agent('gin_rummy')\n"
        "a = agent.act(env.observe(env.agent_selection))\n"
        "assert env.observe(env.agent_selection)['action_mask'][a] == 1\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
