"""Rummy 51 rules as compiled kernels over state records (RULES.md §3).

One implementation for the AEC env (a batch of one) and the vector env: the batch entry points
are ``rummy_env.core.batch``'s, over the hooks registered at the end of this module.

Masks are exact: an action is allowed only if it is legal now and the turn can still be
completed after it. Before a player has opened, "can still be completed" means: no opening
started (a discard is possible), or new melds from the hand can still bring this turn's total to
the threshold while keeping a card to discard; that is decided by a small exact search over
disjoint meld templates (``_reach``). The table code (slots, lay-offs, jokers) is
``core.table``, shared with 500 Rum.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros

from rummy_env.core import batch
from rummy_env.core import rng as _rng
from rummy_env.core.batch import play_random_parallel, step_single  # the names callers use
from rummy_env.core.jit import kernel
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
    template_jokers,
    template_size,
    template_uses,
)
from rummy_env.core.table import (
    fit_joker,
    fit_natural,
    give_up,
    hand_total,
    joker_room,
    lay_template,
    new_deal,
    place_card,
    unlay_template,
    unplace_card,
    write_table_obs,
)
from rummy_env.encodings import rummy51 as E
from rummy_env.rules.rummy51.config import (
    C_D,
    C_DD_OPEN,
    C_DISCARD,
    C_ELIM,
    C_HAND,
    C_JOKER,
    C_LAYOFF,
    C_M,
    C_MATCH,
    C_MAX_PILE,
    C_MAX_RESH,
    C_MAX_STEPS,
    C_MELD,
    C_NA,
    C_OBS,
    C_P,
    C_RETRIEVE,
    C_REWARD,
    C_RJ_MELD,
    C_SIZE,
    C_THRESH,
    N_PIECES,
    config_vector,
)
from rummy_env.rules.rummy51.state import make_state_dtype

R_PENALTY = 0
R_ZERO_SUM = 1
R_NORMALIZED = 2
R_PAYOUT = 3

PH_DRAW = E.PH_DRAW
PH_PLAY = E.PH_PLAY
PH_OVER = E.PH_OVER

DEPTH = 24  # search depth bound: a hand never holds more than 15 naturals
RUMMY_BONUS = 25
JOKER_PENALTY = 25


def _pos_value(pos: int) -> int:
    """Points of a card at run position ``pos`` (0 = low ace 1, 13 = high ace 11)."""
    if pos == 0:
        return 1
    if pos == 13:
        return 11
    return min(pos + 1, 10)


def _template_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per template: its points (jokers count as the card they stand for) and the jokers the
    meld can still take as lay-offs once laid.
    """
    val = np.zeros(NUM_TEMPLATES, np.int64)
    room = np.zeros(NUM_TEMPLATES, np.int64)
    for t in range(NUM_TEMPLATES):
        if TPL_KIND[t] == 1:
            r = int(TPL_A[t])
            size = bin(int(TPL_B[t])).count("1") + int(TPL_C[t])
            val[t] = size * (11 if r == 0 else min(r + 1, 10))
            room[t] = 4 - size
        else:
            lo, hi = int(TPL_B[t]), int(TPL_C[t])
            val[t] = sum(_pos_value(pos) for pos in range(lo, hi + 1))
            room[t] = 13 - (hi - lo + 1)
    return val, room


TPL_VAL, TPL_ROOM = _template_tables()
TABLES = (TPL_KIND, TPL_A, TPL_B, TPL_C, TPL_WIN, TPL_VAL, TPL_ROOM)


# -- values ---------------------------------------------------------------------------------


@kernel
def card_penalty(c) -> int:
    """Points of a card left in hand: A 11, 2-10 face value, J Q K 10, joker 25."""
    if c == JOKER:
        return JOKER_PENALTY
    r = c % 13
    if r == 0:
        return 11
    return r + 1 if r <= 9 else 10


@kernel
def hand_penalty(rec, p) -> int:
    """Penalty of player ``p``'s hand."""
    t = 0
    for c in range(53):
        t += rec.hands[p, c] * card_penalty(c)
    return t


@kernel
def slot_value(rec, m) -> int:
    """Points of table meld ``m``, jokers counted as the card they stand for."""
    if rec.m_kind[m] == 1:
        r = rec.m_key[m]
        n = rec.m_jok[m]
        for s in range(4):
            n += rec.m_nat[m] >> s & 1
        return n * (11 if r == 0 else min(r + 1, 10))
    v = 0
    for pos in range(rec.m_lo[m], rec.m_hi[m] + 1):
        v += 1 if pos == 0 else (11 if pos == 13 else min(pos + 1, 10))
    return v


# -- the opening search ---------------------------------------------------------------------


@kernel
def make_work():
    """Scratch buffers of the search and the masks (one set per thread)."""
    cand_t = np.empty((DEPTH, NUM_TEMPLATES), np.int64)
    cand_j = np.empty((DEPTH, NUM_TEMPLATES), np.int64)
    kept = np.zeros(53, np.int8)
    rs = np.empty(13, np.int64)
    sp = np.empty(4, np.int64)
    known_save = np.empty(53, np.int8)
    levels = np.zeros((DEPTH, 17), np.int64)
    keys = np.empty((DEPTH, NUM_TEMPLATES), np.int64)
    mask_t = np.empty(NUM_TEMPLATES, np.int64)  # the play mask's candidate melds
    mask_j = np.empty(NUM_TEMPLATES, np.int64)
    bkeys = np.empty(NUM_TEMPLATES, np.int64)  # a level's branches' naturals (dominance)
    return cand_t, cand_j, kept, rs, sp, known_save, levels, keys, mask_t, mask_j, bkeys


@kernel(inline="always")
def can_discard_from(h, taken) -> bool:
    """Does the hand hold a card it may discard (not the single copy of the card taken)?"""
    for c in range(53):
        if h[c] >= 1 and (c != taken or h[c] >= 2):
            return True
    return False


