"""Meld templates with jokers, shared by 500 Rum and Rummy 51.

A new meld is chosen by template: a group (rank, suits of its natural cards, number of jokers) or
a run (suit, low position, high position) on the 14-position axis (0 = ace low, 1..12 = ranks
2..K, 13 = ace high; ace low or high but never both, no wrap). The engine supplies the natural
cards from the hand and fills the positions the hand lacks with jokers, so a template is playable
when the hand holds its naturals and enough jokers, and at least one card is natural.

Hands are count vectors over 53 types (52 naturals, 52 = joker).
"""

from __future__ import annotations

import numpy as np

from rummy_env.core.jit import kernel

JOKER = 52


def _build_templates() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    kind, a, b, c = [], [], [], []
    for r in range(13):  # groups: 29 per rank
        for suits in range(1, 16):
            ns = bin(suits).count("1")
            for j in range(0, 4):
                if 3 <= ns + j <= 4:
                    kind.append(1)
                    a.append(r)
                    b.append(suits)
                    c.append(j)
    for s in range(4):  # runs: 77 per suit
        for length in range(3, 14):
            for lo in range(0, 15 - length):
                hi = lo + length - 1
                if lo == 0 and hi == 13:
                    continue
                kind.append(2)
                a.append(s)
                b.append(lo)
                c.append(hi)
    return (
        np.array(kind, np.int8),
        np.array(a, np.int8),
        np.array(b, np.int8),
        np.array(c, np.int8),
    )


TPL_KIND, TPL_A, TPL_B, TPL_C = _build_templates()
"""Template tables: kind (1 group, 2 run); group: rank, suit bitmask, jokers; run: suit, lo, hi."""
TPL_WIN = np.array(
    [
        sum(1 << pos for pos in range(lo, hi + 1)) if k == 2 else 0
        for k, lo, hi in zip(TPL_KIND, TPL_B, TPL_C, strict=True)
    ],
    np.int64,
)
"""Run templates: bitmask of their positions on the 14-position axis (0 for groups)."""
NUM_TEMPLATES = TPL_KIND.shape[0]
NUM_GROUP_TEMPLATES = int((TPL_KIND == 1).sum())
GROUP_START = np.array(
    [int(np.flatnonzero((TPL_KIND == 1) & (TPL_A == r))[0]) for r in range(13)]
    + [NUM_GROUP_TEMPLATES],
    np.int64,
)
"""Group templates of rank ``r``: ids ``GROUP_START[r] .. GROUP_START[r + 1] - 1``."""
RUN_START = np.array(
    [int(np.flatnonzero((TPL_KIND == 2) & (TPL_A == s))[0]) for s in range(4)] + [NUM_TEMPLATES],
    np.int64,
)
"""Run templates of suit ``s``: ids ``RUN_START[s] .. RUN_START[s + 1] - 1``."""
GROUP_AT = np.full(64, -1, np.int64)
for _t in range(GROUP_START[0], GROUP_START[1]):
    GROUP_AT[TPL_B[_t] * 4 + TPL_C[_t]] = _t
"""Group templates by suits and jokers: rank ``r``'s group of the suits in bitmask ``b`` with
``j`` jokers is ``GROUP_START[r] + GROUP_AT[4 * b + j]`` (-1: no such group)."""
assert all(
    (TPL_A[GROUP_START[r] : GROUP_START[r + 1]] == r).all()
    and (TPL_KIND[GROUP_START[r] : GROUP_START[r + 1]] == 1).all()
    for r in range(13)
) and all((TPL_A[RUN_START[s] : RUN_START[s + 1]] == s).all() for s in range(4))


@kernel(inline="always")
def pos_card(suit, pos):
    """Natural card id at a run position (0 and 13 are the ace)."""
    r = 0 if pos == 13 else pos
    return suit * 13 + r


