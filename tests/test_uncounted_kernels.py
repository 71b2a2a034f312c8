"""Kernels compiled without reference counting (``rummy_env.core.jit.kernel(counted=False)``)
and the planners' searches in kept buffers (``planner_kernels.plan_work``).

An uncounted kernel must not return an array (its caller would drop a reference it never
took): refused when it compiles. A counted kernel it calls is compiled with the runtime even
when the uncounted caller compiles it first (numba otherwise inherits the caller's setting).
The planners' ``*_in`` searches reuse one set of buffers from call to call, and hand positions
beyond them (or arguments the search refuses) to the allocating search: every answer, output
and error must be the allocating search's, whatever came before in the buffers.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_planner_kernels import hands, rummy51_args, tables

from rummy_agents.gin_rummy_rules import _fits, layoff_sequence
from rummy_agents.planner_kernels import (
    card_values,
    plan_best,
    plan_best51,
    plan_best51_in,
    plan_best_in,
    plan_turn,
    plan_turn_in,
    plan_work,
    table_array,
)
from rummy_env.core.jit import holds_counted, kernel

# -- the decorator ---------------------------------------------------------------------------------


@kernel(counted=False)
def _returns_its_argument(x):
    return x


@kernel(counted=False)
def _returns_scalars(x):
    return x[1], (x[0], x.shape[0])


@kernel
def _allocates(n):
    out = np.zeros(n, np.int64)
    out[-1] = n
    return out.sum()


@kernel(counted=False)
def _calls_an_allocating_kernel(n):
    return _allocates(n) + 1


def test_an_uncounted_kernel_may_not_return_an_array() -> None:
    with pytest.raises(TypeError, match="_returns_its_argument is compiled with counted=False"):
        _returns_its_argument(np.arange(4))


def test_an_uncounted_kernel_returns_scalars_and_tuples() -> None:
    assert _returns_scalars(np.arange(5)) == (1, (0, 5))


def test_an_uncounted_caller_compiles_counted_callees_with_the_runtime() -> None:
    # _allocates is first compiled from the uncounted caller: it must still get the runtime
    assert _calls_an_allocating_kernel(7) == 8
    assert _allocates(3) == 3


def test_holds_counted() -> None:
    from numba.core import types

    arr = types.Array(types.int64, 1, "C")
    assert holds_counted(arr)
    assert holds_counted(types.Tuple((types.int64, types.UniTuple(arr, 2))))
    assert not holds_counted(types.Tuple((types.int64, types.boolean, types.float64)))
    assert not holds_counted(types.none)


# -- the planners in kept buffers ------------------------------------------------------------------

SLOTS = 12


def _table(table: list[list[int]]) -> np.ndarray:
    t = np.zeros((SLOTS, 6), np.int64)
    a = table_array(table)
    t[: a.shape[0]] = a[:SLOTS]
    return t


def _outputs(fn, *args) -> tuple:
    steps = np.full((120, 3), -7, np.int64)
    left = np.full(53, -7, np.int64)
    found, pts, n = fn(*args, steps, left)
    return bool(found), int(pts), int(n), steps[:n].tolist(), left.tolist() if found else None


@st.composite
def positions500(draw: st.DrawFn) -> tuple:
    hand = draw(hands())
    held = [-1, *(c for c in range(53) if hand[c] > 0)]
    return (
        np.array(hand, np.int64),
        _table(draw(tables())),
        draw(st.sampled_from(held)),
        draw(st.booleans()),
        draw(st.booleans()),
        draw(st.sampled_from([3000, 200, 25])),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    work_size=st.sampled_from([(32, SLOTS), (4, 2), (8, 0)]),
    positions=st.lists(positions500(), min_size=1, max_size=8),
)
def test_plan_best_in_kept_buffers_is_plan_best(work_size: tuple, positions: list) -> None:
    """A sequence of positions through one set of buffers (small ones hand the larger hands
    and tables to the allocating search) plans as fresh searches do.
    """
    work = plan_work(*work_size)
    for hand, table, ob, new, v51015, limit in positions:
        vals = card_values(v51015)
        low = 5 if v51015 else 1
        args = (hand, table, ob, new, vals, low, limit)
        assert _outputs(plan_best_in, work, *args) == _outputs(plan_best, *args)
        assert _outputs(plan_turn_in, work, *args) == _outputs(plan_turn, *args)


@st.composite
def positions51(draw: st.DrawFn) -> tuple:
    hand = draw(hands())
    kw = draw(rummy51_args(hand))
    return (
        np.array(hand, np.int64),
        _table(draw(tables())),
        kw["opened"],
        kw["need"],
        kw["must_open"],
        kw["oblig"],
        kw["taken"],
        kw["layoffs"],
        draw(st.sampled_from([3000, 100])),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    work_size=st.sampled_from([(32, SLOTS), (4, 2), (8, 0)]),
    positions=st.lists(positions51(), min_size=1, max_size=8),
)
def test_plan_best51_in_kept_buffers_is_plan_best51(work_size: tuple, positions: list) -> None:
    work = plan_work(*work_size)
    for args in positions:
        assert _outputs(plan_best51_in, work, *args) == _outputs(plan_best51, *args)


def test_kept_buffers_raise_as_the_search() -> None:
    """Arguments the search refuses (a negative count, too few step rows) go to it, and raise
    its errors.
    """
    work = plan_work(32, SLOTS)
    table = _table([])
    bad = np.zeros(53, np.int64)
    bad[3] = -1
    hand = np.zeros(53, np.int64)
    hand[:6] = 1
    vals = card_values(False)
    left = np.zeros(53, np.int64)
    for fn, args in (
        (plan_best_in, (table, -1, False, vals, 1, 3000)),
        (plan_best51_in, (table, False, 0, False, -1, -1, True, 3000)),
    ):
        with pytest.raises(ValueError, match="hand counts must be >= 0"):
            fn(work, bad, *args, np.zeros((10, 3), np.int64), left)
        with pytest.raises(ValueError, match="out_steps has fewer rows"):
            fn(work, hand, *args, np.zeros((2, 3), np.int64), left)


# -- Gin Rummy's lay-off and arrangement helpers (bit arithmetic instead of card loops) ---------


def _bits(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def _is_group_ref(m: int) -> bool:
    return all(c % 13 == _bits(m)[0] % 13 for c in _bits(m))


def _closure_ref(rem: int, slots: list[int]) -> tuple[int, list[int]]:
    """The lay-offs as the Gin rule agents' Python ``layoff_sequence`` makes them (its own
    ``_fits``, a card loop): the cards laid and the slots after them.
    """
    local = list(slots)
    laid = 0
    for c, k in layoff_sequence(rem, slots):
        local[k] |= 1 << c
        laid |= 1 << c
    return laid, local


@st.composite
def gin_melds(draw: st.DrawFn) -> int:
    """A group of 3-4 cards of one rank or a run of 3-10 cards of one suit."""
    if draw(st.booleans()):
        r = draw(st.integers(0, 12))
        suits = draw(st.sets(st.integers(0, 3), min_size=3, max_size=4))
        return sum(1 << (13 * s + r) for s in suits)
    s = draw(st.integers(0, 3))
    n = draw(st.integers(3, 10))
    lo = draw(st.integers(0, 13 - n))
    return sum(1 << (13 * s + r) for r in range(lo, lo + n))


@settings(max_examples=300, deadline=None)
@given(
    slots=st.lists(gin_melds(), min_size=0, max_size=3),
    rem=st.integers(0, (1 << 52) - 1),
    sparse=st.integers(0, 3),
)
def test_gin_closure_layoff_is_the_agents_card_loop(
    slots: list[int], rem: int, sparse: int
) -> None:
    from rummy_env.rules.gin_rummy import kernels as K

    for _ in range(sparse):  # fewer cards left, as after a knock
        rem &= rem >> 7
    held = 0
    for m in slots:
        held |= m
    rem &= ~held
    arr = np.zeros(3, np.uint64)
    arr[: len(slots)] = slots
    laid, local = _closure_ref(rem, slots)
    assert int(K.closure_layoff(np.uint64(rem), arr, len(slots), False)) == laid
    assert arr[: len(slots)].tolist() == slots  # not applied
    assert int(K.closure_layoff(np.uint64(rem), arr, len(slots), True)) == laid
    assert arr[: len(slots)].tolist() == local
    for m in slots:
        assert bool(K.is_group(np.uint64(m))) == _is_group_ref(m)
        assert int(K.highest(np.uint64(m))) == _bits(m)[-1]
        for c in range(52):
            assert int(K.fits(c, np.uint64(m))) == _fits(c, m)


# -- the agents' mask scans ----------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    width=st.integers(1, 140),
    entries=st.dictionaries(st.integers(0, 139), st.sampled_from([1, 1, 2, -1]), max_size=6),
    lo=st.integers(0, 145),
    span=st.integers(0, 145),
    dtype=st.sampled_from([np.int8, np.bool_]),
    layout=st.sampled_from(["rows", "offset", "strided"]),
)
def test_next_legal_is_the_first_legal_entry(width, entries, lo, span, dtype, layout) -> None:
    """``next_legal`` (32 entries at a time where they are 0) finds what a plain scan finds,
    and ``all_zero`` what ``not any`` says, at every alignment of ``lo`` and ``hi`` against the
    blocks, in any row, with entries other than 0/1 (legal is == 1; all_zero reads any entry),
    in masks whose rows start off an 8-byte boundary or whose entries are not adjacent.
    """
    from rummy_agents.joker_greedy_kernels import all_zero, next_legal

    big = np.zeros((3, 2 * width + 1), np.int8)
    masks = {
        "rows": big[:, :width],
        "offset": big[:, 1 : width + 1],
        "strided": big[:, : 2 * width : 2],
    }[layout]
    for a, v in entries.items():
        if a < width:
            masks[1, a] = v if dtype == np.int8 else 1
    masks[0] = 1  # the neighbouring rows (and entries between strided ones) must not be read
    masks[2] = 1
    if layout == "strided":
        big[1, 1 : 2 * width : 2] = 1
    if dtype == np.bool_:
        masks = masks.view(np.bool_)
    hi = min(width, lo + span)
    expect = next((a for a in range(lo, hi) if masks[1, a] == 1), hi)
    assert next_legal(masks, 1, lo, hi) == expect
    assert all_zero(masks, 1, lo, hi) == (not masks[1, lo:hi].any())
