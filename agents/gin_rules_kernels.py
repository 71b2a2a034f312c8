"""Compiled decisions of the Gin Rummy rule agents (:mod:`rummy_agents.gin_rummy_rules`).

:func:`decide` is one decision of the novice, the simple player (either ``take_rule``) or the
planner, read from the flat observation and the action mask exactly as the Python reference
(``act_reference`` of those classes) reads them; :func:`act_rows` plays it over a batch of rows
in order, drawing each tie-break from the agent's ``numpy.random.Generator``
(``gen.integers(0, n)`` in numba is numpy's ``gen.integers(n)``: same value, same state after).

What :func:`decide` returns, ``(action, n)``:

- ``n == 0``: ``action`` is the move;
- ``n >= 2``: the move is ``action + cands[rng.integers(n)]`` (a tie among ``n`` candidates, in
  the order the reference lists them; a tie of one needs no draw, and numpy's
  ``integers(1)`` draws nothing either);
- ``action == FALLBACK``: the reference must decide this row. That is every row where the
  reference raises or reads something out of the usual layout: no legal action, a mask
  shorter than the action table, a manual-meld phase without manual-meld masks or pieces,
  no legal discard, a NaN planner score, a NaN or huge hand-size or knock-limit entry (where
  the planner's ``round`` would raise). Every decision of a well-formed observation, manual
  melds included, is compiled.

Every comparison and every floating-point operation is the reference's, in the same order
(numba adds no fused multiply-adds without ``fastmath``), so the moves are identical; the
tests (``tests/test_gin_rules_compiled.py``) compare them and the generator's state over
hundreds of thousands of decisions. The meld and deadwood tables are module constants (frozen
into the compiled code), so a call unboxes only the row and the options.
"""

from __future__ import annotations

import numpy as np

from rummy_env.core.jit import kernel
from rummy_env.core.melds import (
    GIN_MELD_MASKS,
    GIN_VALUES,
    GROUP_NOPT,
    GROUP_OPTS,
    INF_DEADWOOD,
    SPREAD,
    SUIT_DEADWOOD,
    min_deadwood,
    min_deadwood_per_discard,
    popcount,
)
from rummy_env.encodings import gin_rummy as E

KIND_NOVICE = 0
KIND_SIMPLE = 1
KIND_PLANNER = 2
FALLBACK = -1
"""``decide``'s action for a row the Python reference must play."""

_OFF = E.piece_offsets(True)
O_HAND = _OFF["hand"]
O_TOP = _OFF["discard_top"]
O_PILE = _OFF["discard_pile"]
O_KNOWN = _OFF["opponent_known"]
O_OPP_SIZE = _OFF["opponent_hand_size"]
O_KNOCK_LIMIT = _OFF["knock_limit"]
O_PHASE = _OFF["phase"]
O_MELDS = E.piece_offsets(False)["melds"]
OBS_SIZE = (E.observation_size(False), E.observation_size(True))
"""Shortest observation :func:`decide` reads, by ``auto_meld`` (index 0: manual melds)."""

_NUM_PHASES = E.NUM_PHASES
_PH_UPCARD = E.PH_UPCARD
_PH_DRAW = E.PH_DRAW
_PH_DISCARD = E.PH_DISCARD
_PH_FIFTY_OFFER = E.PH_FIFTY_OFFER
_PH_FIFTY_KNOCK = E.PH_FIFTY_KNOCK
_PH_KNOCKER_MELD = E.PH_KNOCKER_MELD
_PH_DEFENDER_MELD = E.PH_DEFENDER_MELD
_SLOTS = E.MAX_MELD_SLOTS
_DRAW_STOCK = E.DRAW_STOCK
_TAKE = E.TAKE_DISCARD
_PASS = E.PASS
_DISCARD = E.DISCARD_BASE
_KNOCK = E.KNOCK_BASE
_MELD = E.MELD_BASE
_LAYOFF = E.LAYOFF_BASE
_END = E.END_MELDING
_NA_AUTO = E.NUM_ACTIONS_AUTO
_NA_MANUAL = E.NUM_ACTIONS_MANUAL
assert (_DRAW_STOCK, _TAKE, _PASS) == (0, 1, 2)  # _novice_draw loops over these ids

