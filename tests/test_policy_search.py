"""``ppo_search`` (:class:`rummy_agents.ismcts.policy.PolicySearchAgent`): the published Gin
network whose moves are checked by paired rollouts (the network against Gin's rules, or
against itself)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rummy_agents.arena.registry import make_agent
from rummy_agents.ismcts.gin import (
    GIN_HOOKS,
    gin_match_equity,
    gin_match_values,
    gin_rollout_actions,
)
from rummy_agents.ismcts.policy import PolicySearchAgent, _play_on_second
from rummy_agents.ppo_agent import PPOAgent
from rummy_agents.table_seat import seat_at_tables
from rummy_env import gin_rummy_v0
from rummy_env.core.validate import ArgumentTypeError
from rummy_env.envs.view import SeatView
from rummy_env.rules.gin_rummy import kernels as K


def _play_hand(env, agents, seed):
    """Play one episode (a hand, or a match), seat ``s`` moved by ``agents[s % len(agents)]``,
    every move checked legal; returns the moves made and the final rewards by agent name."""
    env.reset(seed=seed)
    moves, rewards = [], {a: 0.0 for a in env.agents}
    for name in env.agent_iter():
        obs, r, term, trunc, _ = env.last()
        rewards[name] += r
        if term or trunc:
            env.step(None)
            continue
        seat = int(name.split("_")[1])
        a = agents[seat % len(agents)].act(obs, SeatView(env, name))
        assert obs["action_mask"][a] == 1, f"illegal move {a}"
        moves.append(a)
        env.step(a)
    return moves, rewards


@pytest.fixture(scope="module")
def net():
    return PPOAgent(seed=0, game="gin_rummy")


def test_plays_legal_moves_and_is_reproducible():
    env = gin_rummy_v0.raw_env()
    a = [PolicySearchAgent(seed=3, worlds=6), PolicySearchAgent(seed=4, worlds=6)]
    moves, rewards = _play_hand(env, a, seed=11)
    assert sum(rewards.values()) == pytest.approx(0.0)
    b = [PolicySearchAgent(seed=3, worlds=6), PolicySearchAgent(seed=4, worlds=6)]
    assert _play_hand(env, b, seed=11)[0] == moves
    assert a[0].move_seconds, "no decision was searched"


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
def test_an_unreachable_threshold_plays_the_network(net, seed):
    """With a threshold no rollout gain can pass, every move is the network's own (a knock:
    the one leaving the least deadwood)."""

    class NetKnockingLeast:
        def act(self, obs, view=None):
            knock = GIN_HOOKS.knock_now(obs)
            return net.act(obs) if knock is None else knock

    env = gin_rummy_v0.raw_env()
    search = PolicySearchAgent(seed=seed, worlds=4, paired_z=1e9, opponent="network")
    moves_search, _ = _play_hand(env, [search, net], seed=seed)
    rules = PolicySearchAgent(seed=seed, worlds=4, paired_z=1e9)
    assert _play_hand(env, [rules, net], seed=seed)[0] == moves_search
    moves_net, _ = _play_hand(env, [NetKnockingLeast(), net], seed=seed)
    assert moves_search == moves_net


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
def test_searched_knocks_under_an_unreachable_threshold_are_the_networks(net, seed):
    """``knock="search"``: no shortcut for knocks, so an unreachable threshold plays the
    network's every move, its own knocks included, except where another candidate's paired
    gain is certain (the same positive difference in every world, as between two knocks
    that score differently whatever the opponent holds): no number of standard errors
    rejects that."""

    class Spy(PolicySearchAgent):
        def _batch(self, *args, **kwargs):
            self.values = super()._batch(*args, **kwargs)
            return self.values

    env = gin_rummy_v0.raw_env()
    env.reset(seed=seed)
    search = Spy(seed=seed, worlds=4, paired_z=1e9, knock="search")
    for name in env.agent_iter():
        obs, _r, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = net.act(obs)
        if name == "player_0":
            search.values = None
            b = search.act(obs, SeatView(env, name))
            if b != a:  # one paired batch: worlds x the k candidates, the network's first
                k = min(search.root_k, int(obs["action_mask"].sum()))
                diff = search.values.reshape(-1, k)[:, 1:] - search.values.reshape(-1, k)[:, :1]
                assert ((diff.std(0) == 0) & (diff.mean(0) > 0)).any(), "an uncertain departure"
        env.step(a)


def test_a_searched_knock_is_weighed_against_playing_on(net):
    """Where the network knocks, the candidates are its knock, its best plain discard (not
    knocking), and the next by logit; a huge threshold keeps the knock."""
    env = gin_rummy_v0.raw_env()
    search = PolicySearchAgent(seed=5, worlds=4, paired_z=1e9, knock="search")
    weighed = 0
    for seed in range(40):
        env.reset(seed=seed)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            a = int(net.act(obs))
            if name == "player_0" and K.KNOCK_BASE <= a < K.KNOCK_BASE + 52:
                assert search.act(obs, SeatView(env, name)) == a
                cands = sorted(search.last.root_values)
                assert a in cands and len(cands) == 3
                plain = [c for c in cands if K.DISCARD_BASE <= c < K.DISCARD_BASE + 52]
                assert plain, f"no move that plays on among {cands}"
                weighed += 1
            env.step(a)
        if weighed >= 3:
            break
    assert weighed >= 3


@given(
    logits=st.lists(st.floats(-50, 50), min_size=107, max_size=107),
    legal=st.lists(st.booleans(), min_size=107, max_size=107),
)
def test_play_on_is_ranked_second_behind_a_knock(logits, legal):
    logits, legal = np.array(logits), np.array(legal)
    legal[int(np.argmax(logits))] = True
    before = logits.copy()
    _play_on_second(logits, legal)
    top = int(before.argmax())
    changed = np.flatnonzero(logits != before)
    plain = np.flatnonzero(legal[K.DISCARD_BASE : K.DISCARD_BASE + 52]) + K.DISCARD_BASE
    if not (K.KNOCK_BASE <= top < K.KNOCK_BASE + 52) or plain.size == 0:
        assert changed.size == 0
        return
    assert logits[top] == logits.max(), "the knock stays first"
    best = int(plain[before[plain].argmax()])
    assert set(changed) <= {best}
    rivals = np.delete(logits, [top, best])
    assert (logits[best] >= rivals).all(), "the best plain discard is second"


def _worlds_and_copy(view, n, seed):
    """``n`` sampled worlds of ``view``, an untouched copy for the reference, and the hands
    each had played."""
    worlds = view.sample_worlds(n, np.random.default_rng(seed))
    ref = type(worlds)(worlds.config, worlds.num_games)
    ref.states[:] = worlds.states
    ref.masks[:] = worlds.masks
    return worlds, ref, worlds.states["hands_played"].copy()


def _reference_rollout(ref, i, net, seat, opponent, hands0):
    """Slow reference of a rollout: world ``i`` of ``ref`` stepped alone to the end of its
    hand, ``seat`` moved by the network, the other seat by the network or (``opponent=
    "rules"``) Gin's compiled rollout policy; returns its rewards and the scores it ends at."""
    total = np.zeros(2)
    while True:
        cur = int(ref.states["cur"][i])
        mask = ref.masks[i, : ref.num_actions]
        a = net.act({"observation": ref.observe(i, cur), "action_mask": mask})
        if opponent == "rules" and cur != seat:
            rules = np.zeros(ref.num_games, dtype=np.int64)
            gin_rollout_actions(ref.states, ref.masks, K.TABLES, ref.num_actions, 0.0, rules)
            a = int(rules[i])
        done, _trunc, _cur, hands = ref.step_single(i, a)
        total += ref.states["rewards"][i]
        if done or hands != hands0[i]:
            return total, ref.states["scores"][i].copy()


