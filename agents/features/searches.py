"""The hand searches behind the joker games' features: the fewest cards a hand can keep this
turn (:func:`fewest_left`), the hand's free arrangement (:func:`free_arrangement`,
:func:`free_arrangement_by`) and what a take from the discard pile adds to it
(:func:`take_gain`), with the card points they weigh (:data:`RUMMY51_VALUES`,
:data:`FIVE_HUNDRED_RUM_VALUES`).

The searches share scratch buffers (:func:`make_out_work`); :func:`best_melds` reads the best
arrangement's new melds back from them.
"""

from __future__ import annotations

import numpy as np

from rummy_agents.five_hundred_rum_greedy import card_value as five_hundred_rum_card_value
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
    template_has_natural,
    template_needs,
)
from rummy_env.rules.rummy51.kernels import TPL_VAL, card_penalty, give_template, take_template

# points of each card type left in hand, from each game's rules: Rummy 51 penalties, 500 Rum
# values with the default options (values_5_10_15 off)
RUMMY51_VALUES = np.array([card_penalty(c) for c in range(53)], np.int64)
FIVE_HUNDRED_RUM_VALUES = np.array(
    [five_hundred_rum_card_value(c, False) for c in range(53)], np.int64
)
RUMMY51_THRESHOLD = 51  # Rummy 51's default opening threshold, which the going-out search assumes

SEARCH_DEPTH = 32  # search levels: one per meld laid or card kept (a hand holds far fewer)
_OUT_NODES = 20000  # search nodes per position before the best count so far is returned
# columns of the search's level table
# per level: pivot, next candidate, candidates, move (template, -2 kept, -1 none), its jokers
# and naturals, points and melds so far, pivot kept; BEST: the best leaf's templates
_L_PIV, _L_K, _L_NF, _L_AT, _L_AJ, _L_ANAT, _L_PTS, _L_NT, _L_KEPT, BEST = range(10)


@kernel
def _leaf_left(h, kept, rem, pts, nt, need, taken, runs, n_runs, groups, n_groups, total):
    """Cards left before the discard at a leaf of :func:`fewest_left` (``h + kept``: the cards
    no new meld took; ``pts``, ``nt``: the new melds' points and number); a large number when
    the leaf's melds may not be laid (an opening short of ``need``).
    """
    if need > 0 and pts < need:
        return total if nt == 0 else 1 << 20
    for c in range(53):
        rem[c] = h[c] + kept[c]
    for q in range(n_runs):  # lay off onto each run, extending it card by card
        s, lo, hi = runs[q, 0], runs[q, 1], runs[q, 2]
        moved = True
        while moved:
            moved = False
            if hi < 12 or (hi == 12 and lo > 0):  # an ace goes high only if not low already
                c = pos_card(s, hi + 1)
                if rem[c] > 0:
                    rem[c] -= 1
                    hi += 1
                    moved = True
            if lo > 1 or (lo == 1 and hi < 13):
                c = pos_card(s, lo - 1)
                if rem[c] > 0:
                    rem[c] -= 1
                    lo -= 1
                    moved = True
            if moved or rem[JOKER] == 0:
                continue
            # a joker bridges a one-card gap to a natural beyond it
            if hi < 11 or (hi == 11 and lo > 0):
                c = pos_card(s, hi + 2)
                if rem[c] > 0:
                    rem[c] -= 1
                    rem[JOKER] -= 1
                    hi += 2
                    moved = True
                    continue
            if lo > 2 or (lo == 2 and hi < 13):
                c = pos_card(s, lo - 2)
                if rem[c] > 0:
                    rem[c] -= 1
                    rem[JOKER] -= 1
                    lo -= 2
                    moved = True
    room = nt > 0 or n_runs > 0  # a joker lays off on any run (or a group with room)
    for q in range(n_groups):
        r, suits, size = groups[q, 0], groups[q, 1], groups[q, 2]
        for s in range(4):
            if size < 4 and not (suits >> s & 1) and rem[s * 13 + r] > 0:
                rem[s * 13 + r] -= 1
                size += 1
        room = room or size < 4
    if room:
        rem[JOKER] = 0
    u = 0
    laid_off = False
    for c in range(53):
        u += rem[c]
        if rem[c] < h[c] + kept[c] and (c != taken or h[c] + kept[c] >= 2):
            laid_off = True
    if u == 0:
        # 500 Rum (need < 0) goes out by melding every card; Rummy 51 keeps a card that could
        # be laid off, to discard it (a new meld cannot spare one: the search tries its smaller
        # templates with the card kept)
        return 1 if laid_off or need < 0 else 1 << 20
    if u == 1 and 0 <= taken < 52 and rem[taken] == 1:
        # the card taken from the pile may not be discarded: keep a laid-off card as well
        return 2 if laid_off else 1 << 20
    return u


