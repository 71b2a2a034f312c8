"""The Rummy 51 opening search's parts against their definitions (hypothesis).

``_points_bound`` against the sum its docstring defines, over every card; the search started
from the play mask's candidates of a larger hand (``root``) against the search that lists the
templates itself. The masks these build are compared with the reference in
``test_rummy51_properties``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env.core.jmelds import (
    JOKER,
    NUM_TEMPLATES,
    TPL_A,
    TPL_B,
    TPL_C,
    TPL_KIND,
    TPL_WIN,
    feasible_templates,
    hand_masks,
    pos_card,
)
from rummy_env.rules.rummy51 import kernels as K

HANDS = st.fixed_dictionaries(
    {
        "cards": st.lists(st.integers(0, 51), min_size=0, max_size=22),
        "jokers": st.integers(0, 4),
    }
)


def _hand(cards: list[int], jokers: int) -> np.ndarray:
    hand = np.zeros(53, np.int8)
    for c in cards:
        hand[c] = min(hand[c] + 1, 2)
    hand[JOKER] = jokers
    return hand


def _templates(hand: np.ndarray, out_t: np.ndarray, out_j: np.ndarray) -> int:
    rs = np.zeros(13, np.int64)
    sp = np.zeros(4, np.int64)
    hand_masks(hand, rs, sp)
    return feasible_templates(
        int(hand[JOKER]), rs, sp, TPL_KIND, TPL_A, TPL_B, TPL_C, TPL_WIN, out_t, out_j
    )


def _naturals(hand: np.ndarray, t: int) -> set[int]:
    """The natural cards template ``t`` takes from ``hand``."""
    if TPL_KIND[t] == 1:
        return {s * 13 + int(TPL_A[t]) for s in range(4) if TPL_B[t] >> s & 1}
    cards = (pos_card(int(TPL_A[t]), pos) for pos in range(int(TPL_B[t]), int(TPL_C[t]) + 1))
    return {c for c in cards if hand[c] > 0}


def _bound_by_definition(hand: np.ndarray, ts: list[int], js: list[int]) -> int:
    free: set[int] = set()
    for t, j in zip(ts, js, strict=True):
        if j == 0:
            free |= _naturals(hand, t)
    bound = sum(int(hand[c]) * K.card_penalty(c) for c in free)
    jk = int(hand[JOKER])
    extras = sorted(
        (
            sum(K.card_penalty(c) for c in _naturals(hand, t) - free)
            for t, j in zip(ts, js, strict=True)
            if j > 0
        ),
        reverse=True,
    )
    return bound + sum(extras[:jk]) + 11 * jk if jk else bound


@settings(max_examples=400, deadline=None)
@given(hand=HANDS, drop=st.lists(st.integers(0, 700), max_size=30))
def test_points_bound_is_its_definition(hand, drop):
    h = _hand(hand["cards"], hand["jokers"])
    ct = np.empty(NUM_TEMPLATES, np.int64)
    cj = np.empty(NUM_TEMPLATES, np.int64)
    nf = _templates(h, ct, cj)
    # any sublist of the templates (the search's levels bound what is left of theirs)
    keep = [k for k in range(nf) if k not in set(drop)]
    ts, js = ct[keep].copy(), cj[keep].copy()
    got = K._points_bound(h, ts, js, len(keep))
    assert got == _bound_by_definition(h, ts.tolist(), js.tolist())


@settings(max_examples=400, deadline=None)
@given(
    hand=HANDS,
    gone=st.lists(st.integers(0, 52), max_size=6),
    need=st.sampled_from([-5, 0, 10, 30, 51, 80]),
    must=st.integers(-1, 52),
    taken=st.integers(-1, 52),
    owed=st.integers(0, 2),
    room=st.integers(0, 3),
    swap=st.booleans(),
)
def test_search_from_a_larger_hands_templates_is_the_search(
    hand, gone, need, must, taken, owed, room, swap
):
    # the play mask lays a candidate and searches the rest from its own list of templates:
    # the hand searched is part of the one listed
    full = _hand(hand["cards"], hand["jokers"])
    ws = K.make_work()
    nf = _templates(full, ws[8], ws[9])
    h = full.copy()
    for c in gone:
        h[c] = max(h[c] - 1, 0)
    if must >= 0 and h[must] == 0:
        must = -1
    before = h.copy()
    want = K._reach(h, ws[2], need, must, taken, owed, room, swap, ws)
    got = K._reach(h, ws[2], need, must, taken, owed, room, swap, ws, nf)
    assert got == want
    assert (h == before).all() and not ws[2].any()