@pytest.mark.parametrize("opponent", ["network", "rules"])
def test_rollouts_are_the_network_playing_every_seat(net, opponent):
    """The batched rollout equals a slow reference: each world stepped one decision at a
    time, the searching seat moved by the network's most probable legal action, the other
    by the network too or (``opponent="rules"``) by Gin's compiled rollout policy."""
    env = gin_rummy_v0.raw_env()
    env.reset(seed=5)
    for _ in range(3):  # a few decisions into the hand
        name = env.agent_selection
        env.step(net.act(env.observe(name)))
    view = SeatView(env, env.agent_selection)
    search = PolicySearchAgent(seed=1, worlds=4, opponent=opponent)
    worlds, ref, hands0 = _worlds_and_copy(view, 12, seed=2)
    hooks = search.game_hooks("gin_rummy")
    got = search._rollout(worlds, np.ones(12, dtype=bool), hands0, hooks, view.seat)
    for i in range(12):
        total, _ = _reference_rollout(ref, i, net, view.seat, opponent, hands0)
        np.testing.assert_allclose(got[i], total, atol=1e-5)
    assert np.abs(got).sum() > 0, "no rollout scored a hand"


def test_seated_at_a_three_player_table():
    env = gin_rummy_v0.raw_env(num_players=3)
    agent = seat_at_tables(make_agent("ppo_search@worlds=4", seed=0, game="gin_rummy"))
    _play_hand(env, [agent], seed=2)


