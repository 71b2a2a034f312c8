"""Gin Rummy rules as compiled kernels over state records (RULES.md §1, 2 players).

One implementation serves the AEC env (a batch of one) and the vector env (a batch of N): every
rule lives in ``apply_action`` / ``legal_mask`` / ``write_obs`` and the knock resolution below.
Kernels take a record (``states[i]``), the config vector (``GinRummyConfig.to_array``) and the
global tables, and never allocate per step in the hot path. The batch entry points that step
N games are ``rummy_env.core.batch``'s, over the hooks registered at the end of this module.
"""

from __future__ import annotations

import numpy as np

from rummy_env.core import batch
from rummy_env.core import rng as _rng
from rummy_env.core.batch import play_random, play_random_parallel  # the names callers use
from rummy_env.core.jit import kernel
from rummy_env.core.melds import (
    GIN_MELD_MASKS,
    GIN_VALUES,
    GROUP_NOPT,
    GROUP_OPTS,
    INF_DEADWOOD,
    NUM_GIN_MELDS,
    SPREAD,
    SUIT_DEADWOOD,
    hand_value,
    min_deadwood,
    popcount,
)
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy.config import CFG
from rummy_env.rules.gin_rummy.state import GIN_STATE_DTYPE

# numba reads module globals as compile-time constants
K_KNOCK_LIMIT = CFG.KNOCK_LIMIT
K_GIN_BONUS = CFG.GIN_BONUS
K_UNDERCUT_BONUS = CFG.UNDERCUT_BONUS
K_BOX_BONUS = CFG.BOX_BONUS
K_GAME_BONUS = CFG.GAME_BONUS
K_SHUTOUT_DOUBLE = CFG.SHUTOUT_DOUBLE_TOTAL
K_TARGET = CFG.TARGET
K_NEXT_DEALER = CFG.NEXT_DEALER
K_ELEVEN = CFG.ELEVEN
K_ALLOW_UPCARD = CFG.ALLOW_UPCARD_DISCARD
K_FIFTIETH = CFG.FIFTIETH
K_OKLAHOMA = CFG.OKLAHOMA
K_OK_ACE_GIN = CFG.OK_ACE_GIN
K_OK_EXTRA = CFG.OK_EXTRA_BOXES
K_MATCH = CFG.MATCH
K_NORMALIZED = CFG.NORMALIZED
K_AUTO = CFG.AUTO_MELD
K_MAX_STEPS = CFG.MAX_STEPS
K_SCALE = CFG.SCORE_SCALE
K_MAX_PILE_DRAWS = CFG.MAX_PILE_DRAWS

DRAW_STOCK = E.DRAW_STOCK
TAKE_DISCARD = E.TAKE_DISCARD
PASS = E.PASS
DISCARD_BASE = E.DISCARD_BASE
KNOCK_BASE = E.KNOCK_BASE
MELD_BASE = E.MELD_BASE
LAYOFF_BASE = E.LAYOFF_BASE
END_MELDING = E.END_MELDING
NSLOT = E.MAX_MELD_SLOTS
PH_UPCARD = E.PH_UPCARD
PH_DRAW = E.PH_DRAW
PH_DISCARD = E.PH_DISCARD
PH_FIFTY_OFFER = E.PH_FIFTY_OFFER
PH_FIFTY_KNOCK = E.PH_FIFTY_KNOCK
PH_KNOCKER_MELD = E.PH_KNOCKER_MELD
PH_DEFENDER_MELD = E.PH_DEFENDER_MELD
PH_OVER = E.PH_OVER
# Pending transitions ``settle`` finishes within the same step (never observed): the automatic
# lay-out and scoring of a knock, the scoring of a manual lay-out, a dead hand.
PH_SETTLE_KNOCK = E.NUM_PHASES
PH_SETTLE_SCORE = E.NUM_PHASES + 1
PH_SETTLE_DEAD = E.NUM_PHASES + 2
OUT_KNOCK = E.OUT_KNOCK
OUT_GIN = E.OUT_GIN
OUT_UNDERCUT = E.OUT_UNDERCUT
OUT_DEAD = E.OUT_DEAD

