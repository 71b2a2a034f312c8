"""Compiled meld planners: the search of :class:`rummy_agents.five_hundred_rum_greedy.MeldPlanner`
as numba kernels, with the same plans (points, steps in the same order, hand left).

The Python planner is a recursive search over disjoint new melds (branching on the lowest
natural left: each meld template holding it, then leaving it in hand) with a greedy lay-off
pass at each leaf; it costs about 1.6 ms a position. :func:`plan_best` runs the same search
as an explicit stack of frames, in the same order: each frame keeps the templates its node
enumerated (as ``_templates_with`` lists them) and the next branch to try, and a branch's
changes to the hand are undone when the search comes back to the frame. Everything that
decides the plan is the same: the templates and their order, the points of a placed card,
the bound (``points + value of every card left <= best``, once a plan was found), the node
count (a call of ``_search`` is a node; past ``node_limit`` every call is a leaf), the lay-off
pass and the strict ``>`` that keeps the first of equally good plans. So the plans are equal
whether or not the node limit is reached (``tests/test_planner_kernels.py``). A node whose
lowest card no template holds (:func:`no_meld_holds`; about 9 nodes in 10 of the greedy Rummy
51 player's searches) has one branch, the card left in hand: the search makes it in place,
without a frame or a template pass, and counts the node all the same.

Arrays in, arrays out: a hand is 53 card counts (52 = joker); the table is an int array
``(slots, 6)`` in the engine's layout ``[kind, key, lo, hi, naturals, jokers]`` (kind 1 group:
key = rank, naturals = suit mask, jokers = count; kind 2 run: key = suit, lo..hi on the
14-position axis, naturals / jokers = position masks), read up to the first empty slot (kind
0); a plan is ``found, points, n_steps`` with the steps as rows ``(kind, a, b)``
(:data:`STEP_MELD` ``(t, 0)``, :data:`STEP_LAYOFF` ``(card, slot)``, :data:`STEP_JOKER`
``(slot, end)``) and the 53 counts the plan leaves in hand.
:class:`CompiledMeldPlanner` wraps it with the Python planner's interface.

Rummy 51: :func:`plan_best51` and :class:`CompiledRummy51Planner` do the same for
:class:`rummy_agents.rummy51_greedy.Rummy51Planner` (its search has no bound, lays the meld
holding the owed card first, and its leaves check the opening threshold and keep a card to
discard).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# (five_hundred_rum_greedy imports this module lazily, when its agent first plans)
from rummy_agents.five_hundred_rum_greedy import Meld, Plan, card_value
from rummy_env.core.jit import kernel
from rummy_env.core.jmelds import TPL_A, TPL_B, TPL_C, TPL_KIND
from rummy_env.rules.rummy51.kernels import TPL_VAL

JOKER = 52
NUM_TYPES = 53
STEP_MELD = 0
STEP_LAYOFF = 1
STEP_JOKER = 2
STEP_NAMES = ("meld", "layoff", "joker")
"""Names of the step kinds, as the Python planner's steps spell them."""
MAX_TEMPLATES = 64
"""Most templates one search node enumerates: 8 groups and at most (r + 1)(14 - r) <= 56 runs
(an ace: 11 runs from the low and 11 from the high end)."""
MAX_HAND = 108
"""Most cards a hand can hold (two packs and four jokers): the rows of a single call's steps."""
TPL_FIELDS = 10  # a node's template row: t, jokers, points, value, then the meld's 6 fields


def _template_ids() -> tuple[np.ndarray, np.ndarray]:
    group = np.full((13, 16, 4), -1, np.int64)
    run = np.full((4, 14, 14), -1, np.int64)
    for t, (k, a, b, c) in enumerate(zip(TPL_KIND, TPL_A, TPL_B, TPL_C, strict=True)):
        if k == 1:
            group[int(a), int(b), int(c)] = t
        else:
            run[int(a), int(b), int(c)] = t
    return group, run


GROUP_ID, RUN_ID = _template_ids()
"""Template id of a group by (rank, suit mask, jokers) and of a run by (suit, lo, hi)."""
PENALTY51 = np.array(
    [11 if c % 13 == 0 else min(c % 13 + 1, 10) for c in range(52)] + [25], np.int64
)
"""Rummy 51: penalty of each card type left in hand (``rummy51_greedy.PENALTY``)."""
TPL_VAL51 = np.asarray(TPL_VAL, np.int64)
"""Rummy 51: opening points of each template (``rummy51_greedy.meld_points``)."""


def card_values(v51015: bool) -> np.ndarray:
    """Points of each card type in hand (``five_hundred_rum_greedy.card_value``), int64 (53,)."""
    return np.array([card_value(c, v51015) for c in range(NUM_TYPES)], np.int64)


# -- table melds ---------------------------------------------------------------------------------


@kernel(inline="always")
def _pos_card(s, pos):
    return s * 13 + (0 if pos == 13 else pos)