@kernel
def fewest_left(h, need, taken, runs, n_runs, groups, n_groups, ct, cj, lv, kept, rem) -> int:
    """Fewest cards a Rummy 51 (or 500 Rum) hand can hold before its discard, once this turn's
    new melds and lay-offs are down: 1 means it goes out.

    The search is the one Rummy 51's rules use for an opening
    (``rummy_env.rules.rummy51.kernels``): the lowest natural still undecided goes into each
    template that can take it, or is kept; at a leaf, the kept naturals are laid off onto the
    table (``runs``: suit, low and high position; ``groups``: rank, suit mask, size), a run
    growing card by card (a joker may bridge a one-card gap), and the jokers left go anywhere
    with room. Lay-offs onto the turn's own new melds beyond their templates are not searched.
    Pruned by the kept naturals no table meld could take; after ``_OUT_NODES`` nodes the best
    count so far is returned.

    Args:
        h: card counts (53 types; restored on return).
        need: opening points the new melds must reach before anything is laid (0: opened);
            -1 for 500 Rum, where melding every card goes out without a discard (the count is
            then 1 as well).
        taken: the card taken from the pile this turn (-1: none), not discardable.
        runs: (suit, low position, high position) of the table runs, first ``n_runs`` rows.
        n_runs: number of table runs.
        groups: (rank, suit mask, size) of the table groups, first ``n_groups`` rows.
        n_groups: number of table groups.
        ct: scratch, candidate templates per level (``SEARCH_DEPTH`` x templates).
        cj: scratch, their jokers.
        lv: scratch, the level table (``SEARCH_DEPTH`` x 10).
        kept: scratch, naturals kept (53).
        rem: scratch, cards left at a leaf (53).
    """
    return _turn_search(h, need, taken, runs, n_runs, groups, n_groups, ct, cj, lv, kept, rem,
                        False, rem, RUMMY51_VALUES)  # fmt: skip


@kernel
def free_arrangement(h, taken, ct, cj, lv, kept, rem, best_left) -> int:
    """The hand's *free arrangement* (``greedy``'s): disjoint new melds, no lay-offs, removing
    the most penalty (A 11, 2-10 face value, J Q K 10, joker 25) with a card left that may be
    discarded. Writes the cards it leaves to ``best_left`` and returns their penalty.

    Args:
        h: card counts (53 types; restored on return).
        taken: the card taken from the pile this turn (-1: none), not discardable.
        ct: scratch, as :func:`fewest_left`'s.
        cj: scratch.
        lv: scratch.
        kept: scratch.
        rem: scratch.
        best_left: out, 53 counts.
    """
    return free_arrangement_by(h, taken, RUMMY51_VALUES, ct, cj, lv, kept, rem, best_left)