def test_registry_builds_it_for_gin_only():
    spec = "ppo_search@worlds=8@root_k=2@paired_z=1.5@opponent=rules@knock=search"
    agent = make_agent(spec, seed=0, game="gin_rummy")
    got = (agent.worlds, agent.root_k, agent.paired_z, agent.opponent, agent.knock)
    assert got == (8, 2, 1.5, "rules", "search")
    default = make_agent("ppo_search", seed=0, game="gin_rummy")
    got = (default.worlds, default.root_k, default.paired_z, default.opponent, default.knock)
    assert got == (128, 3, 2.0, "rules", "always")
    with pytest.raises(ValueError, match="gin_rummy"):
        make_agent("ppo_search", seed=0, game="rummy51")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"game": "rummy51"}, ValueError, "game must be 'gin_rummy'"),
        ({"worlds": 1}, ValueError, "worlds must be an integer >= 2, got 1"),
        ({"worlds": 8.0}, ArgumentTypeError, "worlds must be an integer"),
        ({"root_k": 1}, ValueError, "root_k must be an integer >= 2, got 1"),
        ({"paired_z": -0.5}, ValueError, "paired_z must be a finite number >= 0"),
        ({"paired_z": float("nan")}, ValueError, "paired_z must be a finite number >= 0"),
        ({"paired_z": True}, ArgumentTypeError, "paired_z must be a number"),
        ({"paired_z": "2"}, TypeError, "paired_z must be a number"),
        ({"checkpoint": "no_such_agent.npz"}, ValueError, "no_such_agent"),
        ({"opponent": "simple"}, ValueError, "opponent must be one of .*'rules'.*got 'simple'"),
        ({"opponent": 1}, TypeError, "opponent must be one of"),
        ({"knock": "never"}, ValueError, "knock must be one of .*'search'.*got 'never'"),
        ({"knock": None}, TypeError, "knock must be one of"),
        ({"oversample": 0}, ValueError, "oversample must be an integer >= 1, got 0"),
        ({"oversample": 2.5}, ArgumentTypeError, "oversample must be an integer"),
        ({"value": "points"}, ValueError, "value must be one of .*'match'.*got 'points'"),
        ({"value": None}, TypeError, "value must be one of"),
    ],
)
def test_bad_settings_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        PolicySearchAgent(seed=0, **kwargs)


