"""The Rummy 51 planner's memo (``planner_kernels.plan_best51_memo``) and the greedy kernels'
observation check (``joker_greedy_kernels.row_ok``), against the plain computations.

The memo answers a repeated position from its last plans: every answer must be the plan
:func:`plan_best51` computes (found, penalty removed, steps, cards left, outputs untouched when
none is found), whatever the order and repetition of the positions, the memo's capacity and
the arguments that change between calls; errors are :func:`plan_best51`'s.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from joker_helpers import melds

from rummy_agents.joker_greedy_kernels import BIG, row_ok
from rummy_agents.planner_kernels import (
    MEMO51,
    plan51_memo,
    plan_best51,
    plan_best51_memo,
    plan_best51_pair_memo,
    plan_work,
)

SLOTS = 8
SENTINEL = -7


@st.composite
def hands(draw: st.DrawFn) -> np.ndarray:
    """2-15 cards, often of a few neighbouring ranks (more melds), 0-2 jokers."""
    n = draw(st.integers(2, 15))
    h = np.zeros(53, np.int64)
    h[52] = draw(st.integers(0, min(2, n)))
    lo = draw(st.integers(0, 12))
    width = draw(st.sampled_from([3, 5, 13]))
    pool = [q * 13 + (lo + k) % 13 for q in range(4) for k in range(width)]
    while h.sum() < n:
        c = draw(st.sampled_from(pool))
        h[c] += h[c] < 2
    return h


@st.composite
def positions(draw: st.DrawFn) -> tuple:
    """(hand, table (SLOTS, 6), opened, need, must_open, oblig, taken, layoffs, node_limit)."""
    hand = draw(hands())
    table = np.zeros((SLOTS, 6), np.int64)
    rows = draw(st.lists(melds(), max_size=SLOTS))
    if rows:
        table[: len(rows)] = rows
    held = [-1, *(int(c) for c in np.flatnonzero(hand))]
    return (
        hand,
        table,
        draw(st.booleans()),
        draw(st.sampled_from([0, 20, 51])),
        draw(st.booleans()),
        draw(st.sampled_from(held)),
        draw(st.sampled_from(held)),
        draw(st.booleans()),
        draw(st.sampled_from([3000, 3000, 40])),
    )


def variants(pos: tuple, draw: st.DrawFn) -> tuple:
    """``pos`` with one argument changed (or none): the neighbours a memo must tell apart."""
    hand, table, *args = pos
    k = draw(st.integers(0, 10))
    if k == 0:
        hand = hand.copy()
        c = int(draw(st.sampled_from([int(c) for c in np.flatnonzero(hand)])))
        hand[c] -= 1
        hand[(c + 1) % 53] += 1
    elif k == 1:
        table = table.copy()
        table[draw(st.integers(0, SLOTS - 1))] = draw(melds())
    elif 2 <= k <= 8:
        a = list(args)
        i = k - 2
        a[i] = {0: not a[0], 1: a[1] + 1, 2: not a[2], 3: -1, 4: -1, 5: not a[5]}.get(i, 25)
        args = a
    return (hand, table, *args)


def plan(fn, *args) -> tuple:
    """(found, removed, steps, left) of one call; the outputs start as SENTINEL."""
    steps = np.full((64, 3), SENTINEL, np.int64)
    left = np.full(53, SENTINEL, np.int64)
    found, removed, n = fn(*args, steps, left)
    if not found:  # the outputs are left untouched
        assert (steps == SENTINEL).all() and (left == SENTINEL).all()
        return False, int(removed), int(n)
    return True, int(removed), steps[:n].tolist(), left.tolist()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pool=st.lists(positions(), min_size=1, max_size=4),
    cards=st.sampled_from([4, 15, 32]),
    data=st.data(),
)
def test_memo_answers_what_the_search_finds(pool: list, cards: int, data: st.DataObject) -> None:
    """A sequence of positions drawn (with repeats and one-argument neighbours) from a small
    pool, longer than the memo: each answer equals a fresh search's. Memos for fewer cards
    than the hands hold plan those hands without it.
    """
    memo = plan51_memo(SLOTS, cards)
    for _ in range(2 * MEMO51 + 4):
        pos = pool[data.draw(st.integers(0, len(pool) - 1))]
        if data.draw(st.booleans()):
            pos = variants(pos, data.draw)
        assert plan(plan_best51_memo, memo, *pos) == plan(plan_best51, *pos)


def pair(memo: np.ndarray, work: tuple, pos: tuple) -> tuple:
    """Both plans of ``plan_best51_pair_memo`` (outputs starting as SENTINEL), as :func:`plan`
    gives them.
    """
    hand, table, opened, need, must_open, oblig, taken, _, nodes = pos
    outs = [np.full((64, 3), SENTINEL, np.int64), np.full(53, SENTINEL, np.int64)] * 2
    outs = [o.copy() for o in outs]
    empty = np.zeros((1, 6), np.int64)
    res = plan_best51_pair_memo(memo, hand, table, opened, need, must_open, oblig, taken, nodes,
                                *outs, work, empty)  # fmt: skip
    got = []
    for (found, removed, n), (steps, left) in zip(
        (res[:3], res[3:]), (outs[:2], outs[2:]), strict=True
    ):
        if not found:
            assert (steps == SENTINEL).all() and (left == SENTINEL).all()
            got.append((False, int(removed), int(n)))
        else:
            got.append((True, int(removed), steps[:n].tolist(), left.tolist()))
    return tuple(got)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pool=st.lists(positions(), min_size=1, max_size=4),
    cards=st.sampled_from([4, 15, 32]),
    work_cards=st.sampled_from([3, 32]),
    data=st.data(),
)
def test_pair_is_the_plan_and_the_free_arrangement(
    pool: list, cards: int, work_cards: int, data: st.DataObject
) -> None:
    """One search for two plans of a hand: the plan with lay-offs and the free arrangement
    (no table, need, owed card or lay-offs; the same taken card) equal the two searches, in
    sequences with repeats and neighbours (memo hits of both, of one, of none), memos and
    buffers too small for the hand (the two calls are made), node limits that cut the search;
    and the memo is left as the two memo calls in that order leave it.
    """
    memo = plan51_memo(SLOTS, cards)
    twin = plan51_memo(SLOTS, cards)
    work = plan_work(work_cards, SLOTS)
    empty = np.zeros((1, 6), np.int64)
    for _ in range(2 * MEMO51 + 4):
        pos = pool[data.draw(st.integers(0, len(pool) - 1))]
        if data.draw(st.booleans()):
            pos = variants(pos, data.draw)
        hand, table, opened, need, must_open, oblig, taken, _, nodes = pos
        main = (hand, table, opened, need, must_open, oblig, taken, True, nodes)
        free = (hand, empty, False, 0, False, -1, taken, False, nodes)
        assert pair(memo, work, pos) == (plan(plan_best51, *main), plan(plan_best51, *free))
        plan(plan_best51_memo, twin, *main)
        plan(plan_best51_memo, twin, *free)
        assert (memo == twin).all()


def test_memo_hits_repeats_and_ignores_need_once_opened() -> None:
    """A repeated position is a hit (the memo's row is the one written); ``need`` is not read
    once opened, so it does not split the key.
    """
    hand = np.zeros(53, np.int64)
    hand[[0, 1, 2, 13, 26, 39, 7]] = 1
    table = np.zeros((SLOTS, 6), np.int64)
    memo = plan51_memo(SLOTS, 32)
    first = plan(plan_best51_memo, memo, hand, table, True, 51, False, -1, -1, True, 3000)
    written = memo.copy()
    again = plan(plan_best51_memo, memo, hand, table, True, 0, False, -1, -1, True, 3000)
    assert first == again == plan(plan_best51, hand, table, True, 0, False, -1, -1, True, 3000)
    assert (memo == written).all()  # a hit writes nothing
    plan(plan_best51_memo, memo, hand, table, False, 51, False, -1, -1, True, 3000)
    assert (memo != written).any()  # not opened: another key


def test_memo_raises_as_the_search() -> None:
    """A negative count and a too small ``out_steps`` raise ``plan_best51``'s errors, also for
    a position the memo holds.
    """
    hand = np.zeros(53, np.int64)
    hand[[0, 1, 2, 3, 4]] = 1
    table = np.zeros((SLOTS, 6), np.int64)
    memo = plan51_memo(SLOTS, 32)
    args = (hand, table, True, 0, False, -1, -1, True, 3000)
    plan(plan_best51_memo, memo, *args)
    with pytest.raises(ValueError, match="out_steps"):
        plan_best51_memo(memo, *args, np.zeros((2, 3), np.int64), np.zeros(53, np.int64))
    bad = hand.copy()
    bad[5] = -1
    with pytest.raises(ValueError, match="hand counts"):
        plan(plan_best51_memo, memo, bad, *args[1:])


BELOW_BIG = float(np.nextafter(np.float32(BIG), np.float32(0)))
SPECIAL = [np.nan, np.inf, -np.inf, BIG, -BIG, BELOW_BIG, -BELOW_BIG, 0.0, -0.0, 1.0, 3.4e38]


@settings(max_examples=200, deadline=None)
@given(
    width=st.integers(1, 300),
    spots=st.lists(st.tuples(st.integers(0, 299), st.sampled_from(SPECIAL)), max_size=3),
    seed=st.integers(0, 2**32 - 1),
)
def test_row_ok_is_every_value_finite_within_big(width: int, spots: list, seed: int) -> None:
    """``row_ok`` (branch-free) is the plain check: every value finite and within ``BIG``."""
    obs = np.random.default_rng(seed).uniform(-2.0, 2.0, (2, width)).astype(np.float32)
    for i, v in spots:
        obs[1, i % width] = v
    for b in range(2):
        expect = all(-BIG < float(v) < BIG for v in obs[b])
        assert row_ok(obs, b) == expect
