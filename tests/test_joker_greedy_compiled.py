"""The compiled greedy agents of the joker games against their Python reference.

``FiveHundredRumGreedyAgent`` and ``Rummy51GreedyAgent``: ``act`` / ``act_batch`` run the
kernels of ``rummy_agents.joker_greedy_kernels``; ``act_reference`` is the Python rules. On
decisions of real games (``rummy_env.make_vec``, hypothesis over the rule options and the
agent's options, the agents' moves mixed with random legal ones) both must choose every action
alike and leave their generators in the same state. Malformed observations (which the kernel
leaves to the reference) must give the same action or the same error.

Sizes: ``RUMMY_GREEDY_DIFF_SCALE`` multiplies the examples and steps (default 1: the CI run,
about 30 s on two cores once numba's caches are warm); the decisions compared per agent are
printed with ``-s``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_agents.base import SeatView
from rummy_agents.five_hundred_rum_greedy import FiveHundredRumGreedyAgent, MeldPlanner
from rummy_agents.joker_greedy_kernels import ConfigView
from rummy_agents.rummy51_greedy import Rummy51GreedyAgent, Rummy51Planner
from rummy_env import five_hundred_rum_v1, rummy51_v1
from rummy_env.rules.five_hundred_rum.config import FiveHundredRumConfig
from rummy_env.rules.rummy51.config import Rummy51Config

SCALE = float(os.environ.get("RUMMY_GREEDY_DIFF_SCALE", "1"))
COMPARED: dict[str, int] = {}
"""Decisions compared per family (printed at the end of the module with ``-s``)."""


def examples(n: int) -> int:
    return max(1, int(round(n * SCALE)))


def same_state(a: np.random.Generator, b: np.random.Generator) -> bool:
    return a.bit_generator.state == b.bit_generator.state


def compare_games(
    game: str,
    options: dict[str, Any],
    make: Callable[[int], Any],
    seed: int,
    n_envs: int,
    steps: int,
    random_frac: float,
    family: str,
) -> None:
    """Play ``n_envs`` games of ``rummy_env.make_vec`` for ``steps`` rounds; at every round
    the compiled agent decides every row (row 0 by ``act``, the rest by ``act_batch``) and the
    reference agent (same seed) decides them in the same order with ``act_reference``: the
    actions and the generators' states must be equal. The games then play the agent's action,
    or with probability ``random_frac`` a random legal one.
    """
    venv = rummy_env.make_vec(game, n_envs, seed=seed, **options)
    cfg = venv.config
    compiled = make(seed).bind(cfg)
    ref = make(seed)
    view = ConfigView(cfg)
    rng = np.random.default_rng(seed)
    obs, _ = venv.reset()
    for step in range(steps):
        o, m = obs["observation"], obs["action_mask"]
        got = np.empty(n_envs, np.int64)
        got[0] = compiled.act({"observation": o[0], "action_mask": m[0]}, view)
        got[1:] = compiled.act_batch(o[1:], m[1:])
        want = [
            ref.act_reference({"observation": o[i], "action_mask": m[i]}, view)
            for i in range(n_envs)
        ]
        assert got.tolist() == want, (step, np.flatnonzero(got != np.array(want)), options)
        assert same_state(compiled.rng, ref.rng), (step, options)
        assert np.all(m[np.arange(n_envs), got] == 1)
        acts = got.copy()
        for i in np.flatnonzero(rng.random(n_envs) < random_frac):
            acts[i] = rng.choice(np.flatnonzero(m[i]))
        obs, *_ = venv.step(acts)
    COMPARED[family] = COMPARED.get(family, 0) + n_envs * steps
    if os.environ.get("RUMMY_GREEDY_DIFF_VERBOSE"):
        print(family, options, getattr(compiled, "__dict__", {}).get("hold_melds"), seed)


@pytest.fixture(scope="module", autouse=True)
def report_counts():
    yield
    for family, n in sorted(COMPARED.items()):
        print(f"\n{family}: {n} decisions compared")


# -- 500 Rum -------------------------------------------------------------------------------------


@st.composite
def options500(draw: st.DrawFn) -> dict[str, Any]:
    p = draw(st.integers(2, 8))
    opts: dict[str, Any] = {
        "num_players": p,
        "no_jokers": draw(st.booleans()),
        "values_5_10_15": draw(st.booleans()),
        "rummy_call": draw(st.sampled_from(["full", "layoff_only", "none"])),
        "must_meld_discard": draw(st.booleans()),
        "deepest_card_new_meld": draw(st.booleans()),
        "going_out": draw(
            st.sampled_from(["any", "discard_required", "floating", "unplayable_discard"])
        ),
        "episode": draw(st.sampled_from(["hand", "game"])),
        "target": draw(st.sampled_from([100, 500])),
        "max_pile_draws": draw(st.sampled_from([5, 100])),
    }
    if p <= 4 and draw(st.booleans()):
        opts["num_decks"] = 2
    if p >= 7:
        opts["num_decks"] = 2  # one deck cannot deal 7 cards to 7 or 8 players without jokers
    FiveHundredRumConfig.from_kwargs(**opts)  # valid
    return opts


agent500 = st.fixed_dictionaries(
    {
        "hold_melds": st.one_of(st.none(), st.integers(0, 8)),
        "hold_jokers": st.booleans(),
        "node_limit": st.sampled_from([3000, 3000, 40]),
    }
)


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
@given(options=options500(), agent=agent500, seed=st.integers(0, 2**20))
def test_greedy500_compiled_matches_reference(options, agent, seed):
    compare_games(
        "five_hundred_rum",
        options,
        lambda s: FiveHundredRumGreedyAgent(seed=s, **agent),
        seed,
        n_envs=16,
        steps=100,
        random_frac=0.25,
        family="500 Rum greedy",
    )


def test_greedy500_default_games_match_reference():
    """The standard rules with the default agent and ``hold_melds=3``, many decisions."""
    for k, agent in enumerate([{}, {"hold_melds": 3}, {"hold_melds": 2, "hold_jokers": False}]):
        compare_games(
            "five_hundred_rum",
            {"num_players": 2 + k},
            lambda s, a=agent: FiveHundredRumGreedyAgent(seed=s, **a),
            100 + k,
            n_envs=16,
            steps=examples(60),
            random_frac=0.2,
            family="500 Rum greedy",
        )


# -- Rummy 51 --------------------------------------------------------------------------------------


@st.composite
def options51(draw: st.DrawFn) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "num_players": draw(st.integers(2, 6)),
        "opening_threshold": draw(st.sampled_from([51, 51, 0, 20, 40, 70, 120])),
        "max_reshuffles": draw(st.sampled_from([0, 2])),
        "retrieved_joker_must_be_melded": draw(st.booleans()),
        "discard_draw_requires_opening": draw(st.booleans()),
        "episode": draw(st.sampled_from(["hand", "match"])),
        "elimination": draw(st.sampled_from([40, 101])),
        "max_pile_draws": draw(st.sampled_from([5, 100])),
    }
    Rummy51Config.from_kwargs(**opts)  # valid
    return opts


agent51 = st.fixed_dictionaries(
    {
        "take_gain": st.sampled_from(["penalty", "any"]),
        "near_order": st.booleans(),
        "joker_layoff": st.sampled_from(["always", "out"]),
        "hold_melds": st.one_of(st.none(), st.integers(0, 6)),
        "hold_open": st.one_of(st.none(), st.integers(0, 6)),
        "node_limit": st.sampled_from([3000, 3000, 40]),
    }
)


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
@given(options=options51(), agent=agent51, seed=st.integers(0, 2**20))
def test_greedy51_compiled_matches_reference(options, agent, seed):
    compare_games(
        "rummy51",
        options,
        lambda s: Rummy51GreedyAgent(seed=s, **agent),
        seed,
        n_envs=16,
        steps=100,
        random_frac=0.25,
        family="Rummy 51 greedy",
    )


def test_greedy51_registry_agents_match_reference():
    """``greedy``, ``greedy_plus`` and ``hold_open`` of the standard rules, many decisions."""
    plus = {"take_gain": "any", "near_order": True, "joker_layoff": "out", "hold_melds": 3}
    for k, agent in enumerate([{}, plus, {"hold_open": 3}]):
        compare_games(
            "rummy51",
            {"num_players": 2 + k},
            lambda s, a=agent: Rummy51GreedyAgent(seed=s, **a),
            200 + k,
            n_envs=16,
            steps=examples(60),
            random_frac=0.2,
            family="Rummy 51 greedy",
        )


def compare_record_reading(
    options: dict[str, Any], agent: dict[str, Any], seed: int, n_envs: int, steps: int
) -> int:
    """Play ``n_envs`` games of ``rummy_env.make_vec("rummy51")`` for ``steps`` rounds (the
    compiled agent's moves, a quarter random legal ones); at every round each row is decided
    from the observation the env wrote (``greedy51_scratch``, trusted, as the opponent loop
    did) and from the game record (``greedy51_rec``, what the loop does now, with no
    observation written), each from a copy of one generator: equal actions and generator
    states. Returns the decisions compared.
    """
    from rummy_agents import joker_greedy_kernels as J
    from rummy_agents.pcg64 import seed_state

    venv = rummy_env.make_vec("rummy51", n_envs, seed=seed, **options)
    game = venv.game
    bot = Rummy51GreedyAgent(seed=seed, **agent)
    rng = np.random.default_rng(seed)
    obs, _ = venv.reset()
    prm = None
    scratch = None
    gen = np.zeros(6, np.uint64)
    for step in range(steps):
        o = obs["observation"]
        if prm is None:
            (prm,) = bot._kernel_params(venv.config, o[0], game.masks[0])
            scratch = J.scratch51(prm, game.masks.shape[1])
        acts = np.empty(n_envs, np.int64)
        for i in range(n_envs):
            seed_state(int(rng.integers(2**31)), gen)
            g1, g2 = gen.copy(), gen.copy()
            a1 = J.greedy51_scratch(o, game.masks, i, prm, g1, scratch, True)
            a2 = J.greedy51_rec(game.states[i], game.cfg, game.masks, i, prm, g2, scratch)
            assert a1 == a2, (step, i, a1, a2, options, agent, seed)
            assert np.array_equal(g1, g2), (step, i, options, agent, seed)
            legal = np.flatnonzero(game.masks[i] == 1)
            acts[i] = a1 if a1 >= 0 and rng.random() >= 0.25 else rng.choice(legal)
        obs, *_ = venv.step(acts)
    return n_envs * steps


@settings(
    max_examples=examples(45),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
@given(options=options51(), agent=agent51, seed=st.integers(0, 2**20))
def test_greedy51_reads_the_record_as_the_observation(options, agent, seed):
    """The opponent loop's Rummy 51 decision reads the game record, not an observation it
    would have to write: every rule option and agent option, 2-6 players, the same action
    and draws as the observation's reading on every position (with the test above, the
    Python reference's).
    """
    n = compare_record_reading(options, agent, seed, n_envs=16, steps=examples(150))
    COMPARED["Rummy 51 greedy, record read"] = COMPARED.get("Rummy 51 greedy, record read", 0) + n


# -- both games ----------------------------------------------------------------------------------

GAMES = {
    "five_hundred_rum": (
        five_hundred_rum_v1,
        {"num_players": 3, "values_5_10_15": True},
        lambda s: FiveHundredRumGreedyAgent(seed=s, hold_melds=1),
    ),
    "rummy51": (
        rummy51_v1,
        {"num_players": 3, "discard_draw_requires_opening": True},
        lambda s: Rummy51GreedyAgent(seed=s, hold_melds=2, near_order=True),
    ),
}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_act_matches_reference_in_the_aec_env(game):
    """``act`` with a seat's view and without one (the layout inferred), one decision at a
    time.
    """
    mod, options, make = GAMES[game]
    env = mod.raw_env(**options)
    env.reset(seed=3)
    agents = [make(4) for _ in range(4)]
    rng = np.random.default_rng(0)
    for _ in range(examples(400)):
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            env.reset(seed=int(rng.integers(1 << 20)))
            continue
        obs = env.observe(name)
        view = SeatView(env, name)
        a = agents[0].act(obs, view)
        assert a == agents[1].act_reference(obs, view)
        assert agents[2].act(obs) == agents[3].act_reference(obs)
        assert same_state(agents[0].rng, agents[1].rng)
        assert same_state(agents[2].rng, agents[3].rng)
        env.step(a if rng.random() < 0.8 else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def outcome(fn: Callable[[], int]) -> tuple[str, Any]:
    try:
        return "action", fn()
    except Exception as e:  # noqa: BLE001 - the same error either way
        return type(e).__name__, str(e)


def random_play(env, rng: np.random.Generator, decisions: int):
    """``decisions`` turns of random legal play (a finished episode deals again): yields each
    seat to act and its observation before the move is drawn from ``rng``.
    """
    for _ in range(decisions):
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            env.reset(seed=int(rng.integers(1 << 20)))
            continue
        obs = env.observe(name)
        yield name, obs
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def assert_decides_as_the_reference(a, b, row: dict, view: SeatView) -> None:
    """``a.act`` and ``b.act_reference`` give the same action (or error), and leave their
    generators in the same state.
    """
    assert outcome(lambda: a.act(row, view)) == outcome(lambda: b.act_reference(row, view))
    assert same_state(a.rng, b.rng)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("game", sorted(GAMES))
def test_malformed_observations_decide_as_the_reference(game):
    """Values the kernel leaves to the reference (not finite, out of range, pieces that do not
    read as a table): the same action, or the same error, and the same generator state.
    """
    mod, options, make = GAMES[game]
    env = mod.raw_env(**options)
    env.reset(seed=8)
    lay = env.layout
    rng = np.random.default_rng(1)
    a, b = make(2), make(2)
    n = 0
    for name, obs in random_play(env, rng, examples(400)):
        bad = obs["observation"].copy()
        for _ in range(int(rng.integers(1, 4))):
            piece = lay.pieces[int(rng.integers(len(lay.pieces)))]
            i = piece.offset + int(rng.integers(piece.size))
            bad[i] = rng.choice([np.nan, np.inf, -1.0, 0.01, 0.3, 0.5, 1.0, 2.0, 3.7, 1e7])
        mask = obs["action_mask"]
        if rng.random() < 0.05:
            mask = np.zeros_like(mask)
        row = {"observation": bad, "action_mask": mask}
        assert_decides_as_the_reference(a, b, row, SeatView(env, name))
        n += 1
    assert n > 0


@pytest.mark.parametrize("default_agent", [True, False])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_masks_with_other_entries_decide_as_the_reference(game, default_agent):
    """Mask entries other than 0 and 1 (int8 2 and -1): legal means ``== 1`` but a plan step
    is played where the entry is not 0, so with every placement's 1 turned into 2 no
    placement is legal and the plan's steps still are (the kernels skip the plan only where
    every placement entry is 0). The same action and generator state as the reference.
    """
    mod, options, make = GAMES[game]
    env = mod.raw_env(**options)
    env.reset(seed=11)
    lay = env.layout
    rng = np.random.default_rng(2)
    if default_agent:
        agent = FiveHundredRumGreedyAgent if game == "five_hundred_rum" else Rummy51GreedyAgent
        a, b = agent(seed=2), agent(seed=2)
    else:
        a, b = make(2), make(2)
    played = 0
    for name, obs in random_play(env, rng, examples(600)):
        mask = obs["action_mask"].astype(np.int8)
        place = mask[lay.meld_base : lay.discard_base]
        played += int((place == 1).any())
        if rng.random() < 0.7:
            place[place == 1] = 2
        for _ in range(int(rng.integers(0, 3))):
            mask[int(rng.integers(lay.meld_base, lay.discard_base))] = rng.choice([2, -1])
        row = {"observation": obs["observation"], "action_mask": mask}
        assert_decides_as_the_reference(a, b, row, SeatView(env, name))
    assert played > examples(600) // 20  # positions with a placement to play were met


@pytest.mark.parametrize("game", sorted(GAMES))
def test_act_batch_needs_the_options_and_checks_its_input(game):
    _, options, make = GAMES[game]
    agent = make(0)
    assert not hasattr(agent, "act_batch")  # the vector envs then play it through act()
    with pytest.raises(AttributeError, match="bind"):
        agent.act_batch  # noqa: B018
    venv = rummy_env.make_vec(game, 4, seed=0, **options)
    cfg = venv.config
    assert agent.bind(cfg) is agent and hasattr(agent, "act_batch")
    obs, _ = venv.reset()
    o, m = obs["observation"], obs["action_mask"]
    assert agent.act_batch(o[:0], m[:0]).shape == (0,)
    state = agent.rng.bit_generator.state
    masks = m.copy()
    masks[2] = 0
    with pytest.raises(ValueError, match=r"no legal action .* row\(s\) \[2\]"):
        agent.act_batch(o, masks)
    with pytest.raises(ValueError, match="shapes"):
        agent.act_batch(o[0], m[0])
    with pytest.raises(ValueError, match="not those of the rule options"):
        agent.act_batch(o[:, :-1], m)
    assert agent.rng.bit_generator.state == state  # nothing was decided
    # the options passed to a call win over the bound ones; bool masks do as int8 masks
    two = rummy_env.make_vec(game, 4, seed=0)
    o2, m2 = (two.reset()[0][k] for k in ("observation", "action_mask"))
    x = make(5).bind(cfg).act_batch(o2, m2 == 1, two.config)
    y = make(5).bind(two.config).act_batch(o2, m2)
    assert x.tolist() == y.tolist()
    assert agent.bind(None) is agent and not hasattr(agent, "act_batch")
    with pytest.raises(ValueError, match="layout"):
        agent.bind(type("Options", (), {"num_players": 9, "deck_size": 108})())


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_swapped_python_planner_or_generator_plays_the_reference(game):
    """Replacing the agent's planner by the Python one (to compare planners) or its generator
    by another kind makes ``act`` / ``act_batch`` run the reference, with that planner.
    """
    _, options, make = GAMES[game]
    venv = rummy_env.make_vec(game, 8, seed=1, **options)
    obs, _ = venv.reset()
    o, m = obs["observation"], obs["action_mask"]
    agent = make(0).bind(venv.config)
    assert agent._compiled_ok()
    if game == "rummy51":
        agent.planner = Rummy51Planner(3000)
    else:
        agent._planners = {v: MeldPlanner(v) for v in (False, True)}
    assert not agent._compiled_ok()
    want = make(0).bind(venv.config).act_batch(o, m)
    assert agent.act_batch(o, m).tolist() == want.tolist()
    # another bit generator is drawn from alike; a generator of another kind is the
    # reference's to use (or fail with)
    view = ConfigView(venv.config)
    for rng in (
        lambda: np.random.Generator(np.random.MT19937(0)),
        lambda: np.random.RandomState(0),
    ):
        x, y = make(0), make(0)
        x.rng, y.rng = rng(), rng()
        assert x._compiled_ok() is isinstance(x.rng, np.random.Generator)
        for i in range(8):
            row = {"observation": o[i], "action_mask": m[i]}
            assert outcome(lambda r=row, a=x: a.act(r, view)) == outcome(
                lambda r=row, a=y: a.act_reference(r, view)
            )


def test_the_compiled_planners_refuse_a_negative_count():
    """A malformed hand used to size the planners' frames wrong (a crash of the process)."""
    from rummy_agents.planner_kernels import CompiledMeldPlanner, CompiledRummy51Planner

    hand = [0] * 53
    hand[5] = -1
    with pytest.raises(ValueError, match=">= 0"):
        CompiledMeldPlanner().best(hand, [])
    with pytest.raises(ValueError, match=">= 0"):
        CompiledRummy51Planner().best(hand, [], opened=True)


