"""The Gymnasium ids (``rummy/GinRummy-v0`` ...): ``gymnasium.make`` single-agent envs and the
native vector env of ``gymnasium.make_vec`` (``RummySingleAgentVectorEnv``, SAME_STEP autoreset).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, VectorEnv
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_agents.arena.registry import AgentEntry, agent_spec
from rummy_agents.gym_envs import DEFAULT_OPPONENTS, TableSeatFactory
from rummy_env.core.validate import ResetNeeded
from rummy_env.wrappers import RummySingleAgentEnv, RummySingleAgentVectorEnv

GIN = "rummy/GinRummy-v0"
GYM_VERSION = tuple(int(x) for x in gym.__version__.split(".")[:2])


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of (N, A) bool masks."""
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


class ActOnly:
    """A seeded agent factory whose agents have only ``act`` (played one game at a time)."""

    def __init__(self, name: str = "simple") -> None:
        self.entry = agent_spec(name, "gin_rummy")

    def build(self, seed: int) -> object:
        inner = self.entry.build(seed)

        class Agent:
            name = "act_only"

            def act(self, observation, view=None):
                return inner.act(observation, view)

        return Agent()


# -- registration and gymnasium.make --------------------------------------------------------


def test_ids_are_registered_with_both_entry_points():
    for gym_id, game in rummy_env.GYM_IDS.items():
        spec = gym.spec(gym_id)
        assert spec.kwargs == {"game": game}
        assert spec.entry_point == "rummy_agents.gym_envs:make_env"
        assert spec.vector_entry_point == "rummy_agents.gym_envs:make_vec_env"


def test_registration_is_idempotent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.reload(rummy_env)
        importlib.import_module("rummy_agents.gym_envs")


def test_make_with_module_prefix_needs_no_prior_import():
    code = (
        "import sys, gymnasium; env = gymnasium.make('rummy_env:rummy/Rummy51-v1', "
        "opponent='random'); assert 'rummy_env' in sys.modules; "
        "print(type(env.unwrapped).__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "RummySingleAgentEnv"


@pytest.mark.parametrize("gym_id", sorted(rummy_env.GYM_IDS))
def test_check_env_passes(gym_id):
    env = gym.make(gym_id, opponent="random")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    # the observation Boxes have unbounded pieces (scores), and text rendering has no fps
    expected = ("infinity", "render fps")
    assert [str(w.message) for w in caught if not any(e in str(w.message) for e in expected)] == []
    assert env.unwrapped.action_masks().dtype == bool


def test_default_opponent_is_the_games_rule_based_agent():
    assert DEFAULT_OPPONENTS == {
        "gin_rummy": "simple",
        "five_hundred_rum": "greedy",
        "rummy51": "greedy",
    }
    for gym_id, game in rummy_env.GYM_IDS.items():
        opp = gym.make(gym_id).unwrapped._opponent_specs[0]
        assert isinstance(opp, AgentEntry)
        assert opp.target == agent_spec(DEFAULT_OPPONENTS[game], game).target


def test_make_passes_options_and_opponents_through():
    env = gym.make(GIN, num_players=3, opponent="random", learner_seat=2)
    inner = env.unwrapped
    assert isinstance(inner, RummySingleAgentEnv)
    assert inner.num_players == 3 and inner.fixed_seat == 2
    assert inner._opponent_specs == [None, None]
    assert env.spec.kwargs["num_players"] == 3
    # registry specs with parameters, and 2-player agents seated at 3-player tables
    env = gym.make(GIN, num_players=3, opponent="simple@take_rule=best_meld")
    specs = env.unwrapped._opponent_specs
    assert all(isinstance(s, TableSeatFactory) for s in specs)
    assert specs[0].factory.kwargs == {"take_rule": "best_meld"}
    env = gym.make("rummy/Rummy51-v1", opponent="greedy@hold_melds=3")
    assert env.unwrapped._opponent_specs[0].kwargs["hold_melds"] == 3
    # objects, factories and one spec per seat go as they are
    factory = ActOnly()
    assert gym.make(GIN, opponent=factory).unwrapped._opponent_specs == [factory]
    env = gym.make("rummy/FiveHundredRum-v1", num_players=3, opponent=["random", None])
    assert env.unwrapped._opponent_specs == [None, None]
    obs, info = env.reset(seed=0)
    assert env.unwrapped.action_masks()[env.unwrapped.action_masks()].size > 0
    # the mask reaches sb3-contrib through the wrappers gymnasium.make adds
    assert np.array_equal(env.get_wrapper_attr("action_masks")(), env.unwrapped.action_masks())


def test_sb3_contrib_finds_the_masks_of_made_envs():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: gym.make(GIN, opponent="random")] * 2)
    venv.seed(0)
    venv.reset()
    assert is_masking_supported(venv)
    masks = get_action_masks(venv)
    assert masks.shape == (2, venv.action_space.n) and masks.any(axis=1).all()


