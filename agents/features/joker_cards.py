"""Kernels of the joker games' feature pieces (500 Rum and Rummy 51): each reads a batch of
observations through piece offsets taken from the game's encoding layout and writes one block
of planes, which the feature pieces of :mod:`rummy_agents.features.pieces` are slices of.

Card counts are read back from the observation (``hand``, ``known``, ``pile_counts``: count /
2); table melds from ``meld_kind``, ``meld_cards``, ``meld_jokers`` and ``meld_ends``.
"""

from __future__ import annotations

import numpy as np

from rummy_agents.features.searches import (
    BEST,
    RUMMY51_THRESHOLD,
    SEARCH_DEPTH,
    fewest_left,
    free_arrangement_by,
    make_out_work,
    take_gain,
)
from rummy_agents.joker_rollouts import closeness, greedy_discard_score, melds_with_hand
from rummy_agents.planner_kernels import MAX_HAND, STEP_MELD, card_values, plan_best
from rummy_env.core.jit import kernel
from rummy_env.core.jmelds import JOKER, NUM_TEMPLATES
from rummy_env.encodings import five_hundred_rum as E500
from rummy_env.encodings.five_hundred_rum import PH_CALL_LAYOFF, PH_OVER, PH_PLAY

# block widths
CARD_PLANES = 6 * 52  # melds with hand, own closeness, next's closeness, table fit, top, top melds
TABLE_FIT = slice(156, 208)  # the table-fit plane among the card planes
TURN_NUMBERS = 3  # goes out, fewest cards left (with the top discard), without drawing
HELD_PLANES = 2 * 52  # each held card's points, its copies in the free arrangement
TURN_BLOCK = TURN_NUMBERS + HELD_PLANES + NUM_TEMPLATES  # + the fewest-cards melds
MELDED_COPIES = slice(TURN_NUMBERS + 52, TURN_NUMBERS + 104)  # copies in the free arrangement
TAKE_DEPTHS = 108  # one per discard pile depth, up to the largest deck
DISCARD_PLANES = 2 * 52  # greedy's discard score relative to the best: any card, leftovers
SHORTEST_BINS = 12  # one-hot: the fewest cards an opponent holds, 0..10 and 11 or more
PLAN_BLOCK = NUM_TEMPLATES + SHORTEST_BINS  # greedy's planned melds, shortest opponent
# observation pieces the kernels read, in the order of their offset arrays
CARD_PIECES = ("hand", "pile_sequence", "known", "meld_kind", "meld_cards", "meld_jokers",
               "meld_ends")  # fmt: skip
TURN_PIECES = ("opened", "phase", "opening_points", "taken_single")  # 500 Rum: no opening


@kernel
def card_planes(obs, out, offs, m, retrieve):
    """The six card planes (``out``: (B, 312)); ``offs``: offsets of :data:`CARD_PIECES`;
    ``m``: table meld slots; ``retrieve``: a run's joker may be taken back (Rummy 51).
    """
    o_hand, o_pile, o_known, o_kind, o_cards, o_jok, o_ends = offs
    hand = np.zeros(53, np.int64)
    known = np.zeros(53, np.int64)
    for i in range(obs.shape[0]):
        for c in range(53):
            hand[c] = int(obs[i, o_hand + c] * 2.0 + 0.5)
            known[c] = int(obs[i, o_known + c] * 2.0 + 0.5)  # the next player's row
        for k in range(CARD_PLANES):
            out[i, k] = 0.0
        for c in range(52):
            if hand[c] > 0:
                hand[c] -= 1
                if melds_with_hand(hand, c):
                    out[i, c] = 1.0
                hand[c] += 1
            out[i, 52 + c] = closeness(hand, c) / 16.0
            out[i, 104 + c] = closeness(known, c) / 16.0
        for j in range(m):
            base = o_cards + 52 * j
            if obs[i, o_kind + 2 * j] > 0.5:  # a group: the suits it lacks, while not full
                r = int(obs[i, o_ends + 2 * j] * 12.0 + 0.5)
                n = int(obs[i, o_jok + 14 * j] * 4.0 + 0.5)
                for s in range(4):
                    n += obs[i, base + s * 13 + r] > 0.5
                if n < 4:
                    for s in range(4):
                        if obs[i, base + s * 13 + r] < 0.5:
                            out[i, 156 + s * 13 + r] = 1.0
            elif obs[i, o_kind + 2 * j + 1] > 0.5:  # a run: the cards next to its ends
                su = -1
                for c in range(52):
                    if obs[i, base + c] > 0.5:
                        su = c // 13
                        break
                if su < 0:
                    continue
                lo = int(obs[i, o_ends + 2 * j] * 13.0 + 0.5)
                hi = int(obs[i, o_ends + 2 * j + 1] * 13.0 + 0.5)
                if lo > 1 or (lo == 1 and hi < 13):  # an ace goes low only below a 2
                    out[i, 156 + su * 13 + lo - 1] = 1.0
                if hi < 12 or (hi == 12 and lo > 0):  # ... and high only if not low already
                    out[i, 156 + su * 13 + (hi + 1) % 13] = 1.0
                if retrieve:  # Rummy 51: the natural a run's joker stands for takes it back
                    for pos in range(14):
                        if obs[i, o_jok + 14 * j + pos] > 0.5:
                            out[i, 156 + su * 13 + pos % 13] = 1.0
        v = obs[i, o_pile]
        if v > 0.0:
            top = int(v * 53.0 + 0.5) - 1
            if 0 <= top < 52:
                out[i, 208 + top] = 1.0
                if melds_with_hand(hand, top):
                    out[i, 260 + top] = 1.0


