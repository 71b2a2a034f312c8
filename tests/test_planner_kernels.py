"""The compiled meld planner (``rummy_agents.planner_kernels``) against the Python one
(``five_hundred_rum_greedy.MeldPlanner``): the same plans (points, steps in order, hand left),
on real table positions of random 500 Rum and Rummy 51 play, on random hands and tables
(hypothesis), with obligations and node limits that cut the search short, and on stacked
examples.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from joker_helpers import melds

from rummy_agents.five_hundred_rum_greedy import (
    MeldPlanner,
    Plan,
    obligation,
    table_melds,
    turn_plan,
)
from rummy_agents.planner_kernels import (
    TPL_FIELDS,
    CompiledMeldPlanner,
    _fit_set,
    card_values,
    fit_natural_at,
    no_meld_holds,
    node_templates,
    table_array,
)
from rummy_env import five_hundred_rum_v1, rummy51_v1
from rummy_env.core.cards import parse_cards

Position = tuple[list[int], list[list[int]], np.ndarray, int]


def counts(text: str) -> list[int]:
    h = [0] * 53
    for c in parse_cards(text):
        h[min(c, 52)] += 1
    return h


def same(a: Plan | None, b: Plan | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return (a.points, a.steps, a.left) == (b.points, b.steps, b.left)


@cache
def planners(v51015: bool, node_limit: int) -> tuple[MeldPlanner, CompiledMeldPlanner]:
    return MeldPlanner(v51015, node_limit), CompiledMeldPlanner(v51015, node_limit)


def engine_table(rec: np.void) -> np.ndarray:
    """The record's table slots as the (slots, 6) array the kernels read."""
    fields = ("m_kind", "m_key", "m_lo", "m_hi", "m_nat", "m_jok")
    return np.stack([np.asarray(rec[f], np.int64) for f in fields], axis=1)


@cache
def real_positions(game: str, n: int = 100, seed: int = 5) -> tuple[Position, ...]:
    """Positions of random play: (hand, table melds read from the observation, the engine's
    table slots, obligation), one every few decisions.
    """
    mod = five_hundred_rum_v1 if game == "five_hundred_rum" else rummy51_v1
    rng = np.random.default_rng(seed)
    out: list[Position] = []
    env = mod.raw_env(num_players=2)
    env.reset(seed=seed)
    while len(out) < n:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            env.reset(seed=int(rng.integers(1 << 30)))
            continue
        obs = env.observe(name)
        if rng.random() < 0.3:
            parts = env.layout.split(obs["observation"])
            hand = [int(v) for v in np.rint(parts["hand"] * 2)]
            table = table_melds(parts)
            ob = obligation(parts) if "obligation" in parts else -1
            out.append((hand, table, engine_table(env.state_record), ob))
        legal = np.flatnonzero(obs["action_mask"])
        # lean towards melds and lay-offs, so that tables fill up
        lay = env.layout
        places = [a for a in legal if lay.meld_base <= a < lay.discard_base]
        env.step(int(rng.choice(places if places and rng.random() < 0.7 else legal)))
    return tuple(out)


def table_pool() -> list[list[list[int]]]:
    return [p[1] for g in ("five_hundred_rum", "rummy51") for p in real_positions(g) if p[1]]


# -- strategies ----------------------------------------------------------------------------------


@st.composite
def hands(draw: st.DrawFn) -> list[int]:
    """2-15 cards from two packs, 0-2 of them jokers, often from a few ranks (more melds)."""
    n = draw(st.integers(2, 15))
    jokers = draw(st.integers(0, min(2, n)))
    lo = draw(st.integers(0, 12))
    width = draw(st.sampled_from([3, 5, 8, 13]))
    ranks = [(lo + k) % 13 for k in range(width)]
    suits = draw(st.sampled_from([(0, 1, 2, 3), (0, 1), (2,)]))
    pool = [q * 13 + r for q in suits for r in ranks]
    if 2 * len(pool) < n:
        pool = list(range(52))
    h = [0] * 53
    h[52] = jokers
    while sum(h) < n:
        c = draw(st.sampled_from(pool))
        h[c] += h[c] < 2
    return h


@st.composite
def tables(draw: st.DrawFn) -> list[list[int]]:
    if draw(st.booleans()):
        pool = table_pool()
        return pool[draw(st.integers(0, len(pool) - 1))]
    return draw(st.lists(melds(), max_size=6))


@st.composite
def obligations(draw: st.DrawFn, hand: list[int]) -> int:
    held = [c for c in range(53) if hand[c] > 0]
    return draw(st.sampled_from([-1, *held]))


# -- differential tests --------------------------------------------------------------------------