_U1 = np.uint64(1)
_ALL52 = np.uint64((1 << 52) - 1)
_MELDS = np.ascontiguousarray(GIN_MELD_MASKS, dtype=np.uint64)
_NUM_MELDS = _MELDS.shape[0]
_MELD_SIZE = np.array([bin(int(m)).count("1") for m in GIN_MELD_MASKS], np.int64)
_VALUES = GIN_VALUES.astype(np.int64)
MELD3 = np.array([m for m in GIN_MELD_MASKS if bin(int(m)).count("1") == 3], np.uint64)
"""The three-card meld templates (the planner's feed risk)."""
_SUIT_DW = SUIT_DEADWOOD
_GOPTS = GROUP_OPTS
_GNOPT = GROUP_NOPT
_SPREAD = SPREAD


# ---------------------------------------------------------------------------------------------
# The planner's one-draw lookahead (called by the Python reference too, with the tables passed)


@kernel
def draw_outlook(hand, unseen, knock_limit, suit_dw, group_opts, group_nopt, spread):
    """Mean over the unseen cards c of the best deadwood of ``hand + c`` after one discard, and
    the share of those c that allow a knock (each unseen card equally likely to be drawn).
    """
    per = np.empty(52, np.int64)
    total = 0.0
    knocks = 0
    n = 0
    for c in range(52):
        if unseen >> np.uint64(c) & _U1:
            b = min_deadwood_per_discard(
                hand | _U1 << np.uint64(c), per, suit_dw, group_opts, group_nopt, spread
            )
            total += b
            if b <= knock_limit:
                knocks += 1
            n += 1
    if n == 0:
        return float(min_deadwood(hand, suit_dw, group_opts, group_nopt, spread)), 0.0
    return total / n, knocks / n


@kernel
def feed_risk(card, unseen, opp_known, q, melds3):
    """Probability-like risk that the opponent melds ``card``: over the three-card melds holding
    it, the chance the opponent holds both other cards (1 for a card known in its hand, ``q`` for
    an unseen card, 0 for a dead one), combined as independent events.
    """
    bit = _U1 << np.uint64(card)
    miss = 1.0
    for t in melds3:
        if t & bit:
            p = 1.0
            rest = t & ~bit
            for e in range(52):
                if rest >> np.uint64(e) & _U1:
                    if opp_known >> np.uint64(e) & _U1:
                        continue
                    if unseen >> np.uint64(e) & _U1:
                        p *= q
                    else:
                        p = 0.0
                        break
            miss *= 1.0 - p
    return 1.0 - miss


@kernel
def plan_discards(
    hand, cands, unseen, opp_known, q, knock_limit, melds3, suit_dw, group_opts, group_nopt,
    spread, now, after, risk,
):  # fmt: skip
    """For each candidate discard: deadwood now, the draw outlook after it, the feed risk."""
    for i in range(cands.shape[0]):
        d = cands[i]
        h = hand & ~(_U1 << np.uint64(d))
        now[i] = min_deadwood(h, suit_dw, group_opts, group_nopt, spread)
        after[i], _ = draw_outlook(h, unseen, knock_limit, suit_dw, group_opts, group_nopt, spread)
        risk[i] = feed_risk(d, unseen, opp_known, q, melds3)


# ---------------------------------------------------------------------------------------------
# Reading the observation


@kernel(counted=False)
def _argmax(x, off, n):
    """``np.argmax(x[off:off + n])``: the first NaN if any, else the first maximum."""
    best = x[off]
    if np.isnan(best):
        return 0
    k = 0
    for j in range(1, n):
        v = x[off + j]
        if np.isnan(v):
            return j
        if v > best:
            best = v
            k = j
    return k