@kernel
def turn_block(obs, out, offs, offs2, m, plan, melds, vals):
    """The turn block (``out``: (B, :data:`TURN_BLOCK`)): the three going-out numbers in
    ``out[:, :3]``; with ``plan``, the held-points and melded-copies planes in ``out[:, 3:107]``
    (points from ``vals``); with ``melds``, the fewest-cards template plane after them.
    ``offs``: offsets of :data:`CARD_PIECES`; ``offs2``: of :data:`TURN_PIECES` (-1 where the
    game has no such piece); ``m``: table meld slots.
    """
    o_hand, o_pile, _, o_kind, o_cards, o_jok, o_ends = offs
    o_opened, o_phase, o_points, o_taken = offs2
    ct, cj, lv, kept, rem = make_out_work()
    top_val = float(vals.max())
    hand = np.zeros(53, np.int64)
    left = np.zeros(53, np.int64)
    runs = np.zeros((m, 3), np.int64)
    groups = np.zeros((m, 3), np.int64)
    for i in range(obs.shape[0]):
        taken = -1
        for c in range(53):
            hand[c] = int(obs[i, o_hand + c] * 2.0 + 0.5)
            if obs[i, o_taken + c] > 0.5:
                taken = c
        if plan:
            free_arrangement_by(hand, taken, vals, ct, cj, lv, kept, rem, left)
            for c in range(52):
                out[i, TURN_NUMBERS + c] = vals[c] / top_val if hand[c] > 0 else 0.0
                out[i, TURN_NUMBERS + 52 + c] = (hand[c] - left[c]) / 2.0
        for k in range(TURN_NUMBERS):
            out[i, k] = 0.0
        if melds:
            for t in range(NUM_TEMPLATES):
                out[i, TURN_NUMBERS + HELD_PLANES + t] = 0.0
        play = obs[i, o_phase + 1] > 0.5
        if not play and obs[i, o_phase] < 0.5:
            continue  # the hand is over
        n_runs = 0
        n_groups = 0
        for j in range(m):
            base = o_cards + 52 * j
            if obs[i, o_kind + 2 * j] > 0.5:
                r = int(obs[i, o_ends + 2 * j] * 12.0 + 0.5)
                suits = 0
                size = int(obs[i, o_jok + 14 * j] * 4.0 + 0.5)
                for s in range(4):
                    if obs[i, base + s * 13 + r] > 0.5:
                        suits |= 1 << s
                        size += 1
                groups[n_groups, 0] = r
                groups[n_groups, 1] = suits
                groups[n_groups, 2] = size
                n_groups += 1
            elif obs[i, o_kind + 2 * j + 1] > 0.5:
                su = -1
                for c in range(52):
                    if obs[i, base + c] > 0.5:
                        su = c // 13
                        break
                if su >= 0:
                    runs[n_runs, 0] = su
                    runs[n_runs, 1] = int(obs[i, o_ends + 2 * j] * 13.0 + 0.5)
                    runs[n_runs, 2] = int(obs[i, o_ends + 2 * j + 1] * 13.0 + 0.5)
                    n_runs += 1
        need = 0
        if o_opened < 0:
            need = -1  # 500 Rum
        elif obs[i, o_opened] < 0.5:
            need = RUMMY51_THRESHOLD - int(obs[i, o_points] * RUMMY51_THRESHOLD + 0.5)
        n = fewest_left(hand, need, taken, runs, n_runs, groups, n_groups, ct, cj, lv, kept, rem)
        if play:
            if melds:
                for q in range(SEARCH_DEPTH):
                    t = lv[q, BEST]
                    if t < 0:
                        break
                    out[i, TURN_NUMBERS + HELD_PLANES + t] = 1.0
            out[i, 0] = 1.0 if n == 1 else 0.0
            out[i, 1] = min(n, 14) / 14.0
            out[i, 2] = out[i, 1]
            continue
        out[i, 2] = min(n, 14) / 14.0
        v = obs[i, o_pile]
        top = int(v * 53.0 + 0.5) - 1 if v > 0.0 else -1
        if top >= 0:
            hand[top] += 1
            n = fewest_left(hand, need, top, runs, n_runs, groups, n_groups, ct, cj, lv, kept,
                            rem)  # fmt: skip
            hand[top] -= 1
            out[i, 0] = 1.0 if n == 1 else 0.0
            out[i, 1] = min(n, 14) / 14.0
        else:
            out[i, 1] = out[i, 2]


