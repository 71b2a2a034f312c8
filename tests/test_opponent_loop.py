"""The Gymnasium vector env's compiled opponents (``rummy_agents.opponent_loop``) against its
Python loop, and numpy's generator in compiled code (``rummy_agents.pcg64``) against numpy.

The Python loop (``RummySingleAgentVectorEnv._play_opponents``: rounds of ``step_rows`` and
agent calls, the agents built per game as Python objects) is the reference: an env forced onto
it and an env on the compiled loops are reset and stepped alike, and everything they return
(observations, rewards, flags, every info entry, masks) must be equal at every step. The
Gymnasium trajectories recorded before the loops existed (``tests/test_trajectories.py``) are
the second proof.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rummy_agents
import rummy_env  # noqa: F401 - registers the ids
from rummy_agents import pcg64
from rummy_agents.opponent_loop import REFERENCE
from rummy_env.rules.base import WARMUP_CALLS


def _python_loop(env: Any) -> Any:
    """Force ``env`` (not reset yet) onto the Python loop."""
    env._per_game = None
    env._shared_policy = lambda: None
    return env


def _same(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, tuple):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{k}]")
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=where)


def _play_both(gym_id: str, kwargs: dict[str, Any], n: int, steps: int, seed: int,
               fused: Any = None) -> int:  # fmt: skip
    """Step a compiled-loop env and a Python-loop env alike; returns the episodes ended."""
    env = gymnasium.make_vec(gym_id, num_envs=n, **kwargs)
    ref = _python_loop(gymnasium.make_vec(gym_id, num_envs=n, **kwargs))
    if fused is not None:
        fused(env)
    out = env.reset(seed=seed)
    _same(out, ref.reset(seed=seed), "reset")
    rng = np.random.default_rng(seed)
    ended = 0
    for t in range(steps):
        masks = env.action_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        got, want = env.step(acts), ref.step(acts)
        _same(got, want, f"step {t}")
        ended += int((got[2] | got[3]).sum())
    np.testing.assert_array_equal(env._seat, ref._seat)
    return ended


CASES = [
    ("rummy/GinRummy-v0", {}, 24, 60),
    ("rummy/GinRummy-v0", {"opponent": "planner", "learner_seat": 0}, 8, 50),
    ("rummy/GinRummy-v0", {"opponent": "novice", "auto_meld": False, "oklahoma": True}, 8, 80),
    ("rummy/GinRummy-v0", {"opponent": "simple_best", "episode": "match", "target": 40}, 8, 80),
    ("rummy/FiveHundredRum-v1", {}, 8, 60),
    ("rummy/FiveHundredRum-v1", {"num_players": 3, "opponent": "greedy@hold_melds=3"}, 6, 50),
    ("rummy/FiveHundredRum-v1", {"num_players": 4, "opponent": "greedy@hold_jokers=true"}, 4, 40),
    ("rummy/Rummy51-v1", {}, 8, 50),
    ("rummy/Rummy51-v1", {"num_players": 3, "opponent": "greedy@hold_open=3"}, 6, 40),
]


@pytest.mark.parametrize(("gym_id", "kwargs", "n", "steps"), CASES)
def test_compiled_loop_equals_python_loop(gym_id, kwargs, n, steps) -> None:
    env = gymnasium.make_vec(gym_id, num_envs=2, **kwargs)
    assert env._per_game is not None or env._shared_policy() is not None, "not compiled"
    assert _play_both(gym_id, kwargs, n, steps, seed=5) > 0, "no episode ended"


def test_parallel_loop_equals_python_loop() -> None:
    """Over ``PARALLEL_MIN_BATCH`` games the loops may run threaded: same results."""
    _play_both("rummy/FiveHundredRum-v1", {}, 260, 12, seed=8)
    _play_both("rummy/GinRummy-v0", {}, 300, 40, seed=9)
    _play_both("rummy/GinRummy-v0", {"opponent": "planner", "auto_meld": False}, 260, 30, seed=2)
    gin = gymnasium.make_vec("rummy/GinRummy-v0", num_envs=256)
    gin.reset(seed=0)
    for _ in range(WARMUP_CALLS + 12):  # the threaded kernel's warm-up, then a timing trial
        gin.step(np.array([np.flatnonzero(m)[0] for m in gin.action_masks()]))
    assert gin._shared_run.kernels[0] is gin._shared_policy().shared_parallel
    assert all(gin._shared_run.loaded), "both kernels take turns in the timing trial"
    env = gymnasium.make_vec("rummy/Rummy51-v1", num_envs=260)
    env.reset(seed=1)
    run = env._per_game_run
    assert env._per_game.per_game_parallel in run.kernels
    for _ in range(WARMUP_CALLS + 12):
        env.step(np.array([np.flatnonzero(m)[0] for m in env.action_masks()]))
    assert all(run.loaded), "both kernels take turns in the timing trial"


@pytest.mark.parametrize("chunks", [1, 3, 7])
def test_per_game_loop_results_do_not_depend_on_its_chunks(monkeypatch, chunks) -> None:
    """``PerThread`` runs one worker per numba thread, each taking the next games from a
    shared queue: any count of workers gives the Python loop's results, with a game count
    that is no multiple of the games taken at a time (the first ``WARMUP_CALLS`` calls run
    the threaded kernel).
    """
    from rummy_agents import opponent_loop

    monkeypatch.setattr(opponent_loop, "get_num_threads", lambda: chunks)
    assert 259 % opponent_loop.GAMES_PER_TAKE != 0
    _play_both("rummy/FiveHundredRum-v1", {}, 259, 8, seed=chunks)


def test_fetch_add_hands_every_value_out_once() -> None:
    """The per-game loop's queue: threads taking blocks of a counter at once get every block
    exactly once, and the counter ends at the total taken.
    """
    from numba import njit, prange

    from rummy_agents.opponent_loop import _fetch_add

    @njit(parallel=True)
    def take(n_workers, per_worker, got, counter):
        for w in prange(n_workers):
            for k in range(per_worker):
                got[w, k] = _fetch_add(counter, 0, 3)

    got = np.zeros((4, 500), np.int64)
    counter = np.full(8, 5, np.int64)
    take(4, 500, got, counter)
    assert counter[0] == 5 + 3 * 4 * 500
    np.testing.assert_array_equal(np.sort(got.ravel()), np.arange(5, 6005, 3))


def _refer_once(env: Any) -> None:
    """Make the per-game loop hand its first opponent move of each call to the reference."""
    cp = env._per_game
    real = env._per_game_run

    def first_to_reference(*args: Any) -> tuple[int, int, int, int]:
        states, seat = args[0], args[6]
        learner_from, start = args[10], args[-1]
        if learner_from == 0:  # a step: the learner's moves first, as the loop does
            return real(*args)
        waiting = np.flatnonzero(states["cur"][start:] != seat[start:])
        if waiting.size == 0:
            return real(*args)
        i = int(start + waiting[0])
        cur = int(states["cur"][i])
        return REFERENCE, i, cur - (cur > seat[i]), -1

    env._per_game_run = first_to_reference
    assert cp is env._per_game


def test_reference_moves_resume_the_loop() -> None:
    """A move left to the Python reference (``_reference_move``, with the game's generator) and
    the loop resumed from that game give the Python loop's results.
    """
    _play_both("rummy/FiveHundredRum-v1", {"num_players": 3}, 6, 30, seed=3, fused=_refer_once)
    _play_both("rummy/Rummy51-v1", {}, 6, 30, seed=4, fused=_refer_once)


def test_illegal_compiled_move_raises() -> None:
    env = gymnasium.make_vec("rummy/FiveHundredRum-v1", num_envs=3)

    def illegal(*args: Any) -> tuple[int, int, int, int]:
        return 2, 1, 0, 5

    env._per_game_run = illegal
    with pytest.raises(RuntimeError, match=r"opponent 0 .* chose illegal action 5 in game 1"):
        env.reset(seed=0)


def _rng_state(agent: Any) -> Any:
    return agent.rng.bit_generator.state


@pytest.mark.parametrize("n", [8, 260])
def test_shared_loop_keeps_the_users_agents_generator_current(n: int) -> None:
    """An agent the user passes plays compiled from a state array (not its numpy generator):
    after every step its generator is where the Python loop's agent's is, and a generator the
    array cannot hold (not ``PCG64``) is drawn from as it is.
    """
    from rummy_agents.gin_rummy_rules import GinRummySimpleAgent
    from rummy_env.wrappers import RummySingleAgentVectorEnv

    mine, theirs = GinRummySimpleAgent(seed=3), GinRummySimpleAgent(seed=3)
    env = RummySingleAgentVectorEnv("gin_rummy", n, opponents=mine)
    ref = _python_loop(RummySingleAgentVectorEnv("gin_rummy", n, opponents=theirs))
    _same(env.reset(seed=4), ref.reset(seed=4), "reset")
    rng = np.random.default_rng(4)
    for t in range(40):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
        _same(env.step(acts), ref.step(acts), f"step {t}")
        assert _rng_state(mine) == _rng_state(theirs), f"step {t}"
    assert env._ties_of is None
    philox = GinRummySimpleAgent(seed=0)
    philox.rng = np.random.Generator(np.random.Philox(5))
    other = GinRummySimpleAgent(seed=0)
    other.rng = np.random.Generator(np.random.Philox(5))
    env = RummySingleAgentVectorEnv("gin_rummy", 8, opponents=philox)
    ref = _python_loop(RummySingleAgentVectorEnv("gin_rummy", 8, opponents=other))
    _same(env.reset(seed=6), ref.reset(seed=6), "reset")
    for t in range(30):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
        _same(env.step(acts), ref.step(acts), f"philox step {t}")
    _same(_rng_state(philox), _rng_state(other), "philox generator")


def test_shared_loop_hands_its_draws_back_to_the_python_agent() -> None:
    """The env's own agent: the compiled loop keeps its ties in the state array from step to
    step; a step on the Python loop between (the agent's ``act_batch``), a round left to the
    reference, and a reset that builds the agent anew all draw on from where it stopped:
    the Python loop's results throughout.
    """
    env = gymnasium.make_vec("rummy/GinRummy-v0", num_envs=12).unwrapped
    ref = _python_loop(gymnasium.make_vec("rummy/GinRummy-v0", num_envs=12).unwrapped)
    compiled = env._shared_policy
    calls = [0]

    def refer_some(*args: Any) -> tuple[int, int, int]:
        """Every fifth step: the learner's moves here, then the round to the reference."""
        states, seat, learner, actions, rows = args[0], args[6], args[10], args[11], args[21]
        calls[0] += learner
        if not learner or calls[0] % 5:
            return real(*args)
        ends = dict(zip(("term", "trunc", "final_obs", "final_info", "final_seat", "started"),
                        args[13:19], strict=True))  # fmt: skip
        env._advance(env._rows, actions, args[12], ends)
        waiting = np.flatnonzero(states["cur"] != seat)
        rows[: waiting.size] = waiting
        return (REFERENCE, waiting.size, 0) if waiting.size else (0, 0, 0)

    def with_reference() -> Any:
        cp = compiled()
        return cp._replace(shared=refer_some)

    real = compiled().shared
    _same(env.reset(seed=7), ref.reset(seed=7), "reset")
    rng = np.random.default_rng(7)
    held = 0
    for t in range(90):
        env._shared_policy = (lambda: None) if t % 7 == 3 else with_reference
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
        _same(env.step(acts), ref.step(acts), f"step {t}")
        held += env._ties_of is not None
        if t == 45:
            _same(env.reset(seed=8), ref.reset(seed=8), "reset 8")
    assert held > 40, "the array held the ties across steps"
    assert calls[0] > 60
    env._sync_ties()
    assert _rng_state(env._shared[0]) == _rng_state(ref._shared[0])


def test_compiled_policy_is_kept_and_follows_the_agents_options() -> None:
    """``compiled_policy`` answers the same object while class, observation size and options
    stay, a new one when an option changes (read at every call, as ``act`` reads it), and
    None for a generator the loop cannot draw from; an option changed mid-run plays as the
    Python loop plays it.
    """
    from rummy_agents.gin_rummy_rules import GinRummyPlannerAgent, GinRummySimpleAgent
    from rummy_env.wrappers import RummySingleAgentVectorEnv

    game = gymnasium.make_vec("rummy/GinRummy-v0", num_envs=2).unwrapped.game
    manual = gymnasium.make_vec("rummy/GinRummy-v0", num_envs=2, auto_meld=False).unwrapped.game
    agent = GinRummySimpleAgent(seed=1)
    first = agent.compiled_policy(game)
    assert agent.compiled_policy(game) is first
    assert agent.compiled_policy(manual).params != first.params
    agent.take_rule = "best_meld"
    changed = agent.compiled_policy(game)
    assert changed.params != first.params
    agent.take_rule = "any_meld"
    assert agent.compiled_policy(game).params == first.params
    planner = GinRummyPlannerAgent(seed=1)
    before = planner.compiled_policy(game)
    planner.risk_weight = 0.5
    assert planner.compiled_policy(game).params != before.params
    agent.rng = np.random.RandomState(0)  # type: ignore[assignment]
    assert agent.compiled_policy(game) is None

    mine, theirs = GinRummySimpleAgent(seed=5), GinRummySimpleAgent(seed=5)
    env = RummySingleAgentVectorEnv("gin_rummy", 16, opponents=mine)
    ref = _python_loop(RummySingleAgentVectorEnv("gin_rummy", 16, opponents=theirs))
    _same(env.reset(seed=9), ref.reset(seed=9), "reset")
    rng = np.random.default_rng(9)
    for t in range(60):
        if t == 30:
            mine.take_rule = theirs.take_rule = "best_meld"
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
        _same(env.step(acts), ref.step(acts), f"step {t}")


# -- numpy's generator in compiled code ----------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    ns=st.lists(st.one_of(st.integers(1, 60), st.integers(1, 2**32)), min_size=1, max_size=300),
)
def test_pcg64_draws_what_numpy_draws(seed: int, ns: list[int]) -> None:
    state = np.zeros(pcg64.STATE_SIZE, np.uint64)
    pcg64.seed_state(seed, state)
    gen = np.random.default_rng(seed)
    assert pcg64.to_generator(state).bit_generator.state == gen.bit_generator.state
    for n in ns:
        assert pcg64.integers(state, n) == int(gen.integers(n))
    assert pcg64.to_generator(state).bit_generator.state == gen.bit_generator.state
    back = np.zeros_like(state)
    pcg64.state_of(gen, back)
    np.testing.assert_array_equal(back, state)


def test_pcg64_state_of_rejects_other_generators() -> None:
    with pytest.raises(ValueError, match="gen must draw from PCG64, got MT19937"):
        pcg64.state_of(np.random.Generator(np.random.MT19937(0)), np.zeros(6, np.uint64))


# -- the single env ------------------------------------------------------------------------------


def _single_python(env: Any) -> Any:
    """Force a ``gymnasium.make`` env onto its Python loop (AEC steps and agent calls)."""
    env.unwrapped._compile_opponents = lambda: None
    return env


SINGLE_CASES = [
    ("rummy/GinRummy-v0", {}),
    ("rummy/GinRummy-v0", {"opponent": "planner", "oklahoma": True}),
    ("rummy/GinRummy-v0", {"opponent": "novice", "auto_meld": False, "learner_seat": 1}),
    ("rummy/GinRummy-v0", {"opponent": "simple_best", "episode": "match", "target": 40}),
    ("rummy/FiveHundredRum-v1", {}),
    ("rummy/FiveHundredRum-v1", {"num_players": 3, "opponent": "greedy@hold_melds=3"}),
    ("rummy/Rummy51-v1", {"num_players": 3}),
    ("rummy/Rummy51-v1", {"opponent": "greedy@hold_open=3"}),
]


def _single_both(gym_id: str, kwargs: dict[str, Any], steps: int, seed: int,
                 patch: Any = None) -> None:  # fmt: skip
    env = gymnasium.make(gym_id, **kwargs)
    ref = _single_python(gymnasium.make(gym_id, **kwargs))
    if patch is not None:
        patch(env.unwrapped)
    _same(env.reset(seed=seed), ref.reset(seed=seed), "reset")
    assert env.unwrapped._compiled is not None, "not compiled"
    rng = np.random.default_rng(seed)
    episodes = 0
    for t in range(steps):
        mask = env.unwrapped.action_masks()
        np.testing.assert_array_equal(mask, ref.unwrapped.action_masks())
        a = int(rng.choice(np.flatnonzero(mask))) if t % 23 else int(rng.integers(mask.size))
        got, want = env.step(a), ref.step(a)
        _same(got, want, f"step {t}")
        for name in ("rewards", "_cumulative_rewards", "terminations", "truncations", "infos"):
            assert getattr(env.unwrapped.aec, name) == getattr(ref.unwrapped.aec, name), name
        assert env.unwrapped.aec.agent_selection == ref.unwrapped.aec.agent_selection
        assert env.unwrapped.aec.last_action == ref.unwrapped.aec.last_action
        if got[2] or got[3]:
            episodes += 1
            _same(env.reset(), ref.reset(), f"reset after step {t}")
    assert episodes > 0, "no episode ended"


@pytest.mark.parametrize(("gym_id", "kwargs"), SINGLE_CASES)
def test_single_env_compiled_equals_python(gym_id, kwargs) -> None:
    """``gymnasium.make``: the compiled opponents (``play_single``) and the AEC env's
    bookkeeping after them equal the Python loop's, step by step, illegal actions included.
    """
    _single_both(gym_id, kwargs, 250, seed=11)


REFERRED: list[int] = []


def _single_refer(env: Any) -> None:
    """Every other compiled call of opponents only (at resets, after a hand, after a reference
    move) hands its first opponent move to the reference.
    """
    calls = [0]
    compile_real = env._compile_opponents

    def compile_opponents() -> None:
        compile_real()
        real = env._single

        def single(*args: Any) -> Any:
            calls[0] += 1
            states, learner, action, pending = args[0], args[6], args[7], args[8]
            q = int(states["cur"][0])
            if calls[0] % 2 or action >= 0 or pending >= 0 or q == learner or states["done"][0]:
                return real(*args)
            REFERRED.append(q)
            more, hands = args[11], args[10]
            return (REFERENCE, -1, -1, 0.0, more, False, False, int(hands), q - (q > learner),
                    q)  # fmt: skip

        env._single = single

    env._compile_opponents = compile_opponents


def test_single_env_reference_moves() -> None:
    REFERRED.clear()
    _single_both("rummy/GinRummy-v0", {}, 120, seed=2, patch=_single_refer)
    _single_both("rummy/FiveHundredRum-v1", {"num_players": 3}, 80, seed=3, patch=_single_refer)
    assert len(REFERRED) >= 4


# -- the agents' generators, built on first use ---------------------------------------------------


def _seeded_agents() -> list[Any]:
    from rummy_agents.five_hundred_rum_greedy import FiveHundredRumGreedyAgent
    from rummy_agents.gin_rummy_rules import (
        GinRummyNoviceAgent,
        GinRummyPlannerAgent,
        GinRummySimpleAgent,
    )
    from rummy_agents.rummy51_greedy import Rummy51GreedyAgent

    return [
        GinRummyNoviceAgent,
        GinRummySimpleAgent,
        GinRummyPlannerAgent,
        FiveHundredRumGreedyAgent,
        Rummy51GreedyAgent,
    ]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(0, 4), n=st.integers(2, 1000))
