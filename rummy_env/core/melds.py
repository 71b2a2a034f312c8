"""Meld tables and the exact Gin Rummy deadwood solver.

Hands are 52-bit masks (``uint64``, bit ``suit * 13 + rank``). The solver is exact, never
heuristic: an arrangement is a set of groups plus a set of runs, runs live inside one suit, so for
every choice of groups (each rank holding 3+ cards: no group, one of its 3-card groups, or the
4-card group) the best runs are looked up per suit in a 2**13 table (``SUIT_DEADWOOD``), built once
and cached. A 10/11-card hand has at most three ranks with 3+ cards, so at most 6**3 group choices
(usually one or two) are tried. ``tests/test_deadwood.py`` compares it with a brute-force oracle.

Gin values: ace 1, 2-10 face value, J/Q/K 10; ace low only (A-2-3 is a run, Q-K-A is not).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from rummy_env.core.cards import NUM_RANKS
from rummy_env.core.jit import kernel

INF_DEADWOOD = 10_000

GIN_VALUES = np.array([min(r + 1, 10) for r in range(NUM_RANKS)] * 4, dtype=np.int16)
"""(52,) int16 Gin value of each natural card."""


def _build_suit_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per-suit tables over 13-bit rank masks: total value and deadwood when only runs meld."""
    vals = [min(r + 1, 10) for r in range(NUM_RANKS)]
    n = 1 << NUM_RANKS
    total = np.zeros(n, dtype=np.int16)
    best_melded = np.zeros(n, dtype=np.int16)
    for m in range(1, n):
        low = (m & -m).bit_length() - 1
        total[m] = total[m & (m - 1)] + vals[low]
        # The lowest card is either deadwood or the low end of a run low..low+k-1.
        b = best_melded[m & ~(1 << low)]
        run_val = 0
        run_bits = 0
        r = low
        while r < NUM_RANKS and m >> r & 1:
            run_val += vals[r]
            run_bits |= 1 << r
            if r - low >= 2:
                b = max(b, best_melded[m & ~run_bits] + run_val)
            r += 1
        best_melded[m] = b
    return total, (total - best_melded).astype(np.int16)


SUIT_TOTAL, SUIT_DEADWOOD = _build_suit_tables()
"""(8192,) int16 tables: total value / run-only deadwood of a 13-bit single-suit rank mask."""


def _build_group_options() -> tuple[np.ndarray, np.ndarray]:
    """For each 4-bit suit set, the group choices: none, each 3-suit subset, all four."""
    opts = np.zeros((16, 6), dtype=np.int64)
    nopt = np.ones(16, dtype=np.int64)
    for sm in range(16):
        k = 1
        if bin(sm).count("1") >= 3:
            for sub in range(16):
                if sub & sm == sub and bin(sub).count("1") >= 3:
                    opts[sm, k] = sub
                    k += 1
        nopt[sm] = k
    return opts, nopt


GROUP_OPTS, GROUP_NOPT = _build_group_options()
SPREAD = np.array(
    [sum(1 << (13 * s) for s in range(4) if sm >> s & 1) for sm in range(16)], dtype=np.uint64
)
"""(16,) uint64: the rank-0 cards of a 4-bit suit set; shift left by rank to place them."""


def _build_gin_meld_templates() -> tuple[np.ndarray, np.ndarray]:
    """All Gin melds as masks: 65 groups (per rank: 4 three-card groups, then the four-card group)
    followed by runs ordered by suit, length 3..10, low rank. Returns (masks, kinds 0=group 1=run).
    """
    masks: list[int] = []
    kinds: list[int] = []
    for r in range(NUM_RANKS):
        for missing in range(4):
            masks.append(sum(1 << (13 * s + r) for s in range(4) if s != missing))
            kinds.append(0)
        masks.append(sum(1 << (13 * s + r) for s in range(4)))
        kinds.append(0)
    for s in range(4):
        for length in range(3, 11):
            for low in range(0, NUM_RANKS - length + 1):
                masks.append(sum(1 << (13 * s + r) for r in range(low, low + length)))
                kinds.append(1)
    return np.array(masks, dtype=np.uint64), np.array(kinds, dtype=np.int8)


GIN_MELD_MASKS, GIN_MELD_KINDS = _build_gin_meld_templates()
"""(305,) uint64 masks and int8 kinds (0 group, 1 run) of the Gin meld templates."""
NUM_GIN_MELDS = GIN_MELD_MASKS.shape[0]

_U1 = np.uint64(1)
_SUIT_BITS = np.uint64(0x1FFF)


@kernel(inline="always")
def popcount(x) -> int:
    """Number of set bits of a uint64."""
    c = 0
    while x:
        x &= x - _U1
        c += 1
    return c


@kernel(inline="always")
def hand_value(mask, values) -> int:
    """Sum of card values of a mask."""
    t = 0
    m = mask
    while m:
        low = m & (~m + _U1)
        c = popcount(low - _U1)
        t += values[c]
        m ^= low
    return t