@kernel(counted=False)
def _cards(x, off):
    """``mask_of(x[off:off + 52])``: the cards whose entry is above 0.5."""
    m = np.uint64(0)
    for c in range(52):
        if x[off + c] > 0.5:
            m |= _U1 << np.uint64(c)
    return m


@kernel(counted=False)
def _dw(hand):
    return min_deadwood(hand, _SUIT_DW, _GOPTS, _GNOPT, _SPREAD)


@kernel(counted=False)
def melds_with(c, h):
    """True if some meld holding card ``c`` lies within ``h + c`` (the same as
    ``completes_meld(c, h)``): then some three-card one does, a group or a run ending at,
    around or starting at ``c``.
    """
    r = c % 13
    s0 = c - r
    n = 0
    for s in range(4):
        if s * 13 != s0 and h >> np.uint64(s * 13 + r) & _U1:
            n += 1
    if n >= 2:
        return True
    lo2 = r >= 2 and (h >> np.uint64(c - 2) & _U1) != 0
    lo1 = r >= 1 and (h >> np.uint64(c - 1) & _U1) != 0
    hi1 = r <= 11 and (h >> np.uint64(c + 1) & _U1) != 0
    hi2 = r <= 10 and (h >> np.uint64(c + 2) & _U1) != 0
    return (lo2 and lo1) or (lo1 and hi1) or (hi1 and hi2)


@kernel(counted=False)
def outlook_mean(hand, unseen):
    """``draw_outlook(hand, unseen, ...)[0]`` (the mean best deadwood after drawing an unseen
    card and discarding), equal to the last bit with about a fifth of the deadwood solves.

    Drawing ``c`` and discarding ``e`` leaves ``hand + c - e``; discarding ``c`` itself leaves
    ``hand``. When no meld holding ``c`` lies within ``hand + c`` (:func:`melds_with`), no
    arrangement of ``hand + c - e`` melds ``c`` (those melds would lie within ``hand + c``), so
    its deadwood is ``deadwood(hand - e) + value(c)``: the best over ``e`` is the same for every
    such ``c`` up to ``value(c)``, and only the cards that meld with the hand need solves of
    their own. Every term is the same integer as ``draw_outlook``'s, and an integer sum is exact
    in float64 in any order, so the mean is the same float.
    """
    n = popcount(unseen)
    base = _dw(hand)
    if n == 0:
        return float(base)
    pmin = INF_DEADWOOD
    for e in range(52):
        if hand >> np.uint64(e) & _U1:
            pmin = min(pmin, _dw(hand & ~(_U1 << np.uint64(e))))
    total = 0.0
    for c in range(52):
        bit = _U1 << np.uint64(c)
        if not unseen & bit:
            continue
        b = base
        if melds_with(c, hand):
            full = hand | bit
            for e in range(52):
                if hand >> np.uint64(e) & _U1:
                    b = min(b, _dw(full & ~(_U1 << np.uint64(e))))
        else:
            b = min(b, pmin + _VALUES[c])
        total += b
    return total / n


@kernel(counted=False)
def _finish(base, cands, n):
    """The (action, n) of a tie among ``cands[:n]``: a lone candidate needs no draw."""
    if n == 1:
        return base + cands[0], 0
    return base, n


# ---------------------------------------------------------------------------------------------
# Drawing


@kernel(counted=False)
def _completes_meld(card, hand):
    """``completes_meld``: some meld holds ``card`` and lies within ``hand + card``."""
    return melds_with(card, hand)  # the same answer (its docstring) without the 305 melds


@kernel(counted=False)
def _in_best_meld(card, hand):
    """``in_best_meld``: some minimum-deadwood arrangement of ``hand + card`` melds ``card``."""
    if not melds_with(card, hand):  # no meld holds the card at all
        return False
    bit = _U1 << np.uint64(card)
    full = hand | bit
    best = _dw(full)
    for t in range(_NUM_MELDS):
        m = _MELDS[t]
        if m & bit and m & full == m and _dw(full & ~m) == best:
            return True
    return False