@pytest.mark.parametrize("game", ["five_hundred_rum", "rummy51"])
@pytest.mark.parametrize("v51015", [False, True])
def test_real_positions_plan_the_same(game: str, v51015: bool) -> None:
    py, cp = planners(v51015, 3000)
    for hand, table, slots, ob in real_positions(game):
        for new in (False, True):
            expect = turn_plan(py, hand, table, ob, new)
            assert same(turn_plan(cp, hand, table, ob, new), expect), (hand, table, ob, new)
            assert same(cp.turn_plan(hand, slots, ob, new), expect), (hand, slots, ob, new)
            assert same(cp.best(hand, table, ob, new), py.best(hand, table, ob, new))


def test_real_positions_batched() -> None:
    """One batched call over the engine's table slots gives each position's plan."""
    py, cp = planners(False, 3000)
    pos = real_positions("five_hundred_rum") + real_positions("rummy51")
    b = len(pos)
    m = max(p[2].shape[0] for p in pos)
    slots = np.zeros((b, m, 6), np.int64)
    for i, p in enumerate(pos):
        slots[i, : p[2].shape[0]] = p[2]
    hand = np.array([p[0] for p in pos])
    obl = np.array([p[3] for p in pos])
    new = np.arange(b) % 2 == 1
    for turn in (False, True):
        out = cp.best_batch(hand, slots, obl, new, turn=turn)
        for i, (h, table, _, ob) in enumerate(pos):
            fn = turn_plan if turn else MeldPlanner.best
            assert same(out.plan(i), fn(py, h, table, ob, bool(new[i]))), i
            if not out.found[i]:
                assert out.points[i] == 0 and (out.left[i] == hand[i]).all()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hand=hands(),
    table=tables(),
    v51015=st.booleans(),
    new=st.booleans(),
    limit=st.sampled_from([3000, 3000, 200, 25]),
    data=st.data(),
)
def test_random_hands_plan_the_same(
    hand: list[int],
    table: list[list[int]],
    v51015: bool,
    new: bool,
    limit: int,
    data: st.DataObject,
) -> None:
    """Equal plans, also where the node limit cuts the search short (the compiled search visits
    the same nodes in the same order, so it stops at the same node).
    """
    ob = data.draw(obligations(hand))
    py, cp = planners(v51015, limit)
    expect = py.best(hand, table, ob, new)
    assert same(cp.best(hand, table, ob, new), expect)
    if expect is None and new:  # turn_plan's second try
        expect = py.best(hand, table, ob, False)
    assert same(cp.turn_plan(hand, table, ob, new), expect)


@settings(max_examples=300, deadline=None)
@given(
    hand=hands(),
    jokers=st.integers(0, 6),
    left=st.lists(st.integers(0, 52), max_size=12),
    v51015=st.booleans(),
    data=st.data(),
)
def test_node_templates_are_the_python_planners(
    hand: list[int], jokers: int, left: list[int], v51015: bool, data: st.DataObject
) -> None:
    """One search node's templates, compiled, are ``MeldPlanner._templates_with``'s: the same
    templates in the same order with the same jokers, points and melds, for any card of the
    hand, up to 6 jokers and naturals the search left in hand (``skipped``) anywhere.
    """
    avail = list(hand)
    avail[52] = jokers
    skipped = [0] * 53
    for x in left:
        skipped[x] += 1
    held = [x for x in range(52) if avail[x] > 0]
    if not held:
        return
    c = data.draw(st.sampled_from(held))
    py = MeldPlanner(v51015, 3000)
    expect = py._templates_with(c, avail, skipped)
    vals = card_values(v51015)
    tb = np.full((64 + len(expect), TPL_FIELDS), -7, np.int64)
    n = node_templates(c, np.array(avail, np.int64), np.array(skipped, np.int64), tb, 3, vals,
                       5 if v51015 else 1)  # fmt: skip
    assert n == len(expect)
    assert (tb[:3] == -7).all() and (tb[3 + n :] == -7).all()  # rows from `start`, no more
    for row, (t, meld, taken, j, tp) in zip(tb[3 : 3 + n], expect, strict=True):
        assert (row[0], row[1], row[2], list(row[4:10])) == (t, j, tp, meld)
        assert row[3] == sum(vals[x] for x in taken) + vals[52] * j


@settings(max_examples=400, deadline=None)
@given(
    hand=hands(),
    jokers=st.integers(0, 3),
    left=st.lists(st.integers(0, 51), max_size=12),
    data=st.data(),
)
def test_no_meld_holds_only_cards_without_templates(
    hand: list[int], jokers: int, left: list[int], data: st.DataObject
) -> None:
    """The searches pass a node without a frame when ``no_meld_holds``: then its card has no
    template whatever the search left in hand; with nothing left in hand it is exactly the
    cards without one.
    """
    avail = np.array(hand, np.int64)
    avail[52] = jokers
    held = [x for x in range(52) if avail[x] > 0]
    if not held:
        return
    c = data.draw(st.sampled_from(held))
    tb = np.empty((64, TPL_FIELDS), np.int64)
    vals = card_values(False)
    none = np.zeros(53, np.int64)
    assert no_meld_holds(c, avail) == (node_templates(c, avail, none, tb, 0, vals, 1) == 0)
    skipped = np.zeros(53, np.int64)
    for x in left:
        skipped[x] += 1
    if no_meld_holds(c, avail):
        assert node_templates(c, avail, skipped, tb, 0, vals, 1) == 0