_U1 = np.uint64(1)
_U0 = np.uint64(0)
_ALL52 = np.uint64((1 << 52) - 1)
_RANK_CARDS = np.uint64(1 | 1 << 13 | 1 << 26 | 1 << 39)  # the four cards of rank 0
_STOCK_START = 31  # 52 - 21 dealt cards

# Global tables, passed explicitly so numba treats them as arrays (not frozen constants).
TABLES = (SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD, GIN_VALUES, GIN_MELD_MASKS)


@kernel(inline="always")
def bit(c):
    """Mask with card ``c`` set."""
    return _U1 << np.uint64(c)


@kernel(inline="always")
def has(mask, c) -> bool:
    """True if card ``c`` is in ``mask``."""
    return (mask >> np.uint64(c)) & _U1 != _U0


@kernel(inline="always")
def lowest(mask) -> int:
    """Index of the lowest set bit (mask must be non-zero)."""
    return popcount((mask & (~mask + _U1)) - _U1)


@kernel(inline="always")
def highest(mask) -> int:
    """Index of the highest set bit of a card mask (mask must be non-zero; 0 for 0)."""
    m = mask & _ALL52
    m |= m >> np.uint64(1)  # smear the highest bit down: it is then the count of bits - 1
    m |= m >> np.uint64(2)
    m |= m >> np.uint64(4)
    m |= m >> np.uint64(8)
    m |= m >> np.uint64(16)
    m |= m >> np.uint64(32)
    return max(popcount(m) - 1, 0)


@kernel(counted=False)
def mindw(mask, tables) -> int:
    """Minimum deadwood of a hand mask."""
    return min_deadwood(mask, tables[0], tables[1], tables[2], tables[3])


# ---------------------------------------------------------------------------------------------
# Melds, lay-offs and automatic arrangements


@kernel(inline="always")
def is_group(m) -> bool:
    """True if a meld mask is a group (all cards of one rank)."""
    r = lowest(m) % 13
    return m & _ALL52 & ~(_RANK_CARDS << np.uint64(r)) == _U0


@kernel(inline="always")
def fits(card, m) -> int:
    """Lay-off fit of ``card`` on meld ``m``: 0 no, 1 group's 4th card, 2 run end."""
    if has(m, card):
        return 0
    lo = lowest(m)
    if is_group(m):
        if popcount(m) == 3 and card % 13 == lo % 13:
            return 1
        return 0
    hi = highest(m)
    if card // 13 != lo // 13:
        return 0
    if card == lo - 1 and lo % 13 > 0:
        return 2
    if card == hi + 1 and hi % 13 < 12:
        return 2
    return 0


@kernel(counted=False)
def candidate_melds(hand, out):
    """Melds contained in ``hand`` that suffice for exact arrangements: groups of 3 and 4 and
    runs of 3 to 5 cards (longer runs split into these). Returns how many were written.
    """
    n = 0
    for r in range(13):
        sm = 0
        for s in range(4):
            if has(hand, 13 * s + r):
                sm |= 1 << s
        if sm == 15:
            for miss in range(4):
                m = _U0
                for s in range(4):
                    if s != miss:
                        m |= bit(13 * s + r)
                out[n] = m
                n += 1
            out[n] = bit(r) | bit(13 + r) | bit(26 + r) | bit(39 + r)
            n += 1
        elif sm == 7 or sm == 11 or sm == 13 or sm == 14:
            m = _U0
            for s in range(4):
                if sm >> s & 1:
                    m |= bit(13 * s + r)
            out[n] = m
            n += 1
    for s in range(4):
        for low in range(11):
            m = _U0
            for k in range(5):
                r = low + k
                if r > 12 or not has(hand, 13 * s + r):
                    break
                m |= bit(13 * s + r)
                if k >= 2:
                    out[n] = m
                    n += 1
    return n