@kernel
def _context(obs, hand):
    """The planner's ``_context``: (ok, unseen, known, q, knock limit); ``ok`` is False where
    Python's ``round`` would raise or leave the int64 range (a NaN or huge entry).
    """
    pile = _cards(obs, O_PILE)
    known = _cards(obs, O_KNOWN)
    unseen = _ALL52 & ~hand & ~pile & ~known
    n_unseen = popcount(unseen)
    x = np.float64(obs[O_OPP_SIZE]) * 11.0
    y = np.float64(obs[O_KNOCK_LIMIT]) * 10.0
    if not (abs(x) < 1e15 and abs(y) < 1e15):
        return False, unseen, known, 0.0, 0
    # np.rint rounds half to even, as Python's round does
    opp_unknown = np.int64(np.rint(x)) - popcount(known)
    q = max(opp_unknown, 0) / n_unseen if n_unseen else 0.0
    return True, unseen, known, q, np.int64(np.rint(y))


@kernel(counted=False)
def _novice_draw(mask, cands):
    n = 0
    for a in range(_PASS + 1):  # DRAW_STOCK, TAKE_DISCARD, PASS: ids 0, 1, 2
        if mask[a] != 0:
            cands[n] = a
            n += 1
    if n == 0:
        return FALLBACK, 0
    return _finish(0, cands, n)


@kernel(counted=False)
def _simple_draw(hand, top, mask, best_meld):
    if mask[_TAKE] != 0:
        take = _in_best_meld(top, hand) if best_meld else _completes_meld(top, hand)
        if take:
            return _TAKE
    return _DRAW_STOCK if mask[_DRAW_STOCK] != 0 else _PASS


@kernel
def _planner_draw(obs, hand, top, mask, take_margin):
    stock = _DRAW_STOCK if mask[_DRAW_STOCK] != 0 else _PASS
    if mask[_TAKE] == 0:
        return stock
    if _completes_meld(top, hand):
        return _TAKE
    ok, unseen, _, _, _ = _context(obs, hand)
    if not ok:
        return FALLBACK
    per = np.empty(52, np.int64)
    min_deadwood_per_discard(hand | _U1 << np.uint64(top), per, _SUIT_DW, _GOPTS, _GNOPT, _SPREAD)
    per[top] = INF_DEADWOOD  # the card just taken may not be discarded
    best = per.min()
    return _TAKE if best < outlook_mean(hand, unseen) - take_margin else stock


# ---------------------------------------------------------------------------------------------
# Discarding and knocking


@kernel(counted=False)
def _least(cands, n):
    """Keep (in order) the candidates of least deadwood, each ``cands[i]`` holding ``card +
    64 * deadwood`` (:func:`_least_deadwood`), as cards; returns how many.
    """
    best = cands[0] >> 6
    for i in range(1, n):
        best = min(best, cands[i] >> 6)
    k = 0
    for i in range(n):
        if cands[i] >> 6 == best:
            cands[k] = cands[i] & 63
            k += 1
    return k