# -- gymnasium.make_vec: the native vector env ----------------------------------------------


def test_make_vec_is_a_native_vector_env():
    venv = gym.make_vec(GIN, num_envs=3, opponent="random", target=50)
    assert isinstance(venv, VectorEnv) and isinstance(venv, RummySingleAgentVectorEnv)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.num_envs == 3 and venv.render_mode is None
    assert venv.spec.id == GIN and venv.spec.kwargs["target"] == 50
    assert venv.config.target == 50
    single = gym.make(GIN).unwrapped
    assert venv.single_observation_space == single.observation_space
    assert venv.single_action_space == single.action_space
    assert venv.observation_space.shape == (3, *single.observation_space.shape)
    assert venv.action_space == gym.spaces.MultiDiscrete([single.action_space.n] * 3)
    obs, info = venv.reset(seed=0)
    assert obs in venv.observation_space
    masks = venv.action_masks()
    assert masks.shape == (3, single.action_space.n) and masks.dtype == bool
    assert np.array_equal(venv.game.states["cur"], info["learner_seat"])


@pytest.mark.parametrize("gym_id", sorted(rummy_env.GYM_IDS))
def test_vector_action_masks_are_fresh_bools_of_the_legal_actions(gym_id):
    """``action_masks()`` over a few steps: each entry True exactly where the game's mask
    holds 1, stored as the bytes 0/1 of a proper bool array, and a fresh array each call.
    """
    venv = gym.make_vec(gym_id, num_envs=4)
    venv.reset(seed=2)
    u = venv.unwrapped
    rng = np.random.default_rng(0)
    for _ in range(12):
        masks = u.action_masks()
        assert masks.dtype == bool and masks.flags.c_contiguous and masks.flags.owndata
        assert (masks.view(np.uint8) <= 1).all()
        assert np.array_equal(masks, u.game.masks[:, : u.num_actions] == 1)
        again = u.action_masks()
        again[:] = False
        assert masks.any(axis=1).all()  # (another call's array is its own)
        a = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        venv.step(a)


def rollout(venv, seed, steps, policy_seed):
    """Per game: the observations, rewards and episode ends of ``steps`` random legal steps."""
    n = venv.num_envs
    rngs = [np.random.default_rng(policy_seed + i) for i in range(n)]
    obs, _ = venv.reset(seed=seed)
    out = [[obs[i].copy()] for i in range(n)]
    for _ in range(steps):
        masks = venv.action_masks()
        a = np.array([rngs[i].choice(np.flatnonzero(masks[i])) for i in range(n)])
        obs, r, term, trunc, info = venv.step(a)
        for i in range(n):
            out[i] += [obs[i].copy(), r[i], term[i], trunc[i], info["learner_seat"][i]]
            if term[i] or trunc[i]:
                out[i].append(info["final_obs"][i].copy())
    return out


def _equal(x, y):
    return len(x) == len(y) and all(np.array_equal(a, b) for a, b in zip(x, y, strict=True))


@pytest.mark.parametrize("opponent", ["random", "act_only"])
def test_vector_games_play_as_one_game_envs_seeded_seed_plus_i(opponent):
    opp = ActOnly() if opponent == "act_only" else opponent
    batch = rollout(gym.make_vec(GIN, num_envs=3, opponent=opp), 7, 40, 100)
    for i in range(3):
        alone = rollout(gym.make_vec(GIN, num_envs=1, opponent=opp), 7 + i, 40, 100 + i)[0]
        assert _equal(batch[i], alone)
    # and the same seed replays, batch agents (simple's act_batch) included
    for other in (opp, "simple"):
        a = rollout(gym.make_vec(GIN, num_envs=2, opponent=other), 3, 30, 0)
        b = rollout(gym.make_vec(GIN, num_envs=2, opponent=other), 3, 30, 0)
        assert all(_equal(x, y) for x, y in zip(a, b, strict=True))