@kernel
def layable_outside(hand, m0, m1, m2, nc):
    """Cards outside ``hand`` that could be laid off, chains included, on an arrangement (its
    ``nc`` meld masks ``m0``.., as integers: arrays passed per arrangement cost an atomic
    reference count up and down each).
    """
    lay = _U0
    for k in range(nc):
        m = m0 if k == 0 else (m1 if k == 1 else m2)
        lo = lowest(m)
        if is_group(m):
            if popcount(m) == 3:
                for s in range(4):
                    c = 13 * s + lo % 13
                    if not has(m, c) and not has(hand, c):
                        lay |= bit(c)
            continue
        hi = highest(m)
        c = lo - 1
        while c >= 0 and c % 13 != 12 and c // 13 == lo // 13 and not has(hand, c):
            lay |= bit(c)
            c -= 1
        c = hi + 1
        while c < 52 and c % 13 != 0 and not has(hand, c):
            lay |= bit(c)
            c += 1
    return popcount(lay)


@kernel(counted=False)
def closure_layoff(rem, slots, nslots, apply):
    """Cards of ``rem`` that can be laid off on ``slots`` (repeatedly, runs preferred to groups,
    which never loses a lay-off). With ``apply`` the slots are extended in place. Returns the mask.
    """
    # the (at most NSLOT = 3) slots as integers, cards visited low to high by their bits
    l0 = slots[0] if nslots > 0 else _U0
    l1 = slots[1] if nslots > 1 else _U0
    l2 = slots[2] if nslots > 2 else _U0
    laid = _U0
    changed = True
    while changed:
        changed = False
        todo = rem & _ALL52 & ~laid  # a pass only lays off the card it visits
        while todo:
            low = todo & (~todo + _U1)
            todo ^= low
            c = lowest(low)
            target = -1
            for k in range(nslots):
                f = fits(c, l0 if k == 0 else (l1 if k == 1 else l2))
                if f == 2:
                    target = k
                    break
                if f == 1 and target < 0:
                    target = k
            if target >= 0:
                if target == 0:
                    l0 |= low
                elif target == 1:
                    l1 |= low
                else:
                    l2 |= low
                laid |= low
                changed = True
    if apply:
        for k in range(nslots):
            slots[k] = l0 if k == 0 else (l1 if k == 1 else l2)
    return laid


@kernel(counted=False)
def store_arrangement(rec, p, combo, nc, melds):
    """Write an arrangement into player ``p``'s meld slots (adjacent runs merged) and remove the
    melded cards from the hand.
    """
    n = 0
    used = 0  # a bit per meld of the arrangement
    for k in range(nc):
        if used >> k & 1:
            continue
        m = melds[combo[k]]
        used |= 1 << k
        if not is_group(m):
            merged = True
            while merged:
                merged = False
                for j in range(nc):
                    o = melds[combo[j]]
                    if used >> j & 1 or is_group(o) or lowest(o) // 13 != lowest(m) // 13:
                        continue
                    if lowest(o) == highest(m) + 1 or highest(o) + 1 == lowest(m):
                        m |= o
                        used |= 1 << j
                        merged = True
        rec.melds[p, n] = m
        n += 1
        rec.hands[p] &= ~m
    rec.n_melds[p] = n


@kernel(counted=False)
def _arrangement_cost(mode, hand, used, m0, m1, m2, nc, values, slots, nslots, gin):
    """Cost of an arrangement of ``nc`` melds ``m0``.. (lower is better) as (primary,
    secondary).

    mode 0 (knocker): (deadwood, cards outside the hand that could be laid off on it).
    mode 1 (defender): (deadwood after every possible lay-off, 0).
    """
    rem = hand & ~used
    if mode == 0:
        return hand_value(rem, values), layable_outside(hand, m0, m1, m2, nc)
    if not gin:
        rem &= ~closure_layoff(rem, slots, nslots, False)
    return hand_value(rem, values), 0