@kernel(counted=False)
def _least_deadwood(hand, cands, n):
    """``cands[i] += 64 * d`` with ``d`` the least deadwood after discarding card ``cands[i]``
    for every candidate that can be of the least among ``cands[:n]``, ``INF_DEADWOOD`` for the
    others (which ``_least`` then drops, as it drops them with every entry computed): the
    deadwood rides in the candidate's own entry, so that a decision allocates nothing.

    Exact pruning, as the env's mask prunes its knocks: ``deadwood(hand - c) >= deadwood(hand) -
    value(c)`` (the best arrangement of ``hand - c`` with ``c`` added as deadwood is one of
    ``hand``), so candidates are solved by value, highest first, until the bound passes the
    least found: 4-5 solves of an 11-card hand instead of 11 (measured 2-3x faster on random
    hands).
    """
    whole = min_deadwood(hand, _SUIT_DW, _GOPTS, _GNOPT, _SPREAD)
    best = INF_DEADWOOD
    for v in range(10, 0, -1):  # card values, highest first (every candidate's bound once)
        if whole - v > best:
            break
        for i in range(n):
            c = cands[i] & 63  # (an entry solved at a higher value holds its deadwood too)
            if _VALUES[c] != v:
                continue
            d = min_deadwood(hand & ~(_U1 << np.uint64(c)), _SUIT_DW, _GOPTS, _GNOPT, _SPREAD)
            cands[i] = c + 64 * d
            if d < best:
                best = d
    for i in range(n):
        c = cands[i] & 63
        if whole - _VALUES[c] > best:
            cands[i] = c + 64 * INF_DEADWOOD


@kernel(counted=False)
def _by_rank(cands, n):
    """The simple player's ``_pick`` filter: keep the highest (value, rank) candidates."""
    if n <= 1:
        return n
    tv = -1
    tr = -1
    for i in range(n):
        c = cands[i]
        v = _VALUES[c]
        r = c % 13
        if v > tv or (v == tv and r > tr):
            tv = v
            tr = r
    k = 0
    for i in range(n):
        c = cands[i]
        if _VALUES[c] == tv and c % 13 == tr:
            cands[k] = c
            k += 1
    return k


@kernel(counted=False)
def _discard_or_knock(hand, mask, by_rank, cands):
    """``_GinRuleAgent._discard_or_knock``: knock if legal, else discard, the least deadwood
    (then, for the simple player and the planner, the highest value and rank).
    """
    base = _KNOCK
    n = 0
    for c in range(52):
        if mask[_KNOCK + c] == 1:
            cands[n] = c
            n += 1
    if n == 0:
        base = _DISCARD
        for c in range(52):
            if mask[_DISCARD + c] == 1:
                cands[n] = c
                n += 1
        if n == 0:
            return FALLBACK, 0
    _least_deadwood(hand, cands, n)
    n = _least(cands, n)
    if by_rank:
        n = _by_rank(cands, n)
    return _finish(base, cands, n)


@kernel
def _planner_discard(obs, hand, mask, now_weight, risk_weight, cands):
    """``GinRummyPlannerAgent._discard_or_knock`` when no knock is offered."""
    n = 0
    for c in range(52):
        if mask[_DISCARD + c] == 1:
            cands[n] = c
            n += 1
    if n == 0:
        return FALLBACK, 0
    ok, unseen, known, q, _ = _context(obs, hand)
    if not ok:
        return FALLBACK, 0
    score = np.empty(n, np.float64)
    best = np.inf
    for i in range(n):
        d = cands[i]
        h = hand & ~(_U1 << np.uint64(d))
        now = np.float64(_dw(h))
        after = outlook_mean(h, unseen)
        risk = feed_risk(d, unseen, known, q, MELD3)
        s = now_weight * now + after + risk_weight * risk
        if np.isnan(s):
            return FALLBACK, 0  # numpy's min is NaN: no tie, and the reference raises
        score[i] = s
        best = min(best, s)
    k = 0
    for i in range(n):
        if score[i] <= best + 1e-9:
            cands[k] = cands[i]
            k += 1
    if k == 0:
        return FALLBACK, 0
    return _finish(_DISCARD, cands, _by_rank(cands, k))


# ---------------------------------------------------------------------------------------------
# Manual melds


@kernel(counted=False)
def _knocker_meld(hand, mask):
    """``_knocker_meld``: the first legal meld of ``knocker_meld_plan(hand)``, else
    END_MELDING, else the first legal action.
    """
    rest = hand
    target = _dw(rest)
    while True:
        best_t = -1
        for t in range(_NUM_MELDS):
            m = _MELDS[t]
            if m & rest == m and _dw(rest & ~m) == target:
                if best_t < 0 or _MELD_SIZE[t] > _MELD_SIZE[best_t]:
                    best_t = t
        if best_t < 0:
            break
        if mask[_MELD + best_t] != 0:
            return _MELD + best_t
        rest &= ~_MELDS[best_t]
    if mask[_END] != 0:
        return _END
    for a in range(mask.shape[0]):
        if mask[a] == 1:
            return a
    return FALLBACK