def test_one_game_plays_its_aec_deal():
    """Game ``i`` of seed ``s`` is dealt the AEC env's deal of seed ``s + i``."""
    aec = rummy_env.gin_rummy_v0.raw_env()
    aec.reset(seed=12)
    first = aec.agent_selection
    venv = gym.make_vec(
        GIN, num_envs=2, opponent="random", learner_seat=aec.possible_agents.index(first)
    )
    obs, _ = venv.reset(seed=11)
    assert np.array_equal(obs[1], aec.observe(first)["observation"])
    assert np.array_equal(venv.action_masks()[1], aec.observe(first)["action_mask"] == 1)


@pytest.mark.skipif(GYM_VERSION < (1, 4), reason="SAME_STEP statistics are right from 1.4")
def test_record_episode_statistics_matches_the_rewards():
    venv = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.make_vec(GIN, num_envs=4, opponent="random")
    )
    rng = np.random.default_rng(0)
    _, info = venv.reset(seed=0)
    ret, length, seen = np.zeros(4), np.zeros(4, int), 0
    for _ in range(250):
        # the masks reach through vector wrappers in the infos (and as env.unwrapped's method)
        assert np.array_equal(info["action_mask"], venv.unwrapped.action_masks())
        obs, r, term, trunc, info = venv.step(random_legal(info["action_mask"], rng))
        ret += r
        length += 1
        done = term | trunc
        if done.any():
            assert np.array_equal(info["_episode"], done)
            np.testing.assert_allclose(info["episode"]["r"][done], ret[done])
            assert np.array_equal(info["episode"]["l"][done], length[done])
            # the learner's return is its final points (2 players, hand episodes, raw points)
            seat = info["final_info"]["learner_seat"][done]
            np.testing.assert_allclose(ret[done], info["final_info"]["final_points"][done, seat])
            ret[done], length[done] = 0, 0
            seen += done.sum()
    assert seen >= 4


def test_same_step_autoreset():
    venv = gym.make_vec(GIN, num_envs=2, opponent="random")
    rng = np.random.default_rng(1)
    venv.reset(seed=5)
    ends = 0
    for _ in range(200):
        obs, r, term, trunc, info = venv.step(random_legal(venv.action_masks(), rng))
        masks = venv.action_masks()
        assert masks.any(axis=1).all()  # the learner always has a move: a new episode's first
        assert np.array_equal(venv.game.states["cur"], info["learner_seat"])
        done = term | trunc
        if not done.any():
            assert "final_obs" not in info
            continue
        assert np.array_equal(info["_final_obs"], done)
        assert np.array_equal(info["_final_info"], done)
        for i in np.flatnonzero(done):
            ends += 1
            assert not np.array_equal(info["final_obs"][i], obs[i])
            # the returned observation is a fresh deal: few decisions into the new episode
            assert venv.game.states["steps"][i] < 12
            assert info["final_info"]["episode_length"][i] > 0
    assert ends >= 2


def test_learner_seat_per_episode_or_fixed():
    venv = gym.make_vec(GIN, num_envs=16, opponent="random")
    _, info = venv.reset(seed=0)
    assert set(info["learner_seat"]) == {0, 1}
    venv = gym.make_vec(GIN, num_envs=4, opponent="random", learner_seat=1)
    _, info = venv.reset(seed=0)
    assert (info["learner_seat"] == 1).all()
    _, info = venv.reset(seed=0, options={"learner_seat": 0})
    assert (info["learner_seat"] == 0).all()


def test_three_player_tables_with_the_default_opponent():
    venv = gym.make_vec(GIN, num_envs=2, num_players=3, episode="hand", learner_seat=0)
    assert all(isinstance(s, TableSeatFactory) for s in venv._specs)
    rng = np.random.default_rng(0)
    obs, info = venv.reset(seed=0)
    for _ in range(30):
        assert np.array_equal(venv.game.states["cur"], info["learner_seat"])
        obs, r, term, trunc, info = venv.step(random_legal(venv.action_masks(), rng))
    assert obs.shape == (2, venv.single_observation_space.shape[0])


