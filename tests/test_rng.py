"""The numpy draws of ``core.rng`` (``next_u64_rows``, ``randint_rows``: the single-agent vector
env's opponents) equal the compiled ones (``next_u64``, ``randint``: every kernel), so a game's
stream gives the same numbers whichever side draws from it.
"""

from __future__ import annotations

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


draw_bits = _compiled(_draw_bits)
draw_ints = _compiled(_draw_ints)

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