@kernel
def _fits(card, meld):
    """``_fits``: 0 no lay-off, 1 a group's 4th card, 2 a run end."""
    if meld >> np.uint64(card) & _U1 or meld == 0:
        return 0
    lo = -1
    hi = -1
    same_rank = True
    cnt = 0
    for c in range(52):
        if meld >> np.uint64(c) & _U1:
            if lo < 0:
                lo = c
            elif c % 13 != lo % 13:
                same_rank = False
            hi = c
            cnt += 1
    if same_rank:
        return 1 if cnt == 3 and card % 13 == lo % 13 else 0
    if card // 13 != lo // 13:
        return 0
    if (card == lo - 1 and lo % 13 > 0) or (card == hi + 1 and hi % 13 < 12):
        return 2
    return 0


@kernel
def _layoffs(rest, table, slots, lay_c, lay_s):
    """``layoff_sequence(rest, table)`` into ``lay_c``/``lay_s``; returns (count, rest left)."""
    for s in range(_SLOTS):
        slots[s] = table[s]
    k = 0
    changed = True
    while changed:
        changed = False
        for c in range(52):
            bit = _U1 << np.uint64(c)
            if not rest & bit:
                continue
            target = -1
            for s in range(_SLOTS):
                f = _fits(c, slots[s])
                if f == 2:
                    target = s
                    break
                if f == 1 and target < 0:
                    target = s
            if target >= 0:
                slots[target] |= bit
                rest &= ~bit
                lay_c[k] = c
                lay_s[k] = target
                k += 1
                changed = True
    return k, rest


@kernel
def _value(mask):
    t = 0
    for c in range(52):
        if mask >> np.uint64(c) & _U1:
            t += _VALUES[c]
    return t


@kernel
def _defender_meld(obs, hand, mask):
    """``_defender_meld``: ``defender_plan``'s exact search (the same depth-first order over
    the same candidate melds, the first strictly better arrangement kept), then its first legal
    meld (longest first) or lay-off, else END_MELDING.
    """
    table = np.empty(_SLOTS, np.uint64)
    own = 0
    for s in range(_SLOTS):
        table[s] = _cards(obs, O_MELDS + (_SLOTS + s) * 52)
        for c in range(52):
            if obs[O_MELDS + s * 52 + c] != 0:
                own += 1
                break
    # after the knocker's declaration its hand holds only its deadwood: empty means gin
    gin = not obs[O_OPP_SIZE] > 0
    free = _SLOTS - own
    cands = np.empty(_NUM_MELDS, np.int64)
    nc = 0
    for t in range(_NUM_MELDS):
        m = _MELDS[t]
        if m & hand == m and _MELD_SIZE[t] <= 5:
            cands[nc] = t
            nc += 1
    slots = np.empty(_SLOTS, np.uint64)
    lay_c = np.empty(52, np.int64)
    lay_s = np.empty(52, np.int64)
    best_c = np.empty(52, np.int64)
    best_s = np.empty(52, np.int64)
    n_lay = 0
    rest = hand
    if not gin:
        n_lay, rest = _layoffs(hand, table, slots, best_c, best_s)
    best_dw = _value(rest)
    best = np.empty(_SLOTS, np.int64)
    n_best = 0
    chosen = np.empty(_SLOTS, np.int64)
    nxt = np.empty(_SLOTS, np.int64)
    used = np.empty(_SLOTS, np.uint64)
    # the recursion search(start, used, chosen) as a stack: nxt[d] is the next candidate tried
    # at depth d (d melds chosen before it), used[d] the cards those melds hold
    depth = 0
    if free > 0:
        nxt[0] = 0
        used[0] = np.uint64(0)
    else:
        depth = -1
    while depth >= 0:
        i = nxt[depth]
        if i >= nc:
            depth -= 1
            continue
        nxt[depth] = i + 1
        m = _MELDS[cands[i]]
        if m & used[depth]:
            continue
        chosen[depth] = cands[i]
        u = used[depth] | m
        k = 0
        left = hand & ~u
        if not gin:
            k, left = _layoffs(left, table, slots, lay_c, lay_s)
        dw = _value(left)
        if dw < best_dw:
            best_dw = dw
            n_best = depth + 1
            for j in range(n_best):
                best[j] = chosen[j]
            n_lay = k
            for j in range(k):
                best_c[j] = lay_c[j]
                best_s[j] = lay_s[j]
        if depth + 1 < free:
            depth += 1
            nxt[depth] = i + 1
            used[depth] = u
    # sorted(plan, key=-size) is stable: longest first, ties in plan order
    for size in range(5, 2, -1):
        for j in range(n_best):
            t = best[j]
            if _MELD_SIZE[t] == size and mask[_MELD + t] != 0:
                return _MELD + t
    for j in range(n_lay):
        a = _LAYOFF + _SLOTS * best_c[j] + best_s[j]
        if mask[a] != 0:
            return a
    return _END


