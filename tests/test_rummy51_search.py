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
from numba import njit
from test_jmelds import summarised

from rummy_env import rummy51_v1
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
    template_needs,
    template_size,
    template_uses,
)
from rummy_env.core.table import hand_total, unlay_template
from rummy_env.rules.rummy51 import kernels as K

HANDS = st.fixed_dictionaries(
    {
        "cards": st.lists(st.integers(0, 51), min_size=0, max_size=22),
        "jokers": st.integers(0, 4),
    }
)


def _summaries(hand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hand's suits held by rank and run positions held by suit (``hand_masks``), as
    the search reads them.
    """
    rs = np.zeros(13, np.int64)
    sp = np.zeros(4, np.int64)
    hand_masks(hand, rs, sp)
    return rs, sp


def _templates(hand: np.ndarray, out_t: np.ndarray, out_j: np.ndarray) -> int:
    rs, sp = _summaries(hand)
    return feasible_templates(int(hand[JOKER]), rs, sp, TPL_WIN, out_t, out_j)


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
    h = summarised(hand["cards"], hand["jokers"])[0]
    ct = np.empty(NUM_TEMPLATES, np.int64)
    cj = np.empty(NUM_TEMPLATES, np.int64)
    nf = _templates(h, ct, cj)
    # any sublist of the templates (the search's levels bound what is left of theirs)
    keep = [k for k in range(nf) if k not in set(drop)]
    ts, js = ct[keep].copy(), cj[keep].copy()
    got = K._points_bound(h, ts, js, len(keep), _summaries(h)[1])
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
    full = summarised(hand["cards"], hand["jokers"])[0]
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


@njit(cache=False)
def _meld_entries_by_search(states, i, cfg, ws, out):
    """Each first meld of game ``i``'s play mask decided by its own search (lay it, ask
    ``turn_completable`` from scratch, take it back): 1 where legal, into ``out``."""
    rec = states[i]
    p = rec.cur
    hand = rec.hands[p]
    ob, ts, ow, op, on = rec.oblig, rec.taken_single, rec.owed, rec.open_pts, rec.opened_now
    total = hand_total(rec, p)
    saved = rec.known[p].copy()
    for t in range(NUM_TEMPLATES):
        out[t] = 0
        if template_needs(t, hand, TPL_KIND, TPL_A, TPL_B, TPL_C) < 0:
            continue
        if template_size(t, TPL_KIND, TPL_B, TPL_C) >= total:
            continue
        j = K._lay_new(rec, cfg, p, t)
        if template_uses(t, j, ts, TPL_KIND, TPL_A, TPL_B, TPL_C):
            rec.taken_single = -1
        ok = K.turn_completable(rec, cfg, p, ws)
        unlay_template(rec, p, t, j, saved)
        rec.oblig, rec.taken_single, rec.owed = ob, ts, ow
        rec.open_pts, rec.opened_now = op, on
        rec.opened[p] = 0
        out[t] = 1 if ok else 0


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    opts=st.fixed_dictionaries(
        {},
        optional={
            "opening_threshold": st.sampled_from([51, 30, 80]),
            "retrieved_joker_must_be_melded": st.booleans(),
            "discard_draw_requires_opening": st.booleans(),
        },
    ),
)
def test_first_melds_of_the_play_mask_are_each_ones_search(seed, opts):
    # the mask marks some first melds legal from the opening another one's search found
    # (_also_first): each entry must be what its own search says
    env = rummy51_v1.raw_env(**opts)
    env.reset(seed=seed)
    lay = env.layout
    game = env.game
    rng = np.random.default_rng(seed)
    ws = K.make_work()
    row = np.zeros(NUM_TEMPLATES, np.int8)
    checked = 0
    for _ in range(1500):
        rec = env.state_record
        if rec["done"]:
            env.reset(seed=int(rng.integers(2**31)))
            continue
        mask = env.observe(env.agent_selection)["action_mask"]
        p = int(rec["cur"])
        if rec["phase"] == K.PH_PLAY and rec["opened"][p] == 0:
            if rec["n_melds"] < game.cfg[K.C_M]:
                _meld_entries_by_search(game.states, 0, game.cfg, ws, row)
                melds = mask[lay.meld_base : lay.meld_base + NUM_TEMPLATES]
                np.testing.assert_array_equal(melds, row)
                checked += 1
        legal = np.flatnonzero(mask)
        places = legal[(legal >= lay.meld_base) & (legal < lay.discard_base)]
        a = rng.choice(places) if places.size and rng.random() < 0.6 else rng.choice(legal)
        env.step(int(a))
    assert checked > 0