def test_no_meld_holds_examples() -> None:
    """Loose cards, and cards one joker or one more card would meld."""
    hand = counts("Ac 5c 9c Kc 2d 7d Qh 3s 8s")
    for card in ("Ac", "5c", "9c", "Kc", "2d", "7d", "Qh", "3s", "8s"):
        assert no_meld_holds(parse_cards(card)[0], np.array(hand, np.int64)), card
    near = counts("Ac 3c Qc 5d 5h 9s Ts JK")
    for card in ("Ac", "3c", "Qc", "5d", "9s"):  # A-2-3, Q-K-A, 5-5-JK, 9-T-JK
        assert not no_meld_holds(parse_cards(card)[0], np.array(near, np.int64)), card
    near[52] = 0
    for card in ("Ac", "3c", "Qc", "5d", "9s"):
        assert no_meld_holds(parse_cards(card)[0], np.array(near, np.int64)), card


def test_nodes_without_templates_count_for_the_node_limit() -> None:
    """Hands whose searches are mostly such nodes (passed without a frame, counted all the
    same): cut at every node limit up to the whole search, both planners find the Python
    planners' plans.
    """
    for text in ("Ac 2c 3c 6c 9c Jd Qd Kd 4h 4s 4d 8h 7s", "5c 6c 7c 9d 2h 2s Kh Qs JK 3d 8d"):
        hand = counts(text)
        py = MeldPlanner(False, 10**6)
        py.best(hand, [])
        full = py._nodes
        for limit in range(1, full + 2):
            py, cp = planners(False, limit)
            assert same(cp.best(hand, []), py.best(hand, [])), (text, limit)
            turn = turn_plan(py, hand, [], 52 if hand[52] else 0, True)
            assert same(cp.turn_plan(hand, [], 52 if hand[52] else 0, True), turn), limit
            py51, cp51 = planners51(limit)
            for kw in ({"opened": True}, {"opened": False, "need": 51}):
                assert same(cp51.best(hand, [], **kw), py51.best(hand, [], **kw)), (limit, kw)


@settings(max_examples=400, deadline=None)
@given(
    row=st.one_of(
        melds(),
        st.lists(st.integers(-3, 16), min_size=6, max_size=6),  # malformed rows too
    )
)
def test_fit_set_is_what_fit_natural_accepts(row: list[int]) -> None:
    """The lay-off passes skip the cards outside the rows' fit sets: a row's set must be
    exactly the naturals ``fit_natural_at`` lays off on it, for any six fields.
    """
    melds_arr = np.array([row], np.int64)
    got = int(_fit_set(melds_arr, 0))
    expect = sum(1 << c for c in range(52) if fit_natural_at(*row, c) >= 0)
    assert got == expect


def test_the_node_limit_cuts_the_same_search() -> None:
    """A hand whose search takes 10,452 nodes: cut at any limit, the plans found by then are
    the same (and the limit changes the plan).
    """
    hand = counts("8c 9c Jc Qc 8d 9d Qd 7h 8h 9h Th 8s 9s JK JK")
    points = set()
    for limit in (1, 2, 5, 17, 60, 300, 3000, 10**6):
        py, cp = planners(False, limit)
        expect = py.best(hand, [])
        assert py._nodes > limit or limit == 10**6
        assert same(cp.best(hand, []), expect), limit
        assert same(cp.turn_plan(hand, [], 52, True), turn_plan(py, hand, [], 52, True)), limit
        points.add(expect.points)
    assert len(points) > 2


def test_batch_of_random_hands_matches_single_calls() -> None:
    rng = np.random.default_rng(0)
    b = 200
    hand = np.zeros((b, 53), np.int64)
    for i in range(b):
        for c in rng.choice(54, int(rng.integers(2, 16)), replace=False):
            hand[i, min(int(c), 52)] += 1
    _, cp = planners(True, 3000)
    out = cp.best_batch(hand, np.zeros((b, 0, 6), np.int64))
    for i in range(b):
        assert same(out.plan(i), cp.best(hand[i], [])), i


# -- stacked examples ------------------------------------------------------------------------------