@kernel(inline="always")
def template_needs(t, hand, kinds, ta, tb, tc):
    """Jokers template ``t`` takes from ``hand`` (-1 if the hand cannot play it).

    The naturals it takes follow from the hand: a group's suits, and every run position whose
    card the hand holds (runs never hold the same card twice, so one copy suffices).
    """
    if kinds[t] == 1:
        r = ta[t]
        for s in range(4):
            if tb[t] >> s & 1 and hand[s * 13 + r] < 1:
                return -1
        j = tc[t]
    else:
        s = ta[t]
        j = 0
        for pos in range(tb[t], tc[t] + 1):
            if hand[pos_card(s, pos)] < 1:
                j += 1
        if j == tc[t] - tb[t] + 1:
            return -1  # a meld needs a natural card
    if j > hand[JOKER]:
        return -1
    return j


@kernel
def hand_masks(hand, rank_suits, suit_pos):
    """Summaries of a hand for O(1) template checks: ``rank_suits[r]`` = suits held of rank r,
    ``suit_pos[s]`` = run positions held in suit s (an ace fills positions 0 and 13).
    """
    # branch-free: each suit's held ranks as bits, then the ranks' suits read from them (a
    # branch per card, taken at random, cost 137 ns a call, this 30 ns)
    s0 = s1 = s2 = s3 = 0
    for r in range(13):
        s0 |= np.int64(hand[r] >= 1) << r
        s1 |= np.int64(hand[13 + r] >= 1) << r
        s2 |= np.int64(hand[26 + r] >= 1) << r
        s3 |= np.int64(hand[39 + r] >= 1) << r
    for r in range(13):
        rank_suits[r] = (
            ((s0 >> r) & 1) | ((s1 >> r) & 1) << 1 | ((s2 >> r) & 1) << 2 | ((s3 >> r) & 1) << 3
        )
    suit_pos[0] = s0 | (s0 & 1) << 13
    suit_pos[1] = s1 | (s1 & 1) << 13
    suit_pos[2] = s2 | (s2 & 1) << 13
    suit_pos[3] = s3 | (s3 & 1) << 13


@kernel(inline="always")
def popcount16(x) -> int:
    """Set bits of a value below 2**16 (branch-free: a bit loop costs ~20 ns per call here)."""
    x = x - ((x >> 1) & 0x5555)
    x = (x & 0x3333) + ((x >> 2) & 0x3333)
    x = (x + (x >> 4)) & 0x0F0F
    return (x + (x >> 8)) & 0x1F


@kernel(inline="always")
def template_jokers(t, jokers, rank_suits, suit_pos, kinds, ta, tb, tc, twin) -> int:
    """``template_needs`` from the ``hand_masks`` summaries (same result, O(1))."""
    if kinds[t] == 1:
        if tb[t] & ~rank_suits[ta[t]]:
            return -1
        j = tc[t]
    else:
        w = twin[t]
        held = suit_pos[ta[t]] & w
        if held == 0:
            return -1
        missing = w & ~held
        if missing == 0:
            return 0
        if jokers == 0:
            return -1
        j = popcount16(missing)
    if j > jokers:
        return -1
    return j


@kernel(inline="always")
def groups_possible(held, jokers) -> bool:
    """Can a rank whose held suits are the bits of ``held`` make a group (3+ cards with the
    jokers)?
    """
    return popcount16(held) + jokers >= 3


@kernel(inline="always")
def runs_possible(held, jokers) -> bool:
    """Can a suit whose held run positions are the bits of ``held`` make a run (a natural, and
    3 in a row without a joker)?
    """
    return held != 0 and (jokers > 0 or (held & held >> 1 & held >> 2) != 0)