# ---------------------------------------------------------------------------------------------
# One decision, and a batch of them


@kernel(counted=False)
def decide(obs, mask, kind, best_meld, now_weight, risk_weight, take_margin, auto, cands):
    """One decision of a rule agent (see the module docstring for what it returns).

    Args and returns: as :func:`_decide`, which it runs.
    """
    return _decide(obs, mask, kind, best_meld, now_weight, risk_weight, take_margin, auto, cands)


@kernel(counted=False)
def decide_novice(obs, mask, kind, best_meld, now_weight, risk_weight, take_margin, auto, cands):
    """:func:`decide` of the novice alone (``kind`` is ignored): compiles none of the others'
    rules (numba drops the branches of the other kinds once :func:`_decide` is inlined).
    """
    return _decide(obs, mask, KIND_NOVICE, best_meld, now_weight, risk_weight, take_margin, auto,
                   cands)  # fmt: skip


@kernel(counted=False)
def decide_simple(obs, mask, kind, best_meld, now_weight, risk_weight, take_margin, auto, cands):
    """:func:`decide` of the simple player alone (``kind`` is ignored; see
    :func:`decide_novice`).
    """
    return _decide(obs, mask, KIND_SIMPLE, best_meld, now_weight, risk_weight, take_margin, auto,
                   cands)  # fmt: skip


@kernel(counted=False)
def decide_planner(obs, mask, kind, best_meld, now_weight, risk_weight, take_margin, auto, cands):
    """:func:`decide` of the planner alone (``kind`` is ignored; see :func:`decide_novice`)."""
    return _decide(obs, mask, KIND_PLANNER, best_meld, now_weight, risk_weight, take_margin, auto,
                   cands)  # fmt: skip