@pytest.mark.parametrize("v51015", [False, True])
@pytest.mark.parametrize(
    ("hand", "table", "oblig"),
    [
        ("3c 4c 5c 5d 5h 5s", [], ""),  # a run and a group beat the four of a kind
        ("Ah 2h 3h", [], ""),  # a low ace is worth 1 (5)
        ("Qh Kh Ah", [], ""),  # a high ace 15
        ("JK 9h", [[2, 2, 4, 6, (1 << 7) - (1 << 4), 0]], "9h"),  # a joker bridges to the 9
        ("9h", [[2, 2, 4, 6, (1 << 7) - (1 << 4), 0]], "9h"),  # nothing melds the 9: None
        ("JK 5c 7c 8c 9c", [], "JK"),  # a joker fills the inner gap of a run
        ("JK JK 5c", [], "5c"),  # a group of one natural and two jokers
        ("5c 6c 7c 8c 9c Tc", [[1, 4, 0, 0, 0b0111, 0]], ""),  # a run, the 5 or the group
        ("JK Kd", [[1, 12, 0, 0, 0b0011, 1]], "Kd"),  # a full group takes no more
        ("2c 2d 2h 2s 3c 4c", [], "2c"),  # the owed 2 in the run or the group
        ("Ad Ac Ah 2d 3d Kd Qd", [], ""),
    ],
)
def test_stacked_examples(v51015: bool, hand: str, table: list[list[int]], oblig: str) -> None:
    h = counts(hand)
    ob = min(parse_cards(oblig)[0], 52) if oblig else -1
    py, cp = planners(v51015, 3000)
    for new in (False, True):
        assert same(cp.best(h, table, ob, new), py.best(h, table, ob, new))
        assert same(cp.turn_plan(h, table, ob, new), turn_plan(py, h, table, ob, new))


def test_stacked_plans_are_the_documented_ones() -> None:
    """The plans the Python planner's tests pin (``test_five_hundred_rum_agents``)."""
    cp = CompiledMeldPlanner()
    plan = cp.best(counts("3c 4c 5c 5d 5h 5s"), [])
    assert plan is not None and plan.points == 3 + 4 + 5 + 15 and sum(plan.left) == 0
    assert cp.best(counts("Ah 2h 3h"), []).points == 6
    assert CompiledMeldPlanner(v51015=True).best(counts("Ah 2h 3h"), []).points == 15
    table = [[2, 2, 4, 6, (1 << 7) - (1 << 4), 0]]
    nine = parse_cards("9h")[0]
    plan = cp.best(counts("JK 9h"), table, oblig=nine)
    assert plan is not None and plan.points == 15 + 9
    assert plan.steps == [("joker", 0, 1), ("layoff", nine, 0)]
    assert cp.best(counts("9h"), table, oblig=nine) is None
    assert cp.best(counts("9h"), table_array(table), oblig=nine) is None


# -- callers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "opts",
    [
        {"num_players": 2},
        {"num_players": 3, "values_5_10_15": True, "must_meld_discard": True},
        {"num_players": 4, "num_decks": 2, "deepest_card_new_meld": True, "rummy_call": "full"},
    ],
)
def test_greedy_plays_the_same_with_either_planner(opts: dict) -> None:
    """``greedy`` (which plans with the compiled planner) makes the same decisions as with
    the Python planner, over whole hands.
    """
    from rummy_agents.base import SeatView
    from rummy_agents.five_hundred_rum_greedy import FiveHundredRumGreedyAgent

    envs = [five_hundred_rum_v1.raw_env(**opts) for _ in range(2)]
    seats = [
        [FiveHundredRumGreedyAgent(seed=q, hold_melds=q % 2 or None) for q in range(4)]
        for _ in range(2)
    ]
    for q in seats[1]:  # the reference
        q._planners = {v: MeldPlanner(v, 3000) for v in (False, True)}
    n = 0
    for seed in range(100):  # whole hands, until 200 decisions
        for env in envs:
            env.reset(seed=seed)
        while not all(envs[0].terminations.values()):
            name = envs[0].agent_selection
            q = envs[0].agents.index(name)
            acts = [
                seats[k][q].act(env.observe(name), SeatView(env, name))
                for k, env in enumerate(envs)
            ]
            assert acts[0] == acts[1], (seed, n, acts)
            for env in envs:
                env.step(acts[0])
            n += 1
        if n >= 200:
            break
    assert n >= 200


def python_plan_block(obs: np.ndarray, layout: object) -> np.ndarray:
    """The features' plan melds as they were computed with the Python planner."""
    from rummy_agents.features.joker_cards import PLAN_BLOCK
    from rummy_env.encodings.five_hundred_rum import PH_CALL_LAYOFF, PH_PLAY

    out = np.zeros((obs.shape[0], PLAN_BLOCK), np.float32)
    py, _ = planners(False, 3000)
    for i in range(obs.shape[0]):
        parts = layout.split(obs[i])
        if parts["phase"][PH_PLAY] < 0.5 and parts["phase"][PH_CALL_LAYOFF] < 0.5:
            continue
        hand = [int(v) for v in np.rint(parts["hand"] * 2)]
        plan = turn_plan(py, hand, table_melds(parts), obligation(parts))
        for kind, t, _ in plan.steps if plan is not None else ():
            if kind == "meld":
                out[i, t] = 1.0
    return out


