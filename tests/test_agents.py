import numpy as np
import pytest

import rummy_env
from rummy_agents import RandomAgent
from rummy_env import gin_rummy_v0


def _play_aec(agent: RandomAgent, episodes: int, seed: int, **options):
    """Play full episodes, checking every chosen action against the mask; returns actions."""
    env = gin_rummy_v0.env(**options)
    actions = []
    for ep in range(episodes):
        env.reset(seed=seed + ep)
        steps = 0
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                a = None
            else:
                a = agent.act(obs)
                assert isinstance(a, int)
                assert obs["action_mask"][a] == 1, f"illegal action {a} for {name}"
                actions.append(a)
                steps += 1
            env.step(a)
            assert steps < 100_000
        assert steps > 0
    env.close()
    return actions


@pytest.mark.parametrize(
    "options",
    [{}, {"auto_meld": False}, {"oklahoma": True}, {"eleven_card_deal": True}],
    ids=["default", "manual_melds", "oklahoma", "eleven_card_deal"],
)
def test_aec_full_episodes_only_legal_actions(options):
    actions = _play_aec(RandomAgent(seed=1), episodes=5, seed=0, **options)
    assert len(actions) > 5 * 20


def test_aec_reaches_knock_and_manual_melding():
    """Enough manual-meld hands that some end in a knock, exercising MELD/LAYOFF/END masks."""
    from rummy_env.encodings.gin_rummy import END_MELDING, KNOCK_BASE, MELD_BASE

    actions = np.array(_play_aec(RandomAgent(seed=2), episodes=60, seed=100, auto_meld=False))
    knocks = ((actions >= KNOCK_BASE) & (actions < MELD_BASE)).sum()
    if knocks == 0:
        pytest.skip("no knock in these seeds")
    assert (actions == END_MELDING).sum() >= 1


def test_aec_match_episode():
    actions = _play_aec(RandomAgent(seed=3), episodes=1, seed=7, episode="match", target=10)
    assert len(actions) > 0


def test_seeded_reproducibility():
    a = _play_aec(RandomAgent(seed=5), episodes=2, seed=11)
    b = _play_aec(RandomAgent(seed=5), episodes=2, seed=11)
    c = _play_aec(RandomAgent(seed=6), episodes=2, seed=11)
    assert a == b
    assert a != c

    masks = np.random.default_rng(0).integers(0, 2, size=(32, 50)).astype(np.int8)
    masks[:, 0] = 1
    x, y = RandomAgent(seed=9), RandomAgent(seed=9)
    for _ in range(5):
        np.testing.assert_array_equal(x.act_batch(masks), y.act_batch(masks))
    assert [x.act({"action_mask": masks[0]}) for _ in range(10)] == [
        y.act({"action_mask": masks[0]}) for _ in range(10)
    ]


def test_act_is_uniform_over_legal_actions():
    mask = np.zeros(10, np.int8)
    legal = [1, 4, 9]
    mask[legal] = 1
    agent = RandomAgent(seed=0)
    picks = np.array([agent.act({"action_mask": mask}) for _ in range(3000)])
    assert set(picks.tolist()) == set(legal)
    counts = np.array([(picks == a).sum() for a in legal])
    assert np.all(np.abs(counts - 1000) < 150)


def test_act_batch_is_uniform_and_legal():
    rng = np.random.default_rng(1)
    masks = (rng.random((200, 30)) < 0.2).astype(np.int8)
    masks[np.arange(200), rng.integers(0, 30, 200)] = 1
    agent = RandomAgent(seed=0)
    counts = np.zeros_like(masks, dtype=np.int64)
    for _ in range(300):
        a = agent.act_batch(masks)
        assert a.shape == (200,) and a.dtype == np.int64
        assert np.all(masks[np.arange(200), a] == 1)
        counts[np.arange(200), a] += 1
    # every legal action of a row is reachable; rows with one legal action always pick it
    single = masks.sum(axis=1) == 1
    assert np.all(counts[single].max(axis=1) == 300)
    assert np.all(counts[masks == 0] == 0)
    # rows have at most 13 legal actions: each is picked with p >= 1/13 per draw
    assert np.all(counts[masks == 1] > 0)


def test_all_zero_mask_raises():
    agent = RandomAgent(seed=0)
    with pytest.raises(ValueError, match="no legal action"):
        agent.act({"action_mask": np.zeros(107, np.int8)})
    masks = np.ones((4, 107), np.int8)
    masks[2] = 0
    with pytest.raises(ValueError, match=r"row\(s\) \[2\]"):
        agent.act_batch(masks)
    with pytest.raises(ValueError):
        agent.act_batch(np.zeros((3, 0), np.int8))
    with pytest.raises(ValueError, match="2-D"):
        agent.act_batch(np.ones(5, np.int8))


@pytest.mark.parametrize("options", [{}, {"auto_meld": False}], ids=["default", "manual_melds"])
def test_vector_env_batched(options):
    venv = rummy_env.make_vec("gin_rummy", 64, seed=0, **options)
    agent = RandomAgent(seed=0)
    obs, info = venv.reset()
    finished = 0
    outcomes = []
    for _ in range(400):
        masks = obs["action_mask"]
        assert masks.shape == (64, venv.single_action_space.n)
        actions = agent.act_batch(masks)
        assert np.all(masks[np.arange(64), actions] == 1)
        obs, rew, term, trunc, info = venv.step(actions)
        assert rew.shape == (64, 2)
        np.testing.assert_allclose(rew.sum(axis=1), 0.0, atol=1e-4)  # zero-sum
        done = term | trunc
        finished += int(done.sum())
        if "outcome" in info:
            outcomes.extend(info["outcome"][done].tolist())
    assert finished >= 64  # random hands last ~116 decisions
    assert set(outcomes) <= {1, 2, 3, 4}


def test_vector_env_reproducible():
    def run():
        venv = rummy_env.make_vec("gin_rummy", 16, seed=3)
        agent = RandomAgent(seed=4)
        obs, _ = venv.reset()
        trace = []
        for _ in range(150):
            a = agent.act_batch(obs["action_mask"])
            trace.append(a)
            obs, *_ = venv.step(a)
        return np.stack(trace)

    np.testing.assert_array_equal(run(), run())