def test_lazy_generator_is_default_rng_of_the_seed(seed: int, k: int, n: int) -> None:
    cls = _seeded_agents()[k]
    agent = cls(seed=seed)
    state = np.zeros(pcg64.STATE_SIZE, np.uint64)
    agent.write_rng_state(state)  # from the seed: the generator is not built
    assert agent._rng is None
    want = np.random.default_rng(seed)
    np.testing.assert_array_equal(state, _state(want))
    assert agent.rng.bit_generator.state == want.bit_generator.state
    drawn = [int(agent.rng.integers(n)) for _ in range(5)]
    assert drawn == [int(want.integers(n)) for _ in range(5)]
    agent.write_rng_state(state)  # built now: its state, advanced
    np.testing.assert_array_equal(state, _state(want))


def _state(gen: np.random.Generator) -> np.ndarray:
    out = np.zeros(pcg64.STATE_SIZE, np.uint64)
    pcg64.state_of(gen, out)
    return out


@pytest.mark.parametrize("k", range(5))
def test_generator_seeds_outside_the_lazy_range_behave_as_before(k: int) -> None:
    cls = _seeded_agents()[k]
    with pytest.raises(ValueError):
        cls(seed=-1)  # numpy's error, at construction as before
    big = cls(seed=2**40)
    assert big.rng.bit_generator.state == np.random.default_rng(2**40).bit_generator.state
    gen = np.random.default_rng(3)
    agent = cls(seed=0)
    agent.rng = gen  # a generator set by hand is the one drawn from
    assert agent.rng is gen and agent.rng_is_generator()
    agent.rng = np.random.RandomState(0)  # the compiled decisions draw from Generators only
    assert not agent.rng_is_generator()