@kernel(inline="always")
def _bits(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@kernel(counted=False)
def fit_natural_at(kind, key, lo, hi, nat, jok, c):
    """:func:`fit_natural` of a meld given by its six fields (no array: a call that passes
    one costs an atomic reference count up and down, in the lay-off pass's inner loop).
    """
    s = c // 13
    r = c % 13
    if kind == 1:
        if key != r or (nat >> s) & 1 or _bits(nat) + jok >= 4:
            return -1
        return 14
    if key != s:
        return -1
    if r == 0:
        if hi == 12 and lo > 0:
            return 13
        if lo == 1 and hi < 13:
            return 0
        return -1
    if r == lo - 1 or (r == hi + 1 and hi + 1 <= 12):
        return r
    return -1


@kernel(counted=False)
def fit_natural(melds, k, c):
    """Where natural ``c`` lays off on meld row ``k`` (-1: nowhere; 14: a group)."""
    return fit_natural_at(melds[k, 0], melds[k, 1], melds[k, 2], melds[k, 3], melds[k, 4],
                          melds[k, 5], c)  # fmt: skip


@kernel(counted=False)
def fit_joker(melds, k, e):
    """Where a joker lays off on meld row ``k`` at end ``e`` (0 group / low, 1 high); -1 none."""
    lo = melds[k, 2]
    hi = melds[k, 3]
    if melds[k, 0] == 1:
        return 14 if e == 0 and _bits(melds[k, 4]) + melds[k, 5] < 4 else -1
    if e == 0:
        return -1 if lo == 0 or (lo == 1 and hi == 13) else lo - 1
    return -1 if hi == 13 or (hi == 12 and lo == 0) else hi + 1


@kernel(counted=False)
def place(melds, k, c, pos):
    """Put card ``c`` into meld row ``k`` at run position ``pos`` (a group ignores it)."""
    if melds[k, 0] == 1:
        if c == JOKER:
            melds[k, 5] += 1
        else:
            melds[k, 4] |= 1 << (c // 13)
        return
    if c == JOKER:
        melds[k, 5] |= 1 << pos
    else:
        melds[k, 4] |= 1 << pos
    melds[k, 2] = min(melds[k, 2], pos)
    melds[k, 3] = max(melds[k, 3], pos)


@kernel(counted=False)
def joker_spot(melds, nm, left):
    """(row, end, position) of the next joker lay-off: the first spot after which a leftover
    natural fits, else the first spot; row -1 if there is none.
    """
    fk = -1
    fe = -1
    fp = -1
    for k in range(nm):
        for e in range(2):
            pos = fit_joker(melds, k, e)
            if pos < 0:
                continue
            if fk < 0:
                fk = k
                fe = e
                fp = pos
            if melds[k, 0] == 2:
                nxt = pos - 1 if e == 0 else pos + 1
                if 0 <= nxt <= 13 and left[_pos_card(melds[k, 1], nxt)] > 0:
                    return k, e, pos
    return fk, fe, fp


# -- the search ----------------------------------------------------------------------------------


@kernel(counted=False)
def node_templates(c, avail, skipped, tb, start, vals, low_ace):
    """The templates holding the lowest card ``c``, in ``MeldPlanner._templates_with``'s order,
    as rows of ``tb`` from ``start`` (t, jokers, points, value of the cards, meld); returns how
    many.
    """
    s = c // 13
    r = c % 13
    jk = avail[JOKER]
    n = start
    others = 0  # the other suits held of rank r, 2 bits each, in suit order
    n_o = 0
    for q in range(4):
        if q != s and avail[q * 13 + r] > 0:
            others |= q << (2 * n_o)
            n_o += 1
    for sub in range(1 << n_o):
        mask = 1 << s
        k = 1
        nat_pts = vals[c]
        for i in range(n_o):
            if sub >> i & 1:
                q = (others >> (2 * i)) & 3
                mask |= 1 << q
                k += 1
                nat_pts += vals[q * 13 + r]
        for j in range(3):
            if j > jk or not (3 <= k + j <= 4) or (j > 0 and k + j != 3):
                continue
            tp = nat_pts + 15 * j
            tb[n, 0] = GROUP_ID[r, mask, j]
            tb[n, 1] = j
            tb[n, 2] = tp
            tb[n, 3] = nat_pts + vals[JOKER] * j
            tb[n, 4] = 1
            tb[n, 5] = r
            tb[n, 6] = 0
            tb[n, 7] = 0
            tb[n, 8] = mask
            tb[n, 9] = j
            n += 1
    # runs: the window lo..hi grows one position at a time, its jokers (99 once it holds a
    # natural the search left in hand), points and value summed as it grows
    for pi in range(2 if r == 0 else 1):
        p = (0 if pi == 0 else 13) if r == 0 else r
        low_miss = 0  # naturals missing from lo..p, and whether one was left in hand
        low_left = False
        for lo in range(p, -1, -1):
            x = _pos_card(s, lo)
            if avail[x] == 0:
                low_miss += 1
                low_left = low_left or skipped[x] > 0
            if (99 if low_left else low_miss) > jk:
                break
            first = max(p, lo + 2)
            miss = 0
            left_out = False
            jmask = 0
            tp = 0
            value = 0
            for pos in range(lo, 14):
                if lo == 0 and pos == 13:
                    break  # no run is both low and high
                x = _pos_card(s, pos)
                if avail[x] > 0:
                    tp += low_ace if pos == 0 else vals[x]
                    value += vals[x]
                else:
                    miss += 1
                    left_out = left_out or skipped[x] > 0
                    jmask |= 1 << pos
                    tp += 15
                    value += vals[JOKER]
                if pos < first:
                    continue
                hi = pos
                jn = 99 if left_out else miss
                if jn > jk:
                    break
                first = pos + 1  # the window grows by one from here
                if hi - lo + 1 > 3 and (
                    avail[_pos_card(s, lo)] == 0 or avail[_pos_card(s, hi)] == 0
                ):
                    continue  # longer runs end in naturals; the lay-off pass adds jokers
                tb[n, 0] = RUN_ID[s, lo, hi]
                tb[n, 1] = jn
                tb[n, 2] = tp
                tb[n, 3] = value
                tb[n, 4] = 2
                tb[n, 5] = s
                tb[n, 6] = lo
                tb[n, 7] = hi
                tb[n, 8] = ((1 << (hi + 1)) - (1 << lo)) & ~jmask
                tb[n, 9] = jmask
                n += 1
    return n - start


@kernel(inline="always")
def no_meld_holds(c, avail):
    """Is it certain that :func:`node_templates` lists no template holding the lowest card
    ``c`` (so that its node's only branch leaves ``c`` in hand)? No group: fewer than 3
    suits of its rank with the jokers a group may use; no run: no 3 positions of its suit
    around it with at most as many missing as jokers. Every template ``node_templates`` lists
    has one of these (a longer run has 3 positions around ``c`` with no more missing), so a
    ``True`` is exact; a ``False`` may still find none.
    """
    jk = avail[JOKER]
    if jk >= 2:
        return False  # c and two jokers
    s = c // 13
    r = c % 13
    n_o = 0
    for q in range(4):
        if q != s and avail[q * 13 + r] > 0:
            n_o += 1
    if n_o >= 2 or (n_o >= 1 and jk >= 1):
        return False
    if r == 0:  # the ace: low (A 2 3) or high (Q K A)
        if np.int64(avail[s * 13 + 1] == 0) + np.int64(avail[s * 13 + 2] == 0) <= jk:
            return False
        return np.int64(avail[s * 13 + 11] == 0) + np.int64(avail[s * 13 + 12] == 0) > jk
    for lo in range(max(0, r - 2), min(r, 11) + 1):
        miss = 0
        for pos in range(lo, lo + 3):
            if pos != r and avail[_pos_card(s, pos)] == 0:
                miss += 1
        if miss <= jk:
            return False
    return True


@kernel(inline="always")
def keep_loose(c, avail, skipped, kept, n_kept, nodes, node_limit, stop):
    """From the lowest card at or after ``c``, make in place the nodes whose card
    :func:`no_meld_holds` (their only branch: the card left in hand, recorded in ``kept``),
    each counted, until a card some template may hold, none left (``JOKER``), the node limit
    passed, or ``stop`` (a bound that prunes the node, the same all along). Returns
    (card, cards in ``kept``, nodes).
    """
    while True:
        while c < JOKER and avail[c] == 0:
            c += 1
        if c == JOKER or nodes > node_limit or stop or not no_meld_holds(c, avail):
            return c, n_kept, nodes
        avail[c] -= 1
        skipped[c] += 1
        kept[n_kept] = c
        n_kept += 1
        nodes += 1


@kernel(inline="always")
def unkeep(avail, skipped, kept, n_kept, to):
    """Put back the cards ``kept[to:n_kept]`` left in hand by :func:`keep_loose`; returns
    ``to``.
    """
    while n_kept > to:
        n_kept -= 1
        x = kept[n_kept]
        skipped[x] -= 1
        avail[x] += 1
    return n_kept


@kernel(counted=False)
def take_template(tb, row, avail, sign, oblig):
    """Move the cards of template row ``row`` out of (``sign`` -1) or back into (+1) ``avail``;
    returns whether the meld holds the card ``oblig``.
    """
    j = tb[row, 1]
    key = tb[row, 5]
    nat = tb[row, 8]
    hit = oblig == JOKER and j > 0
    if tb[row, 4] == 1:
        for q in range(4):
            if nat >> q & 1:
                x = q * 13 + key
                avail[x] += sign
                hit = hit or x == oblig
    else:
        for pos in range(tb[row, 6], tb[row, 7] + 1):
            if nat >> pos & 1:
                x = _pos_card(key, pos)
                avail[x] += sign
                hit = hit or x == oblig
    avail[JOKER] += sign * j
    return hit


@kernel(inline="always")
def _fit_set(melds, k):
    """Bitmask (by card) of the naturals that lay off on meld row ``k``: what
    :func:`fit_natural_at` accepts, as a set (a group's missing suits of its rank, a run's
    cards at either end).
    """
    kind = melds[k, 0]
    key = melds[k, 1]
    nat = melds[k, 4]
    out = 0
    if kind == 1:
        if not 0 <= key <= 12 or _bits(nat) + melds[k, 5] >= 4:
            return 0
        for q in range(4):
            if (nat >> q) & 1 == 0:
                out |= 1 << (q * 13 + key)
        return out
    if not 0 <= key <= 3:  # (any other kind reads as a run, as fit_natural_at reads it)
        return 0
    lo = melds[k, 2]
    hi = melds[k, 3]
    if 2 <= lo <= 13:
        out |= 1 << (key * 13 + lo - 1)
    if 1 <= hi + 1 <= 12:
        out |= 1 << (key * 13 + hi + 1)
    if (hi == 12 and lo > 0) or (lo == 1 and hi < 13):
        out |= 1 << (key * 13)
    return out


@kernel(inline="always")
def _fit_sets(melds, nm):
    """The union of :func:`_fit_set` over the first ``nm`` meld rows."""
    out = 0
    for k in range(nm):
        out |= _fit_set(melds, k)
    return out


@kernel(counted=False)
def lay_off(melds, nm, left, steps, ns, pts, sat, oblig, oblig_new, vals, low_ace):
    """The leaf's greedy lay-off pass (``MeldPlanner._leaf``): every leftover natural onto the
    first meld row it fits, then one joker, repeated while anything fits; appends the steps
    from row ``ns``. Returns (points, obligation met, steps).
    """
    changed = True
    while changed:
        changed = False
        # the cards some row may take (grown as rows change): the rest need no row scan
        fits = _fit_sets(melds, nm)
        for c in range(52):
            if (fits >> c) & 1 == 0:
                continue
            while left[c] > 0:
                placed = False
                for k in range(nm):
                    pos = fit_natural_at(melds[k, 0], melds[k, 1], melds[k, 2], melds[k, 3],
                                         melds[k, 4], melds[k, 5], c)  # fmt: skip
                    if pos >= 0:
                        place(melds, k, c, pos)
                        fits |= _fit_set(melds, k)
                        left[c] -= 1
                        pts += low_ace if pos == 0 else vals[c]
                        steps[ns, 0] = STEP_LAYOFF
                        steps[ns, 1] = c
                        steps[ns, 2] = k
                        ns += 1
                        if c == oblig and not oblig_new:
                            sat = True
                        changed = True
                        placed = True
                        break
                if not placed:
                    break
        if left[JOKER] > 0:
            k, e, pos = joker_spot(melds, nm, left)
            if k >= 0:
                place(melds, k, JOKER, pos)
                left[JOKER] -= 1
                pts += 15
                steps[ns, 0] = STEP_JOKER
                steps[ns, 1] = k
                steps[ns, 2] = e
                ns += 1
                if oblig == JOKER and not oblig_new:
                    sat = True
                changed = True
    return pts, sat, ns


@kernel
def plan_work(cards, slots):
    """The buffers of a plan search (:func:`plan_best_in`, :func:`plan_best51_in`) of a hand
    of up to ``cards`` naturals on a table of up to ``slots`` melds; kept from call to call
    (an agent's scratch) so that a search allocates nothing.

    Returns:
        (frames (10, cards + 1): per depth the card, first template row, templates, next
        branch, penalty removed, points, obligation met, then the new melds' templates, the
        cards left in hand without a node (:func:`no_meld_holds`) and, per depth, how many of
        them were left when its node was entered;
        the templates (rows, :data:`TPL_FIELDS`); the new melds (cards + 1, 6); the melds of
        a leaf (slots + cards + 1, 6); a leaf's steps (:data:`MAX_HAND` + 1, 3); the counts
        (3, 53): available, left in hand by the search, left by the plan). ``cards`` bounds the
        naturals; the steps take a hand of up to ``max(MAX_HAND, cards)`` cards.
    """
    cap = cards + 1
    return (
        np.empty((10, cap), np.int64),
        np.empty((cap * MAX_TEMPLATES, TPL_FIELDS), np.int64),
        np.empty((cap, 6), np.int64),
        np.empty((slots + cap, 6), np.int64),
        np.empty((max(MAX_HAND, cards) + 1, 3), np.int64),
        np.empty((3, NUM_TYPES), np.int64),
    )


@kernel(inline="always")
def work_fits(work, hand, n_table, out_steps):
    """Can the search of ``hand`` on a table of ``n_table`` melds run in ``work`` (and are
    the arguments ones the search accepts: counts >= 0, ``out_steps`` a row per card)?
    """
    total = 0
    naturals = 0
    for x in range(NUM_TYPES):
        if hand[x] < 0:
            return False
        total += hand[x]
        if x < JOKER:
            naturals += hand[x]
    cap = naturals + 1
    return (
        cap <= work[0].shape[1]
        and n_table + cap <= work[3].shape[0]
        and total + 1 <= work[4].shape[0]
        and out_steps.shape[0] >= total
    )


@kernel
def _checked_cards(hand, out_steps):
    """The cards of ``hand``; ``ValueError`` for a negative count or ``out_steps`` with fewer
    rows than the hand has cards.
    """
    total = 0
    for x in range(NUM_TYPES):
        if hand[x] < 0:  # a malformed hand: the search's buffers would be sized wrong
            raise ValueError("hand counts must be >= 0")
        total += hand[x]
    if out_steps.shape[0] < total:
        raise ValueError("out_steps has fewer rows than the hand has cards")
    return total


@kernel(counted=False)
def table_size(table):
    """Melds of a table array: the slots before the first empty one (kind 0)."""
    n = 0
    while n < table.shape[0] and table[n, 0] != 0:
        n += 1
    return n


@kernel
def plan_best(hand, table, oblig, oblig_new, vals, low_ace, node_limit, out_steps, out_left):
    """``MeldPlanner.best`` of one position.

    Args:
        hand: 53 card counts (a negative count raises ``ValueError``).
        table: table melds (slots, 6), read up to the first empty slot.
        oblig: card type that must be melded this turn (-1: none).
        oblig_new: the obligation needs a new meld (a lay-off does not do).
        vals: points of each card type in hand (:func:`card_values`).
        low_ace: points of an ace low in a run (1, or 5 with ``values_5_10_15``).
        node_limit: search nodes before the best plan so far is returned.
        out_steps: (at least the hand's card count, 3): the plan's steps (a plan has at most
            one step per card; fewer rows raise ``ValueError``).
        out_left: (53,): the counts the plan leaves in hand.

    Returns:
        (found, points, steps): ``found`` False where no plan melds the obligation (the
        outputs are then untouched).
    """
    n_table = table_size(table)
    work = plan_work(_checked_cards(hand, out_steps), n_table)
    return _best_search(work, hand, table, n_table, oblig, oblig_new, vals, low_ace, node_limit,
                        out_steps, out_left)  # fmt: skip


@kernel(counted=False)
def plan_best_in(work, hand, table, oblig, oblig_new, vals, low_ace, node_limit, out_steps,
                 out_left):  # fmt: skip
    """:func:`plan_best` in the buffers ``work`` (:func:`plan_work`), kept from call to call;
    a position beyond them, or arguments :func:`plan_best` refuses, go to it.
    """
    n_table = table_size(table)
    if not work_fits(work, hand, n_table, out_steps):
        return plan_best(hand, table, oblig, oblig_new, vals, low_ace, node_limit, out_steps,
                         out_left)  # fmt: skip
    return _best_search(work, hand, table, n_table, oblig, oblig_new, vals, low_ace, node_limit,
                        out_steps, out_left)  # fmt: skip


@kernel(counted=False)
def _best_search(work, hand, table, n_table, oblig, oblig_new, vals, low_ace, node_limit,
                 out_steps, out_left):  # fmt: skip
    """The search of :func:`plan_best` in ``work``, large enough for the position."""
    frames, tb, new, melds, steps, counts = work
    fr_c, fr_start, fr_n, fr_i = frames[0], frames[1], frames[2], frames[3]
    fr_pts, fr_sat, new_t = frames[5], frames[6], frames[7]
    kept, fr_kept = frames[8], frames[9]
    avail, skipped, left = counts[0], counts[1], counts[2]
    rest = 0  # value of the cards not in a new meld: the bound's "melding every card left"
    for x in range(NUM_TYPES):
        avail[x] = hand[x]
        skipped[x] = 0
        rest += vals[x] * hand[x]
    nodes = 0
    depth = 0
    n_new = 0
    found = False
    best_pts = 0
    best_n = 0
    # the pending call of ``_search(avail, skipped, new, steps, call_pts, call_sat)``
    call = True
    call_pts = 0
    call_sat = oblig < 0
    call_from = 0  # the lowest natural left is never below its parent's
    n_kept = 0  # the cards of ``kept``: left in hand by nodes without templates
    while True:
        if call:
            call = False
            nodes += 1
            # (most nodes) no template holds the lowest card: the node's only branch keeps it
            # in hand, a call with the same arguments (and bound); made here, counted
            pruned = found and call_pts + rest <= best_pts
            c, n_kept, nodes = keep_loose(
                call_from, avail, skipped, kept, n_kept, nodes, node_limit, pruned
            )
            if c == JOKER or nodes > node_limit:
                # the leaf's lay-offs add at most the value of the cards left (an ace laid low
                # less): a leaf under the best plan's points is not laid out (it would not
                # replace it), as the bound prunes the inner nodes
                if not pruned:
                    for x in range(NUM_TYPES):
                        left[x] = avail[x] + skipped[x]
                    for k in range(n_table):
                        for f in range(6):
                            melds[k, f] = table[k, f]
                    for q in range(n_new):
                        for f in range(6):
                            melds[n_table + q, f] = new[q, f]
                        steps[q, 0] = STEP_MELD
                        steps[q, 1] = new_t[q]
                        steps[q, 2] = 0
                    pts, sat, ns = lay_off(melds, n_table + n_new, left, steps, n_new, call_pts,
                                           call_sat, oblig, oblig_new, vals, low_ace)  # fmt: skip
                    if sat and (not found or pts > best_pts):
                        found = True
                        best_pts = pts
                        best_n = ns
                        for q in range(ns):
                            for f in range(3):
                                out_steps[q, f] = steps[q, f]
                        for x in range(NUM_TYPES):
                            out_left[x] = left[x]
            elif not pruned:
                start = 0 if depth == 0 else fr_start[depth - 1] + fr_n[depth - 1]
                fr_n[depth] = node_templates(c, avail, skipped, tb, start, vals, low_ace)
                fr_c[depth] = c
                fr_start[depth] = start
                fr_i[depth] = 0
                fr_pts[depth] = call_pts
                fr_sat[depth] = call_sat
                fr_kept[depth] = n_kept
                depth += 1
        if depth == 0:
            break
        f = depth - 1
        n_kept = unkeep(avail, skipped, kept, n_kept, fr_kept[f])  # below the last branch
        c = fr_c[f]
        i = fr_i[f]
        n = fr_n[f]
        if i > 0:  # undo the branch just searched
            if i - 1 < n:
                row = fr_start[f] + i - 1
                take_template(tb, row, avail, 1, oblig)
                n_new -= 1
                rest += tb[row, 3]
            else:
                skipped[c] -= 1
                avail[c] += 1
                depth -= 1
                continue
        fr_i[f] = i + 1
        if i < n:  # the next template holding c
            row = fr_start[f] + i
            hit = take_template(tb, row, avail, -1, oblig)
            for q in range(6):
                new[n_new, q] = tb[row, 4 + q]
            new_t[n_new] = tb[row, 0]
            n_new += 1
            rest -= tb[row, 3]
            call_pts = fr_pts[f] + tb[row, 2]
            call_sat = fr_sat[f] != 0 or hit
        else:  # c stays in hand (it may still be laid off)
            avail[c] -= 1
            skipped[c] += 1
            call_pts = fr_pts[f]
            call_sat = fr_sat[f] != 0
        call = True
        call_from = c
    return found, best_pts, best_n


@kernel
def plan_turn(hand, table, oblig, oblig_new, vals, low_ace, node_limit, out_steps, out_left):
    """``five_hundred_rum_greedy.turn_plan`` of one position: :func:`plan_best`, and when the
    owed card must go into a new meld and no plan does that, a plan that lays it off instead
    (:func:`plan_turn_in` in buffers sized for the position, both searches in them).
    """
    work = plan_work(_checked_cards(hand, out_steps), table_size(table))
    return plan_turn_in(work, hand, table, oblig, oblig_new, vals, low_ace, node_limit,
                        out_steps, out_left)  # fmt: skip


@kernel(counted=False)
def plan_turn_in(work, hand, table, oblig, oblig_new, vals, low_ace, node_limit, out_steps,
                 out_left):  # fmt: skip
    """:func:`plan_turn` in the buffers ``work`` (:func:`plan_best_in`)."""
    found, pts, ns = plan_best_in(work, hand, table, oblig, oblig_new, vals, low_ace, node_limit,
                                  out_steps, out_left)  # fmt: skip
    if not found and oblig_new:
        found, pts, ns = plan_best_in(work, hand, table, oblig, False, vals, low_ace, node_limit,
                                      out_steps, out_left)  # fmt: skip
    return found, pts, ns


@kernel
def plan_batch(hands, tables, obligs, oblig_new, turn, vals, low_ace, node_limit, found, points,
               n_steps, steps, left):  # fmt: skip
    """:func:`plan_best` (or with ``turn`` :func:`plan_turn`) of each position ``b``: hands
    (B, 53), tables (B, slots, 6), obligations (B,), ``oblig_new`` (B,); writes ``found``,
    ``points``, ``n_steps`` (B,), ``steps`` (B, S, 3) with S at least the largest hand, and
    ``left`` (B, 53). Where no plan is found, points and steps are 0 and ``left`` the hand.
    """
    for b in range(hands.shape[0]):
        if turn:
            ok, pts, ns = plan_turn(hands[b], tables[b], obligs[b], oblig_new[b], vals, low_ace,
                                    node_limit, steps[b], left[b])  # fmt: skip
        else:
            ok, pts, ns = plan_best(hands[b], tables[b], obligs[b], oblig_new[b], vals, low_ace,
                                    node_limit, steps[b], left[b])  # fmt: skip
        found[b] = ok
        points[b] = pts if ok else 0
        n_steps[b] = ns if ok else 0
        if not ok:
            for x in range(NUM_TYPES):
                left[b, x] = hands[b, x]


# -- Rummy 51 ------------------------------------------------------------------------------------


@kernel(inline="always")
def discardable(left, hand0, taken):
    """Does ``left`` hold a card the player may discard (not the card ``taken`` from the pile
    this turn, unless it was melded or another copy is held)?
    """
    free = taken < 0 or left[taken] < hand0[taken]
    for x in range(NUM_TYPES):
        if left[x] > 0 and (x != taken or free or left[x] >= 2):
            return True
    return False


@kernel(counted=False)
def lay_off51(melds, nm, left, steps, ns, removed, hand0, taken):
    """``Rummy51Planner._lay_off``: the lay-off pass keeping a card to discard; returns
    (penalty removed, steps).
    """
    changed = True
    while changed:
        changed = False
        fits = _fit_sets(melds, nm)  # as lay_off: the cards some row may take
        for c in range(52):
            if (fits >> c) & 1 == 0:
                continue
            while left[c] > 0:
                k = 0
                at = -1
                while k < nm:
                    at = fit_natural_at(melds[k, 0], melds[k, 1], melds[k, 2], melds[k, 3],
                                        melds[k, 4], melds[k, 5], c)  # fmt: skip
                    if at >= 0:
                        break
                    k += 1
                if k == nm:
                    break
                left[c] -= 1
                if not discardable(left, hand0, taken):
                    left[c] += 1
                    break
                place(melds, k, c, at)
                fits |= _fit_set(melds, k)
                removed += PENALTY51[c]
                steps[ns, 0] = STEP_LAYOFF
                steps[ns, 1] = c
                steps[ns, 2] = k
                ns += 1
                changed = True
        if left[JOKER] > 0:
            k, e, pos = joker_spot(melds, nm, left)
            if k >= 0:
                left[JOKER] -= 1
                if not discardable(left, hand0, taken):
                    left[JOKER] += 1
                    continue
                place(melds, k, JOKER, pos)
                removed += PENALTY51[JOKER]
                steps[ns, 0] = STEP_JOKER
                steps[ns, 1] = k
                steps[ns, 2] = e
                ns += 1
                changed = True
    return removed, ns


@kernel
def plan_best51(hand, table, opened, need, must_open, oblig, taken, layoffs, node_limit,
                out_steps, out_left):  # fmt: skip
    """``Rummy51Planner.best`` of one position: the plan removing the most penalty.

    The same frame stack as :func:`plan_best`, with Rummy 51's search: no bound (every node
    until ``node_limit``), the meld holding the owed card ``oblig`` laid first, leaves valid
    only when the new melds reach ``need`` opening points (unless there are none), with a
    meld under ``must_open``, and with a card left to discard; lay-offs (``layoffs``) only once
    ``opened`` or when the plan has new melds. A leaf whose melds and cards left could not
    remove more than the best plan so far is not laid out (it would not replace it: the same
    plan). A negative count in ``hand`` raises ``ValueError``.

    Returns:
        (found, penalty removed, steps), as :func:`plan_best`.
    """
    n_table = table_size(table)
    work = plan_work(_checked_cards(hand, out_steps), n_table)
    return _best51_search(work, hand, table, n_table, opened, need, must_open, oblig, taken,
                          layoffs, node_limit, out_steps, out_left, False, out_steps,
                          out_left)[:3]  # fmt: skip


@kernel(counted=False)
def plan_best51_in(work, hand, table, opened, need, must_open, oblig, taken, layoffs,
                   node_limit, out_steps, out_left):  # fmt: skip
    """:func:`plan_best51` in the buffers ``work`` (:func:`plan_work`), kept from call to
    call; a position beyond them, or arguments :func:`plan_best51` refuses, go to it.
    """
    n_table = table_size(table)
    if not work_fits(work, hand, n_table, out_steps):
        return plan_best51(hand, table, opened, need, must_open, oblig, taken, layoffs,
                           node_limit, out_steps, out_left)  # fmt: skip
    return _best51_search(work, hand, table, n_table, opened, need, must_open, oblig, taken,
                          layoffs, node_limit, out_steps, out_left, False, out_steps,
                          out_left)[:3]  # fmt: skip


NO_VALUES = np.zeros(NUM_TYPES, np.int64)
"""Card values of :func:`node_templates` for the Rummy 51 search (it does not read the
templates' points)."""


@kernel(counted=False)
def _best51_search(work, hand, table, n_table, opened, need, must_open, oblig, taken, layoffs,
                   node_limit, out_steps, out_left, free, free_steps,
                   free_left):  # fmt: skip
    """The search of :func:`plan_best51` in ``work``, large enough for the position; with
    ``free`` also the free arrangement of the same hand (``plan_best51(hand, <no table>,
    False, 0, False, -1, taken, False, node_limit)``) into ``free_steps`` / ``free_left``: the
    search tree does not depend on the table, need, owed card or lay-offs, only the leaves do.

    Returns:
        (found, best, steps) and the free arrangement's (found, best, steps) (False, 0, 0
        without ``free``).
    """
    frames, tb, new, melds, steps, counts = work
    fr_c, fr_start, fr_n, fr_i = frames[0], frames[1], frames[2], frames[3]
    fr_removed, fr_pts, fr_sat, new_t = frames[4], frames[5], frames[6], frames[7]
    kept, fr_kept = frames[8], frames[9]
    avail, skipped, left = counts[0], counts[1], counts[2]
    vals = NO_VALUES
    need = 0 if opened else need
    for x in range(NUM_TYPES):
        avail[x] = hand[x]
        skipped[x] = 0
    nodes = 0
    depth = 0
    n_new = 0
    front = -1  # the new meld holding the owed card: laid first (-1: none on the path)
    found = False
    best = 0
    best_n = 0
    call = True
    call_removed = 0
    call_pts = 0
    call_sat = oblig < 0
    call_from = 0
    f_found = False
    f_best = 0
    f_n = 0
    n_kept = 0  # the cards of ``kept``: left in hand by nodes without templates
    while True:
        if call:
            call = False
            nodes += 1
            # (most nodes) no template holds the lowest card: the node's only branch keeps it
            # in hand, a call with the same arguments; made here, without a frame, counted
            c, n_kept, nodes = keep_loose(
                call_from, avail, skipped, kept, n_kept, nodes, node_limit, False
            )
            if c == JOKER or nodes > node_limit:
                if free and (not f_found or call_removed > f_best):
                    # the free arrangement's leaf: any melds, none laid first, no lay-offs
                    for x in range(NUM_TYPES):
                        left[x] = avail[x] + skipped[x]
                    if discardable(left, hand, taken):
                        f_found = True
                        f_best = call_removed
                        f_n = n_new
                        for q in range(n_new):
                            free_steps[q, 0] = STEP_MELD
                            free_steps[q, 1] = new_t[q]
                            free_steps[q, 2] = 0
                        for x in range(NUM_TYPES):
                            free_left[x] = left[x]
                ok = call_sat and not (n_new > 0 and call_pts < need)
                ok = ok and not (must_open and n_new == 0)
                lay = layoffs and (opened or n_new > 0)
                if ok:
                    # the most this leaf may remove: its melds, and with lay-offs every card
                    # left; a leaf that cannot beat the best plan so far would not replace it
                    bound = call_removed
                    for x in range(NUM_TYPES):
                        left[x] = avail[x] + skipped[x]
                        bound += PENALTY51[x] * left[x]
                    ok = not found or (bound if lay else call_removed) > best
                if ok:
                    ok = discardable(left, hand, taken)
                if ok:
                    ns = 0
                    for q in range(-1, n_new):  # the front meld, then the others in order
                        if (q < 0 and front < 0) or (q >= 0 and q == front):
                            continue
                        g = front if q < 0 else q
                        for f in range(6):
                            melds[n_table + ns, f] = new[g, f]
                        steps[ns, 0] = STEP_MELD
                        steps[ns, 1] = new_t[g]
                        steps[ns, 2] = 0
                        ns += 1
                    removed = call_removed
                    if lay:
                        for k in range(n_table):
                            for f in range(6):
                                melds[k, f] = table[k, f]
                        removed, ns = lay_off51(melds, n_table + n_new, left, steps, ns,
                                                removed, hand, taken)  # fmt: skip
                    if not found or removed > best:
                        found = True
                        best = removed
                        for q in range(ns):
                            for f in range(3):
                                out_steps[q, f] = steps[q, f]
                        for x in range(NUM_TYPES):
                            out_left[x] = left[x]
                        best_n = ns
            else:
                start = 0 if depth == 0 else fr_start[depth - 1] + fr_n[depth - 1]
                fr_n[depth] = node_templates(c, avail, skipped, tb, start, vals, 0)
                fr_c[depth] = c
                fr_start[depth] = start
                fr_i[depth] = 0
                fr_removed[depth] = call_removed
                fr_pts[depth] = call_pts
                fr_sat[depth] = call_sat
                fr_kept[depth] = n_kept
                depth += 1
        if depth == 0:
            break
        f = depth - 1
        n_kept = unkeep(avail, skipped, kept, n_kept, fr_kept[f])  # below the last branch
        c = fr_c[f]
        i = fr_i[f]
        n = fr_n[f]
        if i > 0:
            if i - 1 < n:
                take_template(tb, fr_start[f] + i - 1, avail, 1, oblig)
                n_new -= 1
                if front == n_new:
                    front = -1
            else:
                skipped[c] -= 1
                avail[c] += 1
                depth -= 1
                continue
        fr_i[f] = i + 1
        if i < n:
            row = fr_start[f] + i
            hit = take_template(tb, row, avail, -1, oblig)
            for q in range(6):
                new[n_new, q] = tb[row, 4 + q]
            t = tb[row, 0]
            new_t[n_new] = t
            if hit and fr_sat[f] == 0:
                front = n_new
            n_new += 1
            gain = PENALTY51[JOKER] * tb[row, 1]
            key = tb[row, 5]
            nat = tb[row, 8]
            if tb[row, 4] == 1:
                for q in range(4):
                    if nat >> q & 1:
                        gain += PENALTY51[q * 13 + key]
            else:
                for pos in range(tb[row, 6], tb[row, 7] + 1):
                    if nat >> pos & 1:
                        gain += PENALTY51[_pos_card(key, pos)]
            call_removed = fr_removed[f] + gain
            call_pts = fr_pts[f] + TPL_VAL51[t]
            call_sat = fr_sat[f] != 0 or hit
        else:
            avail[c] -= 1
            skipped[c] += 1
            call_removed = fr_removed[f]
            call_pts = fr_pts[f]
            call_sat = fr_sat[f] != 0
        call = True
        call_from = c
    return found, best, best_n, f_found, f_best, f_n


@kernel(counted=False)
def nodes_within(hand, node_limit, work):
    """Does the search of ``hand`` (:func:`_best51_search`, whatever the table, need, owed
    and taken cards: its tree depends on the hand only) provably visit at most ``node_limit``
    nodes, so that no node limit cuts it short? ``work``: search buffers (:func:`plan_work`),
    written as scratch.

    The bound: a call starting at a card counts one node, one more for each card it leaves in
    hand by :func:`no_meld_holds`, and at the first card that may branch makes one call per
    template holding it and one leaving it in hand, each starting at a later card (copies of
    a card are cards of their own). At a node of card ``c`` no lower card is available, and a
    card's templates (and whether it may branch at all) only shrink as cards leave ``avail``
    or are left in hand, so counting them with every card from ``c`` up available, from the
    highest card down, bounds every call. ``False`` may still be a small tree.
    """
    tb = work[1]
    avail = work[5][0]
    for x in range(JOKER):
        avail[x] = 0
    avail[JOKER] = hand[JOKER]
    bound = 1  # the nodes of a call starting above every card
    for c in range(JOKER - 1, -1, -1):
        avail[c] = hand[c]
        for _ in range(hand[c]):
            if no_meld_holds(c, avail):
                bound += 1
            else:  # (none left in hand: NO_VALUES is zeros)
                n = node_templates(c, avail, NO_VALUES, tb, 0, NO_VALUES, 0)
                bound = 1 + (n + 1) * bound
            if bound > node_limit:
                return False
    return True


MEMO51 = 8
"""Plans the memo of :func:`plan51_memo` keeps (the last ones computed). An opponent's turn
repeats a plan within a few calls (the draw's plan of hand + discard is the play's first plan,
the draw's free arrangement of hand + discard is the discard's): about 13% of the greedy
opponent's planning time."""
# a memo row: the key (hash of the hand, then every other argument), the result, the hand,
# the cards left, the table's melds, the steps; row 0 holds (slots, cards, next row to replace)
M_HASH, M_NTAB, M_OPENED, M_NEED, M_MUST, M_OBLIG, M_TAKEN, M_LAYOFFS, M_NODES = range(9)
M_FOUND, M_BEST, M_NS = 9, 10, 11
M_HAND = 12
M_LEFT = M_HAND + NUM_TYPES
M_TABLE = M_LEFT + NUM_TYPES


@kernel
def plan51_memo(slots, cards):
    """An empty memo of :func:`plan_best51_memo`: the last :data:`MEMO51` plans of tables of
    up to ``slots`` melds and hands of up to ``cards`` cards (others are planned without it),
    as one int64 array (it passes in and out of compiled code cheaply).
    """
    memo = np.zeros((MEMO51 + 1, M_TABLE + slots * 6 + cards * 3), np.int64)
    memo[0, 0] = slots
    memo[0, 1] = cards
    for e in range(1, MEMO51 + 1):
        memo[e, M_HASH] = -1  # no hand hashes to -1: the row is empty
    return memo


@kernel(inline="always")
def _hand_hash(hand):
    h = 0
    for x in range(NUM_TYPES):
        h += hand[x] * (x * 7919 + 1)
    return h & 0x7FFFFFFFFFFFFFFF


@kernel(counted=False)
def _memo_find(memo, h, hand, table, n_table, opened, need, must_open, oblig, taken, layoffs,
               node_limit):  # fmt: skip
    """The memo row holding these arguments (``h``: the hand's hash), -1 if none."""
    for e in range(1, MEMO51 + 1):
        row = memo[e]
        if not (row[M_HASH] == h and row[M_NTAB] == n_table and row[M_OPENED] == opened
                and row[M_NEED] == need and row[M_MUST] == must_open
                and row[M_OBLIG] == oblig and row[M_TAKEN] == taken
                and row[M_LAYOFFS] == layoffs and row[M_NODES] == node_limit):  # fmt: skip
            continue
        same = True
        for x in range(NUM_TYPES):
            if row[M_HAND + x] != hand[x]:
                same = False
        for k in range(n_table if same else 0):
            for f in range(6):
                if row[M_TABLE + 6 * k + f] != table[k, f]:
                    same = False
        if same:
            return e
    return -1


@kernel(counted=False)
def _memo_read(memo, e, out_steps, out_left):
    """The plan of memo row ``e`` into the outputs: (found, best, steps)."""
    row = memo[e]
    found = row[M_FOUND] != 0
    if found:  # (none found: the outputs stay untouched, as the search leaves them)
        m_steps = M_TABLE + memo[0, 0] * 6
        for q in range(row[M_NS]):
            for f in range(3):
                out_steps[q, f] = row[m_steps + 3 * q + f]
        for x in range(NUM_TYPES):
            out_left[x] = row[M_LEFT + x]
    return found, row[M_BEST], row[M_NS]


@kernel(counted=False)
def _memo_store(memo, h, hand, table, n_table, opened, need, must_open, oblig, taken, layoffs,
                node_limit, found, best, ns, out_steps, out_left):  # fmt: skip
    """Keep a plan in the memo, in place of the oldest one."""
    e = memo[0, 2] + 1
    memo[0, 2] = e % MEMO51
    row = memo[e]
    row[M_HASH] = h
    row[M_NTAB] = n_table
    row[M_OPENED] = opened
    row[M_NEED] = need
    row[M_MUST] = must_open
    row[M_OBLIG] = oblig
    row[M_TAKEN] = taken
    row[M_LAYOFFS] = layoffs
    row[M_NODES] = node_limit
    row[M_FOUND] = found
    row[M_BEST] = best
    row[M_NS] = ns
    for x in range(NUM_TYPES):
        row[M_HAND + x] = hand[x]
    for k in range(n_table):
        for f in range(6):
            row[M_TABLE + 6 * k + f] = table[k, f]
    if found:  # a plan has at most a step per card: ns <= total <= cards
        m_steps = M_TABLE + memo[0, 0] * 6
        for q in range(ns):
            for f in range(3):
                row[m_steps + 3 * q + f] = out_steps[q, f]
        for x in range(NUM_TYPES):
            row[M_LEFT + x] = out_left[x]


@kernel(inline="always")
def _memo_fits(memo, hand, n_table, out_steps) -> bool:
    """Can the memo hold this position (and are the outputs ones the search accepts)?"""
    total = 0
    for x in range(NUM_TYPES):
        total += hand[x]
    return n_table <= memo[0, 0] and total <= memo[0, 1] and out_steps.shape[0] >= total


@kernel(counted=False)
def plan_best51_memo(memo, hand, table, opened, need, must_open, oblig, taken, layoffs,
                     node_limit, out_steps, out_left, work=None):  # fmt: skip
    """:func:`plan_best51` (the same results, outputs and errors), answered from ``memo``
    (:func:`plan51_memo`) when the same arguments were planned lately. The memo is keyed on
    every input of the search (the hand, the table's melds, the flags, ``need`` as the search
    reads it, the owed and taken cards, the node limit), so a hit is the plan the search would
    find. A miss searches in the buffers ``work`` (:func:`plan_work`) if given.
    """
    n_table = table_size(table)
    need = 0 if opened else need
    if not _memo_fits(memo, hand, n_table, out_steps):
        # beyond the memo, or arguments plan_best51 refuses (with its error)
        return plan_best51(hand, table, opened, need, must_open, oblig, taken, layoffs,
                           node_limit, out_steps, out_left)  # fmt: skip
    h = _hand_hash(hand)
    e = _memo_find(memo, h, hand, table, n_table, opened, need, must_open, oblig, taken,
                   layoffs, node_limit)  # fmt: skip
    if e >= 0:
        return _memo_read(memo, e, out_steps, out_left)
    if work is None:
        found, best, ns = plan_best51(hand, table, opened, need, must_open, oblig, taken,
                                      layoffs, node_limit, out_steps, out_left)  # fmt: skip
    else:
        found, best, ns = plan_best51_in(work, hand, table, opened, need, must_open, oblig,
                                         taken, layoffs, node_limit, out_steps,
                                         out_left)  # fmt: skip
    _memo_store(memo, h, hand, table, n_table, opened, need, must_open, oblig, taken, layoffs,
                node_limit, found, best, ns, out_steps, out_left)  # fmt: skip
    return found, best, ns


@kernel(counted=False)
def plan_best51_pair_memo(memo, hand, table, opened, need, must_open, oblig, taken,
                          node_limit, out_steps, out_left, free_steps, free_left, work,
                          empty):  # fmt: skip
    """Two plans of one hand in one search: ``plan_best51_memo(memo, hand, table, opened,
    need, must_open, oblig, taken, True, node_limit, ...)`` and the free arrangement
    ``plan_best51_memo(memo, hand, empty, False, 0, False, -1, taken, False, node_limit,
    free_steps, free_left)`` (``empty``: a table without melds), the same results, outputs
    and memo rows as those two calls (the second is kept even where the caller would not have
    asked for it). Positions beyond the memo or ``work`` make the two calls.

    Returns:
        (found, best, steps) of each.
    """
    n_table = table_size(table)
    need = 0 if opened else need
    if (
        _memo_fits(memo, hand, n_table, out_steps)
        and free_steps.shape[0] >= out_steps.shape[0]
        and table_size(empty) == 0
        and work_fits(work, hand, n_table, out_steps)
    ):
        h = _hand_hash(hand)
        e = _memo_find(memo, h, hand, table, n_table, opened, need, must_open, oblig, taken,
                       True, node_limit)  # fmt: skip
        e2 = _memo_find(memo, h, hand, empty, 0, False, 0, False, -1, taken, False, node_limit)
        if e >= 0 and e2 >= 0:
            f, v, n = _memo_read(memo, e, out_steps, out_left)
            g, w, m = _memo_read(memo, e2, free_steps, free_left)
            return f, v, n, g, w, m
        if e < 0 and e2 < 0:  # one search, both plans kept in the two calls' order
            f, v, n, g, w, m = _best51_search(work, hand, table, n_table, opened, need,
                                              must_open, oblig, taken, True, node_limit,
                                              out_steps, out_left, True, free_steps,
                                              free_left)  # fmt: skip
            _memo_store(memo, h, hand, table, n_table, opened, need, must_open, oblig, taken,
                        True, node_limit, f, v, n, out_steps, out_left)  # fmt: skip
            _memo_store(memo, h, hand, empty, 0, False, 0, False, -1, taken, False,
                        node_limit, g, w, m, free_steps, free_left)  # fmt: skip
            return f, v, n, g, w, m
    # beyond the memo or the buffers, or one of the two kept: the two memo calls
    f, v, n = plan_best51_memo(memo, hand, table, opened, need, must_open, oblig, taken, True,
                               node_limit, out_steps, out_left, work)  # fmt: skip
    g, w, m = plan_best51_memo(memo, hand, empty, False, 0, False, -1, taken, False, node_limit,
                               free_steps, free_left, work)  # fmt: skip
    return f, v, n, g, w, m


# -- Python interface ----------------------------------------------------------------------------


@dataclass
class PlanBatch:
    """Plans of a batch of positions (arrays over the batch's first axis).

    Attributes:
        found: (B,) bool: a plan melds the obligation.
        points: (B,) points melded (0 where none is found).
        n_steps: (B,) steps of each plan.
        steps: (B, S, 3) rows ``(kind, a, b)`` (kinds :data:`STEP_NAMES`); rows past
            ``n_steps`` are undefined.
        left: (B, 53) the counts each plan leaves in hand (the hand where none is found).
    """

    found: np.ndarray
    points: np.ndarray
    n_steps: np.ndarray
    steps: np.ndarray
    left: np.ndarray

    def plan(self, b: int) -> Plan | None:
        """Position ``b``'s plan as the Python planner returns it (``None`` if not found)."""
        if not self.found[b]:
            return None
        return _as_plan(int(self.points[b]), self.steps[b], int(self.n_steps[b]), self.left[b])


def _as_plan(points: int, steps: np.ndarray, n: int, left: np.ndarray) -> Plan:
    rows = steps[:n].tolist()
    return Plan(points, [(STEP_NAMES[k], a, b) for k, a, b in rows], left.tolist())


def table_array(table: list[Meld] | np.ndarray) -> np.ndarray:
    """Table melds (a list of 6-field melds or an array) as an int64 (slots, 6) array."""
    return np.asarray(table, np.int64).reshape(-1, 6)


class CompiledMeldPlanner:
    """:class:`~rummy_agents.five_hundred_rum_greedy.MeldPlanner` compiled: the same plans, with
    the same interface (``best``, ``v51015``, ``node_limit``, ``values``), plus
    :meth:`best_batch` for many positions in one call.

    Args:
        v51015: the ``values_5_10_15`` card values.
        node_limit: search nodes per plan before the best plan so far is returned.
    """

    def __init__(self, v51015: bool = False, node_limit: int = 3000) -> None:
        self.v51015 = v51015
        self.node_limit = node_limit
        self.values = card_values(v51015)
        self.low_ace = 5 if v51015 else 1
        # output buffers of single calls (a plan has at most a step per card in hand)
        self._steps = np.empty((MAX_HAND, 3), np.int64)
        self._left = np.empty(NUM_TYPES, np.int64)

    def best(
        self,
        hand: list[int] | np.ndarray,
        table: list[Meld] | np.ndarray,
        oblig: int = -1,
        oblig_new: bool = False,
    ) -> Plan | None:
        """The best plan, or ``None`` when no plan melds the obligation (as
        :meth:`MeldPlanner.best <rummy_agents.five_hundred_rum_greedy.MeldPlanner.best>`).
        """
        return self._one(hand, table, oblig, oblig_new, turn=False)

    def turn_plan(
        self,
        hand: list[int] | np.ndarray,
        table: list[Meld] | np.ndarray,
        oblig: int = -1,
        oblig_new: bool = False,
    ) -> Plan | None:
        """:func:`rummy_agents.five_hundred_rum_greedy.turn_plan` in one compiled call."""
        return self._one(hand, table, oblig, oblig_new, turn=True)

    def _one(
        self,
        hand: list[int] | np.ndarray,
        table: list[Meld] | np.ndarray,
        oblig: int,
        oblig_new: bool,
        turn: bool,
    ) -> Plan | None:
        h = np.asarray(hand, np.int64)
        steps, left = self._steps, self._left
        fn = plan_turn if turn else plan_best
        found, pts, n = fn(h, table_array(table), int(oblig), bool(oblig_new), self.values,
                           self.low_ace, int(self.node_limit), steps, left)  # fmt: skip
        return _as_plan(pts, steps, n, left) if found else None

    def best_batch(
        self,
        hands: np.ndarray,
        tables: np.ndarray,
        obligs: np.ndarray | None = None,
        oblig_new: np.ndarray | None = None,
        turn: bool = False,
    ) -> PlanBatch:
        """Plans of many positions in one compiled call.

        Args:
            hands: (B, 53) card counts.
            tables: (B, slots, 6) table melds, each read up to its first empty slot.
            obligs: (B,) owed card types (-1: none; default none).
            oblig_new: (B,) the owed card needs a new meld (default False).
            turn: plan as :func:`~rummy_agents.five_hundred_rum_greedy.turn_plan` (fall back
                to laying the owed card off).
        """
        h = np.ascontiguousarray(hands, np.int64).reshape(-1, NUM_TYPES)
        b = h.shape[0]
        t = np.ascontiguousarray(tables, np.int64).reshape(b, -1, 6)
        ob = np.full(b, -1, np.int64) if obligs is None else np.asarray(obligs, np.int64)
        on = np.zeros(b, np.bool_) if oblig_new is None else np.asarray(oblig_new, np.bool_)
        s = max(int(h.sum(axis=1).max(initial=0)), 1)
        out = PlanBatch(
            np.zeros(b, np.bool_),
            np.zeros(b, np.int64),
            np.zeros(b, np.int64),
            np.zeros((b, s, 3), np.int64),
            np.zeros((b, NUM_TYPES), np.int64),
        )
        plan_batch(h, t, ob, on, bool(turn), self.values, self.low_ace, int(self.node_limit),
                   out.found, out.points, out.n_steps, out.steps, out.left)  # fmt: skip
        return out


class CompiledRummy51Planner:
    """:class:`~rummy_agents.rummy51_greedy.Rummy51Planner` compiled (:func:`plan_best51`): the
    same plans, with the same ``best`` and ``node_limit``.

    Args:
        node_limit: search nodes per plan before the best plan so far is returned.
    """

    def __init__(self, node_limit: int = 3000) -> None:
        self.node_limit = node_limit
        self._steps = np.empty((MAX_HAND, 3), np.int64)
        self._left = np.empty(NUM_TYPES, np.int64)

    def best(
        self,
        hand: list[int] | np.ndarray,
        table: list[Meld] | np.ndarray,
        *,
        opened: bool,
        need: int = 0,
        must_open: bool = False,
        oblig: int = -1,
        taken: int = -1,
        layoffs: bool = True,
    ) -> Plan | None:
        """The plan removing the most penalty, or ``None`` when no plan is valid (arguments as
        :meth:`Rummy51Planner.best <rummy_agents.rummy51_greedy.Rummy51Planner.best>`).
        """
        steps, left = self._steps, self._left
        found, pts, n = plan_best51(np.asarray(hand, np.int64), table_array(table), bool(opened),
                                    int(need), bool(must_open), int(oblig), int(taken),
                                    bool(layoffs), int(self.node_limit), steps, left)  # fmt: skip
        return _as_plan(pts, steps, n, left) if found else None


__all__ = [
    "STEP_NAMES",
    "CompiledMeldPlanner",
    "CompiledRummy51Planner",
    "PlanBatch",
    "card_values",
    "plan_batch",
    "plan_best",
    "plan_best_in",
    "plan51_memo",
    "plan_best51",
    "plan_best51_in",
    "plan_best51_memo",
    "plan_best51_pair_memo",
    "plan_turn",
    "plan_turn_in",
    "plan_work",
    "nodes_within",
    "table_array",
]
