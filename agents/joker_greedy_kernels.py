"""Compiled, batched decisions of the joker games' greedy rule agents: the same moves as the
Python rules of :class:`rummy_agents.five_hundred_rum_greedy.FiveHundredRumGreedyAgent` and
:class:`rummy_agents.rummy51_greedy.Rummy51GreedyAgent` (kept there as ``act_reference``), in
one compiled call for a whole batch of decisions (their ``act`` is a batch of one).

:func:`greedy500_rows` and :func:`greedy51_rows` read each row's flat observation and action
mask exactly as the Python agents do (the same float arithmetic: ``float32`` products where
numpy multiplies ``float32`` arrays, ``float64`` where the agents read Python floats, rounding
half to even), plan with the compiled planners of :mod:`rummy_agents.planner_kernels` and take
the same draw, call, retrieval, play and discard decisions. Rows are decided in order, and every
tie-break is drawn from the agent's own ``numpy.random.Generator`` (numba's
``gen.integers(0, n)`` draws what numpy's ``gen.integers(n)`` draws, advancing the same
state), so the agent's random stream stays the same, bit for bit
(``tests/test_joker_greedy_compiled.py``).

Rows the kernels do not decide themselves, all of them malformed observations (a value that is
not finite or beyond :data:`BIG`, a negative count, a table meld without a natural card or
with ends out of range, a pile card that is no card, a joker retrieval of a card the hand does
not hold, more cards than the buffers hold), stop the batch: the kernel returns that row's
index, the caller lets the Python reference decide it (raising whatever the reference raises)
and calls the kernel again from the next row. Exact either way.

The layout and the options reach a kernel as one int64 vector (:func:`params500`,
:func:`params51`), so each kernel compiles once for every player count and rule option.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_agents import rummy51_greedy as R51
from rummy_agents.joker_rollouts import greedy_discard_score
from rummy_agents.pcg64 import draw
from rummy_agents.planner_kernels import (
    STEP_JOKER,
    STEP_LAYOFF,
    STEP_MELD,
    discardable,
    fit_natural,
    no_meld_holds,
    nodes_within,
    plan51_memo,
    plan_best51_memo,
    plan_best51_pair_memo,
    plan_best_in,
    plan_turn_in,
    plan_work,
)
from rummy_env.core.jit import entry_point, kernel
from rummy_env.core.jmelds import TPL_A, TPL_B, TPL_C, TPL_KIND
from rummy_env.core.table import hand_total
from rummy_env.encodings import five_hundred_rum as E5
from rummy_env.encodings import rummy51 as E51
from rummy_env.rules.rummy51.config import C_THRESH as R51_C_THRESH

JOKER = 52
NUM_TYPES = 53
MAX_STEPS = 256
"""Rows of a plan's step buffer: more than any hand with the cards it may take (a deck holds at
most 108 cards); a malformed hand holding more is left to the reference."""
BIG = 1.0e6
"""Observation values beyond this (or not finite) are malformed: such rows go to the reference."""
SKIP = -1
"""A row the kernel leaves to the Python reference."""
NO_LEGAL = -2
"""A mask without a legal action."""
MEMO51_CARDS = 32
"""Hands up to this many cards are kept in the Rummy 51 planner's memo (larger ones, which
the game does not deal, are planned without it)."""
WORK_CARDS = 32
"""Hands of up to this many naturals are planned in the agents' kept buffers
(``planner_kernels.plan_work``); larger ones in buffers of their own."""

# -- Python helpers ------------------------------------------------------------------------------


class ConfigView:
    """A stand-in for a seat's view holding only the rule options (what the greedy agents
    read from a view), for the rows the reference decides in a batch.
    """

    def __init__(self, config: Any) -> None:
        self.config = config


def as_mask8(mask: np.ndarray) -> np.ndarray:
    """An action mask as the int8 array the kernels read: an entry is legal when it equals 1
    and allows a plan step when it is not 0 (the agents test ``mask == 1`` for their legal
    actions and ``mask[a]`` for the steps). int8 masks pass as they are, bool and uint8 masks
    as int8 views; others are recoded (1: 1, another nonzero: 2, 0: 0).
    """
    if mask.dtype == np.int8:
        return mask
    if mask.dtype == np.bool_ or mask.dtype == np.uint8:
        return mask.view(np.int8)  # 255 reads as -1: nonzero, not 1, as before
    return np.where(mask == 1, 1, np.where(mask != 0, 2, 0)).astype(np.int8)


def check_batch(obs: np.ndarray, masks: np.ndarray) -> None:
    """The checks of a batch before any row is decided.

    Raises:
        ValueError: for arrays that are not (N, O) and (N, A), or rows whose mask allows no
            action (naming the first few).
    """
    if obs.ndim != 2 or masks.ndim != 2 or obs.shape[0] != masks.shape[0]:
        raise ValueError(
            f"observations and masks must be (N, obs_size) and (N, num_actions) arrays, got "
            f"shapes {obs.shape} and {masks.shape}"
        )
    if masks.shape[0] and masks.shape[1] == 0:
        raise ValueError("action_mask has no legal action (all entries are 0)")
    empty = ~(masks == 1).any(axis=1)
    if empty.any():
        rows = np.flatnonzero(empty)[:10].tolist()
        raise ValueError(f"action_mask has no legal action (all entries are 0) in row(s) {rows}")


_ENTRIES: dict[tuple[Any, ...], Any] = {}


def decide_one(kernel_fn: Any, obs: np.ndarray, mask: np.ndarray, *args: Any) -> int:
    """``kernel_fn(obs, mask, *args, out, 0)`` for a single row, through the compiled code
    without numba's dispatch (``core.jit.entry_point``: typing the arguments, the generator
    above all, costs more than many decisions). ``obs`` (1, O) float32 and ``mask`` (1, A)
    int8 must be C-contiguous, ``args`` the kernel's int64 vectors and ``numpy.random.Generator``
    then a (1,) int64 output; returns the kernel's return value (1: decided, into the output).
    """
    key = (kernel_fn, obs.flags.writeable, mask.flags.writeable)
    fn = _ENTRIES.get(key)
    if fn is None:
        fn = _ENTRIES[key] = entry_point(kernel_fn, obs, mask, *args, 0)
    return fn(obs, mask, *args, 0)


# -- the parameter vector of 500 Rum ------------------------------------------------------------

(
    K_P, K_D, K_M, K_TAKE, K_MELD, K_LAYOFF, K_JOKER, K_DISCARD, K_PASS, K_NA, K_OBS,
    K_HAND, K_PILE, K_PCOUNT, K_KNOWN, K_KIND, K_CARDS, K_MJOK, K_ENDS, K_HSIZE, K_PHASE,
    K_OBLIG, K_V51015, K_MUST, K_NEW, K_NODES, K_HOLD, K_HOLD_J, K_SIZE,
) = range(29)  # fmt: skip


def params500(
    lay: E5.Layout,
    values_5_10_15: bool,
    must_meld_discard: bool,
    deepest_card_new_meld: bool,
    node_limit: int,
    hold_melds: int | None,
    hold_jokers: bool,
) -> np.ndarray:
    """The int64 vector :func:`greedy500_rows` reads: the layout's sizes, action ranges and
    piece offsets, the rule options the agent reads and the agent's options (``hold_melds``
    ``None`` is -1).
    """
    p = np.zeros(K_SIZE, np.int64)
    p[K_P] = lay.num_players
    p[K_D] = lay.deck_size
    p[K_M] = lay.max_melds
    p[K_TAKE] = lay.take_base
    p[K_MELD] = lay.meld_base
    p[K_LAYOFF] = lay.layoff_base
    p[K_JOKER] = lay.joker_base
    p[K_DISCARD] = lay.discard_base
    p[K_PASS] = lay.pass_action
    p[K_NA] = lay.num_actions
    p[K_OBS] = lay.obs_size
    for k, name in (
        (K_HAND, "hand"), (K_PILE, "pile_sequence"), (K_PCOUNT, "pile_counts"),
        (K_KNOWN, "known"), (K_KIND, "meld_kind"), (K_CARDS, "meld_cards"),
        (K_MJOK, "meld_jokers"), (K_ENDS, "meld_ends"), (K_HSIZE, "hand_sizes"),
        (K_PHASE, "phase"), (K_OBLIG, "obligation"),
    ):  # fmt: skip
        p[k] = lay.offset(name)
    p[K_V51015] = bool(values_5_10_15)
    p[K_MUST] = bool(must_meld_discard)
    p[K_NEW] = bool(deepest_card_new_meld)
    p[K_NODES] = int(node_limit)
    p[K_HOLD] = -1 if hold_melds is None else int(hold_melds)
    p[K_HOLD_J] = bool(hold_jokers)
    return p


# -- reading an observation ----------------------------------------------------------------------


@kernel(inline="always")
def _count(x):
    """``np.rint(x * 2)`` of a float32 count piece, as an integer."""
    return np.int64(np.rint(x * np.float32(2.0)))


@kernel(counted=False)
def row_ok(obs, b):
    """Are all of row ``b``'s values finite and within :data:`BIG` (else the reference reads
    it)?
    """
    # a branch-free count (LLVM vectorizes it): the early return of a plain loop made this
    # check cost more than a small hand's whole plan (the row has ~3000 values). BIG is a
    # float32 exactly, so the float32 comparisons equal the float64 ones; NaN fails both.
    lo = np.float32(-BIG)
    hi = np.float32(BIG)
    bad = 0
    for i in range(obs.shape[1]):
        v = obs[b, i]
        bad += 1 - np.int64((v > lo) & (v < hi))
    return bad == 0


@kernel(counted=False)
def read_hand(obs, b, off, hand):
    """53 counts of the piece at ``off`` into ``hand``; False for a negative count."""
    for x in range(NUM_TYPES):
        hand[x] = _count(obs[b, off + x])
        if hand[x] < 0:
            return False
    return True


@kernel(inline="always")
def _run_naturals(lo, hi, jok):
    """The naturals' positions of a run from ``lo`` to ``hi`` whose jokers are at ``jok``."""
    return ((1 << (hi + 1)) - (1 << lo)) & ~jok