@kernel(counted=False)
def min_deadwood(mask, suit_dw, group_opts, group_nopt, spread) -> int:
    """Exact minimum deadwood of a hand mask (any size up to 11 cards, Gin values)."""
    # the (at most 4) group ranks, their suit sets and the current choice of each, packed a
    # byte apiece into three integers: as arrays (allocated and reference-counted per call)
    # they made 57% of the atomic reference counts in the Gin vector id's loop
    ranks = 0
    sets = 0
    ng = 0
    # only a rank held in 3 or 4 suits has group options (group_nopt > 1 exactly there): find
    # them with the four suits' 13-bit rank masks at once, then visit those ranks in order
    s0 = mask & _SUIT_BITS
    s1 = (mask >> np.uint64(13)) & _SUIT_BITS
    s2 = (mask >> np.uint64(26)) & _SUIT_BITS
    s3 = (mask >> np.uint64(39)) & _SUIT_BITS
    three = (s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1))
    while three:
        low = three & (~three + _U1)
        three ^= low
        r = popcount(low - _U1)
        sm = 0
        for s in range(4):
            if mask >> np.uint64(13 * s + r) & _U1:
                sm |= 1 << s
        if group_nopt[sm] > 1:
            if ng == 4:  # more than 4 group ranks needs 15+ cards; never with Gin hands
                break
            ranks |= r << (8 * ng)
            sets |= sm << (8 * ng)
            ng += 1
    best = INF_DEADWOOD
    idx = 0
    while True:
        m = mask
        for k in range(ng):
            sub = group_opts[(sets >> (8 * k)) & 0xFF, (idx >> (8 * k)) & 0xFF]
            m &= ~(spread[sub] << np.uint64((ranks >> (8 * k)) & 0xFF))
        dw = 0
        for s in range(4):
            dw += suit_dw[(m >> np.uint64(13 * s)) & _SUIT_BITS]
        if dw < best:
            best = dw
        # mixed-radix increment over the group choices
        k = 0
        while k < ng:
            sh = 8 * k
            i_k = ((idx >> sh) & 0xFF) + 1
            idx &= ~(0xFF << sh)
            if i_k < group_nopt[(sets >> sh) & 0xFF]:
                idx |= i_k << sh
                break
            k += 1
        if k == ng:
            break
    return best


@kernel(counted=False)
def min_deadwood_per_discard(mask, out, suit_dw, group_opts, group_nopt, spread) -> int:
    """``out[c]`` = minimum deadwood after discarding ``c`` for every card in the hand
    (``INF_DEADWOOD`` elsewhere); returns the minimum over all discards.
    """
    best = INF_DEADWOOD
    for c in range(52):
        if mask >> np.uint64(c) & _U1:
            d = min_deadwood(mask & ~(_U1 << np.uint64(c)), suit_dw, group_opts, group_nopt, spread)
            out[c] = d
            if d < best:
                best = d
        else:
            out[c] = INF_DEADWOOD
    return best


@kernel
def _deadwood_one(hands, i, out, suit_dw, group_opts, group_nopt, spread, after_discard):
    m = np.uint64(0)
    for c in range(52):
        if hands[i, c]:
            m |= _U1 << np.uint64(c)
    if after_discard:
        per = np.empty(52, np.int64)
        out[i] = min_deadwood_per_discard(m, per, suit_dw, group_opts, group_nopt, spread)
    else:
        out[i] = min_deadwood(m, suit_dw, group_opts, group_nopt, spread)


# Two distinct functions (not one function compiled twice): numba's disk cache is keyed by the
# function, and two dispatchers of one function would load each other's machine code.
@kernel
def _deadwood_batch(hands, out, suit_dw, group_opts, group_nopt, spread, after_discard):
    for i in range(hands.shape[0]):
        _deadwood_one(hands, i, out, suit_dw, group_opts, group_nopt, spread, after_discard)


@kernel(parallel=True)
def _deadwood_batch_par(hands, out, suit_dw, group_opts, group_nopt, spread, after_discard):
    for i in prange(hands.shape[0]):
        _deadwood_one(hands, i, out, suit_dw, group_opts, group_nopt, spread, after_discard)


def _check_hands(hands: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    h = np.asarray(hands)
    if h.ndim == 1:
        h = h[None, :]
    if h.ndim != 2 or h.shape[1] != 52:
        raise ValueError(f"hands must have shape (B, 52), got {np.asarray(hands).shape}")
    if ((h != 0) & (h != 1)).any():
        raise ValueError("hands must be 0/1 arrays over the 52 natural cards")
    n = h.sum(axis=1)
    bad = ~np.isin(n, sizes)
    if bad.any():
        raise ValueError(
            f"hand {int(np.flatnonzero(bad)[0])} has {int(n[bad][0])} cards; expected {sizes}"
        )
    return np.ascontiguousarray(h, dtype=np.int8)


def deadwood(hands: np.ndarray) -> np.ndarray:
    """Exact minimum Gin deadwood of each hand.

    Args:
        hands: (B, 52) 0/1 array of hands of 0 to 11 cards (a single (52,) hand is accepted).

    Returns:
        (B,) int64 minimum deadwood (ace 1, faces 10, ace low).

    """
    h = _check_hands(hands, tuple(range(12)))
    out = np.empty(h.shape[0], np.int64)
    fn = _deadwood_batch_par if h.shape[0] >= 4096 else _deadwood_batch
    fn(h, out, SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD, False)
    return out


def deadwood_after_discard(hands: np.ndarray) -> np.ndarray:
    """Exact minimum Gin deadwood of 11-card hands after the best single discard.

    Args:
        hands: (B, 52) 0/1 array of 11-card hands.

    Returns:
        (B,) int64: min over the 11 cards ``c`` of ``deadwood(hand - c)``.

    """
    h = _check_hands(hands, (11,))
    out = np.empty(h.shape[0], np.int64)
    fn = _deadwood_batch_par if h.shape[0] >= 4096 else _deadwood_batch
    fn(h, out, SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD, True)
    return out