@kernel
def take_depths(obs, out, fit, offs, offs2, deck, vals):
    """The take-gain depth plane (``out``: (B, :data:`TAKE_DEPTHS`); ``fit``: the table-fit
    card plane; ``deck``: the pile sequence's length; ``vals``: card points).
    """
    o_hand, o_pile = offs[0], offs[1]
    o_phase = offs2[1]
    ct, cj, lv, kept, rem = make_out_work()
    hand = np.zeros(53, np.int64)
    left = np.zeros(53, np.int64)
    pile = np.zeros(TAKE_DEPTHS, np.int64)
    for i in range(obs.shape[0]):
        for k in range(TAKE_DEPTHS):
            out[i, k] = 0.0
        # the draw phase and a "Rummy!" offer (500 Rum phases: draw, play, offer, ...)
        if obs[i, o_phase] < 0.5 and obs[i, o_phase + 2] < 0.5:
            continue
        n = 0
        while n < deck and obs[i, o_pile + n] > 0.0:
            pile[n] = int(obs[i, o_pile + n] * 53.0 + 0.5) - 1
            n += 1
        if n == 0:
            continue
        total = 0
        for c in range(53):
            hand[c] = int(obs[i, o_hand + c] * 2.0 + 0.5)
            total += hand[c] * vals[c]
        base = total - free_arrangement_by(hand, -1, vals, ct, cj, lv, kept, rem, left)
        for d in range(n):
            x = pile[d]
            for k in range(d):
                hand[pile[k]] += 1
            ok = d == 0 or x == JOKER or melds_with_hand(hand, x) or fit[i, x] > 0.5
            for k in range(d):
                hand[pile[k]] -= 1
            if not ok:
                out[i, d] = -1.0
                continue
            g = take_gain(hand, pile, d, vals, base, ct, cj, lv, kept, rem, left)
            out[i, d] = min(max(g / 100.0, -1.0), 1.0)


@kernel
def discard_planes(obs, out, fit, melded, offs, offs2, o_counts, vals):
    """The two discard-score planes (``out``: (B, 104); ``fit``: the table-fit card plane;
    ``melded``: the melded-copies plane; ``o_counts``: the offset of ``pile_counts``).
    """
    o_hand, o_known = offs[0], offs[2]
    o_phase = offs2[1]
    hand = np.zeros(53, np.int64)
    nxt = np.zeros(53, np.int64)
    pile = np.zeros(53, np.int64)
    score = np.zeros(52, np.int64)
    loose = np.zeros(52, np.bool_)  # copies left over by the free arrangement
    for i in range(obs.shape[0]):
        for c in range(DISCARD_PLANES):
            out[i, c] = 0.0
        if obs[i, o_phase + 1] < 0.5:
            continue  # discards are made in the play phase
        for c in range(53):
            hand[c] = int(obs[i, o_hand + c] * 2.0 + 0.5)
            nxt[c] = int(obs[i, o_known + c] * 2.0 + 0.5)
            pile[c] = int(obs[i, o_counts + c] * 2.0 + 0.5)
        best = -(10**9)
        best_left = -(10**9)
        for c in range(52):
            if hand[c] > 0:
                score[c] = greedy_discard_score(hand, nxt, pile, fit[i, c] > 0.5, c, vals)
                best = max(best, score[c])
                loose[c] = hand[c] > int(melded[i, c] * 2.0 + 0.5)
                if loose[c]:
                    best_left = max(best_left, score[c])
        for c in range(52):
            if hand[c] > 0:
                out[i, c] = 1.0 + max(min((score[c] - best) / 10.0, 0.0), -1.0)
                if loose[c]:
                    out[i, 52 + c] = 1.0 + max(min((score[c] - best_left) / 10.0, 0.0), -1.0)