@kernel(inline="always")
def rank_groups(r, held, jokers, out_t, out_j, n) -> int:
    """The group templates of rank ``r`` that the held suits (bits of ``held``) and ``jokers``
    can play, appended to ``out_t``/``out_j`` from ``n``; returns the new count.

    The held suits' subsets in increasing order, each with the jokers that make it 3 or 4
    cards: the templates' order (suits, then jokers), without reading the others.
    """
    if groups_possible(held, jokers):
        base = GROUP_START[r]
        sub = -held & held  # the subsets of held, smallest first: (sub - held) & held
        while sub != 0:
            ns = popcount16(sub)
            for j in range(max(3 - ns, 0), min(4 - ns, jokers) + 1):
                out_t[n] = base + GROUP_AT[4 * sub + j]
                out_j[n] = j
                n += 1
            sub = (sub - held) & held
    return n


@kernel(inline="always")
def suit_runs(s, held, jokers, twin, out_t, out_j, n) -> int:
    """The run templates of suit ``s`` that the held positions (bits of ``held``) and
    ``jokers`` can play, appended to ``out_t``/``out_j`` from ``n``; returns the new count.

    Templates go by length, then lowest position, so a length none of whose windows is
    playable ends the suit: a playable window holds a playable one a card shorter (drop an end
    without its natural, or either end if both hold one). With jokers most of a suit's 77
    templates are longer than that.
    """
    if runs_possible(held, jokers):
        t = RUN_START[s]
        for length in range(3, 14):
            found = False
            for lo in range(15 - length):
                have = held & twin[t + lo]
                j = length - popcount16(have)
                if have != 0 and j <= jokers:
                    out_t[n] = t + lo
                    out_j[n] = j
                    n += 1
                    found = True
            if not found:
                break
            t += 15 - length
    return n


@kernel(counted=False)
def feasible_templates(jokers, rank_suits, suit_pos, twin, out_t, out_j):
    """Every template the summarised hand can play, in template order: writes their ids to
    ``out_t`` and jokers needed to ``out_j``; returns how many. The ranks and suits that cannot
    make a meld (:func:`groups_possible`, :func:`runs_possible`) are skipped whole (a 14-card
    hand without jokers leaves most of the 685 templates unread); the rest is one pass with no
    early returns, a tight loop.
    """
    n = 0
    for r in range(13):
        n = rank_groups(r, rank_suits[r], jokers, out_t, out_j, n)
    for s in range(4):
        n = suit_runs(s, suit_pos[s], jokers, twin, out_t, out_j, n)
    return n


@kernel
def template_size(t, kinds, tb, tc) -> int:
    """Number of cards in template ``t``."""
    if kinds[t] == 1:
        n = 0
        for s in range(4):
            n += tb[t] >> s & 1
        return n + tc[t]
    return tc[t] - tb[t] + 1


@kernel(inline="always")
def template_has_natural(t, x, kinds, ta, tb, tc) -> bool:
    """True if template ``t`` has a place for natural card ``x`` (which it takes when held)."""
    s = x // 13
    r = x % 13
    if kinds[t] == 1:
        return ta[t] == r and (tb[t] >> s & 1) == 1
    if ta[t] != s:
        return False
    if r == 0:
        return tb[t] == 0 or tc[t] == 13
    return tb[t] <= r <= tc[t]


@kernel(inline="always")
def template_uses(t, j, c, kinds, ta, tb, tc) -> bool:
    """Does template ``t``, laid with ``j`` jokers, take a card of type ``c`` (-1: none)?"""
    if c < 0:
        return False
    if c == JOKER:
        return j >= 1
    return template_has_natural(t, c, kinds, ta, tb, tc)


def template_str(t: int) -> str:
    """Readable template, e.g. ``"group 9: c d + 1 JK"`` or ``"run h 5..8"``."""
    from rummy_env.core.cards import RANKS, SUITS

    if TPL_KIND[t] == 1:
        suits = " ".join(SUITS[s] for s in range(4) if TPL_B[t] >> s & 1)
        j = int(TPL_C[t])
        return f"group {RANKS[TPL_A[t]]}: {suits}" + (f" + {j} JK" if j else "")
    names = "A23456789TJQKA"
    return f"run {SUITS[TPL_A[t]]} {names[TPL_B[t]]}..{names[TPL_C[t]]}"