@st.composite
def hands51(draw: st.DrawFn) -> tuple[np.ndarray, int]:
    """A not-opened Rummy 51 hand (7-14 cards of two decks and four jokers, runs and groups
    likely) and a top discard."""
    counts = np.zeros(53, np.int64)
    suit = draw(st.integers(0, 3))
    rank = draw(st.integers(0, 12))
    near = [suit * 13 + (rank + k) % 13 for k in range(-2, 3)] + [q * 13 + rank for q in range(4)]
    cards = draw(st.lists(st.sampled_from(near) | st.integers(0, 52), min_size=7, max_size=14))
    for c in cards:
        if counts[c] < (4 if c == 52 else 2):
            counts[c] += 1
    d = draw(st.sampled_from(near) | st.integers(0, 52))
    if counts[d] >= (4 if d == 52 else 2):
        d = 52 if counts[52] < 4 else next(c for c in range(52) if counts[c] < 2)
    return counts, d


@settings(max_examples=examples(400), deadline=None, derandomize=True)
@given(hand_d=hands51(), node_limit=st.sampled_from([3000, 40]))
def test_greedy51_draw_shortcut_answers_as_both_searches(hand_d, node_limit):
    """``_free_leaves_it``: where the not-opened draw decision skips the search of the hand
    without the top discard, the answer from both searches (``_wants``) is no.
    """
    from rummy_agents import joker_greedy_kernels as J

    hand, d = hand_d
    layout = rummy51_v1.raw_env().unwrapped.game.layout
    prm = J.params51(layout, 51, False, node_limit, "penalty", False, "always", None, None)
    scratch = J.scratch51(prm, layout.num_actions)
    _, hand2, table, _, empty, steps, left, _, _, _, _, pbuf, inp = scratch
    table[:] = 0
    empty[:] = 0
    inp[:] = 0
    hand2[:] = hand
    hand2[d] += 1
    f1, v1, n1, g1, w1, _ = J._plan51_pair(inp, prm, False, hand2, table, d, -1, steps, left,
                                           pbuf, empty)  # fmt: skip
    ok1 = f1 and n1 > 0
    skip = not ok1 and J._free_leaves_it(d, hand, hand2, g1, prm, pbuf)
    f0, v0, n0, g0, w0, _ = J._plan51_pair(inp, prm, False, hand, table, -1, -1, steps, left,
                                           pbuf, empty)  # fmt: skip
    ok0 = f0 and n0 > 0
    need = int(J.PENALTY51[d])
    if ok1:
        wants = (not ok0) or v1 - v0 >= need
    else:
        wants = False if ok0 else bool(g0 and g1 and w1 - w0 >= need)
    if skip:
        assert not wants
    COMPARED["Rummy 51 draw shortcut taken"] = (
        COMPARED.get("Rummy 51 draw shortcut taken", 0) + skip
    )