PLAN_NODE_LIMIT = 3000  # greedy's planner (MeldPlanner's default)
PLAN_VALUES = card_values(False)  # greedy's default card values, as FIVE_HUNDRED_RUM_VALUES


@kernel
def plan_melds(obs, out, rows, offs, o_oblig, m, vals, low_ace, node_limit):
    """1 at each new meld of ``greedy``'s plan in ``out[i, :685]`` for each row ``i`` of
    ``rows``: :func:`rummy_agents.planner_kernels.plan_best` of the hand, the table and the
    obligation read as ``five_hundred_rum_greedy`` reads them (``table_melds``,
    ``obligation``). ``offs``: offsets of :data:`CARD_PIECES`; ``o_oblig``: of ``obligation``.
    """
    o_hand, _, _, o_kind, o_cards, o_jok, o_ends = offs
    hand = np.zeros(53, np.int64)
    table = np.zeros((m, 6), np.int64)
    steps = np.empty((MAX_HAND, 3), np.int64)
    left = np.empty(53, np.int64)
    for i in rows:
        for c in range(53):
            hand[c] = int(obs[i, o_hand + c] * 2.0 + 0.5)
        ob = 0
        for c in range(53):  # the first largest entry, if it is set
            if obs[i, o_oblig + c] > obs[i, o_oblig + ob]:
                ob = c
        if not obs[i, o_oblig + ob] > 0.5:
            ob = -1
        n = 0  # the occupied slots, which come first
        for j in range(m):
            if obs[i, o_kind + 2 * j] + obs[i, o_kind + 2 * j + 1] > 0.5:
                n += 1
        for j in range(m):
            for f in range(6):
                table[j, f] = 0
        for j in range(n):
            base = o_cards + 52 * j
            first = -1
            nat = 0
            for c in range(52):
                if obs[i, base + c] > 0.5:
                    if first < 0:
                        first = c
                    nat += 1 << (c // 13)
            if obs[i, o_kind + 2 * j] > 0.5:
                table[j, 0] = 1
                table[j, 1] = first % 13
                table[j, 4] = nat
                table[j, 5] = int(obs[i, o_jok + 14 * j] * 4.0 + 0.5)
            else:
                lo = int(obs[i, o_ends + 2 * j] * 13.0 + 0.5)
                hi = int(obs[i, o_ends + 2 * j + 1] * 13.0 + 0.5)
                jok = 0
                for pos in range(14):
                    if obs[i, o_jok + 14 * j + pos] > 0.5:
                        jok |= 1 << pos
                table[j, 0] = 2
                table[j, 1] = first // 13
                table[j, 2] = lo
                table[j, 3] = hi
                table[j, 4] = ((1 << (hi + 1)) - (1 << lo)) & ~jok
                table[j, 5] = jok
        found, _, ns = plan_best(hand, table, ob, False, vals, low_ace, node_limit, steps, left)
        if found:
            for q in range(ns):
                if steps[q, 0] == STEP_MELD:
                    out[i, steps[q, 1]] = 1.0


def plan_block(obs: np.ndarray, out: np.ndarray, layout: E500.Layout) -> None:
    """The plan block (``out``: (B, :data:`PLAN_BLOCK`)) of 500 Rum observations: in the play
    phase and after a "Rummy!" call, 1 at each new meld of ``greedy``'s plan for the turn
    (:func:`rummy_agents.five_hundred_rum_greedy.turn_plan`: the most points melded, lay-offs onto
    the table
    counted; the card owed to a meld melded) in ``out[:, :685]``; in every phase but the hand's
    end a one-hot of the fewest cards an opponent holds in ``out[:, 685:]``. The plans are the
    compiled planner's (:mod:`rummy_agents.planner_kernels`: the same plans).
    """
    out[:] = 0.0
    phase = obs[:, layout.offset("phase") : layout.offset("phase") + PH_OVER] > 0.5
    o = layout.offset("hand_sizes")
    short = np.rint(obs[:, o + 1 : o + layout.num_players] * 13).min(axis=1).astype(np.int64)
    rows = np.flatnonzero(phase.any(axis=1))
    out[rows, NUM_TEMPLATES + np.minimum(short[rows], SHORTEST_BINS - 1)] = 1.0
    plays = np.flatnonzero(phase[:, PH_PLAY] | phase[:, PH_CALL_LAYOFF])
    if plays.size:
        offs = np.array([layout.offset(n) for n in CARD_PIECES], np.int64)
        plan_melds(obs, out, plays, offs, layout.offset("obligation"), layout.max_melds,
                   PLAN_VALUES, 1, PLAN_NODE_LIMIT)  # fmt: skip