@pytest.mark.parametrize("num_players", [2, 4])
def test_plan_features_are_the_python_planners(num_players: int) -> None:
    """``joker_cards.plan_block`` (a kernel reading the observation) writes the melds of the
    Python planner's plans, on positions of heuristic and random play.
    """
    import rummy_env
    from rummy_agents.features import joker_cards as J
    from rummy_agents.heuristic import HeuristicAgent
    from rummy_env.encodings.five_hundred_rum import Layout

    lay = Layout(num_players, 54)
    venv = rummy_env.make_vec("five_hundred_rum", 32, seed=3, num_players=num_players)
    obs, _ = venv.reset()
    agent = HeuristicAgent(seed=0)
    rng = np.random.default_rng(0)
    planned = 0
    for _ in range(25):
        x = np.ascontiguousarray(obs["observation"], np.float32)
        out = np.zeros((x.shape[0], J.PLAN_BLOCK), np.float32)
        J.plan_block(x, out, lay)
        expect = python_plan_block(x, lay)
        np.testing.assert_array_equal(out[:, : J.NUM_TEMPLATES], expect[:, : J.NUM_TEMPLATES])
        planned += int(expect.any(axis=1).sum())
        a = agent.act_game(venv.game)
        for i in np.flatnonzero(rng.random(32) < 0.3):
            a[i] = rng.choice(np.flatnonzero(obs["action_mask"][i]))
        obs, *_ = venv.step(a)
    assert planned > 50


# -- Rummy 51 --------------------------------------------------------------------------------------


@st.composite
def rummy51_args(draw: st.DrawFn, hand: list[int]) -> dict:
    """``Rummy51Planner.best``'s keyword arguments, as the agent's calls vary them."""
    held = [-1, *(c for c in range(53) if hand[c] > 0)]
    return {
        "opened": draw(st.booleans()),
        "need": draw(st.sampled_from([0, 1, 20, 40, 51, 80])),
        "must_open": draw(st.booleans()),
        "oblig": draw(st.sampled_from(held)),
        "taken": draw(st.sampled_from(held)),
        "layoffs": draw(st.booleans()),
    }


@cache
def planners51(node_limit: int) -> tuple[object, object]:
    from rummy_agents.planner_kernels import CompiledRummy51Planner
    from rummy_agents.rummy51_greedy import Rummy51Planner

    return Rummy51Planner(node_limit), CompiledRummy51Planner(node_limit)


def test_rummy51_tables_are_the_agents() -> None:
    from rummy_agents.planner_kernels import PENALTY51, TPL_VAL51
    from rummy_agents.rummy51_greedy import PENALTY, meld_points

    assert PENALTY51.tolist() == PENALTY
    assert TPL_VAL51.tolist() == [meld_points(t) for t in range(TPL_VAL51.shape[0])]


@pytest.mark.parametrize("game", ["rummy51", "five_hundred_rum"])
def test_rummy51_real_positions_plan_the_same(game: str) -> None:
    rng = np.random.default_rng(7)
    py, cp = planners51(3000)
    for hand, table, slots, ob in real_positions(game):
        held = [c for c in range(53) if hand[c] > 0]
        for _ in range(3):
            kw = {
                "opened": bool(rng.random() < 0.5),
                "need": int(rng.choice([0, 30, 51])),
                "must_open": bool(rng.random() < 0.3),
                "oblig": ob if ob >= 0 or rng.random() < 0.7 else int(rng.choice(held)),
                "taken": int(rng.choice(held)) if rng.random() < 0.5 else -1,
                "layoffs": bool(rng.random() < 0.8),
            }
            expect = py.best(hand, table, **kw)
            assert same(cp.best(hand, table, **kw), expect), (hand, table, kw)
            assert same(cp.best(hand, slots, **kw), expect), (hand, slots, kw)
        # the free arrangement, as the agent asks for it
        free = py.best(hand, [], opened=False, layoffs=False)
        assert same(cp.best(hand, [], opened=False, layoffs=False), free)


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hand=hands(), table=tables(), limit=st.sampled_from([3000, 3000, 100]), data=st.data())
def test_rummy51_random_hands_plan_the_same(
    hand: list[int], table: list[list[int]], limit: int, data: st.DataObject
) -> None:
    kw = data.draw(rummy51_args(hand))
    py, cp = planners51(limit)
    assert same(cp.best(hand, table, **kw), py.best(hand, table, **kw))