@kernel(inline="always")
def _leaf_ok(h, kept, taken, owed, room, swap) -> bool:
    """Can the turn end from the hand ``h + kept`` once ``owed`` jokers are laid off (the
    table takes ``room`` more jokers)? ``swap``: the single taken card, if it is all that is
    left, can be put in place of a joker (a retrieval) and the joker discarded.
    """
    if owed > room:
        return False
    n_left = 0
    for c in range(53):
        n = h[c] + kept[c]
        if c == JOKER:
            n -= owed
        n_left += n
        if n >= 1 and (c != taken or n >= 2):
            return True
    return swap and owed == 0 and n_left == 1


@kernel(inline="always")
def take_template(h, t, j) -> int:
    """Remove template ``t``'s cards from count vector ``h``; returns its natural run
    positions (groups: 0) for ``give_template``.
    """
    kinds, ta, tb, tc = TPL_KIND, TPL_A, TPL_B, TPL_C
    nat = 0
    if kinds[t] == 1:
        for s in range(4):
            if tb[t] >> s & 1:
                h[s * 13 + ta[t]] -= 1
    else:
        s = ta[t]
        for pos in range(tb[t], tc[t] + 1):
            c = pos_card(s, pos)
            if h[c] >= 1:
                h[c] -= 1
                nat |= 1 << pos
    h[JOKER] -= j
    return nat


@kernel(inline="always")
def give_template(h, t, j, nat):
    """Undo ``take_template``."""
    kinds, ta, tb, tc = TPL_KIND, TPL_A, TPL_B, TPL_C
    if kinds[t] == 1:
        for s in range(4):
            if tb[t] >> s & 1:
                h[s * 13 + ta[t]] += 1
    else:
        s = ta[t]
        for pos in range(tb[t], tc[t] + 1):
            if nat >> pos & 1:
                h[pos_card(s, pos)] += 1
    h[JOKER] += j


# columns of the search's level table ``ws[6]``
_NEED, _MUST, _OWED, _ROOM, _SWAP, _PIV, _NF, _K, _AT, _AJ, _ANAT, _SKIP, _TAKEN, _ROOT = range(14)
# after a search that succeeds: the moves of its levels (``_AT``'s, -1 after the last) and,
# in row 0, whether its last position ends the turn without the retrieval swap
_PATH, _PLAIN = 14, 15
# the level's branches: candidates ``ws[7][d, :_NB]`` (indices into its templates)
_NB = 16


@kernel(inline="always")
def _undo_level(h, kept, lv, d):
    """Take back the move made at search level ``d`` (a template laid, or the pivot kept)."""
    t = lv[d, _AT]
    if t >= 0:
        give_template(h, t, lv[d, _AJ], lv[d, _ANAT])
    elif t == -2:
        h[lv[d, _PIV]] += 1
        kept[lv[d, _PIV]] -= 1
    lv[d, _AT] = -1


trailing_zeros: Any = _trailing_zeros
"""numba's intrinsic (the index of a value's lowest set bit), typed ``Any`` for mypy, which
reads an intrinsic's typing signature as its call."""

NAT_POINTS = np.array(
    [getattr(card_penalty, "py_func", card_penalty)(c) for c in range(52)], np.int64
)
"""``card_penalty`` of each natural (the search's bound reads it per set bit); read from the
function itself (its Python body, or the function under ``NUMBA_DISABLE_JIT``)."""


@kernel(inline="always")
def _group_cards(r, suits) -> int:
    """Bitmask (by card id) of rank ``r``'s naturals in the suits of bitmask ``suits``."""
    return ((suits & 1) | (suits >> 1 & 1) << 13 | (suits >> 2 & 1) << 26
            | (suits >> 3 & 1) << 39) << r  # fmt: skip


@kernel(inline="always")
def _run_cards(s, positions) -> int:
    """Bitmask (by card id) of suit ``s``'s naturals at the run ``positions`` (bits 0..13; the
    ace is 0 and 13).
    """
    return ((positions & 0x1FFF) | (positions >> 13)) << (13 * s)


@kernel(inline="always")
def _template_naturals(t, j, sp, kinds, ta, tb, twin) -> int:
    """Bitmask (by card id) of the naturals template ``t`` (``j`` jokers) takes from the hand
    whose run positions by suit are ``sp`` (``hand_masks``): a group's suits, a run's
    positions the hand holds (all of them without jokers).
    """
    if kinds[t] == 1:
        return _group_cards(ta[t], tb[t])
    w = twin[t]
    return _run_cards(ta[t], w if j == 0 else sp[ta[t]] & w)


@kernel(inline="always")
def _mask_points(h, mask, copies) -> int:
    """Points of the naturals in ``mask``: every copy the hand ``h`` holds, or one each
    (``copies`` False); a pass over the set bits only.
    """
    v = 0
    while mask != 0:
        c = trailing_zeros(mask)
        v += NAT_POINTS[c] * h[c] if copies else NAT_POINTS[c]
        mask &= mask - 1
    return v