@kernel(counted=False)
def best_arrangement(mode, hand, melds, nm, values, slots, nslots, gin, best):
    """Exact best arrangement of ``hand`` over disjoint candidate melds (at most three fit in
    11 cards); writes the chosen meld indices to ``best`` and returns (count, deadwood).
    First found wins ties, so the choice is deterministic.
    """
    bp, bs = _arrangement_cost(mode, hand, _U0, _U0, _U0, _U0, 0, values, slots, nslots, gin)
    bn = 0
    for i in range(nm):
        # j == i: {i} alone; j > i: second meld j; k > j: third meld k
        for j in range(i, nm):
            if j > i and melds[j] & melds[i]:
                continue
            for k in range(j, nm):
                if k > j:
                    if j == i:
                        break
                    if melds[k] & (melds[i] | melds[j]):
                        continue
                nc = 1 if j == i else (2 if k == j else 3)
                m0 = melds[i]
                m1 = melds[j] if nc >= 2 else _U0
                m2 = melds[k] if nc == 3 else _U0
                p, s = _arrangement_cost(
                    mode, hand, m0 | m1 | m2, m0, m1, m2, nc, values, slots, nslots, gin
                )
                if p < bp or (p == bp and s < bs):
                    bp = p
                    bs = s
                    bn = nc
                    best[0] = i
                    best[1] = j
                    best[2] = k
    return bn, bp


@kernel
def auto_knocker(rec, tables):
    """Arrange the knocker's hand: minimum deadwood; ties to the arrangement onto which the
    fewest cards outside the knocker's hand could be laid off; then the first found.
    """
    k = rec.knocker
    hand = rec.hands[k]
    melds = np.empty(64, np.uint64)
    nm = candidate_melds(hand, melds)
    best = np.empty(3, np.int64)
    bn, dw = best_arrangement(0, hand, melds, nm, tables[4], rec.melds[k], 0, True, best)
    store_arrangement(rec, k, best, bn, melds)
    return dw


@kernel
def auto_defender(rec, tables):
    """Arrange the defender's hand and lay-offs to minimise its final deadwood (exact)."""
    k = rec.knocker
    d = 1 - k
    hand = rec.hands[d]
    melds = np.empty(64, np.uint64)
    nm = candidate_melds(hand, melds)
    slots = rec.melds[k]
    nks = rec.n_melds[k]
    gin = rec.gin != 0
    best = np.empty(3, np.int64)
    bn, dw = best_arrangement(1, hand, melds, nm, tables[4], slots, nks, gin, best)
    store_arrangement(rec, d, best, bn, melds)
    if not gin:
        laid = closure_layoff(rec.hands[d], slots, nks, True)
        rec.hands[d] &= ~laid
        rec.laid_off |= laid
    return dw


# ---------------------------------------------------------------------------------------------
# Deal, scoring, hand and episode transitions


@kernel
def deal_hand(rec, cfg, tables, shuffle):
    """Deal a hand from ``rec.deck`` (shuffled first unless a stacked deck was placed)."""
    if shuffle:
        for i in range(52):
            rec.deck[i] = i
        _rng.shuffle_inplace(rec, rec.deck, 52)
    nd = 1 - rec.dealer
    eleven = cfg[K_ELEVEN] != 0
    ndeal = 21 if eleven else 20
    rec.hands[0] = _U0
    rec.hands[1] = _U0
    for i in range(ndeal):
        p = nd if i % 2 == 0 else rec.dealer
        rec.hands[p] |= bit(rec.deck[i])
    for p in range(2):
        rec.known[p] = _U0
        rec.n_melds[p] = 0
        for s in range(NSLOT):
            rec.melds[p, s] = _U0
    rec.laid_off = _U0
    rec.knocker = -1
    rec.taken = -1
    rec.knock_card = -1
    rec.forced_stock = 0
    rec.offer_stage = 0
    rec.gin = 0
    rec.pile_draws = 0
    rec.cur = nd
    rec.spade_double = 0
    if eleven:
        rec.upcard = -1
        rec.pile_n = 0
        rec.deck_pos = 21
        rec.phase = PH_DISCARD
        rec.knock_limit = cfg[K_KNOCK_LIMIT]
    else:
        up = rec.deck[20]
        rec.upcard = up
        rec.pile[0] = up
        rec.pile_n = 1
        rec.deck_pos = 21
        rec.phase = PH_UPCARD
        if cfg[K_OKLAHOMA]:
            v = tables[4][up]
            if up % 13 == 0 and cfg[K_OK_ACE_GIN]:
                v = 0
            rec.knock_limit = v
            rec.spade_double = 1 if up // 13 == 3 else 0
        else:
            rec.knock_limit = cfg[K_KNOCK_LIMIT]