@pytest.mark.parametrize("oversample", [1, 4, 9])
def test_oversample_sets_the_uniform_worlds_drawn_per_world_kept(oversample, monkeypatch):
    """The opponent model draws ``oversample`` uniform worlds per world it keeps (the default,
    4, is the Gin belief's own), and the search still plays a legal move."""
    env = gin_rummy_v0.raw_env()
    env.reset(seed=5)
    for _ in range(6):  # into the hand, where the belief weighs the opponent's play
        obs = env.observe(env.agent_selection)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    name = env.agent_selection
    view = SeatView(env, name)
    drawn = []
    sample = SeatView.sample_worlds
    monkeypatch.setattr(
        SeatView, "sample_worlds", lambda self, n, rng: drawn.append(n) or sample(self, n, rng)
    )
    agent = PolicySearchAgent(seed=0, worlds=6, oversample=oversample)
    legal = np.flatnonzero(env.observe(name)["action_mask"])
    assert env.observe(name)["action_mask"][agent.search(view, legal)] == 1
    assert agent.oversample == oversample
    # the paired batch (worlds * root_k rollouts over k candidates): one uniform world to read
    # the phase, then oversample uniform worlds per world kept
    m = 6 * 3 // min(3, legal.size)
    assert drawn[-2:] == [1, m * oversample]


@settings(max_examples=40, deadline=None)
@given(
    value=st.one_of(
        st.integers(-(10**6), 0),
        st.floats(allow_nan=True),
        st.booleans(),
        st.none(),
        st.text(max_size=3),
        st.integers(1, 10**6),
    )
)
def test_oversample_accepts_integers_from_one_and_refuses_anything_else(value):
    """Any setting that is not an integer >= 1 is refused with an error naming it and the
    value; integers >= 1 are kept as given."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    if ok:
        assert PolicySearchAgent(seed=0, worlds=2, oversample=value).oversample == value
    else:
        with pytest.raises((ValueError, TypeError), match=r"oversample must be an integer >= 1"):
            PolicySearchAgent(seed=0, worlds=2, oversample=value)


@settings(max_examples=40, deadline=None)
@given(
    value=st.one_of(
        st.sampled_from(["hand", "match"]),
        st.text(max_size=6),
        st.integers(),
        st.floats(allow_nan=True),
        st.booleans(),
        st.none(),
    )
)
def test_value_accepts_hand_or_match_and_refuses_anything_else(value):
    """``value`` is ``"hand"`` or ``"match"``; anything else is refused with an error naming
    the setting, the choices and the value."""
    if value in ("hand", "match") and isinstance(value, str):
        assert PolicySearchAgent(seed=0, worlds=2, value=value).value == value
    else:
        with pytest.raises((ValueError, TypeError), match=r"value must be one of .*'match'"):
            PolicySearchAgent(seed=0, worlds=2, value=value)


# -- match equity ---------------------------------------------------------------------------


def _slow_equity(target, mean, sd):
    """Reference: the same even match by plain recursion over the scores, the hand points'
    probabilities by the negative binomial's recurrence (not its log-gamma form)."""
    m, v = mean - 1.0, sd * sd
    p = m / v
    r = m * p / (1.0 - p)
    f = [p**r]
    for k in range(target - 1):
        f.append(f[-1] * (k + r) / (k + 1) * (1.0 - p))
    memo = {}

    def w(a, b):
        if a >= target:
            return 1.0
        if b >= target:
            return 0.0
        if (a, b) not in memo:
            rest = 1.0 - sum(f)  # larger hands win the match from any score
            won = sum(fx * w(a + x + 1, b) for x, fx in enumerate(f)) + rest
            lost = sum(fx * w(a, b + x + 1) for x, fx in enumerate(f))
            memo[a, b] = 0.5 * (won + lost)
        return memo[a, b]

    return np.array([[w(a, b) for b in range(target)] for a in range(target)])


@pytest.mark.parametrize(
    ("target", "mean", "sd"), [(1, 17.8, 13.2), (12, 3.0, 2.5), (30, 9.0, 7.0)]
)
def test_match_equity_equals_a_slow_reference(target, mean, sd):
    got = gin_match_equity(target, mean, sd)
    np.testing.assert_allclose(got, _slow_equity(target, mean, sd), atol=1e-9)