@kernel(inline="always")
def _points_bound(h, ct, cj, nf, sp) -> int:
    """An upper bound on the points of any set of disjoint melds from ``h`` (the templates
    ``ct[:nf]`` with jokers ``cj[:nf]``; ``sp``: the hand's run positions by suit,
    ``hand_masks``): the naturals that fit a meld without jokers (every copy held), plus,
    since at most one meld per joker uses jokers, the ``jokers`` best values of other naturals
    a joker meld takes (one copy each: no run holds a card twice), plus 11 a joker.
    """
    kinds, ta, tb, twin = TPL_KIND, TPL_A, TPL_B, TPL_WIN
    free = 0
    for k in range(nf):
        if cj[k] == 0:
            free |= _template_naturals(ct[k], 0, sp, kinds, ta, tb, twin)
    bound = _mask_points(h, free, True)
    jk = h[JOKER]
    if jk == 0:
        return bound
    top0 = top1 = top2 = top3 = 0  # the best joker-meld extras, largest first
    for k in range(nf):
        if cj[k] == 0:
            continue
        v = _mask_points(h, _template_naturals(ct[k], cj[k], sp, kinds, ta, tb, twin) & ~free,
                         False)  # fmt: skip
        if v > top3:
            if v > top0:
                top0, top1, top2, top3 = v, top0, top1, top2
            elif v > top1:
                top1, top2, top3 = v, top1, top2
            elif v > top2:
                top2, top3 = v, top2
            else:
                top3 = v
    extra = top0
    if jk >= 2:
        extra += top1
    if jk >= 3:
        extra += top2
    if jk >= 4:
        extra += top3
    return bound + extra + 11 * jk


@kernel(inline="always")
def _enter(h, kept, lv, d, ws) -> int:
    """Set up search level ``d``: 1 if its position already ends the turn, else 0 (and its
    branches are listed, or the level is marked exhausted).

    The level's templates (``ws[0][d]``, ``ws[1][d]``: those the hand can still play, each
    with the jokers it takes now) are its parent's filtered (the hand only shrinks down the
    search), or at the root all of them, or the play mask's candidates (``root``). Its
    branches (``ws[7][d, :_NB]``) are the templates holding the pivot (the lowest natural
    still undecided, or ``must``) that no other dominates: another taking the same naturals
    and as many jokers for more points (or as many, listed first) leaves the same hand, so
    only the better one is searched (such a template holds the pivot too).
    """
    kinds, ta, tb, tc, twin = TPL_KIND, TPL_A, TPL_B, TPL_C, TPL_WIN
    need, must, owed = lv[d, _NEED], lv[d, _MUST], lv[d, _OWED]
    lv[d, _AT] = -1
    lv[d, _NF] = 0
    lv[d, _NB] = 0
    lv[d, _K] = 0
    lv[d, _SKIP] = 1
    if need <= 0 and must < 0:
        if _leaf_ok(h, kept, lv[d, _TAKEN], owed, lv[d, _ROOM], lv[d, _SWAP] != 0):
            return 1
        if owed <= 0:
            return 0  # more melds only leave fewer cards
    if d >= DEPTH - 1:
        return 0
    pivot = must
    if must < 0:
        for c in range(52):
            if h[c] > 0:
                pivot = c
                break
        if pivot < 0:
            return 0
    # the level's rows of the (DEPTH, templates) tables indexed in place: a row view costs an
    # atomic reference count up and down per search node
    ct, cj, branch, bkeys = ws[0], ws[1], ws[7], ws[10]
    rs, sp = ws[3], ws[4]
    hand_masks(h, rs, sp)  # (the O(1) feasibility test of each template below)
    jokers = h[JOKER]
    if d == 0 and lv[0, _ROOT] >= 0:
        # the play mask's candidates (``ws[8]``) were the templates of a hand this one is
        # part of: filtered, they are this hand's, in order (no pass over all of them)
        mt = ws[8]
        nf = 0
        for k in range(lv[0, _ROOT]):
            t = mt[k]
            j = template_jokers(t, jokers, rs, sp, kinds, ta, tb, tc, twin)
            if j >= 0:
                ct[0, nf] = t
                cj[0, nf] = j
                nf += 1
    elif d == 0:
        nf = feasible_templates(jokers, rs, sp, twin, ct[0], cj[0])
    else:
        nf = 0
        for k in range(lv[d - 1, _NF]):
            t = ct[d - 1, k]
            j = template_jokers(t, jokers, rs, sp, kinds, ta, tb, tc, twin)
            if j >= 0:
                ct[d, nf] = t
                cj[d, nf] = j
                nf += 1
    if need > 0 and _points_bound(h, ct[d], cj[d], nf, sp) < need:
        return 0
    # the branches: the templates holding the pivot, each with the naturals it takes (a
    # group's rank and suits, a run's suit and positions held)
    nb = 0
    for k in range(nf):
        t = ct[d, k]
        if template_uses(t, cj[d, k], pivot, kinds, ta, tb, tc):
            branch[d, nb] = k
            if kinds[t] == 1:
                bkeys[nb] = 1 << 40 | np.int64(ta[t]) << 4 | np.int64(tb[t])
            else:
                s = np.int64(ta[t])
                bkeys[nb] = 2 << 40 | s << 16 | (sp[s] & twin[t])
            nb += 1
    # the dominated ones out (marked ~k first: each is tested against all the others), in order
    tval = TPL_VAL
    for b in range(nb):
        k = branch[d, b]
        v = tval[ct[d, k]]
        for b2 in range(nb):
            if b2 != b and bkeys[b2] == bkeys[b]:
                k2 = branch[d, b2]
                k2 = k2 if k2 >= 0 else ~k2
                if cj[d, k2] == cj[d, k]:
                    v2 = tval[ct[d, k2]]
                    if v2 > v or (v2 == v and k2 < k):
                        branch[d, b] = ~k
                        break
    n_keep = 0
    for b in range(nb):
        if branch[d, b] >= 0:
            branch[d, n_keep] = branch[d, b]
            n_keep += 1
    lv[d, _PIV] = pivot
    lv[d, _NF] = nf
    lv[d, _NB] = n_keep
    lv[d, _SKIP] = 1 if must >= 0 else 0
    return 0