@kernel
def reset_episode(rec, cfg, tables, dealer, shuffle):
    """Start an episode: clear match scores, set the dealer (-1: random) and deal."""
    for p in range(2):
        rec.scores[p] = 0
        rec.boxes[p] = 0
        rec.totals[p] = 0
        rec.hand_points[p] = 0
        rec.deadwood[p] = 0
    batch.begin_episode(rec, dealer)
    deal_hand(rec, cfg, tables, shuffle)


@kernel
def _finish_hand(rec, cfg, tables, winner):
    """After a hand (winner -1: dead hand): match bookkeeping, then the next deal or the end."""
    rec.hands_played += 1
    rec.phase = PH_OVER
    match = cfg[K_MATCH] != 0
    if not match:
        rec.done = 1
        return
    if winner >= 0 and rec.scores[winner] >= cfg[K_TARGET]:
        loser = 1 - winner
        for p in range(2):
            rec.totals[p] = rec.scores[p] + rec.boxes[p] * cfg[K_BOX_BONUS]
        shutout = rec.scores[loser] == 0
        if shutout and cfg[K_SHUTOUT_DOUBLE] == 0:
            rec.totals[winner] += 2 * cfg[K_GAME_BONUS]
        else:
            rec.totals[winner] += cfg[K_GAME_BONUS]
        if shutout and cfg[K_SHUTOUT_DOUBLE] != 0:
            rec.totals[winner] *= 2
        diff = rec.totals[winner] - rec.totals[loser]
        if cfg[K_NORMALIZED]:
            rec.rewards[winner] = 1.0
            rec.rewards[loser] = -1.0
        else:
            # hand points were paid as they were won; the bonuses settle the rest
            rest = diff - (rec.scores[winner] - rec.scores[loser])
            rec.rewards[winner] += rest
            rec.rewards[loser] -= rest
        rec.done = 1
        return
    # next hand of the match
    nd = cfg[K_NEXT_DEALER]
    if winner >= 0:
        if nd == 0:
            rec.dealer = 1 - winner
        elif nd == 1:
            rec.dealer = winner
        else:
            rec.dealer = 1 - rec.dealer
    deal_hand(rec, cfg, tables, True)


@kernel
def _dead_hand(rec, cfg, tables):
    rec.outcome = OUT_DEAD
    for p in range(2):
        rec.hand_points[p] = 0
        rec.deadwood[p] = 0
    _finish_hand(rec, cfg, tables, -1)


@kernel
def score_hand(rec, cfg, tables):
    """Score a laid-out hand (knocker and defender deadwood are what remains in their hands)."""
    values = tables[4]
    k = rec.knocker
    d = 1 - k
    kd = hand_value(rec.hands[k], values)
    dd = hand_value(rec.hands[d], values)
    rec.deadwood[k] = kd
    rec.deadwood[d] = dd
    extra = 0
    if rec.gin:
        winner = k
        pts = cfg[K_GIN_BONUS] + dd
        rec.outcome = OUT_GIN
        extra = 2
    elif kd < dd:
        winner = k
        pts = dd - kd
        rec.outcome = OUT_KNOCK
    else:
        winner = d
        pts = kd - dd + cfg[K_UNDERCUT_BONUS]
        rec.outcome = OUT_UNDERCUT
        extra = 1
    if rec.spade_double:
        pts *= 2
        extra *= 2
    rec.hand_points[winner] = pts
    rec.hand_points[1 - winner] = 0
    rec.scores[winner] += pts
    rec.boxes[winner] += 1
    if cfg[K_OK_EXTRA]:
        rec.boxes[winner] += extra
    r = float(pts)
    if cfg[K_NORMALIZED]:
        r = r / cfg[K_SCALE] if cfg[K_MATCH] == 0 else 0.0
    rec.rewards[winner] += r
    rec.rewards[1 - winner] -= r
    _finish_hand(rec, cfg, tables, winner)