@pytest.mark.parametrize("gym_id", ["rummy/GinRummy-v0", "rummy/Rummy51-v1"])
def test_single_env_keeps_the_registry_opponents_policy(gym_id: str) -> None:
    """After the first episode a registry opponent is not built unless the reference plays one
    of its moves (the differential tests above run over those episodes); an agent object as
    opponent is never rebuilt, and a user's factory is rebuilt every episode.
    """
    env = gymnasium.make(gym_id).unwrapped
    env.reset(seed=0)
    assert env._template is not None and len(env._opponents) == 1
    env.reset(seed=1)
    assert env._compiled is env._template and env._opponents == {}
    name = env._opponent_names[0]
    agent = env._opponent(name)  # built on demand, with this episode's seed
    assert agent.rng.bit_generator.state == (
        np.random.default_rng(env._opponent_seeds[name]).bit_generator.state
    )

    built: list[int] = []

    class Factory:
        def build(self, seed: int) -> Any:
            built.append(seed)
            spec = ("greedy", "rummy51") if "51" in gym_id else ("simple", "gin_rummy")
            return rummy_agents.agent_spec(*spec).build(seed)

    env = gymnasium.make(gym_id, opponent=Factory()).unwrapped
    for s in range(3):
        env.reset(seed=s)
        assert env._compiled is not None
    assert len(built) == 3 and env._template is None