class Recording:
    """A factory of agents that check what they are shown and play random legal moves."""

    def __init__(self, venv_box: list) -> None:
        self.venv_box = venv_box
        self.calls = 0

    def build(self, seed: int) -> object:
        outer, rng = self, np.random.default_rng(seed)

        class Agent:
            name = "recording"

            def act(self, observation, view):
                game = outer.venv_box[0].game
                i, seat = view.index, view.seat
                assert game.states["cur"][i] == seat
                assert np.array_equal(observation["observation"], game.observe(i, seat))
                assert np.array_equal(observation["action_mask"], game.action_mask(i))
                outer.calls += 1
                return int(rng.choice(np.flatnonzero(observation["action_mask"])))

        return Agent()


def test_agents_acting_one_game_at_a_time_get_their_games_view():
    box: list = []
    rec = Recording(box)
    venv = gym.make_vec(GIN, num_envs=3, opponent=rec)
    box.append(venv)
    rng = np.random.default_rng(0)
    _, info = venv.reset(seed=0)
    for _ in range(20):
        _, _, _, _, info = venv.step(random_legal(info["action_mask"], rng))
    assert rec.calls > 20


def test_heuristic_plays_batched_and_at_three_player_tables():
    rng = np.random.default_rng(0)
    for kwargs in ({}, {"num_players": 3}):
        # 2 players: act_game over the batch; 3 players: per game, on the seat's table view
        venv = gym.make_vec(GIN, num_envs=2, opponent="heuristic", **kwargs)
        _, info = venv.reset(seed=0)
        for _ in range(15):
            _, _, _, _, info = venv.step(random_legal(info["action_mask"], rng))
        assert venv._kinds[0] == ("seat" if kwargs else "game")


def test_features_are_appended():
    from rummy_agents.features import FeatureSet

    fs = FeatureSet("gin_rummy", "gin_deadwood")
    venv = gym.make_vec(GIN, num_envs=2, opponent="random", features=fs)
    obs, _ = venv.reset(seed=0)
    assert fs.size > 0 and obs.shape == (2, 225 + fs.size)
    assert obs in venv.observation_space
    single = gym.make(GIN, opponent="random", features=fs)
    assert single.observation_space == venv.single_observation_space


def test_cleanrl_style_masked_rollout():
    """A CleanRL-style PPO rollout: fixed-size storage, masked sampling from logits, SAME_STEP
    dones (the next observation already starts the next episode), GAE over the buffer."""
    n, steps = 4, 64
    envs = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.make_vec(GIN, num_envs=n, opponent="random")
    )
    obs_dim = envs.single_observation_space.shape[0]
    n_act = envs.single_action_space.n
    rng = np.random.default_rng(0)
    w = rng.normal(scale=0.01, size=(obs_dim, n_act))
    obs_buf = np.zeros((steps, n, obs_dim), np.float32)
    act_buf = np.zeros((steps, n), np.int64)
    rew_buf = np.zeros((steps, n))
    done_buf = np.zeros((steps, n))
    next_obs, infos = envs.reset(seed=0)
    next_done = np.zeros(n)
    returns = []
    for t in range(steps):
        obs_buf[t], done_buf[t] = next_obs, next_done
        mask = infos["action_mask"]
        logits = np.where(mask, next_obs @ w, -np.inf)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        action = np.array([rng.choice(n_act, p=row) for row in p])
        assert mask[np.arange(n), action].all()
        act_buf[t] = action
        next_obs, reward, term, trunc, infos = envs.step(action)
        rew_buf[t] = reward
        next_done = np.logical_or(term, trunc).astype(float)
        if "episode" in infos:
            returns += list(infos["episode"]["r"][infos["_episode"]])
    values = np.zeros((steps + 1, n))
    adv = np.zeros((steps, n))
    last = np.zeros(n)
    for t in reversed(range(steps)):
        nonterminal = 1.0 - (next_done if t == steps - 1 else done_buf[t + 1])
        delta = rew_buf[t] + 0.99 * values[t + 1] * nonterminal - values[t]
        adv[t] = last = delta + 0.99 * 0.95 * nonterminal * last
    assert np.isfinite(adv).all() and returns