@kernel(counted=False)
def _start_knock(rec, cfg, c):
    """The current player knocks, discarding ``c`` face down; with automatic melding the
    lay-out and scoring are left to ``settle``.
    """
    p = rec.cur
    rec.hands[p] &= ~bit(c)
    rec.known[p] &= ~bit(c)
    rec.knock_card = c
    rec.knocker = p
    rec.taken = -1
    rec.phase = PH_SETTLE_KNOCK if cfg[K_AUTO] else PH_KNOCKER_MELD


@kernel
def settle(rec, cfg, tables, work=0):
    """Finish the hand ``apply_action`` left pending: lay out and score an automatic knock,
    score a manual lay-out, or end a dead hand (``core.batch``: kept out of ``apply_action`` so
    that a first step does not compile them).
    """
    ph = rec.phase
    if ph == PH_SETTLE_KNOCK:
        p = rec.knocker
        dw = auto_knocker(rec, tables)
        rec.gin = 1 if dw == 0 else 0
        rec.known[p] = rec.hands[p]
        auto_defender(rec, tables)
        score_hand(rec, cfg, tables)
    elif ph == PH_SETTLE_SCORE:
        score_hand(rec, cfg, tables)
    else:
        _dead_hand(rec, cfg, tables)
    batch.truncate(rec, cfg[K_MAX_STEPS])


@kernel(counted=False)
def can_knock_with(hand, limit, tables) -> bool:
    """True if some discard from ``hand`` leaves deadwood within ``limit``."""
    for c in range(52):
        if has(hand, c) and mindw(hand & ~bit(c), tables) <= limit:
            return True
    return False


@kernel(counted=False)
def _take_top_discard(rec, p):
    """Player ``p`` takes the top discard into the hand; it becomes publicly known to be held."""
    c = rec.pile[rec.pile_n - 1]
    rec.pile_n -= 1
    rec.hands[p] |= bit(c)
    rec.known[p] |= bit(c)
    return c


@kernel(counted=False)
def _declare_meld(rec, p, m):
    """Player ``p`` lays meld ``m`` from the hand into its next meld slot."""
    rec.melds[p, rec.n_melds[p]] = m
    rec.n_melds[p] += 1
    rec.hands[p] &= ~m
    rec.known[p] &= ~m


@kernel(counted=False)
def apply_action(rec, cfg, tables, a, mask=None, work=0):
    """Apply a legal action id to a game record (legality is the caller's check; ``mask`` and
    ``work``, the batch layer's scratch, are unused). Returns True when the hand ends and
    ``settle`` must finish it (``core.batch``).
    """
    p = rec.cur
    o = 1 - p
    for q in range(2):
        rec.rewards[q] = 0.0
    rec.steps += 1
    ph = rec.phase
    if ph == PH_UPCARD:
        if a == TAKE_DISCARD:
            rec.taken = _take_top_discard(rec, p)
            rec.phase = PH_DISCARD
        elif rec.offer_stage == 0:
            rec.offer_stage = 1
            rec.cur = o
        else:
            rec.cur = o
            rec.phase = PH_DRAW
            rec.forced_stock = 1
    elif ph == PH_DRAW:
        if a == DRAW_STOCK:
            c = rec.deck[rec.deck_pos]
            rec.deck_pos += 1
            rec.hands[p] |= bit(c)
            rec.taken = -1
        else:
            rec.taken = _take_top_discard(rec, p)
            rec.pile_draws += 1
        rec.forced_stock = 0
        rec.phase = PH_DISCARD
    elif ph == PH_DISCARD:
        if a < KNOCK_BASE:
            c = a - DISCARD_BASE
            rec.hands[p] &= ~bit(c)
            rec.known[p] &= ~bit(c)
            rec.pile[rec.pile_n] = c
            rec.pile_n += 1
            rec.taken = -1
            if 52 - rec.deck_pos <= 2:
                if cfg[K_FIFTIETH] and can_knock_with(
                    rec.hands[o] | bit(c), rec.knock_limit, tables
                ):
                    rec.cur = o
                    rec.phase = PH_FIFTY_OFFER
                else:
                    rec.phase = PH_SETTLE_DEAD
            else:
                rec.cur = o
                rec.phase = PH_DRAW
        else:
            _start_knock(rec, cfg, a - KNOCK_BASE)
    elif ph == PH_FIFTY_OFFER:
        if a == TAKE_DISCARD:
            _take_top_discard(rec, p)
            rec.taken = -1  # the 50th card may be the knock discard itself
            rec.phase = PH_FIFTY_KNOCK
        else:
            rec.phase = PH_SETTLE_DEAD
    elif ph == PH_FIFTY_KNOCK:
        _start_knock(rec, cfg, a - KNOCK_BASE)
    elif ph == PH_KNOCKER_MELD:
        if a == END_MELDING:
            rec.gin = 1 if rec.hands[p] == _U0 else 0
            rec.known[p] = rec.hands[p]
            rec.cur = o
            rec.phase = PH_DEFENDER_MELD
        else:
            _declare_meld(rec, p, tables[5][a - MELD_BASE])
    elif ph == PH_DEFENDER_MELD:
        if a == END_MELDING:
            rec.phase = PH_SETTLE_SCORE
        elif a < LAYOFF_BASE:
            _declare_meld(rec, p, tables[5][a - MELD_BASE])
        else:
            c = (a - LAYOFF_BASE) // NSLOT
            s = (a - LAYOFF_BASE) % NSLOT
            rec.melds[o, s] |= bit(c)
            rec.laid_off |= bit(c)
            rec.hands[p] &= ~bit(c)
            rec.known[p] &= ~bit(c)
    if rec.phase >= PH_SETTLE_KNOCK:
        return True
    batch.truncate(rec, cfg[K_MAX_STEPS])
    return False