def test_rummy51_node_limit_cuts_the_same_search() -> None:
    hand = counts("8c 9c Jc Qc 8d 9d Qd 7h 8h 9h Th 8s 9s JK JK")
    for limit in (1, 3, 40, 500, 3000):
        py, cp = planners51(limit)
        for kw in ({"opened": True}, {"opened": False, "need": 51, "oblig": 52, "taken": 52}):
            expect = py.best(hand, [], **kw)
            assert py._nodes > limit
            assert same(cp.best(hand, [], **kw), expect), (limit, kw)


@pytest.mark.parametrize(
    "opts",
    [{"num_players": 2}, {"num_players": 3, "discard_draw_requires_opening": True}],
)
def test_rummy51_greedy_plays_the_same_with_either_planner(opts: dict) -> None:
    """``greedy`` and ``greedy_plus``-like seats (compiled planner) make the same decisions as
    with the Python planner, over whole hands.
    """
    from rummy_agents.base import SeatView
    from rummy_agents.rummy51_greedy import Rummy51GreedyAgent, Rummy51Planner

    def seats() -> list[Rummy51GreedyAgent]:
        plus = {"take_gain": "any", "near_order": True, "joker_layoff": "out", "hold_melds": 3}
        return [Rummy51GreedyAgent(seed=q, **(plus if q % 2 else {})) for q in range(3)]

    envs = [rummy51_v1.raw_env(**opts) for _ in range(2)]
    agents = [seats(), seats()]
    for a in agents[1]:  # the reference
        a.planner = Rummy51Planner(3000)
    n = 0
    for seed in range(100):  # whole hands, until 200 decisions
        for env in envs:
            env.reset(seed=seed)
        while not all(envs[0].terminations.values()) and n < 2000:
            name = envs[0].agent_selection
            q = envs[0].agents.index(name)
            acts = [
                agents[k][q].act(env.observe(name), SeatView(env, name))
                for k, env in enumerate(envs)
            ]
            assert acts[0] == acts[1], (seed, n, acts)
            for env in envs:
                env.step(acts[0])
            n += 1
        if n >= 200:
            break
    assert n >= 200


# -- Rummy 51: what the greedy agent may decide without a search --------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hand=hands(),
    extra=st.integers(0, 2),
    limit=st.sampled_from([1, 5, 20, 60, 200, 3000]),
)
def test_nodes_within_bounds_the_python_search(hand: list[int], extra: int, limit: int) -> None:
    """``nodes_within``: when it says a search stays within ``limit`` nodes, the Python
    planner's whole search of that hand (no limit; up to 4 jokers) visits at most ``limit``;
    and it says so for hands without templates at every limit.
    """
    from rummy_agents.planner_kernels import nodes_within, plan_work

    hand = [*hand[:52], hand[52] + extra]
    py, _ = planners51(10**9)
    py.best(hand, [], opened=False, need=51)
    within = nodes_within(np.array(hand, np.int64), limit, plan_work(32, 8))
    if within:
        assert py._nodes <= limit, (hand, limit, py._nodes)
    a = np.array(hand, np.int64)
    if all(a[c] == 0 or no_meld_holds(c, a) for c in range(52)):
        assert within == (sum(hand[:52]) + 1 <= limit)  # one node per card, and the call


def test_nodes_within_examples() -> None:
    """Loose cards count one node each; a hand of many melds is beyond a small limit."""
    from rummy_agents.planner_kernels import nodes_within, plan_work

    work = plan_work(32, 8)
    loose = np.array(counts("Ac 5c 9c Kc 2d 7d Qh 3s 8s"), np.int64)
    assert nodes_within(loose, 10, work) and not nodes_within(loose, 9, work)
    rich = np.array(counts("8c 9c Jc Qc 8d 9d Qd 7h 8h 9h Th 8s 9s JK JK"), np.int64)
    assert not nodes_within(rich, 3000, work)
    # from the top: Kh 9s 9h loose (1 + 3), 9d branches (1 + 2 x 4), 5c 4c loose (11),
    # 3c branches (1 + 2 x 11): 23
    hand = np.array(counts("3c 4c 5c 9d 9h 9s Kh"), np.int64)
    assert nodes_within(hand, 23, work) and not nodes_within(hand, 22, work)