@kernel
def free_arrangement_by(h, taken, vals, ct, cj, lv, kept, rem, best_left) -> int:
    """:func:`free_arrangement` with the points of each card type left in hand given:
    ``vals`` (53; :data:`RUMMY51_VALUES`, :data:`FIVE_HUNDRED_RUM_VALUES`).
    """
    none = np.zeros((0, 3), np.int64)  # no table (C-contiguous, as fewest_left's tables)
    return _turn_search(h, 0, taken, none, 0, none, 0, ct, cj, lv, kept, rem, True, best_left,
                        vals)  # fmt: skip


@kernel
def _turn_search(h, need, taken, runs, n_runs, groups, n_groups, ct, cj, lv, kept, rem, free,
                 best_left, vals) -> int:  # fmt: skip
    """The search of :func:`fewest_left` (``free=False``: the fewest cards left) and of
    :func:`free_arrangement` (``free=True``: the least penalty left, its cards in
    ``best_left``). Both minimise a value that only grows with the cards kept, which bounds it.
    The best leaf's new melds (templates) are left in ``lv[:, BEST]`` (-1 past the last).
    """
    kinds, ta, tb, tc, twin, tval = TPL_KIND, TPL_A, TPL_B, TPL_C, TPL_WIN, TPL_VAL
    total = 0
    for c in range(53):
        total += h[c]
        kept[c] = 0
    for q in range(SEARCH_DEPTH):
        lv[q, BEST] = -1
    if total == 0:
        return 0
    layable = np.zeros(52, np.bool_)  # naturals some table meld could still take
    for q in range(n_runs):
        for r in range(13):
            layable[runs[q, 0] * 13 + r] = True
    for q in range(n_groups):
        if groups[q, 2] < 4:
            for s in range(4):
                layable[s * 13 + groups[q, 0]] = True
    best = total
    if free:
        best = 1 << 30
        for c in range(53):
            best_left[c] = h[c]
    rs = np.empty(13, np.int64)
    sp = np.empty(4, np.int64)
    hand_masks(h, rs, sp)
    nf0 = feasible_templates(h[JOKER], rs, sp, twin, ct[0], cj[0])
    lv[0, _L_PTS] = 0
    lv[0, _L_NT] = 0
    d = 0
    nodes = 0
    entering = True
    while True:
        if entering:
            entering = False
            nodes += 1
            lv[d, _L_AT] = -1
            lv[d, _L_K] = 0
            lv[d, _L_NF] = 0
            lv[d, _L_KEPT] = 1  # no options unless set below
            bound = 0
            for c in range(52):
                if free:
                    bound += kept[c] * vals[c]
                elif kept[c] > 0 and not layable[c]:
                    bound += kept[c]
            if bound < best and nodes <= _OUT_NODES:
                pivot = -1
                for c in range(52):
                    if h[c] > 0:
                        pivot = c
                        break
                if pivot < 0 or d >= SEARCH_DEPTH - 1:
                    if free:
                        left = _leaf_penalty(h, kept, taken, vals)
                    else:
                        left = _leaf_left(h, kept, rem, lv[d, _L_PTS], lv[d, _L_NT], need,
                                          taken, runs, n_runs, groups, n_groups, total)  # fmt: skip
                    if left < best:
                        if free:
                            for c in range(53):
                                best_left[c] = h[c] + kept[c]
                        n_best = 0
                        for q in range(d):
                            if lv[q, _L_AT] >= 0:
                                lv[n_best, BEST] = lv[q, _L_AT]
                                n_best += 1
                        for q in range(n_best, SEARCH_DEPTH):
                            lv[q, BEST] = -1
                    best = min(best, left)
                else:
                    nf = nf0
                    if d > 0:  # the hand only shrinks: filter the parent level's templates
                        nf = 0
                        for k in range(lv[d - 1, _L_NF]):
                            t = ct[d - 1, k]
                            j = template_needs(t, h, kinds, ta, tb, tc)
                            if j >= 0:
                                ct[d, nf] = t
                                cj[d, nf] = j
                                nf += 1
                    lv[d, _L_NF] = nf
                    lv[d, _L_PIV] = pivot
                    lv[d, _L_KEPT] = 0
        pivot = lv[d, _L_PIV]
        t = lv[d, _L_AT]  # take back this level's last move
        if t >= 0:
            give_template(h, t, lv[d, _L_AJ], lv[d, _L_ANAT])
        elif t == -2:
            h[pivot] += 1
            kept[pivot] -= 1
        lv[d, _L_AT] = -1
        k, nf = lv[d, _L_K], lv[d, _L_NF]
        t = -1
        j = 0
        while k < nf:
            t, j = ct[d, k], cj[d, k]
            k += 1
            if template_has_natural(t, pivot, kinds, ta, tb, tc):
                break
            t = -1
        lv[d, _L_K] = k
        if t >= 0:
            lv[d, _L_ANAT] = take_template(h, t, j)
            lv[d, _L_AT] = t
            lv[d, _L_AJ] = j
            lv[d + 1, _L_PTS] = lv[d, _L_PTS] + tval[t]
            lv[d + 1, _L_NT] = lv[d, _L_NT] + 1
            d += 1
            entering = True
            continue
        if lv[d, _L_KEPT] == 0:
            lv[d, _L_KEPT] = 1
            h[pivot] -= 1
            kept[pivot] += 1
            lv[d, _L_AT] = -2
            lv[d + 1, _L_PTS] = lv[d, _L_PTS]
            lv[d + 1, _L_NT] = lv[d, _L_NT]
            d += 1
            entering = True
            continue
        if d == 0:
            return best
        d -= 1