@kernel(counted=False)
def legal_mask(rec, cfg, tables, out, work=0):
    """Write the exact legal-action mask of the player to act into ``out`` (int8; ``work``, the
    batch layer's scratch, is unused).
    """
    out[:] = 0
    if rec.done:
        return
    ph = rec.phase
    p = rec.cur
    hand = rec.hands[p]
    lim = rec.knock_limit
    if ph == PH_UPCARD or ph == PH_FIFTY_OFFER:
        out[TAKE_DISCARD] = 1
        out[PASS] = 1
        # the 50th card offer is only made when a knock is possible with it (checked on entry)
    elif ph == PH_DRAW:
        out[DRAW_STOCK] = 1
        if not rec.forced_stock and rec.pile_n > 0 and rec.pile_draws < cfg[K_MAX_PILE_DRAWS]:
            out[TAKE_DISCARD] = 1
    elif ph == PH_DISCARD or ph == PH_FIFTY_KNOCK:
        fifty = ph == PH_FIFTY_KNOCK
        # exact pruning: deadwood(hand - c) >= deadwood(hand) - value(c), values are <= 10
        whole = mindw(hand, tables)
        values = tables[4]
        rest = hand & _ALL52
        while rest:  # the hand's cards, low to high
            low = rest & (~rest + _U1)
            rest ^= low
            c = lowest(low)
            blocked = c == rec.taken and cfg[K_ALLOW_UPCARD] == 0
            if not fifty and not blocked:
                out[DISCARD_BASE + c] = 1
            if blocked or whole - values[c] > lim:
                continue
            if mindw(hand & ~bit(c), tables) <= lim:
                out[KNOCK_BASE + c] = 1
    elif ph == PH_KNOCKER_MELD:
        if hand_value(hand, tables[4]) <= lim:
            out[END_MELDING] = 1
        if rec.n_melds[p] < NSLOT:
            for t in range(NUM_GIN_MELDS):
                m = tables[5][t]
                if m & hand == m and mindw(hand & ~m, tables) <= lim:
                    out[MELD_BASE + t] = 1
    elif ph == PH_DEFENDER_MELD:
        out[END_MELDING] = 1
        if rec.n_melds[p] < NSLOT:
            for t in range(NUM_GIN_MELDS):
                m = tables[5][t]
                if m & hand == m:
                    out[MELD_BASE + t] = 1
        if not rec.gin:
            k = 1 - p
            for c in range(52):
                if has(hand, c):
                    for s in range(rec.n_melds[k]):
                        if fits(c, rec.melds[k, s]):
                            out[LAYOFF_BASE + NSLOT * c + s] = 1