@st.composite
def draw_positions(draw: st.DrawFn) -> tuple:
    """A draw decision: hand, top discard (a natural, often one no meld holds), table, the
    options ``_wants`` reads."""
    hand = draw(hands())
    d = draw(st.integers(0, 51))
    table = draw(st.one_of(st.just([]), tables()))
    opts = {
        "opened": draw(st.booleans()),
        "dd_open": draw(st.booleans()),
        "take_gain": draw(st.sampled_from(["penalty", "any"])),
        "limit": draw(st.sampled_from([3000, 3000, 60, 8])),
        "laid": draw(st.sampled_from([0, 0, 10, 30])),  # opening points laid this turn
    }
    return hand, d, table, opts


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pos=draw_positions())
def test_rummy51_idle_discard_is_never_wanted(pos: tuple) -> None:
    """The compiled agent answers some draw decisions without planning (``_idle51``); the
    Python agent's ``_wants`` (Python planner, whole searches) then answers no too, and the
    compiled ``_wants51`` answers as ``_wants`` on every position.
    """
    from rummy_agents import joker_greedy_kernels as J
    from rummy_agents.rummy51_greedy import Rummy51GreedyAgent, Rummy51Planner
    from rummy_env.encodings import rummy51 as E51

    hand, d, table, o = pos
    lay = E51.Layout(num_players=2)
    prm = J.params51(lay, 51, o["dd_open"], o["limit"], o["take_gain"], False, "always",
                     None, None)  # fmt: skip
    scratch = J.scratch51(prm, lay.num_actions)
    h, h2, tab, _, empty, steps, left, *_, pbuf, inp = scratch
    h[:] = hand
    h2[:] = hand
    h2[d] += 1
    tab[:] = 0
    tab[: len(table)] = np.array(table, np.int64).reshape(-1, 6)
    idle = J._idle51(h2, d, tab, len(table), prm, pbuf)

    agent = Rummy51GreedyAgent(take_gain=o["take_gain"], node_limit=o["limit"])
    agent.planner = Rummy51Planner(o["limit"])
    agent._hand, agent._table = list(hand), [list(m) for m in table]
    agent._opened, agent._dd_open, agent._threshold = o["opened"], o["dd_open"], 51
    laid = np.float32(o["laid"] / 51)
    agent._parts = {"opening_points": np.array([laid], np.float32)}
    wants = agent._wants(d)
    if idle:
        assert not wants, pos
    obs = np.zeros((1, lay.obs_size), np.float32)
    obs[0, prm[J.R_OPTS]] = laid
    obs[0, prm[J.R_OPENED]] = float(o["opened"])
    # the observation's reading (its hand and table into spare buffers: only inp is used)
    J._read_obs51(obs, 0, prm, np.empty(53, np.int64), np.empty_like(tab), inp, scratch[8])
    got = J._wants51(inp, prm, o["opened"], h, h2, tab, len(table), d, empty, steps, left,
                     pbuf)  # fmt: skip
    assert got == wants, pos


def test_rummy51_idle_discard_examples() -> None:
    """A loose card is idle; one a meld of the table or the hand could take is not; so is a
    loose card on a hand whose search may pass the node limit."""
    from rummy_agents import joker_greedy_kernels as J
    from rummy_env.encodings import rummy51 as E51

    lay = E51.Layout(num_players=2)

    def idle(text: str, card: str, table: list[list[int]], limit: int = 3000) -> bool:
        prm = J.params51(lay, 51, False, limit, "penalty", False, "always", None, None)
        pbuf = J.scratch51(prm, lay.num_actions)[11]
        h2 = np.array(counts(f"{text} {card}"), np.int64)
        tab = np.zeros((prm[J.R_M], 6), np.int64)
        tab[: len(table)] = np.array(table, np.int64).reshape(-1, 6)
        return bool(J._idle51(h2, parse_cards(card)[0], tab, len(table), prm, pbuf))

    hand = "3c 4c 5c 9d 9h 9s Kh"
    assert idle(hand, "7d", [])
    assert not idle(hand, "6c", [])  # 4-5-6 of clubs
    assert not idle(hand, "9c", [])  # a fourth 9
    assert not idle(hand, "7d", [[2, 1, 1, 3, 0b1110, 0]])  # a diamond run on the table
    assert not idle(hand, "7d", [[1, 6, 0, 0, 0b1101, 0]])  # a group of sevens
    assert idle(hand, "7d", [[1, 4, 0, 0, 0b1101, 0]])  # fives: no matter
    assert not idle(hand, "7d", [], limit=5)  # the search may be cut short


@st.composite
def discard_positions(draw: st.DrawFn) -> tuple:
    """A discard decision: hand (up to 4 jokers), table, the card taken this turn (the joker,
    or one no longer held), the next player's known cards, the legal discards (some left
    out), the options ``_discard`` reads (node limits down to 1), a seed."""
    hand = draw(hands())
    hand[52] += draw(st.integers(0, 2))  # up to 4 jokers
    table = draw(st.one_of(st.just([]), tables()))
    held = [c for c in range(53) if hand[c] > 0]
    gone = [c for c in range(52) if hand[c] == 0][:1]  # taken, then melded or laid off
    taken = draw(st.sampled_from([-1, -1, *held, *gone]))
    nxt = [0] * 53
    for c in draw(st.lists(st.integers(0, 52), max_size=4)):
        nxt[c] = min(nxt[c] + 1, 2)
    legal = [c for c in range(53) if hand[c] >= 1 and (c != taken or hand[c] >= 2)]
    assume(legal)
    keep = draw(st.lists(st.booleans(), min_size=len(legal), max_size=len(legal)))
    cands = [c for c, k in zip(legal, keep, strict=True) if k] or legal[:1]
    opts = {
        "players": draw(st.sampled_from([2, 3, 4])),
        "next_out": draw(st.booleans()),  # (3-4 players) the next one is out of the match
        "near_order": draw(st.booleans()),
        "limit": draw(st.sampled_from([3000, 3000, 60, 8, 3, 2, 1])),  # (1-3: cut short)
        "seed": draw(st.integers(0, 2**31)),
    }
    return hand, table, taken, nxt, cands, opts