def test_match_equity_is_an_even_table_rising_with_ones_own_score():
    w = gin_match_equity(100)
    assert w.shape == (100, 100)
    np.testing.assert_allclose(w + w.T, 1.0, atol=1e-9)  # the model is symmetric
    np.testing.assert_allclose(np.diag(w), 0.5, atol=1e-9)
    assert (np.diff(w, axis=0) > 0).all(), "more points of one's own always help"
    assert (np.diff(w, axis=1) < 0).all(), "more points of the opponent always hurt"
    assert 0.9 < w[99, 0] < 1.0 and 0.0 < w[0, 99] < 0.1
    with pytest.raises(ValueError, match="target must be an integer >= 1, got 0"):
        gin_match_equity(0)
    with pytest.raises(ValueError, match="sd must be a number > 0"):
        gin_match_equity(100, 17.8, 0.0)
    with pytest.raises(ValueError, match="mean must be a number > 1"):
        gin_match_equity(100, 1.0, 3.0)


@settings(max_examples=60, deadline=None)
@given(a=st.integers(0, 250), b=st.integers(0, 250))
def test_match_values_are_zero_sum_and_sure_at_the_target(a, b):
    assume(min(a, b) < 100)  # a match ends when the first seat reaches the target
    v = gin_match_values(np.array([[a, b], [b, a]]), 100)
    np.testing.assert_allclose(v.sum(1), 0.0, atol=1e-12)
    np.testing.assert_allclose(v[0], -v[1], atol=1e-9)  # seats exchanged
    if a >= 100 and b < 100:
        assert v[0, 0] == 1.0
    elif a < 100 and b < 100:
        assert v[0, 0] == pytest.approx(2 * gin_match_equity(100)[a, b] - 1)


def test_match_value_outside_a_match_is_the_hand_value():
    """In a one-hand episode ``value="match"`` plays exactly as ``value="hand"``."""
    env = gin_rummy_v0.raw_env()
    a = [PolicySearchAgent(seed=3, worlds=6, value="match"), PolicySearchAgent(seed=4, worlds=6)]
    b = [PolicySearchAgent(seed=3, worlds=6), PolicySearchAgent(seed=4, worlds=6)]
    assert _play_hand(env, a, seed=13)[0] == _play_hand(env, b, seed=13)[0]


def test_match_value_reads_the_scores_each_hand_ends_at(net):
    """In a match the rollouts keep each world's scores at the end of its hand (the batch
    steps finished worlds on into the next hand), equal to a slow reference playing each
    world alone; the values are the equity of those scores."""
    env = gin_rummy_v0.raw_env(episode="match")
    env.reset(seed=8)
    while env.unwrapped.state_record["hands_played"] < 2:  # into the match: scores differ
        name = env.agent_selection
        env.step(net.act(env.observe(name)))
    view = SeatView(env, env.agent_selection)
    search = PolicySearchAgent(seed=1, worlds=4, value="match")
    worlds, ref, hands0 = _worlds_and_copy(view, 16, seed=3)
    hooks = search.game_hooks("gin_rummy")
    acc = search._rollout(worlds, np.ones(16, dtype=bool), hands0, hooks, view.seat)
    end = search._end_scores.copy()
    for i in range(16):
        _, scores = _reference_rollout(ref, i, net, view.seat, "rules", hands0)
        np.testing.assert_array_equal(end[i], scores)
    got = search._values(acc, worlds, 1.0)
    np.testing.assert_allclose(got, gin_match_values(end, 100))
    assert search._end_scores is None, "the scores are read once, by their own batch"


def test_a_match_played_with_match_values(net):
    env = gin_rummy_v0.raw_env(episode="match", max_steps=120)
    agent = make_agent("ppo_search@worlds=4@value=match", seed=0, game="gin_rummy")
    assert agent.value == "match"
    _play_hand(env, [agent, net], seed=4)
    assert agent.move_seconds, "no decision was searched"
