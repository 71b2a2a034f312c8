"""A slow, independent pure-Python reading of the Gin Rummy rules, for checking the kernels.

Nothing here calls the compiled code: deadwood is brute force over the meld templates, legality
is written straight from RULES.md §1.
"""

from __future__ import annotations

from functools import lru_cache

from rummy_env.core.melds import GIN_MELD_MASKS
from rummy_env.encodings import gin_rummy as E

VALUES = [min(c % 13 + 1, 10) for c in range(52)]
MELDS = [int(m) for m in GIN_MELD_MASKS]


def value(mask: int) -> int:
    return sum(VALUES[c] for c in range(52) if mask >> c & 1)


@lru_cache(maxsize=200_000)
def brute_deadwood(mask: int) -> int:
    """Minimum deadwood by exhaustive search over disjoint melds contained in the hand."""
    inside = [m for m in MELDS if m & mask == m]
    best = value(mask)

    def rec(i: int, used: int) -> None:
        nonlocal best
        best = min(best, value(mask & ~used))
        for j in range(i, len(inside)):
            if inside[j] & used == 0:
                rec(j + 1, used | inside[j])

    rec(0, 0)
    return best


def is_valid_meld(m: int) -> bool:
    cs = [c for c in range(52) if m >> c & 1]
    if len(cs) < 3:
        return False
    if len({c % 13 for c in cs}) == 1:
        return len(cs) <= 4
    if len({c // 13 for c in cs}) != 1:
        return False
    ranks = sorted(c % 13 for c in cs)
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def fits(card: int, m: int) -> bool:
    """A lay-off of ``card`` onto meld ``m`` keeps it a valid meld (groups at most 4)."""
    return not m >> card & 1 and is_valid_meld(m | 1 << card)


def reference_mask(rec, config) -> set[int]:
    """The set of legal action ids in a state record, from the rules alone."""
    if rec["done"]:
        return set()
    ph = int(rec["phase"])
    p = int(rec["cur"])
    hand = int(rec["hands"][p])
    lim = int(rec["knock_limit"])
    taken = int(rec["taken"])
    legal: set[int] = set()
    if ph == E.PH_UPCARD or ph == E.PH_FIFTY_OFFER:
        return {E.TAKE_DISCARD, E.PASS}
    if ph == E.PH_DRAW:
        legal.add(E.DRAW_STOCK)
        if (
            not rec["forced_stock"]
            and int(rec["pile_n"]) > 0
            and int(rec["pile_draws"]) < config.max_pile_draws
        ):
            legal.add(E.TAKE_DISCARD)
        return legal
    if ph in (E.PH_DISCARD, E.PH_FIFTY_KNOCK):
        for c in range(52):
            if not hand >> c & 1:
                continue
            if c == taken and not config.allow_discard_of_drawn_upcard:
                continue
            if ph == E.PH_DISCARD:
                legal.add(E.DISCARD_BASE + c)
            if brute_deadwood(hand & ~(1 << c)) <= lim:
                legal.add(E.KNOCK_BASE + c)
        return legal
    n_own = int(rec["n_melds"][p])
    if ph == E.PH_KNOCKER_MELD:
        if value(hand) <= lim:
            legal.add(E.END_MELDING)
        for t, m in enumerate(MELDS):
            if n_own < 3 and m & hand == m and brute_deadwood(hand & ~m) <= lim:
                legal.add(E.MELD_BASE + t)
        return legal
    if ph == E.PH_DEFENDER_MELD:
        legal.add(E.END_MELDING)
        for t, m in enumerate(MELDS):
            if n_own < 3 and m & hand == m:
                legal.add(E.MELD_BASE + t)
        if not rec["gin"]:
            k = 1 - p
            for s in range(int(rec["n_melds"][k])):
                m = int(rec["melds"][k][s])
                for c in range(52):
                    if hand >> c & 1 and fits(c, m):
                        legal.add(E.LAYOFF_BASE + 3 * c + s)
        return legal
    return legal