# -- bad arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"num_envs": 0}, ValueError, ["num_envs", "1..", "0"]),
        ({"num_envs": "4"}, TypeError, ["num_envs", "'4'"]),
        ({"num_envs": True}, TypeError, ["num_envs", "True"]),
        ({"colour": "red"}, ValueError, ["colour"]),
        ({"opponent": "nobody"}, ValueError, ["opponent='nobody'", "simple"]),
        ({"opponent": "greedy"}, ValueError, ["opponent='greedy'", "gin_rummy"]),
        ({"opponent": 3}, TypeError, ["opponents[0]", "3"]),
        ({"opponent": [None, None]}, ValueError, ["opponents", "1", "2"]),
        ({"learner_seat": 2}, ValueError, ["learner_seat", "0..1", "2"]),
        ({"illegal_action": "skip"}, ValueError, ["illegal_action", "'raise'", "'skip'"]),
        ({"render_mode": "human"}, ValueError, ["render_mode", "'human'"]),
    ],
)
def test_bad_make_vec_arguments(kwargs, error, words):
    with pytest.raises(error) as e:
        gym.make_vec(GIN, **{"num_envs": 2, **kwargs})
    assert all(w in str(e.value) for w in words), str(e.value)


def test_bad_make_arguments():
    with pytest.raises(ValueError, match="opponent='nobody'"):
        gym.make(GIN, opponent="nobody")
    with pytest.raises(ValueError, match="colour"):
        gym.make(GIN, colour=1)
    with pytest.raises(ValueError, match="has no parameter 'nonsense'; its parameters: take_rule"):
        gym.make(GIN, opponent="simple@nonsense=1")


def test_bad_step_and_reset_arguments_change_nothing():
    venv = gym.make_vec(GIN, num_envs=3, opponent="random", illegal_action="raise")
    with pytest.raises(ResetNeeded, match="reset"):
        venv.step(np.zeros(3, int))
    venv.reset(seed=0)
    before = venv.game.states.copy()
    masks = venv.action_masks()
    illegal = np.array([np.flatnonzero(~m)[0] for m in masks])
    legal = np.array([np.flatnonzero(m)[0] for m in masks])
    bad = legal.copy()
    bad[1] = illegal[1]
    cases = [
        (np.zeros(2, int), ValueError, r"shape \(3,\)"),
        (np.zeros((3, 1), int), ValueError, r"shape \(3,\)"),
        (np.zeros(3), TypeError, "integers"),
        (bad, ValueError, r"actions\[1\]"),
        (np.array([legal[0], legal[1], 10_000]), ValueError, r"actions\[2\].*out of range"),
    ]
    for actions, error, match in cases:
        with pytest.raises(error, match=match):
            venv.step(actions)
        assert np.array_equal(venv.game.states, before)
    for options, error, match in [
        ({"colour": 1}, ValueError, "colour"),
        ({"learner_seat": 5}, ValueError, "learner_seat"),
        ({"dealers": [0, 1]}, ValueError, "dealers"),
    ]:
        with pytest.raises(error, match=match):
            venv.reset(seed=1, options=options)
        assert np.array_equal(venv.game.states, before)
    with pytest.raises(ValueError, match="seed"):
        venv.reset(seed=-1)
    assert np.array_equal(venv.game.states, before)


def test_illegal_actions_are_replaced_by_default():
    venv = gym.make_vec(GIN, num_envs=2, opponent="random")
    venv.reset(seed=0)
    masks = venv.action_masks()
    a = np.array([np.flatnonzero(~m)[0] for m in masks])
    _, _, _, _, info = venv.step(a)
    assert info["illegal_action"].all()


# -- a property: random legal play ------------------------------------------------------------


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 3), fixed=st.booleans())
@example(seed=1338, n=2, fixed=False)  # the learner loses a knock (CI found it)
def test_random_play_returns_are_the_final_points(seed, n, fixed):
    venv = gym.make_vec(GIN, num_envs=n, opponent="random", learner_seat=0 if fixed else None)
    rng = np.random.default_rng(seed)
    venv.reset(seed=seed)
    ret = np.zeros(n)
    for _ in range(120):
        masks = venv.action_masks()
        assert masks.any(axis=1).all()
        obs, r, term, trunc, info = venv.step(random_legal(masks, rng))
        assert obs in venv.observation_space
        ret += r
        done = term | trunc
        for i in np.flatnonzero(done):
            seat = info["final_info"]["learner_seat"][i]
            points = info["final_info"]["final_points"][i]  # each player's points in the hand
            # zero-sum: the learner's return is its points less the other player's
            assert ret[i] == pytest.approx(points[seat] - points[1 - seat])
            ret[i] = 0