# ---------------------------------------------------------------------------------------------
# Observations

# piece offsets of the encoding (with manual melds; the auto-meld layout is its prefix)
_OFFSETS = E.piece_offsets(False)
O_HAND = _OFFSETS["hand"]
O_TOP = _OFFSETS["discard_top"]
O_PILE = _OFFSETS["discard_pile"]
O_KNOWN = _OFFSETS["opponent_known"]
O_STOCK = _OFFSETS["stock_size"]
O_OPP_SIZE = _OFFSETS["opponent_hand_size"]
O_LIMIT = _OFFSETS["knock_limit"]
O_SPADE = _OFFSETS["spade_double"]
O_DEALER = _OFFSETS["is_dealer"]
O_SCORES = _OFFSETS["scores"]
O_BOXES = _OFFSETS["boxes"]
O_PHASE = _OFFSETS["phase"]
O_MELDS = _OFFSETS["melds"]


@kernel(counted=False)
def write_obs(rec, cfg, p, out):
    """Write player ``p``'s observation (seat-relative, no hidden cards) into ``out`` (float32)."""
    out[:] = 0.0
    o = 1 - p
    hand = rec.hands[p] & _ALL52
    while hand:
        low = hand & (~hand + _U1)
        hand ^= low
        out[O_HAND + lowest(low)] = 1.0
    known = rec.known[o] & _ALL52
    while known:
        low = known & (~known + _U1)
        known ^= low
        out[O_KNOWN + lowest(low)] = 1.0
    n = rec.pile_n
    if n > 0:
        out[O_TOP + rec.pile[n - 1]] = 1.0
        for j in range(n):
            out[O_PILE + rec.pile[j]] = 1.0 - (n - 1 - j) / 52.0
    out[O_STOCK] = (52 - rec.deck_pos) / _STOCK_START
    out[O_OPP_SIZE] = popcount(rec.hands[o]) / 11.0
    out[O_LIMIT] = rec.knock_limit / 10.0
    out[O_SPADE] = rec.spade_double
    out[O_DEALER] = 1.0 if rec.dealer == p else 0.0
    t = float(cfg[K_TARGET])
    out[O_SCORES] = rec.scores[p] / t
    out[O_SCORES + 1] = rec.scores[o] / t
    out[O_BOXES] = rec.boxes[p] / 10.0
    out[O_BOXES + 1] = rec.boxes[o] / 10.0
    out[O_PHASE + rec.phase] = 1.0
    if cfg[K_AUTO] == 0:
        for q in range(2):
            who = p if q == 0 else o
            for s in range(rec.n_melds[who]):
                m = rec.melds[who, s]
                base = O_MELDS + (q * NSLOT + s) * 52
                for c in range(52):
                    if has(m, c):
                        out[base + c] = 1.0


# ---------------------------------------------------------------------------------------------
# The other hooks of the batch layer (rummy_env.core.batch; registered at the end)


@kernel
def new_work(states, cfg):
    """No scratch: the Gin kernels need none."""
    return 0


@kernel
def num_actions(rec, cfg):
    """Size of the action space (the meld actions exist with manual melds only)."""
    return MELD_BASE if cfg[K_AUTO] else END_MELDING + 1


@kernel
def final_points(rec, cfg, q):
    """A match: player ``q``'s final total with all bonuses; a hand: its points."""
    return rec.totals[q] if cfg[K_MATCH] else rec.hand_points[q]


@kernel
def write_final_extra(rec, cfg, out):
    """Final deadwood of the last scored hand, per player."""
    out[0] = rec.deadwood[0]
    out[1] = rec.deadwood[1]


@kernel
def mindw_check(hand, tables) -> int:
    """Minimum deadwood of a mask (exposed for tests)."""
    return mindw(hand, tables)


__all__ = [
    "INF_DEADWOOD",
    "TABLES",
    "apply_action",
    "legal_mask",
    "play_random",
    "play_random_parallel",
    "write_obs",
]

batch.register(GIN_STATE_DTYPE.names, globals())