def _discard_both(pos: tuple) -> tuple[int, int, bool, bool]:
    """The compiled ``_discard51`` and the Python agent's ``_discard`` (Python planner) on one
    position: (compiled action, Python action, the generators' states equal after, whether
    the compiled one searched a free arrangement)."""
    from rummy_agents import joker_greedy_kernels as J
    from rummy_agents.pcg64 import seed_state, to_generator
    from rummy_agents.rummy51_greedy import Rummy51GreedyAgent, Rummy51Planner
    from rummy_env.encodings import rummy51 as E51

    hand, table, taken, nxt, cands, o = pos
    lay = E51.Layout(num_players=o["players"])
    prm = J.params51(lay, 51, False, o["limit"], "penalty", o["near_order"], "always", None,
                     None)  # fmt: skip
    obs = np.zeros((1, lay.obs_size), np.float32)
    parts = lay.split(obs[0])
    out = o["players"] > 2 and o["next_out"]
    parts["eliminated"][1] = float(out)
    parts["known"][1 if out else 0] = np.array(nxt, np.float32) / 2
    if taken >= 0:
        parts["taken_single"][taken] = 1.0
    masks = np.zeros((1, lay.num_actions), np.int8)
    masks[0, [lay.discard_base + c for c in cands]] = 1
    scratch = J.scratch51(prm, lay.num_actions)
    h, _, tab, _, empty, steps, left, prot, nx, cb, keys, pbuf, inp = scratch
    # the next player's known cards as the decision reads them (hand and table: spare buffers)
    J._read_obs51(obs, 0, prm, np.empty(53, np.int64), np.empty_like(tab), inp, nx)
    h[:] = hand
    tab[:] = 0
    tab[: len(table)] = np.array(table, np.int64).reshape(-1, 6)
    gen = np.zeros(6, np.uint64)
    seed_state(o["seed"], gen)
    stores = pbuf[0][0, 2]
    got = J._discard51(masks, 0, prm, h, tab, len(table), taken, empty, gen, steps, left, prot,
                       nx, cb, keys, pbuf)  # fmt: skip
    searched = pbuf[0][0, 2] != stores  # (a search keeps its plan in the memo: it fits)

    agent = Rummy51GreedyAgent(seed=o["seed"], node_limit=o["limit"], near_order=o["near_order"])
    agent.planner = Rummy51Planner(o["limit"])
    agent._lay, agent._parts = lay, parts
    agent._legal = np.flatnonzero(masks[0])
    agent._hand, agent._table = list(hand), [list(m) for m in table]
    want = agent._discard()
    same_rng = to_generator(gen).bit_generator.state == agent.rng.bit_generator.state
    return int(got), want, same_rng, bool(searched)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pos=discard_positions())
def test_rummy51_discard_without_search_is_exact(pos: tuple) -> None:
    """The compiled discard skips the free arrangement's search when every candidate with the
    lowest key unmelded is a joker or a card no meld of the hand holds; on every position it
    picks the Python agent's discard (Python planner, whole searches), drawing its ties alike.
    """
    got, want, same_rng, searched = _discard_both(pos)
    event("searched" if searched else "no search")
    assert got == want, pos
    assert same_rng, pos


def test_rummy51_discard_without_search_examples() -> None:
    """A loose card is thrown without a search, the other cards melded or not; a hand whose
    lowest cards may be melded (two of a rank and a joker) is searched."""
    o = {"players": 2, "next_out": False, "near_order": False, "limit": 3000, "seed": 3}
    hand = counts("3c 4c 5c 9d 9h 9s Kh")
    cands = [c for c in range(53) if hand[c]]
    got, want, _, searched = _discard_both((hand, [], -1, [0] * 53, cands, o))
    assert got == want and not searched  # Kh: loose, the highest penalty of tier 0
    hand = counts("7c 7d JK 9h Th Jh")
    cands = [c for c in range(53) if hand[c]]
    got, want, _, searched = _discard_both((hand, [], -1, [0] * 53, cands, o))
    assert got == want and searched