# -- the step's observations: every row written, none written again -------------------------


class Failing:
    """A factory of random agents (one game at a time) whose ``calls``-th move raises."""

    def __init__(self, calls: int) -> None:
        self.left = calls

    def build(self, seed: int) -> object:
        outer, rng = self, np.random.default_rng(seed)

        class Agent:
            name = "failing"

            def act(self, observation, view=None):
                outer.left -= 1
                if outer.left == 0:
                    raise RuntimeError("the agent fails")
                return int(rng.choice(np.flatnonzero(observation["action_mask"])))

        return Agent()


@pytest.mark.parametrize(
    "gym_id, opponent",
    [
        (GIN, None),  # compiled, one agent for every game (threaded rounds on >= 64 games)
        (GIN, "random"),
        (GIN, ActOnly()),  # Python, one game at a time
        ("rummy/FiveHundredRum-v1", None),  # compiled, an agent per game and seat
        ("rummy/Rummy51-v1", None),
    ],
)
@pytest.mark.parametrize("n", [5, 70])
def test_step_writes_every_observation_row_into_a_fresh_array(gym_id, opponent, n):
    # the step hands the user its buffer: poisoned with NaN, every row must be written, with
    # the learner's view of its game, and nothing handed out before may change
    if n > 5 and gym_id != GIN and opponent is not None:
        pytest.skip("one size is enough for the Python opponents")
    kwargs = {} if opponent is None else {"opponent": opponent}
    venv = gym.make_vec(gym_id, num_envs=n, **kwargs)
    env = venv.unwrapped
    env._fresh_obs = lambda: np.full_like(env._obs, np.nan)
    rng = np.random.default_rng(n)
    obs, info = venv.reset(seed=n)
    kept = [(obs, obs.copy())]
    for _ in range(25):
        obs, _, _, _, info = venv.step(random_legal(info["action_mask"], rng))
        assert obs is not kept[-1][0]
        kept.append((obs, obs.copy()))
        for i in range(n):
            seat = int(info["learner_seat"][i])
            assert np.array_equal(obs[i], env.game.observe(i, seat))
    for handed, then in kept:
        assert np.array_equal(handed, then)


def test_a_step_that_fails_midway_leaves_every_observation_row_current():
    n = 4
    venv = gym.make_vec(GIN, num_envs=n, opponent=Failing(calls=9))
    env = venv.unwrapped
    env._fresh_obs = lambda: np.full_like(env._obs, np.nan)
    rng = np.random.default_rng(0)
    _, info = venv.reset(seed=0)
    with pytest.raises(RuntimeError, match="the agent fails"):
        for _ in range(20):
            _, _, _, _, info = venv.step(random_legal(info["action_mask"], rng))
    cur = env.game.states["cur"]
    for i in range(n):
        assert np.array_equal(env._obs[i], env.game.observe(i, int(cur[i])))


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 9),
    na=st.integers(1, 12),
)
def test_mark_illegal_is_the_numpy_legality_check(data, n, na):
    from rummy_env.core.learner import mark_illegal

    width = na + data.draw(st.integers(0, 3))  # a batch's masks may be wider than its actions
    values = st.integers(0, 2)  # entries other than 0 and 1 are not legal either
    masks = np.array(
        data.draw(
            st.lists(st.lists(values, min_size=width, max_size=width), min_size=n, max_size=n)
        ),
        dtype=np.int8,
    )
    actions = np.array(
        data.draw(st.lists(st.integers(-3, width + 2), min_size=n, max_size=n)), dtype=np.int64
    )
    illegal = np.ones(n, dtype=bool)
    first = mark_illegal(masks, actions, na, illegal)
    ok = (actions >= 0) & (actions < na)
    want = ~ok
    want[ok] = masks[np.flatnonzero(ok), actions[ok]] != 1
    np.testing.assert_array_equal(illegal, want)
    assert first == (int(np.flatnonzero(want)[0]) if want.any() else -1)