@kernel(counted=False)
def _reach(h, kept, need, must, taken, owed, room, swap, ws, root=-1) -> bool:
    """Exact search: can disjoint new melds from ``h`` be laid so that they are worth at least
    ``need`` points, include card ``must`` (-1: none) and take ``owed`` jokers (directly or by
    making room for lay-offs), and the turn still ends with a legal discard?

    Every card is either in one of the melds or kept: the lowest natural still undecided (or
    ``must``) is put in each feasible template containing it, or kept (``kept`` counts those).
    Pruned by the points all cards that fit some feasible template could still add. Iterative
    (numba's cache cannot hold recursive functions); ``h`` and ``kept`` are restored.
    ``root`` >= 0: ``h`` is part of the hand whose templates are the first ``root`` of the
    play mask's candidates (``ws[8]``), which the first level filters.
    """
    kinds, ta, tb, tc = TPL_KIND, TPL_A, TPL_B, TPL_C
    tval, troom = TPL_VAL, TPL_ROOM
    lv = ws[6]
    lv[0, _NEED] = need
    lv[0, _MUST] = must
    lv[0, _OWED] = owed
    lv[0, _ROOM] = room
    lv[0, _SWAP] = swap
    lv[0, _TAKEN] = taken
    lv[0, _ROOT] = root
    d = 0
    entering = True
    while True:
        if entering:
            entering = False
            if _enter(h, kept, lv, d, ws):
                lv[0, _PLAIN] = _leaf_ok(h, kept, lv[d, _TAKEN], lv[d, _OWED], lv[d, _ROOM],
                                         False)  # fmt: skip
                for e in range(d):
                    lv[e, _PATH] = lv[e, _AT]
                lv[d, _PATH] = -1
                for e in range(d - 1, -1, -1):
                    _undo_level(h, kept, lv, e)
                return True
        _undo_level(h, kept, lv, d)
        pivot = lv[d, _PIV]
        k = lv[d, _K]  # the next branch
        t = -1
        j = 0
        if k < lv[d, _NB]:
            b = ws[7][d, k]
            t = ws[0][d, b]
            j = ws[1][d, b]
            lv[d, _K] = k + 1
        if t >= 0:
            sw = lv[d, _SWAP]
            taken = lv[d, _TAKEN]
            # a group of 3 with a joker that the taken card, if it is all that is left, could
            # replace (a retrieval), so that the joker is discarded instead
            if 0 <= taken < 52 and kinds[t] == 1 and j >= 1 and troom[t] == 1:
                if ta[t] == taken % 13 and (tb[t] >> (taken // 13) & 1) == 0:
                    sw = 1
            lv[d, _ANAT] = take_template(h, t, j)
            lv[d, _AT] = t
            lv[d, _AJ] = j
            lv[d + 1, _NEED] = lv[d, _NEED] - tval[t]
            lv[d + 1, _MUST] = -1
            lv[d + 1, _OWED] = max(lv[d, _OWED] - j, 0)
            lv[d + 1, _ROOM] = lv[d, _ROOM] + troom[t]
            lv[d + 1, _SWAP] = sw
            # once a card of the type taken is melded, a copy still held is the player's own
            lv[d + 1, _TAKEN] = -1 if template_uses(t, j, taken, kinds, ta, tb, tc) else taken
            d += 1
            entering = True
            continue
        if lv[d, _SKIP] == 0:
            lv[d, _SKIP] = 1
            h[pivot] -= 1
            kept[pivot] += 1
            lv[d, _AT] = -2
            lv[d + 1, _NEED] = lv[d, _NEED]
            lv[d + 1, _MUST] = -1
            lv[d + 1, _OWED] = lv[d, _OWED]
            lv[d + 1, _ROOM] = lv[d, _ROOM]
            lv[d + 1, _SWAP] = lv[d, _SWAP]
            lv[d + 1, _TAKEN] = lv[d, _TAKEN]
            d += 1
            entering = True
            continue
        if d == 0:
            return False
        d -= 1


@kernel(counted=False)
def opening_reachable(h, need, taken, room, ws) -> bool:
    """Can new melds from hand ``h`` worth at least ``need`` points be laid with a legal
    discard left (``taken``: the card taken from the pile this turn, -1: none; ``room``: jokers
    the table can still take)? ``_reach`` without an owed card or joker; ``h`` is restored.
    """
    return _reach(h, ws[2], need, -1, taken, 0, room, False, ws)


# -- table moves ----------------------------------------------------------------------------


@kernel
def retrieve_fit(rec, m, k) -> int:
    """Natural card that replaces a joker in slot ``m`` at run position / group suit ``k``
    (-1: no joker can be taken back there). Groups of 4 never release their jokers.
    """
    kind = rec.m_kind[m]
    if kind == 1:
        if k >= 4 or rec.m_jok[m] < 1 or rec.m_nat[m] >> k & 1:
            return -1
        n = rec.m_jok[m]
        for s in range(4):
            n += rec.m_nat[m] >> s & 1
        if n != 3:
            return -1
        return k * 13 + rec.m_key[m]
    if kind != 2 or (rec.m_jok[m] >> k & 1) == 0:
        return -1
    return pos_card(rec.m_key[m], k)


@kernel
def can_retrieve_with(rec, x) -> bool:
    """Can natural ``x`` take a joker's place in some table meld?"""
    if x < 0 or x >= 52:
        return False
    for m in range(rec.n_melds):
        if rec.m_kind[m] == 1:
            if retrieve_fit(rec, m, x // 13) == x:
                return True
        else:
            r = x % 13
            if retrieve_fit(rec, m, r) == x:
                return True
            if r == 0 and retrieve_fit(rec, m, 13) == x:
                return True
    return False


@kernel
def do_retrieve(rec, cfg, p, m, k, c):
    """Put natural ``c`` in place of a joker of slot ``m`` (run position / group suit ``k``);
    the joker goes to ``p``'s hand (publicly).
    """
    give_up(rec, p, c, 1)
    if rec.m_kind[m] == 1:
        rec.m_nat[m] |= 1 << k
        rec.m_jok[m] -= 1
    else:
        rec.m_nat[m] |= 1 << k
        rec.m_jok[m] &= ~(1 << k)
    rec.hands[p, JOKER] += 1
    rec.known[p, JOKER] += 1
    if cfg[C_RJ_MELD]:
        rec.owed += 1


@kernel
def undo_retrieve(rec, cfg, p, m, k, c, kn_c, kn_j):
    """Undo ``do_retrieve``."""
    rec.hands[p, c] += 1
    rec.known[p, c] = kn_c
    if rec.m_kind[m] == 1:
        rec.m_nat[m] &= ~(1 << k)
        rec.m_jok[m] += 1
    else:
        rec.m_nat[m] &= ~(1 << k)
        rec.m_jok[m] |= 1 << k
    rec.hands[p, JOKER] -= 1
    rec.known[p, JOKER] = kn_j
    if cfg[C_RJ_MELD]:
        rec.owed -= 1


# -- turn completion ------------------------------------------------------------------------


@kernel(counted=False)
def turn_completable(rec, cfg, p, ws, root=-1) -> bool:
    """Can player ``p`` still finish the current turn legally (with a discard) from here?
    ``root``: as ``_reach``'s (the hand is part of one whose templates the mask listed).
    """
    h = rec.hands[p]
    taken = rec.taken_single
    if rec.opened[p] == 0:
        if rec.open_pts == 0 and rec.oblig < 0:
            return can_discard_from(h, taken)
        swap = cfg[C_RJ_MELD] == 0 and can_retrieve_with(rec, taken)
        return _reach(h, ws[2], cfg[C_THRESH] - rec.open_pts, rec.oblig, taken, 0,
                      joker_room(rec), swap, ws, root)  # fmt: skip
    if rec.oblig >= 0:
        return False  # the opening was completed without the discard it owed
    if rec.owed == 0:
        if can_discard_from(h, taken):
            return True
        # only the card taken is left: it may replace a joker, and the joker be discarded
        return cfg[C_RJ_MELD] == 0 and hand_total(rec, p) == 1 and can_retrieve_with(rec, taken)
    return _reach(h, ws[2], 0, -1, taken, rec.owed, joker_room(rec), False, ws, root)


# -- deal, scoring, transitions -------------------------------------------------------------


@kernel
def _next_active(rec, cfg, q) -> int:
    """The next player after ``q`` still in the match."""
    p_n = cfg[C_P]
    for off in range(1, p_n + 1):
        r = (q + off) % p_n
        if rec.out[r] == 0:
            return r
    return q


@kernel
def _start_turn(rec, p):
    rec.cur = p
    rec.phase = PH_DRAW
    rec.open_pts = 0
    rec.opened_now = 0
    rec.built_others = 0
    rec.oblig = -1
    rec.taken_single = -1
    rec.owed = 0


@kernel
def deal_hand(rec, cfg, shuffle):
    """Deal a hand to the players still in (dealing starts left of the dealer), turn the
    upcard, clear the table.
    """
    p_n = cfg[C_P]
    new_deal(rec, 2, 4, shuffle)
    for q in range(p_n):
        rec.opened[q] = 0
    k = 0
    for _i in range(cfg[C_HAND]):
        q = rec.dealer
        for _off in range(p_n):
            q = _next_active(rec, cfg, q)
            rec.hands[q, rec.deck[k]] += 1
            k += 1
            if q == rec.dealer:
                break
    rec.pile[0] = rec.deck[k]
    rec.pile_n = 1
    rec.deck_pos = k + 1
    rec.reshuffles = 0
    rec.pile_draws = 0
    _start_turn(rec, _next_active(rec, cfg, rec.dealer))


@kernel
def reset_episode(rec, cfg, tables, dealer, shuffle):
    """Start an episode: penalties cleared, dealer chosen (-1: random), first hand dealt."""
    for q in range(cfg[C_P]):
        rec.penalties[q] = 0
        rec.hand_penalty[q] = 0
        rec.out[q] = 0
    rec.winner = -1
    rec.hand_winner = -1
    rec.rummy = 0
    batch.begin_episode(rec, dealer)
    deal_hand(rec, cfg, shuffle)


@kernel
def _hand_rewards(rec, cfg):
    """Rewards of a finished hand among the players still in (``hand_penalty`` filled)."""
    p_n = cfg[C_P]
    mode = cfg[C_REWARD]
    n = 0
    tot = 0
    for q in range(p_n):
        if rec.out[q] == 0:
            n += 1
            tot += rec.hand_penalty[q]
    if mode == R_PENALTY:
        for q in range(p_n):
            if rec.out[q] == 0:
                rec.rewards[q] += -rec.hand_penalty[q]
    elif mode == R_ZERO_SUM or mode == R_NORMALIZED:
        if cfg[C_MATCH] and mode == R_NORMALIZED:
            return  # normalized matches pay at the end only
        for q in range(p_n):
            if rec.out[q] == 0:
                r = (tot - n * rec.hand_penalty[q]) / (n - 1)
                if mode == R_NORMALIZED:
                    r = max(-1.0, min(1.0, r / 100.0))
                rec.rewards[q] += r
    else:  # payout: everyone stakes 1; the winner takes 75% of the pot and more (RULES §3.8)
        w = rec.hand_winner
        if w < 0:
            return  # a drawn hand returns the stakes
        share = 0
        for q in range(p_n):
            if q != w and rec.out[q] == 0 and rec.hand_penalty[q] < 100:
                share += 100 - rec.hand_penalty[q]
        for q in range(p_n):
            if rec.out[q] != 0:
                continue
            if q == w:
                got = 0.75 * n if share > 0 else 1.0 * n
            elif rec.hand_penalty[q] < 100 and share > 0:
                got = 0.25 * n * (100 - rec.hand_penalty[q]) / share
            else:
                got = 0.0
            rec.rewards[q] += got - 1.0


@kernel
def end_hand(rec, cfg, outcome, winner):
    """Score the hand (winner 0, others the penalty of their hands, +25 after a Rummy), then
    end the episode or, in a match, eliminate and deal the next hand.
    """
    p_n = cfg[C_P]
    rec.outcome = outcome
    rec.hand_winner = winner
    rec.hands_played += 1
    rec.phase = PH_OVER
    for q in range(p_n):
        if rec.out[q]:
            rec.hand_penalty[q] = 0
            continue
        pen = 0 if q == winner else hand_penalty(rec, q)
        if q != winner and rec.rummy:
            pen += RUMMY_BONUS
        rec.hand_penalty[q] = pen
        rec.penalties[q] += pen
    _hand_rewards(rec, cfg)
    if cfg[C_MATCH] == 0:
        rec.done = 1
        return
    # match: players at the elimination total are out; if that would leave nobody, those with
    # the lowest total stay in
    low = -1
    for q in range(p_n):
        if rec.out[q] == 0 and (low < 0 or rec.penalties[q] < low):
            low = rec.penalties[q]
    stay = 0
    for q in range(p_n):
        if rec.out[q] == 0 and rec.penalties[q] < cfg[C_ELIM]:
            stay += 1
    for q in range(p_n):
        if rec.out[q] == 0 and rec.penalties[q] >= cfg[C_ELIM]:
            if stay > 0 or rec.penalties[q] > low:
                rec.out[q] = 1
    left = 0
    last = -1
    for q in range(p_n):
        if rec.out[q] == 0:
            left += 1
            last = q
    if left == 1:
        rec.winner = last
        rec.done = 1
        if cfg[C_REWARD] == R_NORMALIZED:
            for q in range(p_n):
                rec.rewards[q] = 1.0 if q == last else -1.0 / (p_n - 1)
        return
    rec.dealer = _next_active(rec, cfg, rec.dealer)
    deal_hand(rec, cfg, True)


@kernel
def _end_turn(rec, cfg, p):
    """After ``p``'s discard: next player; a spent stock becomes the pile (but its top card)
    again, up to ``max_reshuffles`` times, after that the hand is a draw.
    """
    d = cfg[C_D]
    if rec.deck_pos >= d:
        k = rec.pile_n - 1
        if rec.reshuffles >= cfg[C_MAX_RESH] or k < 1:
            end_hand(rec, cfg, E.OUT_DRAW, -1)
            return
        rec.reshuffles += 1
        base = d - k
        for i in range(k):
            rec.deck[base + i] = rec.pile[i]
        _rng.shuffle_inplace(rec, rec.deck[base:], k)
        rec.pile[0] = rec.pile[k]
        rec.pile_n = 1
        rec.deck_pos = base
    _start_turn(rec, _next_active(rec, cfg, p))


@kernel
def _note_placement(rec, p, m):
    """A lay-off or retrieval on slot ``m``: on another player's meld it spoils a Rummy."""
    if rec.m_owner[m] != p:
        rec.built_others = 1


@kernel
def _lay_new(rec, cfg, p, t) -> int:
    """Lay template ``t``; count it towards the opening; returns jokers used."""
    j = lay_template(rec, p, t)
    if template_uses(t, j, rec.oblig, TPL_KIND, TPL_A, TPL_B, TPL_C):
        rec.oblig = -1
    rec.owed = max(rec.owed - j, 0)
    if rec.opened[p] == 0:
        rec.open_pts += TPL_VAL[t]
        if rec.open_pts >= cfg[C_THRESH]:
            rec.opened[p] = 1
            rec.opened_now = 1
    return j


@kernel
def apply_action(rec, cfg, tables, a, mask, work):
    """Apply a legal action (legality is the caller's check)."""
    p = rec.cur
    for q in range(cfg[C_P]):
        rec.rewards[q] = 0.0
    rec.steps += 1
    if rec.phase == PH_DRAW:
        if a == 0:
            c = rec.deck[rec.deck_pos]
            rec.deck_pos += 1
            rec.hands[p, c] += 1
        else:
            c = rec.pile[rec.pile_n - 1]
            rec.pile_n -= 1
            rec.hands[p, c] += 1
            rec.known[p, c] += 1
            rec.pile_draws += 1
            rec.taken_single = c
            if cfg[C_DD_OPEN] and rec.opened[p] == 0:
                rec.oblig = c
        rec.phase = PH_PLAY
    elif a >= cfg[C_DISCARD]:
        c = a - cfg[C_DISCARD]
        give_up(rec, p, c, 1)
        rec.pile[rec.pile_n] = c
        rec.pile_n += 1
        if hand_total(rec, p) == 0:
            rec.rummy = 1 if rec.opened_now and not rec.built_others else 0
            end_hand(rec, cfg, E.OUT_WENT_OUT, p)
        else:
            _end_turn(rec, cfg, p)
    elif a >= cfg[C_RETRIEVE]:
        m = (a - cfg[C_RETRIEVE]) // 14
        k = (a - cfg[C_RETRIEVE]) % 14
        c = retrieve_fit(rec, m, k)
        do_retrieve(rec, cfg, p, m, k, c)
        _note_placement(rec, p, m)
        if rec.taken_single == c:
            rec.taken_single = -1
    elif a >= cfg[C_JOKER]:
        m = (a - cfg[C_JOKER]) // 2
        pos = fit_joker(rec, m, (a - cfg[C_JOKER]) % 2)
        place_card(rec, p, m, JOKER, pos)
        _note_placement(rec, p, m)
        rec.owed = max(rec.owed - 1, 0)
        if rec.taken_single == JOKER:
            rec.taken_single = -1
    elif a >= cfg[C_LAYOFF]:
        c = (a - cfg[C_LAYOFF]) // cfg[C_M]
        m = (a - cfg[C_LAYOFF]) % cfg[C_M]
        place_card(rec, p, m, c, fit_natural(rec, m, c))
        _note_placement(rec, p, m)
        if rec.taken_single == c:
            rec.taken_single = -1
    else:
        t = a - cfg[C_MELD]
        ts = rec.taken_single
        j = _lay_new(rec, cfg, p, t)
        if template_uses(t, j, ts, TPL_KIND, TPL_A, TPL_B, TPL_C):
            rec.taken_single = -1
    batch.truncate(rec, cfg[C_MAX_STEPS])

    # -- masks ----------------------------------------------------------------------------------
    return False


@kernel(counted=False)
def _draw_mask(rec, cfg, p, out, ws):
    out[0] = 1
    if rec.pile_n < 1 or rec.pile_draws >= cfg[C_MAX_PILE]:
        return
    x = rec.pile[rec.pile_n - 1]
    if cfg[C_DD_OPEN] and rec.opened[p] == 0:
        rec.hands[p, x] += 1
        swap = cfg[C_RJ_MELD] == 0 and can_retrieve_with(rec, x)
        ok = _reach(rec.hands[p], ws[2], cfg[C_THRESH], x, x, 0, joker_room(rec), swap,
                    ws)  # fmt: skip
        rec.hands[p, x] -= 1
        if not ok:
            return
    out[1] = 1


@kernel(inline="always")
def _also_first(ws, k, nf, cand_t, cand_j, need):
    """After candidate ``k`` of a not-opened player's play mask was found legal by a search
    (still short of the threshold ``need`` laid alone), mark as legal (``cand_j`` -1) the later
    candidates that the opening it found lays, with the same naturals (jokers) as they would
    take laid first and worth less than ``need``: laid first, they leave the same melds to
    lay (the one with the owed card first), so the search from there succeeds too. Only for
    an opening whose turn ends without the retrieval swap (its root differs).
    """
    lv = ws[6]
    if lv[0, _PLAIN] == 0:
        return
    e = 0
    while lv[e, _PATH] != -1:
        t2 = lv[e, _PATH]
        if t2 >= 0 and TPL_VAL[t2] < need:
            for k2 in range(k + 1, nf):
                if cand_t[k2] == t2:
                    if cand_j[k2] == lv[e, _AJ]:
                        cand_j[k2] = -1
                    break
        e += 1


@kernel(counted=False)
def _play_mask(rec, cfg, p, out, ws):
    kinds, ta, tb, tc, twin = TPL_KIND, TPL_A, TPL_B, TPL_C, TPL_WIN
    hand = rec.hands[p]
    known_save = ws[5]
    ob, ts, ow, op, on = rec.oblig, rec.taken_single, rec.owed, rec.open_pts, rec.opened_now
    was_open = rec.opened[p]
    # new melds: a not-opened player only when the opening is reachable at all
    go = rec.n_melds < cfg[C_M]
    cand_t, cand_j = ws[8], ws[9]
    nf = 0
    if go:
        rs, sp = ws[3], ws[4]
        hand_masks(hand, rs, sp)
        nf = feasible_templates(hand[JOKER], rs, sp, twin, cand_t, cand_j)
    if go and was_open == 0:
        need = cfg[C_THRESH] - op
        if need > 0:
            # the opening search's root bound: no new melds are worth the points still needed.
            # Past it every first meld is searched below, and one is legal exactly when the
            # opening is reachable: the search of the whole opening would be done twice
            go = _points_bound(hand, cand_t, cand_j, nf, sp) >= need
        else:
            swap = cfg[C_RJ_MELD] == 0 and can_retrieve_with(rec, ts)
            go = _reach(hand, ws[2], need, ob, ts, 0, joker_room(rec), swap, ws)
    if go:
        total = hand_total(rec, p)
        for c in range(53):  # (unlay_template puts every entry back: one copy serves all)
            known_save[c] = rec.known[p, c]
        for k in range(nf):
            t = cand_t[k]
            if template_size(t, kinds, tb, tc) >= total:
                continue  # a card must be left to discard
            if cand_j[k] < 0:  # (_also_first: legal)
                out[cfg[C_MELD] + t] = 1
                continue
            j = _lay_new(rec, cfg, p, t)
            if template_uses(t, j, ts, kinds, ta, tb, tc):
                rec.taken_single = -1
            searched = rec.opened[p] == 0  # still short: the rest of an opening is searched
            ok = turn_completable(rec, cfg, p, ws, nf)  # the hand less t: part of this one
            unlay_template(rec, p, t, j, known_save)
            rec.oblig, rec.taken_single, rec.owed = ob, ts, ow
            rec.open_pts, rec.opened_now = op, on
            rec.opened[p] = was_open
            if ok:
                out[cfg[C_MELD] + t] = 1
                if searched:
                    _also_first(ws, k, nf, cand_t, cand_j, cfg[C_THRESH] - op)
    if was_open:
        # lay-offs of naturals
        for c in range(52):
            if hand[c] < 1:
                continue
            for m in range(rec.n_melds):
                pos = fit_natural(rec, m, c)
                if pos < 0:
                    continue
                lo, hi, kn = rec.m_lo[m], rec.m_hi[m], rec.known[p, c]
                if ts == c:
                    rec.taken_single = -1
                place_card(rec, p, m, c, pos)
                ok = turn_completable(rec, cfg, p, ws)
                unplace_card(rec, p, m, c, pos, lo, hi, kn)
                rec.taken_single = ts
                if ok:
                    out[cfg[C_LAYOFF] + c * cfg[C_M] + m] = 1
        # lay-offs of jokers
        if hand[JOKER] >= 1:
            for m in range(rec.n_melds):
                for e in range(2):
                    pos = fit_joker(rec, m, e)
                    if pos < 0:
                        continue
                    lo, hi, kn = rec.m_lo[m], rec.m_hi[m], rec.known[p, JOKER]
                    if ts == JOKER:
                        rec.taken_single = -1
                    rec.owed = max(ow - 1, 0)
                    place_card(rec, p, m, JOKER, pos)
                    ok = turn_completable(rec, cfg, p, ws)
                    unplace_card(rec, p, m, JOKER, pos, lo, hi, kn)
                    rec.taken_single = ts
                    rec.owed = ow
                    if ok:
                        out[cfg[C_JOKER] + 2 * m + e] = 1
        # joker retrievals
        for m in range(rec.n_melds):
            if rec.m_jok[m] == 0:
                continue
            for k in range(14 if rec.m_kind[m] == 2 else 4):
                c = retrieve_fit(rec, m, k)
                if c < 0 or hand[c] < 1:
                    continue
                kn_c, kn_j = rec.known[p, c], rec.known[p, JOKER]
                if ts == c:
                    rec.taken_single = -1
                do_retrieve(rec, cfg, p, m, k, c)
                ok = turn_completable(rec, cfg, p, ws)
                undo_retrieve(rec, cfg, p, m, k, c, kn_c, kn_j)
                rec.taken_single = ts
                if ok:
                    out[cfg[C_RETRIEVE] + 14 * m + k] = 1
    # discards: not with an opening begun but short, a taken discard owed to it, or jokers owed
    if ob >= 0 or ow > 0 or (was_open == 0 and op > 0):
        return
    for c in range(53):
        if hand[c] >= 1 and (c != ts or hand[c] >= 2):
            out[cfg[C_DISCARD] + c] = 1


@kernel(counted=False)
def legal_mask(rec, cfg, tables, out, ws):
    """Write the exact legal-action mask of the player to act into ``out``."""
    out[:] = 0
    if rec.done:
        return
    p = rec.cur
    if rec.phase == PH_DRAW:
        _draw_mask(rec, cfg, p, out, ws)
    elif rec.phase == PH_PLAY:
        _play_mask(rec, cfg, p, out, ws)


# -- observations ---------------------------------------------------------------------------


@kernel(counted=False)
def write_obs(rec, cfg, p, out):
    """Player ``p``'s observation (seat-relative; nothing hidden from ``p``)."""
    out[:] = 0.0
    p_n = cfg[C_P]
    d_n = cfg[C_D]
    o = cfg[C_OBS:]
    # the pieces as views and their offsets as locals: the loops then neither reload an
    # offset after each store (``out`` might alias ``cfg`` for all the compiler knows) nor
    # wrap an index that might be negative (750 -> 698 ns a call; most of the rest is the
    # zeroing above)
    hand = rec.hands[p]
    h_out = out[o[0] : o[0] + 53]
    for c in range(53):
        h_out[c] = hand[c] / 2.0
    seq = out[o[1] :]
    counts = out[o[2] : o[2] + 53]
    n = rec.pile_n
    for k in range(n):
        c = rec.pile[n - 1 - k]
        seq[k] = (c + 1) / 53.0
        counts[c] += 0.5
    o3 = o[3]
    for i in range(1, p_n):
        q = (p + i) % p_n
        known = rec.known[q]
        k_out = out[o3 + (i - 1) * 53 : o3 + i * 53]
        for c in range(53):
            k_out[c] = known[c] / 2.0
    write_table_obs(rec, p, p_n, out, o[4], o[5], o[6], o[7], o[8])
    o9, o11, o12, o13, o14 = o[9], o[11], o[12], o[13], o[14]
    elim = cfg[C_ELIM]
    for i in range(p_n):
        q = (p + i) % p_n
        out[o9 + i] = hand_total(rec, q) / 13.0
        out[o11 + i] = rec.opened[q]
        out[o12 + i] = rec.penalties[q] / elim
        out[o13 + i] = rec.out[q]
        out[o14 + i] = 1.0 if rec.dealer == q else 0.0
    out[o[10]] = (d_n - rec.deck_pos) / d_n
    out[o[15] + rec.phase] = 1.0
    if rec.cur == p:
        out[o[16]] = rec.open_pts / max(cfg[C_THRESH], 1)
        if rec.oblig >= 0:
            out[o[17] + rec.oblig] = 1.0
        if rec.taken_single >= 0:
            out[o[18] + rec.taken_single] = 1.0
        out[o[19]] = rec.owed / 4.0
    out[o[20]] = (cfg[C_MAX_RESH] - rec.reshuffles) / max(cfg[C_MAX_RESH], 1)


# -- the other hooks of the batch layer (rummy_env.core.batch; registered at the end) -------


@kernel
def new_work(states, cfg):
    """The scratch of the opening search and the masks (``make_work``)."""
    return make_work()


@kernel
def world_ok(rec, cfg, mask) -> bool:
    """Does the player to act have a move (after taking the top discard, a completable turn)?"""
    for a in range(cfg[C_NA]):
        if mask[a]:
            return True
    return False


@kernel
def final_points(rec, cfg, q):
    """A match: player ``q``'s penalty total; a hand: its penalty (equal after one hand)."""
    return rec.penalties[q] if cfg[C_MATCH] else rec.hand_penalty[q]


@kernel
def num_actions(rec, cfg):
    """Number of action ids of this config."""
    return cfg[C_NA]


@kernel
def write_final_extra(rec, cfg, out):
    """The match winner (one hand: who went out) and whether the last hand was a Rummy."""
    out[0] = rec.winner if cfg[C_MATCH] else rec.hand_winner
    out[1] = rec.rummy


__all__ = [
    "C_SIZE",
    "N_PIECES",
    "TABLES",
    "TPL_VAL",
    "apply_action",
    "can_retrieve_with",
    "card_penalty",
    "config_vector",
    "give_template",
    "legal_mask",
    "make_work",
    "opening_reachable",
    "play_random_parallel",
    "step_single",
    "take_template",
    "write_obs",
]

batch.register(make_state_dtype(2, 108, 36).names, globals())
