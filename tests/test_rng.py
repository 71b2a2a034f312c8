"""The numpy draws of ``core.rng`` (``next_u64_rows``, ``randint_rows``: the single-agent vector
env's opponents) equal the compiled ones (``next_u64``, ``randint``: every kernel; ``next_u64_at``,
``randint_at``: the vector env's streams in compiled code), so a game's stream gives the same
numbers whichever side draws from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env.core import rng
from rummy_env.core.jit import KernelDispatcher

STATE = np.dtype([("rng", np.uint64)])


def _compiled(f):
    return KernelDispatcher(py_func=f, locals={}, targetoptions={"nopython": True})


def _draw_bits(states, i, k, out):
    for j in range(k):
        out[j] = rng.next_u64(states[i])


def _draw_ints(states, i, n, out):
    for j in range(out.shape[0]):
        out[j] = rng.randint(states[i], n[j])


def _draw_bits_at(streams, i, k, out):
    for j in range(k):
        out[j] = rng.next_u64_at(streams, i)


def _draw_ints_at(streams, i, n, out):
    for j in range(out.shape[0]):
        out[j] = rng.randint_at(streams, i, n[j])


draw_bits = _compiled(_draw_bits)
draw_ints = _compiled(_draw_ints)
draw_bits_at = _compiled(_draw_bits_at)
draw_ints_at = _compiled(_draw_ints_at)

seeds = st.integers(0, 2**64 - 1)


@settings(max_examples=50, deadline=None)
@given(seeds=st.lists(seeds, min_size=1, max_size=6), k=st.integers(1, 5))
def test_next_u64_rows_draws_what_next_u64_draws(seeds, k):
    a = np.zeros(len(seeds), STATE)
    a["rng"] = np.array(seeds, dtype=np.uint64)
    b = a["rng"].copy()
    rows = np.arange(len(seeds))
    compiled = np.zeros((len(seeds), k), np.uint64)
    for i in rows:
        draw_bits(a, i, k, compiled[i])
    vec = np.stack([rng.next_u64_rows(b, rows) for _ in range(k)], axis=1)
    np.testing.assert_array_equal(vec, compiled)
    np.testing.assert_array_equal(b, a["rng"])  # the streams advanced alike


@settings(max_examples=50, deadline=None)
@given(
    seed=seeds,
    n=st.lists(st.integers(1, 2**31), min_size=1, max_size=8),
)
def test_randint_rows_draws_what_randint_draws(seed, n):
    a = np.zeros(1, STATE)
    a["rng"] = seed
    b = a["rng"].copy()
    n = np.array(n, dtype=np.int64)
    compiled = np.zeros(len(n), np.int64)
    draw_ints(a, 0, n, compiled)
    rows = np.array([0])
    vec = np.array([rng.randint_rows(b, rows, m)[0] for m in n])
    np.testing.assert_array_equal(vec, compiled)
    assert ((vec >= 0) & (vec < n)).all()
    assert b[0] == a["rng"][0]


def test_randint_rows_takes_a_bound_per_row():
    states = rng.seed_states(7, 4)
    twin = states.copy()
    rows = np.array([0, 2, 3])
    n = np.array([3, 10, 1000])
    got = rng.randint_rows(states, rows, n)
    want = [rng.randint_rows(twin, np.array([r]), m)[0] for r, m in zip(rows, n, strict=True)]
    np.testing.assert_array_equal(got, want)


@settings(max_examples=50, deadline=None)
@given(
    seeds=st.lists(seeds, min_size=1, max_size=6),
    n=st.lists(st.integers(1, 2**31), min_size=1, max_size=8),
)
def test_stream_array_draws_are_the_rows_draws(seeds, n):
    """``next_u64_at`` / ``randint_at`` draw from a stream of an array what ``next_u64_rows`` /
    ``randint_rows`` draw from that row, and advance it alike.
    """
    streams = np.array(seeds, dtype=np.uint64)
    twin = streams.copy()
    n = np.array(n, dtype=np.int64)
    for i in range(len(seeds)):
        bits = np.zeros(3, np.uint64)
        draw_bits_at(streams, i, 3, bits)
        row = np.array([i])
        want = [rng.next_u64_rows(twin, row)[0] for _ in range(3)]
        np.testing.assert_array_equal(bits, want)
        ints = np.zeros(len(n), np.int64)
        draw_ints_at(streams, i, n, ints)
        np.testing.assert_array_equal(ints, [rng.randint_rows(twin, row, m)[0] for m in n])
    np.testing.assert_array_equal(streams, twin)


# -- numpy's SeedSequence in compiled code (the games' and the agents' seeding) -----------------


@settings(max_examples=200, deadline=None)
@given(
    seed=st.one_of(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2**31 - 1, 2**32 - 1])),
    words=st.integers(1, 9),
)
def test_seed_sequence_words_are_numpys(seed: int, words: int) -> None:
    out = np.zeros(words, np.uint64)
    rng.seed_sequence_words(seed, out)
    np.testing.assert_array_equal(
        out, np.random.SeedSequence(seed).generate_state(words, np.uint64)
    )


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**64), n=st.integers(1, 40))
def test_seed_states_are_numpys_beyond_the_compiled_range_too(seed: int, n: int) -> None:
    # [0, 2**32) is computed in compiled code; above it (and across it) numpy's objects
    want = [np.random.SeedSequence(seed + i).generate_state(1, np.uint64)[0] for i in range(n)]
    assert rng.seed_state(seed) == want[0]
    np.testing.assert_array_equal(rng.seed_states(seed, n), np.array(want, np.uint64))


def test_seed_states_straddling_two_to_the_32() -> None:
    seed = 2**32 - 3
    want = [np.random.SeedSequence(seed + i).generate_state(1, np.uint64)[0] for i in range(6)]
    np.testing.assert_array_equal(rng.seed_states(seed, 6), np.array(want, np.uint64))


_MASK_CASES = st.tuples(
    st.integers(1, 9),
    st.integers(1, 70),
    st.floats(0.0, 1.0),
    st.integers(0, 2**32 - 1),
    st.sampled_from([np.bool_, np.int8, np.uint8]),
)


@settings(max_examples=300, deadline=None)
@given(_MASK_CASES)
def test_legal_counts_and_nth_legal_are_numpys(case) -> None:
    """Counted and picked by 8-byte words and by bytes at the row ends (rows of any width, so
    every alignment of a row against the words): the same as numpy's count and nonzero.
    """
    _check_counts_and_nth(*case)


@settings(max_examples=60, deadline=None)
@given(
    _MASK_CASES.map(lambda c: (c[0], c[1], c[2] ** 3, c[3], c[4])),
    st.integers(0, 4200),
)
def test_legal_counts_and_nth_legal_are_numpys_on_wide_rows(case, extra) -> None:
    """Rows as wide as the joker games' (1,766 and 3,188 actions) and wider, mostly zero:
    the count's chunks of 255 words (2,040 bytes) and the pick's blocks of 8 words, at every
    alignment.
    """
    n, a_n, p, seed, dtype = case
    _check_counts_and_nth(n, a_n + extra, p, seed, dtype)


def _check_counts_and_nth(n: int, a_n: int, p: float, seed: int, dtype: Any) -> None:
    g = np.random.default_rng(seed)
    mask = g.random((n, a_n)) < p
    mask[np.arange(n), g.integers(0, a_n, n)] = True  # every row has a legal action
    counts = rng.legal_counts(mask.astype(dtype))
    np.testing.assert_array_equal(counts, np.count_nonzero(mask, axis=1))
    for k_of in (lambda c: np.zeros_like(c), lambda c: c - 1, lambda c: g.integers(0, c)):
        k = k_of(counts)
        want = [np.flatnonzero(mask[i])[k[i]] for i in range(n)]
        np.testing.assert_array_equal(rng.nth_legal(mask.astype(dtype), k), want)
    # k past the row's count: -1
    np.testing.assert_array_equal(rng.nth_legal(mask, counts), np.full(n, -1))
    # pick_legal: the pick of (u * count) in one pass, u at the ends of [0, 1) too
    u = g.random(n)
    u[: n // 3] = 0.0
    u[n // 3 : n // 2] = np.nextafter(1.0, 0.0)
    k = (u * counts).astype(np.int64)
    want = [np.flatnonzero(mask[i])[k[i]] for i in range(n)]
    np.testing.assert_array_equal(rng.pick_legal(mask.astype(dtype), u), want)


def test_legal_counts_rejects_masks_that_are_not_2d_bytes() -> None:
    import pytest

    with pytest.raises(ValueError, match="masks must be a 2-D bool array"):
        rng.legal_counts(np.ones((2, 3), np.int64))
    with pytest.raises(ValueError, match="masks must be a 2-D bool array"):
        rng.nth_legal(np.ones(3, np.bool_), np.zeros(1, np.int64))


def test_pick_legal_without_a_legal_action_and_bad_u() -> None:
    import pytest

    mask = np.zeros((3, 20), np.bool_)
    mask[1, [3, 17]] = True
    np.testing.assert_array_equal(rng.pick_legal(mask, [0.5, 0.5, 0.9]), [-1, 17, -1])
    with pytest.raises(ValueError, match=r"u must have shape \(3,\), got \(2,\)"):
        rng.pick_legal(mask, [0.5, 0.5])
    with pytest.raises(ValueError, match="masks must be a 2-D bool array"):
        rng.pick_legal(np.ones((2, 3), np.int64), [0.1, 0.2])
    for bad in (1.0, -0.25, np.nan, np.inf):  # outside [0, 1): refused, not a -1 action
        with pytest.raises(ValueError, match=rf"u must hold numbers in \[0, 1\), got {bad}"):
            rng.pick_legal(mask, [0.5, bad, 0.0])
    assert rng.pick_legal(mask[:0], []).shape == (0,)  # no rows: nothing to check


def test_nth_legal_takes_a_mask_that_is_not_contiguous() -> None:
    mask = np.zeros((3, 10), np.bool_)
    mask[:, [2, 4, 7]] = True
    view = mask[:, ::2]  # columns 0, 2, 4, 6, 8: legal 1 and 2
    np.testing.assert_array_equal(rng.legal_counts(view), [2, 2, 2])
    np.testing.assert_array_equal(rng.nth_legal(view, np.array([0, 1, 0])), [1, 2, 1])