@kernel(counted=False)
def read_table(obs, b, o_kind, o_cards, o_jok, o_ends, m_slots, table):
    """The table melds of row ``b`` into ``table`` ((slots, 6), zero after them), as
    ``five_hundred_rum_greedy.table_melds`` reads them; -1 where that reading fails (a meld
    without a natural card, ends or joker counts out of range).
    """
    n = 0
    for m in range(m_slots):
        if obs[b, o_kind + 2 * m] + obs[b, o_kind + 2 * m + 1] > np.float32(0.5):
            n += 1
    for m in range(table.shape[0]):
        for f in range(6):
            table[m, f] = 0
    half = np.float32(0.5)
    for m in range(n):  # the first n slots, as the Python reading assumes
        base = o_cards + 52 * m
        first = 0
        while first < 52 and not obs[b, base + first] > half:
            first += 1
        if first == 52:
            return -1
        nat = 0
        for q in range(first // 13, 4):
            k = 0  # the suit's cards in the meld (counted without branches)
            for r in range(13):
                k += obs[b, base + 13 * q + r] > half
            nat += k << q  # a sum, as the Python reading builds it
        if obs[b, o_kind + 2 * m] > np.float32(0.5):
            jok = np.int64(np.rint(np.float64(obs[b, o_jok + 14 * m]) * 4.0))
            if jok < 0 or jok > 4:
                return -1
            table[m, 0] = 1
            table[m, 1] = first % 13
            table[m, 4] = nat
            table[m, 5] = jok
        else:
            lo = np.int64(np.rint(np.float64(obs[b, o_ends + 2 * m]) * 13.0))
            hi = np.int64(np.rint(np.float64(obs[b, o_ends + 2 * m + 1]) * 13.0))
            if lo < 0 or hi > 13 or lo > hi:
                return -1
            jok = 0
            for p in range(14):
                if obs[b, o_jok + 14 * m + p] > np.float32(0.5):
                    jok |= 1 << p
            table[m, 0] = 2
            table[m, 1] = first // 13
            table[m, 2] = lo
            table[m, 3] = hi
            table[m, 4] = _run_naturals(lo, hi, jok)
            table[m, 5] = jok
    return n


@kernel(counted=False)
def one_hot(obs, b, off, n):
    """``argmax`` of a one-hot piece if its largest value is over 0.5, else -1."""
    best = 0
    for i in range(1, n):
        if obs[b, off + i] > obs[b, off + best]:
            best = i
    return best if obs[b, off + best] > np.float32(0.5) else -1


@kernel(counted=False)
def arg_max(obs, b, off, n):
    """``np.argmax`` of a piece (the first largest)."""
    best = 0
    for i in range(1, n):
        if obs[b, off + i] > obs[b, off + best]:
            best = i
    return best


@kernel(inline="always")
def truthy(masks, b, a):
    """``mask[a]`` as the agent tests it (``if mask[a]``; legal means ``== 1``)."""
    return masks[b, a] != 0


@kernel(counted=False)
def step_action(steps, q, meld_base, layoff_base, joker_base, m_slots):
    """The action of plan step ``q`` (``FiveHundredRumGreedyAgent._step_action``)."""
    kind = steps[q, 0]
    if kind == STEP_MELD:
        return meld_base + steps[q, 1]
    if kind == STEP_LAYOFF:
        return layoff_base + steps[q, 1] * m_slots + steps[q, 2]
    return joker_base + 2 * steps[q, 1] + steps[q, 2]


@kernel(inline="always")
def _none_of_8(masks, b, a):
    """Are the 8 entries ``masks[b, a:a + 8]`` all 0 (one test instead of eight branches)?"""
    return (masks[b, a] | masks[b, a + 1] | masks[b, a + 2] | masks[b, a + 3] | masks[b, a + 4]
            | masks[b, a + 5] | masks[b, a + 6] | masks[b, a + 7]) == 0  # fmt: skip


@kernel(counted=False)
def _next_nonzero(masks, b, a, hi):
    """The first ``a' >= a`` below ``hi`` with ``masks[b, a'] != 0``, else ``hi``: 32 entries
    at a time where they are all 0 (read as four 8-byte words where the row's entries are
    adjacent bytes; else 8 at a time).
    """
    if masks.strides[1] == 1:
        row = masks[b]
        n8 = row.shape[0] >> 3
        words = row[: n8 << 3].view(np.uint64)
        lim = min(hi, n8 << 3)
        while a < hi:
            if (a & 7) == 0 and a + 32 <= lim:
                k = a >> 3
                if (words[k] | words[k + 1] | words[k + 2] | words[k + 3]) == 0:
                    a += 32
                    continue
            if row[a] != 0:
                return a
            a += 1
        return hi
    while a < hi:
        if a + 8 <= hi and _none_of_8(masks, b, a):
            a += 8
        elif masks[b, a] != 0:
            return a
        else:
            a += 1
    return hi


@kernel(counted=False)
def next_legal(masks, b, a, hi):
    """The first action ``a' >= a`` below ``hi`` with ``masks[b, a'] == 1``, else ``hi``: the
    agents' scans of the joker games' wide masks (1,766 and 3,188 actions, a few legal), over
    the nonzero entries (:func:`_next_nonzero`).
    """
    while True:
        a = _next_nonzero(masks, b, a, hi)
        if a >= hi or masks[b, a] == 1:
            return a
        a += 1


@kernel(counted=False)
def all_zero(masks, b, lo, hi):
    """Are the entries ``masks[b, lo:hi]`` all 0 (no action there legal, nor allowed as a plan
    step)?
    """
    return _next_nonzero(masks, b, lo, hi) >= hi


@kernel(counted=False)
def legal_offsets(masks, b, lo, hi, out):
    """The legal actions ``lo <= a < hi`` of row ``b``, as ``a - lo``, into ``out`` in order;
    returns how many.
    """
    n = 0
    a = next_legal(masks, b, lo, hi)
    while a < hi:
        out[n] = a - lo
        n += 1
        a = next_legal(masks, b, a + 1, hi)
    return n


@kernel(counted=False)
def first_legal(masks, b):
    """Row ``b``'s first legal action, -1 if none."""
    na = masks.shape[1]
    a = next_legal(masks, b, 0, na)
    return a if a < na else -1


@kernel
def pick_tie(cands, ties, rng):
    """``cands[rng.integers(ties)]`` (no draw for a single candidate): counted, unlike the
    discards that call it, since numpy's ``Generator.integers`` allocates.
    """
    return cands[draw(rng, ties)] if ties > 1 else cands[0]


@kernel(inline="always")
def allowed(masks, b, a):
    """``0 <= a < mask.shape[0] and mask[a]``."""
    return 0 <= a < masks.shape[1] and masks[b, a] != 0


# -- 500 Rum ---------------------------------------------------------------------------------------


@kernel(counted=False)
def _take_nets500(call, hand, table, pile, n_pile, masks, b, prm, vals, low_ace, nets, depths,
                  hand2, steps, left, work):  # fmt: skip
    """(net, depth) of every legal TAKE_DISCARD (``_take_nets``) into ``nets`` / ``depths``;
    returns how many, or -1 when a take reaches past the pile (the reference decides).
    """
    d_size = prm[K_D]
    take = prm[K_TAKE]
    must = prm[K_MUST] != 0
    new_meld = prm[K_NEW] != 0
    nodes = prm[K_NODES]
    n = 0
    base = -1
    for d in range(d_size):
        if masks[b, take + d] != 1:
            continue
        if d + 1 > n_pile:
            return -1
        if base < 0:
            found, pts, _ = plan_best_in(work, hand, table, -1, False, vals, low_ace, nodes,
                                         steps, left)  # fmt: skip
            base = pts if found else 0
        total = 0
        for x in range(NUM_TYPES):
            hand2[x] = hand[x]
            total += hand[x]
        for i in range(d + 1):
            hand2[pile[i]] += 1
        if total + d + 1 > MAX_STEPS:
            return -1
        oblig = pile[d] if (call or d >= 1 or must) else -1
        oblig_new = new_meld and not call and oblig >= 0
        found, pts, _ = plan_turn_in(work, hand2, table, oblig, oblig_new, vals, low_ace, nodes,
                                     steps, left)  # fmt: skip
        if not found:
            continue
        held = 0
        for x in range(NUM_TYPES):
            t = 0
            for i in range(d + 1):
                if pile[i] == x:
                    t += 1
            if t:
                held += min(left[x], t) * vals[x]
        nets[n] = pts - base - held
        depths[n] = d
        n += 1
    return n


@kernel(counted=False)
def _best_take(nets, depths, n, positive):
    """The depth of the largest net (shallowest on ties; only nets > 0 with ``positive``);
    -1 if none.
    """
    best = -1
    for i in range(n):
        if positive and nets[i] <= 0:
            continue
        if best < 0 or nets[i] > nets[best]:
            best = i
    return -1 if best < 0 else depths[best]


@kernel(counted=False)
def _placement_points500(a, hand, table, n_table, prm, vals, low_ace):
    """Points a legal meld or lay-off action scores (``_placement_points``)."""
    if a < prm[K_LAYOFF]:
        t = a - prm[K_MELD]
        if TPL_KIND[t] == 1:
            r = np.int64(TPL_A[t])
            suits = np.int64(TPL_B[t])
            pts = 0
            for q in range(4):
                if suits >> q & 1:
                    pts += vals[q * 13 + r]
            return pts + 15 * np.int64(TPL_C[t])
        s = np.int64(TPL_A[t])
        pts = 0
        for pos in range(np.int64(TPL_B[t]), np.int64(TPL_C[t]) + 1):
            x = s * 13 + (0 if pos == 13 else pos)
            if hand[x] > 0:
                pts += low_ace if pos == 0 else vals[x]
            else:
                pts += 15
        return pts
    if a < prm[K_JOKER]:
        m_slots = prm[K_M]
        c = (a - prm[K_LAYOFF]) // m_slots
        m = (a - prm[K_LAYOFF]) % m_slots
        pos = fit_natural(table, m, c) if m < n_table else -1
        return low_ace if pos == 0 else vals[c]
    return 15


@kernel(counted=False)
def _discard500(obs, b, masks, prm, hand, table, n_table, keep_left, vals, rng, cands, scores,
                nxt, pcount):  # fmt: skip
    """The discard (``_discard``): the legal card of the highest score, ties drawn from
    ``rng``; only cards the held plan leaves in hand (``keep_left[0] >= 0``) when there are
    such.
    """
    base = prm[K_DISCARD]
    n = legal_offsets(masks, b, base, min(masks.shape[1], base + NUM_TYPES), cands)
    if n == 0:
        return first_legal(masks, b)
    if keep_left[0] >= 0:
        loose = 0
        for i in range(n):
            if keep_left[cands[i]] > 0:
                loose += 1
        if loose > 0:  # throw only cards the plan leaves in hand: the held melds stay whole
            j = 0
            for i in range(n):
                if keep_left[cands[i]] > 0:
                    cands[j] = cands[i]
                    j += 1
            n = loose
    o_known = prm[K_KNOWN]
    o_pc = prm[K_PCOUNT]
    for x in range(NUM_TYPES):
        nxt[x] = _count(obs[b, o_known + x])
        pcount[x] = _count(obs[b, o_pc + x])
    best = 0
    for i in range(n):
        c = cands[i]
        fits = False
        for k in range(n_table):
            if fit_natural(table, k, c) >= 0:
                fits = True
                break
        scores[i] = greedy_discard_score(hand, nxt, pcount, fits, c, vals)
        if i == 0 or scores[i] > best:
            best = scores[i]
    ties = 0
    for i in range(n):
        if scores[i] == best:
            cands[ties] = cands[i]
            ties += 1
    pick = pick_tie(cands, ties, rng)
    return base + pick


@kernel(counted=False)
def greedy500_row(obs, masks, b, prm, vals, rng, hand, hand2, table, pile, steps, left,
                  nets, depths, cands, scores, nxt, pcount, keep, work, trusted):  # fmt: skip
    """The action of row ``b`` (``FiveHundredRumGreedyAgent.act_reference``), :data:`SKIP`
    for a row left to the reference, :data:`NO_LEGAL` for a mask without a legal action.
    ``trusted``: the row was written by the engine (finite and small: :func:`row_ok` is
    skipped).
    """
    na = masks.shape[1]
    nz = _next_nonzero(masks, b, 0, na)  # the row's first nonzero entry: scanned once
    first = next_legal(masks, b, nz, na)
    if first == na:
        return NO_LEGAL
    if next_legal(masks, b, first + 1, na) == na:
        return first  # the only legal action
    if not trusted and not row_ok(obs, b):
        return SKIP
    if not read_hand(obs, b, prm[K_HAND], hand):
        return SKIP
    total = 0
    for x in range(NUM_TYPES):
        total += hand[x]
    if total > MAX_STEPS:
        return SKIP
    n_table = read_table(obs, b, prm[K_KIND], prm[K_CARDS], prm[K_MJOK], prm[K_ENDS], prm[K_M],
                         table)  # fmt: skip
    if n_table < 0:
        return SKIP
    d_size = prm[K_D]
    o_pile = prm[K_PILE]
    n_pile = 0
    for i in range(d_size):
        if obs[b, o_pile + i] > 0:
            n_pile += 1
    for i in range(n_pile):
        # (v * 53) in float32, as numpy multiplies a float32 scalar by a Python int
        pile[i] = np.int64(np.rint(obs[b, o_pile + i] * np.float32(53.0))) - 1
        if pile[i] < 0 or pile[i] >= NUM_TYPES:
            return SKIP
    v51015 = prm[K_V51015] != 0
    low_ace = 5 if v51015 else 1
    phase = arg_max(obs, b, prm[K_PHASE], E5.NUM_PHASES)
    take = prm[K_TAKE]
    if phase == E5.PH_DRAW or phase == E5.PH_CALL:
        call = phase == E5.PH_CALL
        n = _take_nets500(call, hand, table, pile, n_pile, masks, b, prm, vals, low_ace, nets,
                          depths, hand2, steps, left, work)  # fmt: skip
        if n < 0:
            return SKIP
        if not call:
            d = _best_take(nets, depths, n, True)
            if d >= 0:
                return take + d
            if truthy(masks, b, 0):
                return 0
            if truthy(masks, b, prm[K_PASS]):
                return prm[K_PASS]
            return first
        if n == 0:
            for a in range(take, prm[K_MELD]):
                if masks[b, a] == 1:
                    return a
            return prm[K_PASS]
        return take + _best_take(nets, depths, n, False)
    # play
    oblig = one_hot(obs, b, prm[K_OBLIG], NUM_TYPES)
    keep[0] = -1
    if prm[K_HOLD] < 0 or oblig >= 0:
        hi = min(prm[K_DISCARD], na)
        if all_zero(masks, b, max(prm[K_MELD], nz), hi):  # (nothing nonzero before nz)
            # no meld or lay-off is allowed and the plan cannot be held: no step of it could
            # be played, so the reference ends at the discard whatever the plan (one search
            # saved)
            return _discard500(obs, b, masks, prm, hand, table, n_table, keep, vals, rng,
                               cands, scores, nxt, pcount)  # fmt: skip
    new_meld = prm[K_NEW] != 0
    found, _, ns = plan_turn_in(work, hand, table, oblig, new_meld and oblig >= 0, vals,
                                low_ace, prm[K_NODES], steps, left)  # fmt: skip
    meld_base = prm[K_MELD]
    layoff_base = prm[K_LAYOFF]
    joker_base = prm[K_JOKER]
    discard_base = prm[K_DISCARD]
    m_slots = prm[K_M]
    keep[0] = -1
    if found:
        hold = prm[K_HOLD]
        holding = hold >= 0 and oblig < 0
        if holding:
            n_left = 0
            for x in range(NUM_TYPES):
                n_left += left[x]
            holding = n_left > 1
        if holding:
            any_discard = False
            for a in range(discard_base, masks.shape[1]):
                if masks[b, a] == 1:
                    any_discard = True
                    break
            holding = any_discard
        if holding:
            o_sizes = prm[K_HSIZE]
            for q in range(1, prm[K_P]):
                if not np.rint(obs[b, o_sizes + q] * np.float32(13.0)) > hold:
                    holding = False
                    break
        if holding:
            # lay off naturals onto the table's melds only; keep the rest for going out
            hold_j = prm[K_HOLD_J] != 0
            for q in range(ns):
                kind = steps[q, 0]
                if (kind == STEP_LAYOFF and steps[q, 2] < n_table) or (
                    kind == STEP_JOKER and steps[q, 1] < n_table and not hold_j
                ):
                    a = step_action(steps, q, meld_base, layoff_base, joker_base, m_slots)
                    if allowed(masks, b, a):
                        return a
            for x in range(NUM_TYPES):
                keep[x] = left[x]
            return _discard500(obs, b, masks, prm, hand, table, n_table, keep, vals, rng, cands,
                               scores, nxt, pcount)  # fmt: skip
        for q in range(ns):
            a = step_action(steps, q, meld_base, layoff_base, joker_base, m_slots)
            if allowed(masks, b, a):
                return a
    best_a = -1
    best_p = 0
    hi = min(discard_base, masks.shape[1])
    a = next_legal(masks, b, meld_base, hi)
    while a < hi:
        p = _placement_points500(a, hand, table, n_table, prm, vals, low_ace)
        if best_a < 0 or p > best_p:
            best_a = a
            best_p = p
        a = next_legal(masks, b, a + 1, hi)
    if best_a >= 0:
        return best_a
    return _discard500(obs, b, masks, prm, hand, table, n_table, keep, vals, rng, cands, scores,
                       nxt, pcount)  # fmt: skip


@kernel
def scratch500(prm):
    """The buffers :func:`greedy500_row` reuses from row to row."""
    e = NUM_TYPES
    return (
        np.empty(e, np.int64), np.empty(e, np.int64), np.zeros((prm[K_M], 6), np.int64),
        np.empty(prm[K_D], np.int64), np.empty((MAX_STEPS, 3), np.int64),
        np.empty(e, np.int64), np.empty(prm[K_D], np.int64), np.empty(prm[K_D], np.int64),
        np.empty(e, np.int64), np.empty(e, np.int64), np.empty(e, np.int64),
        np.empty(e, np.int64), np.empty(e, np.int64), plan_work(WORK_CARDS, prm[K_M]),
    )  # fmt: skip


@kernel(inline="always")
def greedy500_scratch(obs, masks, b, prm, vals, rng, scratch, trusted=False):
    """:func:`greedy500_row` with the buffers of :func:`scratch500`; ``trusted``: rows
    the engine wrote (the opponent loop's), not checked by :func:`row_ok`.
    """
    hand, hand2, table, pile, steps, left, nets, depths, cands, scores, nxt, pcount, keep, work = (
        scratch
    )
    return greedy500_row(obs, masks, b, prm, vals, rng, hand, hand2, table, pile, steps, left,
                         nets, depths, cands, scores, nxt, pcount, keep, work,
                         trusted)  # fmt: skip


@kernel
def greedy500_rows(obs, masks, prm, vals, rng, out, start):
    """Actions of rows ``start``.. of ``obs`` (B, O) float32 and ``masks`` (B, A) int8 into
    ``out``, in order; returns the first row left to the reference (:data:`SKIP`) or without a
    legal action, else B. ``vals``: card values (``planner_kernels.card_values``).
    """
    nb = obs.shape[0]
    scratch = scratch500(prm)
    for b in range(start, nb):
        a = greedy500_scratch(obs, masks, b, prm, vals, rng, scratch)
        if a < 0:
            out[b] = a
            return b
        out[b] = a
    return nb


# -- Rummy 51 --------------------------------------------------------------------------------------

(
    R_P, R_M, R_MELD, R_LAYOFF, R_JOKER, R_RETRIEVE, R_DISCARD, R_NA, R_OBS,
    R_HAND, R_PILE, R_KNOWN, R_KIND, R_CARDS, R_MJOK, R_ENDS, R_HSIZE, R_OPENED, R_ELIM,
    R_PHASE, R_OPTS, R_OBLIG, R_TAKEN, R_OWED,
    R_THRESH, R_DD_OPEN, R_NODES, R_TAKE_ANY, R_NEAR_ORDER, R_JOKER_OUT, R_HOLD, R_HOLD_OPEN,
    R_SIZE,
) = range(33)  # fmt: skip

R_DRAW_STOCK = 0
R_TAKE_DISCARD = 1
PENALTY51 = np.array(R51.PENALTY, np.int64)
"""Penalty of each card type left in hand (``rummy51_greedy.PENALTY``)."""


def _near_tables() -> tuple[np.ndarray, np.ndarray]:
    width = max(len(n) for n in R51.NEAR)
    near = np.full((52, width), -1, np.int64)
    weight = np.zeros((52, width), np.int64)
    for c, cards in enumerate(R51.NEAR):
        for i, x in enumerate(cards):
            near[c, i] = x
            # links(): 1 for the same suit two ranks away, else 2
            weight[c, i] = 1 if x // 13 == c // 13 and R51.rank_gap(c % 13, x % 13) == 2 else 2
    return near, weight


NEAR51, LINK51 = _near_tables()
"""``rummy51_greedy.NEAR`` as rows padded with -1, and each near card's weight in ``links``."""


def params51(
    lay: E51.Layout,
    opening_threshold: int,
    discard_draw_requires_opening: bool,
    node_limit: int,
    take_gain: str,
    near_order: bool,
    joker_layoff: str,
    hold_melds: int | None,
    hold_open: int | None,
) -> np.ndarray:
    """The int64 vector :func:`greedy51_rows` reads: the layout's sizes, action ranges and
    piece offsets, the rule options the agent reads and the agent's options (``None`` counts
    are -1).
    """
    p = np.zeros(R_SIZE, np.int64)
    p[R_P] = lay.num_players
    p[R_M] = lay.max_melds
    p[R_MELD] = lay.meld_base
    p[R_LAYOFF] = lay.layoff_base
    p[R_JOKER] = lay.joker_base
    p[R_RETRIEVE] = lay.retrieve_base
    p[R_DISCARD] = lay.discard_base
    p[R_NA] = lay.num_actions
    p[R_OBS] = lay.obs_size
    for k, name in (
        (R_HAND, "hand"), (R_PILE, "pile_sequence"), (R_KNOWN, "known"), (R_KIND, "meld_kind"),
        (R_CARDS, "meld_cards"), (R_MJOK, "meld_jokers"), (R_ENDS, "meld_ends"),
        (R_HSIZE, "hand_sizes"), (R_OPENED, "opened"), (R_ELIM, "eliminated"),
        (R_PHASE, "phase"), (R_OPTS, "opening_points"), (R_OBLIG, "obligation"),
        (R_TAKEN, "taken_single"), (R_OWED, "owed_jokers"),
    ):  # fmt: skip
        p[k] = lay.offset(name)
    p[R_THRESH] = int(opening_threshold)
    p[R_DD_OPEN] = bool(discard_draw_requires_opening)
    p[R_NODES] = int(node_limit)
    p[R_TAKE_ANY] = take_gain == "any"
    p[R_NEAR_ORDER] = bool(near_order)
    p[R_JOKER_OUT] = joker_layoff == "out"
    p[R_HOLD] = -1 if hold_melds is None else int(hold_melds)
    p[R_HOLD_OPEN] = -1 if hold_open is None else int(hold_open)
    return p


@kernel(counted=False)
def retrieve_card(table, m, k):
    """Natural that takes a joker's place in table row ``m`` at run position / group suit
    ``k`` (-1: none), as ``rummy51_greedy.retrieve_card``.
    """
    key = table[m, 1]
    nat = table[m, 4]
    jok = table[m, 5]
    if table[m, 0] == 1:
        n = 0
        x = nat
        while x:
            x &= x - 1
            n += 1
        if k >= 4 or jok < 1 or (nat >> k) & 1 or n + jok != 3:
            return -1
        return k * 13 + key
    if not (jok >> k) & 1:
        return -1
    return key * 13 + (0 if k == 13 else k)


@kernel(counted=False)
def can_retrieve(table, n_table, c):
    """Can natural ``c`` take a joker's place in some table meld (``rummy51_greedy``)?"""
    if c >= 52:
        return False
    s = c // 13
    r = c % 13
    for m in range(n_table):
        if table[m, 5] == 0:
            continue
        if table[m, 0] == 1:
            if retrieve_card(table, m, s) == c:
                return True
        elif r == 0:
            if retrieve_card(table, m, 0) == c or retrieve_card(table, m, 13) == c:
                return True
        elif retrieve_card(table, m, r) == c:
            return True
    return False


I_LAID, I_OPTS, I_OWED, I_OPENED, I_DRAW, I_TOP, I_TAKEN, I_OBLIG, I_ALIVE = range(9)
"""What a Rummy 51 decision reads of its position besides the hand, the table and the next
player's known cards, in :func:`scratch51`'s ``inp`` (then per seat-relative player ``i``: in
the hand at ``I_ALIVE + i``, hand size at ``I_ALIVE + players + i``): opening points laid this
turn (``_plan``'s, 0 once opened), opening points laid > 0, jokers owed, opened, the draw
phase, the top discard (-1: none, -2: not a card), the card taken, the card owed."""
TOP_NONE = -1
TOP_BAD = -2


@kernel(counted=False)
def _read_obs51(obs, b, prm, hand, table, inp, nxt):
    """Row ``b``'s position, as ``Rummy51GreedyAgent`` reads its observation: the hand, the
    table (returns its melds, -1 where reading the hand or the table fails), ``inp`` and
    ``nxt``.
    """
    if not read_hand(obs, b, prm[R_HAND], hand):
        return -1
    n_table = read_table(obs, b, prm[R_KIND], prm[R_CARDS], prm[R_MJOK], prm[R_ENDS], prm[R_M],
                         table)  # fmt: skip
    if n_table < 0:
        return -1
    opened = obs[b, prm[R_OPENED]] > np.float32(0.5)
    inp[I_OPENED] = opened
    thr = max(prm[R_THRESH], 1)
    inp[I_LAID] = 0 if opened else np.int64(np.rint(np.float64(obs[b, prm[R_OPTS]]) *
                                                    np.float64(thr)))  # fmt: skip
    inp[I_OPTS] = obs[b, prm[R_OPTS]] > 0
    inp[I_OWED] = obs[b, prm[R_OWED]] > 0
    inp[I_DRAW] = arg_max(obs, b, prm[R_PHASE], E51.NUM_PHASES) == E51.PH_DRAW
    top = obs[b, prm[R_PILE]]
    if top <= 0:
        inp[I_TOP] = TOP_NONE
    else:
        d = np.int64(np.rint(np.float64(top) * 53.0)) - 1
        inp[I_TOP] = d if 0 <= d < NUM_TYPES else TOP_BAD
    inp[I_TAKEN] = one_hot(obs, b, prm[R_TAKEN], NUM_TYPES)
    inp[I_OBLIG] = one_hot(obs, b, prm[R_OBLIG], NUM_TYPES)
    p_n = prm[R_P]
    for i in range(p_n):
        inp[I_ALIVE + i] = obs[b, prm[R_ELIM] + i] < np.float32(0.5)
        inp[I_ALIVE + p_n + i] = np.int64(np.rint(obs[b, prm[R_HSIZE] + i] * np.float32(13.0)))
    for x in range(NUM_TYPES):
        nxt[x] = 0
    for i in range(1, p_n):
        if inp[I_ALIVE + i]:
            off = prm[R_KNOWN] + (i - 1) * NUM_TYPES
            for x in range(NUM_TYPES):
                nxt[x] = _count(obs[b, off + x])
            break
    return n_table


@kernel(counted=False)
def _read_rec51(rec, cfg, prm, hand, table, inp, nxt):
    """:func:`_read_obs51` of the observation ``write_obs`` would write for the player to act
    in game record ``rec`` (rule vector ``cfg``), read from the record: the same values, the
    same float32 roundings, with no observation written.
    """
    p = rec.cur
    p_n = prm[R_P]
    for x in range(NUM_TYPES):
        hand[x] = rec.hands[p, x]
    for m in range(table.shape[0]):
        for f in range(6):
            table[m, f] = 0
    for m in range(rec.n_melds):
        nat = np.int64(rec.m_nat[m])
        if nat == 0:
            return -1  # (read_table: a meld without a natural card)
        if rec.m_kind[m] == 1:
            table[m, 0] = 1
            table[m, 1] = rec.m_key[m]
            table[m, 4] = nat
            table[m, 5] = rec.m_jok[m]
        else:
            lo = np.int64(rec.m_lo[m])
            hi = np.int64(rec.m_hi[m])
            jok = np.int64(rec.m_jok[m]) & ((1 << 14) - 1)
            table[m, 0] = 2
            table[m, 1] = rec.m_key[m]
            table[m, 2] = lo
            table[m, 3] = hi
            table[m, 4] = _run_naturals(lo, hi, jok)
            table[m, 5] = jok
    opened = rec.opened[p] != 0
    inp[I_OPENED] = opened
    thr = max(prm[R_THRESH], 1)
    opts = np.float32(rec.open_pts / max(cfg[R51_C_THRESH], 1))
    inp[I_LAID] = 0 if opened else np.int64(np.rint(np.float64(opts) * np.float64(thr)))
    inp[I_OPTS] = rec.open_pts > 0
    inp[I_OWED] = rec.owed > 0
    inp[I_DRAW] = rec.phase == E51.PH_DRAW
    inp[I_TOP] = rec.pile[rec.pile_n - 1] if rec.pile_n > 0 else TOP_NONE
    inp[I_TAKEN] = rec.taken_single if rec.taken_single >= 0 else -1
    inp[I_OBLIG] = rec.oblig if rec.oblig >= 0 else -1
    for i in range(p_n):
        q = (p + i) % p_n
        inp[I_ALIVE + i] = rec.out[q] == 0
        t = np.float32(hand_total(rec, q) / 13.0)  # (write_obs's hand size, as it rounds it)
        inp[I_ALIVE + p_n + i] = np.int64(np.rint(t * np.float32(13.0)))
    for x in range(NUM_TYPES):
        nxt[x] = 0
    for i in range(1, p_n):
        if inp[I_ALIVE + i]:
            q = (p + i) % p_n
            for x in range(NUM_TYPES):
                nxt[x] = rec.known[q, x]
            break
    return rec.n_melds


@kernel(counted=False)
def _plan51(inp, prm, opened, hand, table, taken, oblig, steps, left, pbuf):
    """``Rummy51GreedyAgent._plan``: (found, penalty removed, steps); ``pbuf``: the planner's
    memo and search buffers (:func:`~rummy_agents.planner_kernels.plan51_memo`,
    :func:`~rummy_agents.planner_kernels.plan_work`).
    """
    laid = inp[I_LAID]
    return plan_best51_memo(pbuf[0], hand, table, opened, prm[R_THRESH] - laid,
                            laid > 0 or oblig >= 0, oblig, taken, True, prm[R_NODES], steps,
                            left, pbuf[1])  # fmt: skip


@kernel(counted=False)
def _free51(hand, taken, empty, prm, steps, left, pbuf):
    """``Rummy51GreedyAgent._free``: the free arrangement (new melds only, no threshold)."""
    return plan_best51_memo(pbuf[0], hand, empty, False, 0, False, -1, taken, False,
                            prm[R_NODES], steps, left, pbuf[1])  # fmt: skip


@kernel(counted=False)
def _plan51_pair(inp, prm, opened, hand, table, taken, oblig, steps, left, pbuf, empty):
    """:func:`_plan51` and :func:`_free51` of one hand (the same ``taken``) in one search."""
    laid = inp[I_LAID]
    return plan_best51_pair_memo(pbuf[0], hand, table, opened, prm[R_THRESH] - laid,
                                 laid > 0 or oblig >= 0, oblig, taken, prm[R_NODES], steps,
                                 left, pbuf[2], pbuf[3], pbuf[1], empty)  # fmt: skip


@kernel(counted=False)
def _idle51(hand2, d, table, n_table, prm, pbuf):
    """Is the top discard ``d`` certainly not worth taking, with no plan searched? So when it
    is a natural no meld holds with the cards of ``hand2`` (the hand with it:
    ``no_meld_holds``), no table meld is of its rank (a group) or suit (a run), and the search
    of ``hand2`` stays within the node limit (``nodes_within``). Then ``d`` is in no meld,
    lay-off or template on any path, so the search of ``hand2`` is the hand's own with ``d``
    left over at one more node per path (leaving it does not bar a run: none spans its
    position), every leaf removes what the hand's removes and keeps a card to discard when
    the hand's does (``d``, taken, only with a copy of its own), and neither search is cut
    short (the hand's tree is smaller). The two plans and the two free arrangements are the
    same, so ``_wants`` answers no (a gain of 0 is short of ``need`` >= 1).
    """
    if d >= JOKER or not no_meld_holds(d, hand2):
        return False
    r = d % 13
    s = d // 13
    for k in range(n_table):
        if table[k, 1] == (r if table[k, 0] == 1 else s):
            return False
    return nodes_within(hand2, prm[R_NODES], pbuf[1])


@kernel(counted=False)
def _free_leaves_it(d, hand, hand2, g1, prm, pbuf):
    """Is a not-opened player's answer to taking ``d`` no, whatever the search of its hand
    without ``d`` would find, once the search of ``hand2`` (the hand with ``d``) found no
    opening? Then ``_wants`` answers from the free arrangements: no unless both were found
    (``g1``) and the one with ``d`` removes at least ``d``'s penalty (>= 1) more. So it is no
    when ``g1`` is False; and when the arrangement found for ``hand2`` (``pbuf[3]``: the cards
    it leaves) melds no copy of ``d`` and leaves a card besides one ``d``: its melds are then
    an arrangement of the hand itself that keeps a card to discard, so the hand's best removes
    at least as much, provided its search is not cut short by the node limit
    (``nodes_within``; the search of ``hand2`` may have been: its arrangement is still one).
    """
    if not g1:
        return True
    free_left = pbuf[3]
    if free_left[d] != hand2[d]:
        return False
    n = 0
    for x in range(NUM_TYPES):
        n += free_left[x]
    return n >= 2 and nodes_within(hand, prm[R_NODES], pbuf[1])


@kernel(counted=False)
def _wants51(inp, prm, opened, hand, hand2, table, n_table, d, empty, steps, left, pbuf):
    """Is the top discard ``d`` worth taking (``_wants``)?"""
    for x in range(NUM_TYPES):
        hand2[x] = hand[x]
    hand2[d] += 1
    if opened and can_retrieve(table, n_table, d):
        return True
    if _idle51(hand2, d, table, n_table, prm, pbuf):
        return False
    oblig = d if prm[R_DD_OPEN] != 0 and not opened else -1
    if opened:
        f0, v0, n0 = _plan51(inp, prm, opened, hand, table, -1, -1, steps, left, pbuf)
        f1, v1, n1 = _plan51(inp, prm, opened, hand2, table, d, oblig, steps, left, pbuf)
        g0 = g1 = False  # (asked for below if wanted)
        w0 = w1 = 0
    else:
        # an opening is seldom in reach, so the free arrangements are mostly asked for too:
        # each hand's plan and free arrangement come from one search (the same answers); the
        # hand with the discard first, whose answers may make the other search needless
        f1, v1, n1, g1, w1, _ = _plan51_pair(inp, prm, opened, hand2, table, d, oblig, steps,
                                             left, pbuf, empty)  # fmt: skip
        if not (f1 and n1 > 0) and _free_leaves_it(d, hand, hand2, g1, prm, pbuf):
            return False
        f0, v0, n0, g0, w0, _ = _plan51_pair(inp, prm, opened, hand, table, -1, -1, steps,
                                             left, pbuf, empty)  # fmt: skip
    ok0 = f0 and (opened or n0 > 0)
    ok1 = f1 and (opened or n1 > 0)
    need = PENALTY51[d] if prm[R_TAKE_ANY] == 0 else 1
    if ok1:
        return (not ok0) or v1 - v0 >= need
    if ok0:
        return False
    if opened:
        g0, w0, _ = _free51(hand, -1, empty, prm, steps, left, pbuf)
        g1, w1, _ = _free51(hand2, d, empty, prm, steps, left, pbuf)
    return g0 and g1 and w1 - w0 >= need


@kernel(counted=False)
def _holding51(inp, prm, opened, oblig):
    """``_holding``: do the options keep this turn's new melds in hand?"""
    k = prm[R_HOLD] if opened else prm[R_HOLD_OPEN]
    if k < 0:
        return False
    if not opened and (oblig >= 0 or inp[I_OPTS]):
        return False
    p_n = prm[R_P]
    for i in range(1, p_n):
        if inp[I_ALIVE + i] and not inp[I_ALIVE + p_n + i] > k:
            return False
    return True


@kernel(counted=False)
def _placement_gain51(a, hand, prm):
    """Penalty a legal meld or lay-off action removes from the hand (``_placement_gain``)."""
    if a < prm[R_LAYOFF]:
        t = a - prm[R_MELD]
        if TPL_KIND[t] == 1:
            r = np.int64(TPL_A[t])
            suits = np.int64(TPL_B[t])
            g = 0
            for q in range(4):
                if suits >> q & 1:
                    g += PENALTY51[q * 13 + r]
            return g + 25 * np.int64(TPL_C[t])
        s = np.int64(TPL_A[t])
        g = 0
        for pos in range(np.int64(TPL_B[t]), np.int64(TPL_C[t]) + 1):
            x = s * 13 + (0 if pos == 13 else pos)
            g += PENALTY51[x] if hand[x] > 0 else 25
        return g
    if a < prm[R_JOKER]:
        return PENALTY51[(a - prm[R_LAYOFF]) // prm[R_M]]
    return 25


@kernel(counted=False)
def _tier51(c, hand, prot, nxt, table, n_table):
    """``_tier``: 0 safe and loose .. 4 a joker."""
    if c == JOKER:
        return 4
    if prot[c] > 0 and hand[c] - prot[c] < 1:
        return 3
    for k in range(n_table):
        if fit_natural(table, k, c) >= 0:
            return 2
    if can_retrieve(table, n_table, c):
        return 2
    for i in range(NEAR51.shape[1]):
        x = NEAR51[c, i]
        if x < 0:
            break
        if nxt[x]:
            return 2
    for i in range(NEAR51.shape[1]):
        x = NEAR51[c, i]
        if x < 0:
            break
        if hand[x]:
            return 1
    return 0


@kernel(counted=False)
def _discard_keys51(prm, hand, table, n_table, prot, nxt, cands, keys, n):
    """The keys (tier, links, -penalty) of the discard candidates ``cands[:n]`` into ``keys``
    (``prot``: the cards the free arrangement melds); returns the row of the lowest (the first
    such), or -1 for a candidate that is not a card (the reference fails reading it).
    """
    near_order = prm[R_NEAR_ORDER] != 0
    best = 0
    for i in range(n):
        c = cands[i]
        if c >= NUM_TYPES:
            return -1
        tier = _tier51(c, hand, prot, nxt, table, n_table)
        tie = 0
        if near_order and tier == 1:  # links(hand, c)
            for j in range(NEAR51.shape[1]):
                x = NEAR51[c, j]
                if x < 0:
                    break
                if hand[x]:
                    tie += LINK51[c, j]
        keys[i, 0] = tier
        keys[i, 1] = tie
        keys[i, 2] = -PENALTY51[c]
        if i > 0:
            better = keys[i, 0] < keys[best, 0] or (
                keys[i, 0] == keys[best, 0]
                and (
                    keys[i, 1] < keys[best, 1]
                    or (keys[i, 1] == keys[best, 1] and keys[i, 2] < keys[best, 2])
                )
            )
            if better:
                best = i
    return best


@kernel(inline="always")
def _same_key51(keys, i, j):
    """Do discard candidates ``i`` and ``j`` have the same key (``_discard_keys51``)?"""
    return keys[i, 0] == keys[j, 0] and keys[i, 1] == keys[j, 1] and keys[i, 2] == keys[j, 2]


@kernel(counted=False)
def _discard51(masks, b, prm, hand, table, n_table, taken, empty, rng, steps, left, prot,
               nxt, cands, keys, pbuf):  # fmt: skip
    """``_discard``: the lowest (tier, links, -penalty), ties drawn from ``rng``.

    The free arrangement (a plan search) only decides which cards are tier 3 (melded by it),
    and a card's key with it is never below its key without it. So the keys are first taken
    with no card melded: where every candidate with the lowest of them is a joker (tier 4
    either way) or a card no meld of the hand holds (``no_meld_holds``: no arrangement melds
    it), and the hand keeps a card to discard (the search's leaf that lays nothing then counts,
    so an arrangement is found and not every card is melded), the lowest keys and the cards
    that have them are the reference's, without the search.
    """
    base = prm[R_DISCARD]
    n = legal_offsets(masks, b, base, masks.shape[1], cands)
    if n == 0:
        return first_legal(masks, b)
    for x in range(NUM_TYPES):
        prot[x] = 0
    best = _discard_keys51(prm, hand, table, n_table, prot, nxt, cands, keys, n)
    if best < 0:
        return SKIP  # (not a card: the reference decides, it fails reading it)
    certain = discardable(hand, hand, taken)
    for i in range(n):
        if not certain:
            break
        if _same_key51(keys, i, best):
            c = cands[i]
            certain = c == JOKER or no_meld_holds(c, hand)
    if not certain:
        found, _, _ = _free51(hand, taken, empty, prm, steps, left, pbuf)
        for x in range(NUM_TYPES):
            prot[x] = hand[x] - left[x] if found else hand[x]
        best = _discard_keys51(prm, hand, table, n_table, prot, nxt, cands, keys, n)
    ties = 0
    for i in range(n):
        if _same_key51(keys, i, best):  # (the keys stay in their rows)
            cands[ties] = cands[i]
            ties += 1
    pick = pick_tie(cands, ties, rng)
    return base + pick


@kernel(counted=False)
def _best_retrieval51(inp, masks, b, prm, opened, hand, hand2, table, table2, n_table, taken,
                      steps, left, pbuf):  # fmt: skip
    """``_best_retrieval``: the legal retrieval after which the plan removes the most;
    :data:`SKIP` where the hand lacks the natural (the reference's planner refuses it).
    """
    best = -1
    best_v = -1
    m_slots = prm[R_M]
    for a in range(prm[R_RETRIEVE], prm[R_DISCARD]):
        if masks[b, a] != 1:
            continue
        if best < 0:
            best = a
        m = (a - prm[R_RETRIEVE]) // 14
        k = (a - prm[R_RETRIEVE]) % 14
        c = retrieve_card(table, m, k) if m < n_table else -1
        if c < 0:
            continue
        for x in range(NUM_TYPES):
            hand2[x] = hand[x]
        hand2[c] -= 1
        hand2[JOKER] += 1
        if hand2[c] < 0:
            return SKIP
        for q in range(m_slots):
            for f in range(6):
                table2[q, f] = table[q, f]
        table2[m, 4] |= 1 << k
        if table[m, 0] == 1:
            table2[m, 5] -= 1
        else:
            table2[m, 5] &= ~(1 << k)
        found, pts, _ = _plan51(inp, prm, opened, hand2, table2, -1 if c == taken else taken,
                                -1, steps, left, pbuf)  # fmt: skip
        v = pts + PENALTY51[c] if found else PENALTY51[c]
        if v > best_v:
            best = a
            best_v = v
    return best


@kernel(inline="always")
def _only_move(masks, b):
    """(first nonzero entry, first legal action, answer) of row ``b``: the answer is
    ``NO_LEGAL`` or the only legal action where that decides the row, else -3.
    """
    na = masks.shape[1]
    nz = _next_nonzero(masks, b, 0, na)  # the row's first nonzero entry: scanned once
    first = next_legal(masks, b, nz, na)
    if first == na:
        return nz, first, NO_LEGAL
    if next_legal(masks, b, first + 1, na) == na:
        return nz, first, first  # the only legal action
    return nz, first, -3


@kernel(counted=False)
def greedy51_row(obs, masks, b, prm, rng, hand, hand2, table, table2, empty, steps, left,
                 prot, nxt, cands, keys, pbuf, inp, trusted):  # fmt: skip
    """The action of row ``b`` (``Rummy51GreedyAgent.act_reference``), :data:`SKIP` for a row
    left to the reference, :data:`NO_LEGAL` for a mask without a legal action.
    ``trusted``: the row was written by the engine (finite and small: :func:`row_ok` is
    skipped).
    """
    nz, first, a = _only_move(masks, b)
    if a != -3:
        return a
    if not trusted and not row_ok(obs, b):
        return SKIP
    n_table = _read_obs51(obs, b, prm, hand, table, inp, nxt)
    return _decide51(masks, b, prm, rng, hand, hand2, table, table2, empty, steps, left, prot,
                     nxt, cands, keys, pbuf, inp, n_table, nz, first)  # fmt: skip


@kernel(inline="always")
def greedy51_rec(rec, cfg, masks, b, prm, rng, scratch):
    """:func:`greedy51_scratch` for the player to act in game record ``rec`` (rule vector
    ``cfg``; its legal mask is row ``b`` of ``masks``), read from the record instead of an
    observation: the same action and draws as from the observation ``write_obs`` writes for
    that player (``tests/test_joker_greedy_compiled.py`` compares the two), without writing
    it. Inlined into its caller: a call passes ``scratch``'s 13 arrays field by field (about
    200 words pushed), which cost the opponent loop's call site 5% of a Rummy 51 step.
    """
    hand, hand2, table, table2, empty, steps, left, prot, nxt, cands, keys, pbuf, inp = scratch
    nz, first, a = _only_move(masks, b)
    if a != -3:
        return a
    n_table = _read_rec51(rec, cfg, prm, hand, table, inp, nxt)
    return _decide51(masks, b, prm, rng, hand, hand2, table, table2, empty, steps, left, prot,
                     nxt, cands, keys, pbuf, inp, n_table, nz, first)  # fmt: skip


@kernel(counted=False)
def _decide51(masks, b, prm, rng, hand, hand2, table, table2, empty, steps, left, prot, nxt,
              cands, keys, pbuf, inp, n_table, nz, first):  # fmt: skip
    """:func:`greedy51_row` past its mask's first look, on the position read (``n_table``:
    what :func:`_read_obs51` returned).
    """
    if n_table < 0:
        return SKIP
    total = 0
    for x in range(NUM_TYPES):
        total += hand[x]
    if total + 1 > MAX_STEPS:
        return SKIP
    opened = inp[I_OPENED] != 0
    if inp[I_DRAW]:
        top = inp[I_TOP]
        if not truthy(masks, b, R_TAKE_DISCARD) or top == TOP_NONE:
            return R_DRAW_STOCK
        if not truthy(masks, b, R_DRAW_STOCK):
            return R_TAKE_DISCARD
        if top == TOP_BAD:
            return SKIP
        wants = _wants51(inp, prm, opened, hand, hand2, table, n_table, top, empty, steps, left,
                         pbuf)  # fmt: skip
        return R_TAKE_DISCARD if wants else R_DRAW_STOCK
    taken = inp[I_TAKEN]
    hi = min(prm[R_DISCARD], masks.shape[1])
    if next_legal(masks, b, max(prm[R_RETRIEVE], first), hi) < hi:
        return _best_retrieval51(inp, masks, b, prm, opened, hand, hand2, table, table2,
                                 n_table, taken, steps, left, pbuf)  # fmt: skip
    if all_zero(masks, b, max(prm[R_MELD], nz), hi):  # (nothing nonzero before nz)
        # no meld, lay-off or joker placement is allowed: no step of the plan could be played,
        # so the reference ends at the discard whatever the plan (skipping it saves a search)
        return _discard51(masks, b, prm, hand, table, n_table, taken, empty, rng, steps, left,
                          prot, nxt, cands, keys, pbuf)  # fmt: skip
    oblig = inp[I_OBLIG]
    found, _, ns = _plan51(inp, prm, opened, hand, table, taken, oblig, steps, left, pbuf)
    out = False
    if found:
        n_left = 0
        for x in range(NUM_TYPES):
            n_left += left[x]
        out = n_left <= 1
    free = out or inp[I_OWED] != 0
    keep_joker = prm[R_JOKER_OUT] != 0 and not free
    keep_melds = not free and _holding51(inp, prm, opened, oblig)
    meld_base = prm[R_MELD]
    layoff_base = prm[R_LAYOFF]
    joker_base = prm[R_JOKER]
    if found:
        for q in range(ns):
            kind = steps[q, 0]
            if (kind == STEP_JOKER and keep_joker) or (kind == STEP_MELD and keep_melds):
                continue
            a = step_action(steps, q, meld_base, layoff_base, joker_base, prm[R_M])
            if allowed(masks, b, a):
                return a
    lo = layoff_base if keep_melds else meld_base
    hi = joker_base if keep_joker else prm[R_RETRIEVE]
    best_a = -1
    best_g = 0
    hi = min(hi, masks.shape[1])
    a = next_legal(masks, b, lo, hi)
    while a < hi:
        g = _placement_gain51(a, hand, prm)
        if best_a < 0 or g > best_g:
            best_a = a
            best_g = g
        a = next_legal(masks, b, a + 1, hi)
    if best_a >= 0:
        return best_a
    return _discard51(masks, b, prm, hand, table, n_table, taken, empty, rng, steps, left, prot,
                      nxt, cands, keys, pbuf)  # fmt: skip


@kernel
def scratch51(prm, na):
    """The buffers :func:`greedy51_row` reuses from row to row (``na``: the mask's width)."""
    e = NUM_TYPES
    return (
        np.empty(e, np.int64), np.empty(e, np.int64), np.zeros((prm[R_M], 6), np.int64),
        np.zeros((prm[R_M], 6), np.int64), np.zeros((1, 6), np.int64),
        np.empty((MAX_STEPS, 3), np.int64), np.empty(e, np.int64), np.empty(e, np.int64),
        np.empty(e, np.int64), np.empty(na, np.int64), np.empty((na, 3), np.int64),
        (plan51_memo(prm[R_M], MEMO51_CARDS), plan_work(WORK_CARDS, prm[R_M]),
         np.empty((MAX_STEPS, 3), np.int64), np.empty(e, np.int64)),
        np.zeros(I_ALIVE + 2 * prm[R_P], np.int64),
    )  # fmt: skip


@kernel(inline="always")
def greedy51_scratch(obs, masks, b, prm, rng, scratch, trusted=False):
    """:func:`greedy51_row` with the buffers of :func:`scratch51`; ``trusted``: rows the
    engine wrote (the opponent loop's), not checked by :func:`row_ok`.
    """
    hand, hand2, table, table2, empty, steps, left, prot, nxt, cands, keys, pbuf, inp = scratch
    return greedy51_row(obs, masks, b, prm, rng, hand, hand2, table, table2, empty, steps, left,
                        prot, nxt, cands, keys, pbuf, inp, trusted)  # fmt: skip


@kernel
def greedy51_rows(obs, masks, prm, rng, out, start):
    """Actions of rows ``start``.. of ``obs`` (B, O) float32 and ``masks`` (B, A) int8 into
    ``out``, in order; returns the first row left to the reference (:data:`SKIP`) or without a
    legal action, else B.
    """
    nb = obs.shape[0]
    scratch = scratch51(prm, masks.shape[1])
    for b in range(start, nb):
        a = greedy51_scratch(obs, masks, b, prm, rng, scratch)
        out[b] = a
        if a < 0:
            return b
    return nb


__all__: list[str] = [
    "NO_LEGAL",
    "ConfigView",
    "as_mask8",
    "check_batch",
    "decide_one",
    "SKIP",
    "greedy500_rows",
    "greedy500_scratch",
    "greedy51_rec",
    "greedy51_rows",
    "greedy51_scratch",
    "params500",
    "params51",
    "row_ok",
    "scratch500",
    "scratch51",
]