@kernel(inline="always")
def _decide(obs, mask, kind, best_meld, now_weight, risk_weight, take_margin, auto, cands):
    """One decision of a rule agent (see the module docstring for what it returns).

    Args:
        obs: (obs_size,) float32 observation (at least ``OBS_SIZE[auto]`` long; a longer one,
            as in 3- and 4-player games, is read by its 2-player prefix).
        mask: (A,) int8 action mask (entries equal to 1 are legal; the reference's other tests
            of an entry are ``!= 0``, and so are these).
        kind: ``KIND_NOVICE``, ``KIND_SIMPLE`` or ``KIND_PLANNER``.
        best_meld: the simple player's ``take_rule`` is not ``"any_meld"``.
        now_weight: the planner's weight of the deadwood right after a discard.
        risk_weight: the planner's deadwood points per unit of feed risk.
        take_margin: the planner's margin for taking the top discard.
        auto: the env's ``auto_meld`` (0 or 1).
        cands: (52,) int64 scratch; holds the tie's candidates when ``n >= 2``.

    Returns:
        (action, n) as the module docstring says.
    """
    na = mask.shape[0]
    first = -1
    n_legal = 0
    for a in range(na):
        if mask[a] == 1:
            if first < 0:
                first = a
            n_legal += 1
            if n_legal == 2:  # all that is asked: none, one or more
                break
    if n_legal == 0:
        return FALLBACK, 0
    if n_legal == 1:
        return first, 0
    if na < _NA_AUTO:
        return FALLBACK, 0
    phase = _argmax(obs, O_PHASE, _NUM_PHASES)
    hand = _cards(obs, O_HAND)
    if phase == _PH_UPCARD or phase == _PH_DRAW:
        if kind == KIND_NOVICE:
            return _novice_draw(mask, cands)
        top = _argmax(obs, O_TOP, 52)
        if kind == KIND_SIMPLE:
            return _simple_draw(hand, top, mask, best_meld), 0
        return _planner_draw(obs, hand, top, mask, take_margin), 0
    if phase == _PH_FIFTY_OFFER:
        # the offer is only made when a knock is possible with the card: take it to knock
        return (_TAKE if mask[_TAKE] != 0 else _PASS), 0
    if phase == _PH_DISCARD or phase == _PH_FIFTY_KNOCK:
        if kind == KIND_PLANNER:
            knock = False
            for c in range(52):
                if mask[_KNOCK + c] != 0:
                    knock = True
                    break
            if not knock:
                return _planner_discard(obs, hand, mask, now_weight, risk_weight, cands)
        return _discard_or_knock(hand, mask, kind != KIND_NOVICE, cands)
    if phase == _PH_KNOCKER_MELD:
        if na < _NA_MANUAL:
            return FALLBACK, 0
        return _knocker_meld(hand, mask), 0
    if phase == _PH_DEFENDER_MELD:
        if na < _NA_MANUAL or auto:  # (with auto_meld the observation has no melds piece)
            return FALLBACK, 0
        return _defender_meld(obs, hand, mask), 0
    return first, 0  # not reached: no decision in the hand_over phase


@kernel
def act_rows(obs, masks, start, kind, best_meld, now_weight, risk_weight, take_margin, auto,
             gen, out):  # fmt: skip
    """:func:`decide` for rows ``start, start + 1, ...`` in order, into ``out``, each tie drawn
    as ``gen.integers(n)``; stops at the first row the reference must play.

    Returns:
        The index of that row, or the number of rows when every row was played.
    """
    cands = np.empty(52, np.int64)
    for i in range(start, obs.shape[0]):
        a, n = decide(
            obs[i], masks[i], kind, best_meld, now_weight, risk_weight, take_margin, auto, cands
        )
        if a == FALLBACK:
            return i
        if n > 0:
            a += cands[gen.integers(0, n)]
        out[i] = a
    return obs.shape[0]


def decide_signature() -> tuple:
    """The numba argument types :func:`decide` is called with from Python (the agents'
    ``act``; ``act_rows`` calls it with the same types).
    """
    from numba.core import types  # noqa: PLC0415

    row = types.Array(types.float32, 1, "C")
    return (
        row, types.Array(types.int8, 1, "C"), types.int64, types.int64, types.float64,
        types.float64, types.float64, types.int64, types.Array(types.int64, 1, "C"),
    )  # fmt: skip


__all__ = [
    "FALLBACK",
    "KIND_NOVICE",
    "KIND_PLANNER",
    "KIND_SIMPLE",
    "MELD3",
    "OBS_SIZE",
    "act_rows",
    "decide",
    "decide_novice",
    "decide_planner",
    "decide_signature",
    "decide_simple",
    "draw_outlook",
    "feed_risk",
    "melds_with",
    "outlook_mean",
    "plan_discards",
]