def best_melds(work: tuple[np.ndarray, ...]) -> list[int]:
    """Templates of the new melds of the best arrangement that the last :func:`fewest_left` or
    :func:`free_arrangement` call on scratch buffers ``work`` (:func:`make_out_work`) found.
    """
    best = work[2][:, BEST]
    return [int(t) for t in best[: int((best >= 0).sum())]]


@kernel
def _leaf_penalty(h, kept, taken, vals) -> int:
    """Penalty of the cards ``h + kept`` a free arrangement leaves; a large number when none
    of them may be discarded.
    """
    v = 0
    ok = False
    for c in range(53):
        n = h[c] + kept[c]
        v += n * vals[c]
        if n >= 1 and (c != taken or n >= 2):
            ok = True
    return v if ok else 1 << 30


@kernel
def make_out_work():
    """Scratch buffers of :func:`fewest_left` and :func:`free_arrangement`: ct, cj, lv, kept,
    rem.
    """
    return (
        np.empty((SEARCH_DEPTH, NUM_TEMPLATES), np.int64),
        np.empty((SEARCH_DEPTH, NUM_TEMPLATES), np.int64),
        np.zeros((SEARCH_DEPTH, 10), np.int64),
        np.zeros(53, np.int64),
        np.zeros(53, np.int64),
    )


@kernel
def take_gain(hand, pile, d, vals, base_melded, ct, cj, lv, kept, rem, left) -> int:
    """What taking the discard pile down to depth ``d`` adds to the free arrangement: the points
    melded with the taken cards (``pile[: d + 1]``, top first) less ``base_melded`` (melded
    without them) less the points of taken cards left in hand, as ``greedy`` scores a take
    (without lay-offs onto the table). ``hand`` is restored on return; ``left`` receives the
    cards the arrangement leaves.
    """
    total = 0
    for k in range(d + 1):
        hand[pile[k]] += 1
    for c in range(53):
        total += hand[c] * vals[c]
    taken = pile[0] if d == 0 else -1  # a single top card may not be thrown back
    melded = total - free_arrangement_by(hand, taken, vals, ct, cj, lv, kept, rem, left)
    held = 0
    for k in range(d + 1):
        hand[pile[k]] -= 1
    for k in range(d + 1):
        c = pile[k]
        if left[c] > 0:
            left[c] -= 1
            held += vals[c]
    return melded - base_melded - held
