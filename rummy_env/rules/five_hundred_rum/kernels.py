"""500 Rum rules as compiled kernels over state records (RULES.md §2).

One implementation for the AEC env (a batch of one) and the vector env: the batch entry points
are ``rummy_env.core.batch``'s, over the hooks registered at the end of this module.

Masks are exact: an action is allowed only if it is legal now and the turn can still be
completed after it (a pending "meld the deepest card" obligation stays satisfiable, a discard
stays possible or going out is allowed).

How the masks stay cheap (a step costs about a microsecond):

- "Can this card still be melded?" needs no template search: a natural card can go into a new
  meld iff some 3-card meld holds it (a joker likewise, ``_meld3_with_joker``), read from a hand
  summary of plain integers that pile cards are added to one at a time (``hand_summary``);
  lay-offs are one bit test against the cards the table takes (``table_fits``).
- A candidate meld or lay-off that leaves no obligation and 2+ cards in the hand is legal
  without trying it (a discard is left); only the others are applied to the record, checked
  and undone.
- Call offers find the rummy-callable pile depths once per discard, not once per player.
- Hot helpers take the record and scalars only: the template tables are module constants, and
  scratch lives in one work buffer per thread (``WS_*``), because every array passed to a
  compiled function that is not inlined costs an atomic reference count increment and
  decrement, and every allocation a call to the allocator.
"""

from __future__ import annotations

import numpy as np

from rummy_env.core import batch
from rummy_env.core.batch import (  # the names callers use
    play_random_parallel,
    step_batch,
    step_batch_parallel,
    step_single,
)
from rummy_env.core.jit import kernel
from rummy_env.core.jmelds import (
    JOKER,
    NUM_TEMPLATES,
    TPL_A,
    TPL_B,
    TPL_C,
    TPL_KIND,
    TPL_WIN,
    groups_possible,
    popcount16,
    pos_card,
    rank_groups,
    suit_runs,
    template_needs,
    template_size,
)
from rummy_env.core.table import (
    can_lay_off,
    fit_joker,
    fit_natural,
    give_up,
    hand_total,
    lay_template,
    new_deal,
    place_card,
    unlay_template,
    unplace_card,
)
from rummy_env.encodings import five_hundred_rum as E
from rummy_env.rules.five_hundred_rum.config import (
    C_CALL,
    C_D,
    C_DISCARD,
    C_GAME,
    C_GOOUT,
    C_HAND,
    C_JOKER,
    C_JOKERS,
    C_LAYOFF,
    C_M,
    C_MAX_PILE,
    C_MAX_STEPS,
    C_MELD,
    C_MUST_MELD,
    C_NA,
    C_NEW_MELD,
    C_NORM,
    C_OBS,
    C_OUT_TO_WIN,
    C_P,
    C_PASS,
    C_SIZE,
    C_TAKE,
    C_TARGET,
    C_V51015,
    N_PIECES,
    config_vector,
)
from rummy_env.rules.five_hundred_rum.state import make_state_dtype

GO_ANY = 0
GO_DISCARD_REQUIRED = 1
GO_FLOATING = 2
GO_UNPLAYABLE = 3

PH_DRAW = E.PH_DRAW
PH_PLAY = E.PH_PLAY
PH_CALL = E.PH_CALL
PH_CALL_LAYOFF = E.PH_CALL_LAYOFF
PH_OVER = E.PH_OVER

TABLES = (TPL_KIND, TPL_A, TPL_B, TPL_C, TPL_WIN)
"""The template tables. The entry points take them (``BatchedGame``'s contract) but the kernels
read the module globals, which numba compiles in as constants: passing arrays to a compiled
function that is not inlined costs a reference count increment and decrement per array."""
TPL_SIZE = np.array([template_size(t, TPL_KIND, TPL_B, TPL_C) for t in range(NUM_TEMPLATES)],
                    np.int64)  # fmt: skip
# -- work buffer ----------------------------------------------------------------------------
# One int64 array per thread holds the scratch of the masks, so that no kernel allocates per call.
WS_T = 0  # feasible templates
WS_J = WS_T + NUM_TEMPLATES  # their jokers
WS_KNOWN = WS_J + NUM_TEMPLATES  # ``known`` row saved around a candidate meld (53)
WS_CALL = WS_KNOWN + 53  # per pile depth: is that card rummy-callable (up to 108)
WS_SIZE = WS_CALL + 108


@kernel
def new_work(states=None, cfg=None):
    """A work buffer for the kernels that take ``ws`` (scratch: its contents never matter
    between calls).
    """
    return np.empty(WS_SIZE, np.int64)


# -- values ---------------------------------------------------------------------------------


@kernel
def card_value(c, cfg) -> int:
    """Points of a card type in hand or melded (not a low ace)."""
    if c == JOKER:
        return 15
    r = c % 13
    if r == 0:
        return 15
    if cfg[C_V51015]:
        return 5 if r <= 8 else 10
    return r + 1 if r <= 8 else 10


@kernel
def placed_value(c, pos, cfg) -> int:
    """Points of a card placed at a run position (pos 0 is the low ace) or in a group (pos -1)."""
    if c != JOKER and pos == 0:
        return 5 if cfg[C_V51015] else 1
    return card_value(c, cfg)


@kernel
def hand_points(rec, p, cfg) -> int:
    """Points held in player ``p``'s hand (they count against at the end of the hand)."""
    t = 0
    for c in range(53):
        t += rec.hands[p, c] * card_value(c, cfg)
    return t


# -- table melds ----------------------------------------------------------------------------


@kernel
def place_on_slot(rec, cfg, p, m, c, pos):
    """Lay card type ``c`` from ``p``'s hand at position ``pos`` of slot ``m`` (14: group);
    its points go to ``p``.
    """
    place_card(rec, p, m, c, pos)
    rec.melded_pts[p] += placed_value(c, -1 if pos == 14 else pos, cfg)


@kernel
def unplace_on_slot(rec, cfg, p, m, c, pos, old_lo, old_hi, old_known):
    """Undo ``place_on_slot``."""
    unplace_card(rec, p, m, c, pos, old_lo, old_hi, old_known)
    rec.melded_pts[p] -= placed_value(c, -1 if pos == 14 else pos, cfg)


@kernel
def slot_points(rec, cfg, m) -> int:
    """Points of the cards in slot ``m`` (jokers 15, a low ace 1 or 5)."""
    if rec.m_kind[m] == 1:
        pts = 15 * rec.m_jok[m]
        for s in range(4):
            if rec.m_nat[m] >> s & 1:
                pts += card_value(s * 13 + rec.m_key[m], cfg)
        return pts
    pts = 15 * popcount16(rec.m_jok[m])
    for pos in range(rec.m_lo[m], rec.m_hi[m] + 1):
        if rec.m_nat[m] >> pos & 1:
            pts += placed_value(pos_card(rec.m_key[m], pos), pos, cfg)
    return pts


@kernel
def _has_natural(t, x) -> bool:
    """``template_has_natural`` read straight from the global template tables."""
    s = x // 13
    r = x % 13
    if TPL_KIND[t] == 1:
        return TPL_A[t] == r and (TPL_B[t] >> s & 1) == 1
    if TPL_A[t] != s:
        return False
    if r == 0:
        return TPL_B[t] == 0 or TPL_C[t] == 13
    return TPL_B[t] <= r <= TPL_C[t]


@kernel
def create_meld(rec, cfg, p, t):
    """Lay template ``t`` from ``p``'s hand into the next slot (naturals where the hand holds
    them, jokers elsewhere); its points go to ``p``. Returns the number of jokers used.
    """
    j = lay_template(rec, p, t)
    rec.melded_pts[p] += slot_points(rec, cfg, rec.n_melds - 1)
    return j


@kernel(counted=False)
def remove_last_meld(rec, cfg, p, t, j, known_save):
    """Undo ``create_meld``."""
    rec.melded_pts[p] -= slot_points(rec, cfg, rec.n_melds - 1)
    unlay_template(rec, p, t, j, known_save)


# -- obligations and turn completion --------------------------------------------------------
# The checks below read a hand through a summary of plain integers, so that they take no
# arrays (see ``TABLES``) and the draw and call masks can add pile cards one at a time:
# ``rs`` has bit ``4 * rank + suit`` per natural held, ``sp`` bit ``14 * suit + pos`` per run
# position held (an ace holds 0 and 13), ``jk`` counts jokers, ``total`` all cards.


@kernel
def _add_natural(rs, sp, c):
    """The summary bits ``rs``, ``sp`` with natural ``c`` held."""
    s = c // 13
    r = c % 13
    rs |= 1 << (4 * r + s)
    if r == 0:
        sp |= (1 | 1 << 13) << (14 * s)
    else:
        sp |= 1 << (14 * s + r)
    return rs, sp


@kernel
def hand_summary(rec, p):
    """``(rs, sp, jk, total)`` of player ``p``'s hand."""
    rs = 0
    sp = 0
    total = 0
    for s in range(4):
        row = 0
        for r in range(13):
            n = rec.hands[p, 13 * s + r]
            total += n
            held = np.int64(n >= 1)  # branch-free: the loop unrolls
            rs |= held << (4 * r + s)
            row |= held << r
        sp |= (row | (row & 1) << 13) << (14 * s)
    jk = int(rec.hands[p, JOKER])
    return rs, sp, jk, total + jk


@kernel(counted=False)
def _meld3_with(rs, sp, jk, x) -> bool:
    """Is there a new meld of 3 cards from the hand that contains natural ``x`` (held)?

    The same as "some playable template takes ``x``": a playable group with ``x`` implies one
    of 3 cards (x, other suits of its rank, then jokers), and a playable run window around
    ``x``'s position holds a 3-position window around it missing no more positions.
    """
    s = x // 13
    r = x % 13
    if groups_possible(rs >> (4 * r) & 15, jk):
        return True
    held = sp >> (14 * s) & 0x3FFF
    for pos in (0, 13) if r == 0 else (r, r):
        for lo in range(max(pos - 2, 0), min(pos, 11) + 1):
            if 3 - popcount16(held >> lo & 7) <= jk:
                return True
    return False


@kernel(counted=False)
def _meld3_with_joker(rs, sp, jk) -> bool:
    """Is there a new meld of 3 cards from the hand that takes a joker (one is held)?

    The same as "some playable template needs a joker": with 2 jokers any natural makes a group
    of 3; with one, a template missing exactly one position is a group of 2 suits plus the
    joker, or a run that holds a 3-position window missing only that position.
    """
    for r in range(13):
        n = popcount16(rs >> (4 * r) & 15)
        if n >= 2 or (n >= 1 and jk >= 2):
            return True
    for s in range(4):
        held = sp >> (14 * s) & 0x3FFF
        for lo in range(12):
            if popcount16(held >> lo & 7) == 2:
                return True
    return False


@kernel(counted=False)
def table_fits(rec) -> int:
    """Bit ``c`` set for each card type ``c`` (52: joker) that lays off on some table meld:
    ``core.table.can_lay_off`` for every card at once (``fit_natural`` / ``fit_joker`` per
    slot, spelled out: a slot takes only its ends or its missing suits).
    """
    fits = 0
    for m in range(rec.n_melds):
        key = rec.m_key[m]
        lo = rec.m_lo[m]
        hi = rec.m_hi[m]
        if rec.m_kind[m] == 1:
            if popcount16(rec.m_nat[m]) + rec.m_jok[m] < 4:
                fits |= 1 << JOKER
                for s in range(4):
                    if not rec.m_nat[m] >> s & 1:
                        fits |= 1 << (13 * s + key)
            continue
        # low end: rank lo - 1, or the ace low below a 2 (not on a run already ace high)
        if lo >= 2 or (lo == 1 and hi <= 12):
            fits |= 1 << (13 * key + lo - 1)
        # high end: rank hi + 1, or the ace high above a K (not on a run already ace low)
        if hi <= 11 or (hi == 12 and lo >= 1):
            fits |= 1 << (13 * key + (hi + 1) % 13)
        # a joker takes a free position next to either end (never making A..A)
        if (lo >= 1 and not (lo == 1 and hi == 13)) or (hi <= 12 and not (hi == 12 and lo == 0)):
            fits |= 1 << JOKER
    return fits


@kernel(counted=False)
def can_place(rec, fits, rs, sp, jk, total, x, new_only, need_left) -> bool:
    """Can card type ``x`` (held in the hand summarised by ``rs, sp, jk, total``) be melded this
    turn, leaving at least ``need_left`` cards in the hand? Ways: a direct lay-off (``fits``:
    ``table_fits``); a new meld containing it; a chain of hand cards (or jokers) bridging a table
    run's end to it. The smallest new meld with a given card has 3 cards (see ``_meld3_with``):
    no template is tried.
    """
    if total - 3 >= need_left:
        if _meld3_with_joker(rs, sp, jk) if x == JOKER else _meld3_with(rs, sp, jk, x):
            return True
    if new_only:
        return False
    if total - 1 >= need_left and fits >> x & 1:
        return True
    if x == JOKER:
        return False
    s = x // 13
    r = x % 13
    held = sp >> (14 * s) & 0x3FFF
    # chains onto table runs of x's suit
    for m in range(rec.n_melds):
        if rec.m_kind[m] != 2 or rec.m_key[m] != s:
            continue
        lo = rec.m_lo[m]
        hi = rec.m_hi[m]
        for q in (0, 13) if r == 0 else (r, r):
            if q > hi + 1:
                a, b, nlo, nhi = hi + 1, q - 1, lo, q
            elif q < lo - 1:
                a, b, nlo, nhi = q + 1, lo - 1, q, hi
            else:
                continue
            if nlo == 0 and nhi == 13:
                continue
            bridge = ((1 << (b - a + 1)) - 1) << a
            if popcount16(bridge & ~held) <= jk and total - (b - a + 2) >= need_left:
                return True
    return False


@kernel
def turn_completable(rec, p, go) -> bool:
    """Can player ``p`` still finish the current turn legally from this state (``go``: the
    going-out variant, ``GO_*``)?
    """
    need_left = 1 if go == GO_DISCARD_REQUIRED else 0
    hand = rec.hands[p]
    ob = rec.oblig
    if ob >= 0:
        if hand[ob] < 1:
            return False
        rs, sp, jk, total = hand_summary(rec, p)
        fits = table_fits(rec)
        return can_place(rec, fits, rs, sp, jk, total, ob, rec.oblig_new != 0, need_left)
    total = hand_total(rec, p)
    if total == 0:
        return go != GO_DISCARD_REQUIRED
    for c in range(53):
        if hand[c] >= 1 and not (c == rec.taken_single and hand[c] == 1):
            if not (go == GO_UNPLAYABLE and total == 1 and can_lay_off(rec, c)):
                return True
    # the only card is the single top discard just taken (or a playable last card): lay it off
    if go == GO_DISCARD_REQUIRED:
        return False
    for c in range(53):
        if hand[c] >= 1 and can_lay_off(rec, c):
            return True
    return False


# -- deal, scoring, transitions -------------------------------------------------------------


@kernel
def deal_hand(rec, cfg, shuffle):
    """Deal a hand (dealing starts left of the dealer), turn the upcard, clear the table."""
    d = cfg[C_D]
    p_n = cfg[C_P]
    new_deal(rec, (d - cfg[C_JOKERS]) // 52, cfg[C_JOKERS], shuffle)
    for q in range(p_n):
        rec.melded_pts[q] = 0
        rec.floating[q] = 0
    k = 0
    for _i in range(cfg[C_HAND]):
        for off in range(1, p_n + 1):
            q = (rec.dealer + off) % p_n
            rec.hands[q, rec.deck[k]] += 1
            k += 1
    rec.pile[0] = rec.deck[k]
    rec.pile_n = 1
    rec.deck_pos = k + 1
    rec.turn = (rec.dealer + 1) % p_n
    rec.cur = rec.turn
    rec.phase = PH_DRAW
    rec.discarder = -1
    rec.oblig = -1
    rec.oblig_new = 0
    rec.taken_single = -1
    rec.took_pile = 0
    rec.went_out = -1
    rec.empty_turns = 0
    rec.pile_draws = 0


@kernel
def reset_episode(rec, cfg, tables, dealer, shuffle):
    """Start an episode: scores cleared, dealer chosen (-1: random), first hand dealt."""
    for q in range(cfg[C_P]):
        rec.scores[q] = 0
        rec.hand_points[q] = 0
    rec.winner = -1
    batch.begin_episode(rec, dealer)
    deal_hand(rec, cfg, shuffle)


@kernel
def end_hand(rec, cfg, outcome):
    """Score the hand (melded minus held), then end the episode or deal the next hand."""
    p_n = cfg[C_P]
    rec.outcome = outcome
    rec.hands_played += 1
    rec.phase = PH_OVER
    for q in range(p_n):
        s = rec.melded_pts[q] - hand_points(rec, q, cfg)
        rec.hand_points[q] = s
        rec.scores[q] += s
        if cfg[C_NORM] == 0:
            rec.rewards[q] += s
        elif cfg[C_GAME] == 0:
            rec.rewards[q] += max(-1.0, min(1.0, s / 100.0))
    if cfg[C_GAME] == 0:
        rec.done = 1
        return
    # game episodes: is there a winner?
    win = -1
    if cfg[C_OUT_TO_WIN]:
        if rec.went_out >= 0 and rec.scores[rec.went_out] >= cfg[C_TARGET]:
            win = rec.went_out
    else:
        best = rec.scores[0]
        for q in range(1, p_n):
            if rec.scores[q] > best:
                best = rec.scores[q]
        if best >= cfg[C_TARGET]:
            n_best = 0
            for q in range(p_n):
                if rec.scores[q] == best:
                    n_best += 1
                    win = q
            if n_best > 1:
                win = -1  # tie for the lead: play on
    if win >= 0:
        rec.winner = win
        rec.done = 1
        if cfg[C_NORM]:
            for q in range(p_n):
                rec.rewards[q] = 1.0 if q == win else -1.0 / (p_n - 1)
        return
    rec.dealer = (rec.dealer + 1) % p_n
    deal_hand(rec, cfg, True)


@kernel(counted=False)
def callable_depths(rec, cfg, ws) -> int:
    """Flag in ``ws[WS_CALL + d]`` whether the pile card at depth ``d`` is rummy-callable: it
    can be melded using only the table melds and the pile cards above it (RULES §2.5
    Decision). Returns one past the deepest callable depth (0: none).

    ``can_place`` on the summary of the pile cards down to ``d`` decides it exactly: the meld
    the card ends up in is either a table meld it lays off on directly, a table run that pile
    cards (or jokers) extend up to it (a chain), or a meld of pile cards that then holds a
    3-card meld containing it. A chain onto a run of suit s starts with a pile card above
    that lays off directly (``fits``): a natural of suit s or a joker. So the run search (a
    loop over the table) runs only for naturals of a suit ``chain_suits`` has seen: most piles
    pay only for the 3-card meld test. ``layoff_only``: the top card, laid off directly.
    """
    full = cfg[C_CALL] == 0
    dmax = rec.pile_n if full else min(1, rec.pile_n)
    rs = sp = jk = 0
    last = 0
    fits = table_fits(rec)
    chain_suits = 0  # bit s: a card above may start a chain onto a run of suit s
    for d in range(dmax):
        x = rec.pile[rec.pile_n - 1 - d]
        if x == JOKER:
            jk += 1
        else:
            rs, sp = _add_natural(rs, sp, x)
        if fits >> x & 1:
            ok = True
            chain_suits |= 15 if x == JOKER else 1 << (x // 13)
        elif full:
            no_chain = x == JOKER or (chain_suits >> (x // 13) & 1) == 0
            ok = can_place(rec, fits, rs, sp, jk, d + 1, x, no_chain, 0)
        else:
            ok = False
        ws[WS_CALL + d] = ok
        if ok:
            last = d + 1
    return last


@kernel
def _take_pile(rec, p, d):
    """Move the top ``d + 1`` pile cards to ``p``'s hand (publicly known to be held)."""
    for _k in range(d + 1):
        c = rec.pile[rec.pile_n - 1]
        rec.pile_n -= 1
        rec.hands[p, c] += 1
        rec.known[p, c] += 1
    return rec.pile[rec.pile_n] if d >= 0 else -1


@kernel
def _next_turn(rec, cfg, p) -> bool:
    """Player ``p``'s turn is over: the next player draws. Once the stock is empty every player
    gets one more turn at most, then the hand ends (so every hand ends). True if it ended.
    """
    if cfg[C_D] - rec.deck_pos == 0:
        rec.empty_turns += 1
        if rec.empty_turns > cfg[C_P]:
            end_hand(rec, cfg, E.OUT_STOCK)
            return True
    rec.turn = (p + 1) % cfg[C_P]
    rec.cur = rec.turn
    rec.phase = PH_DRAW
    rec.oblig = -1
    rec.oblig_new = 0
    rec.taken_single = -1
    rec.took_pile = 0
    return False


@kernel(counted=False)
def _offer_call(rec, cfg, start, mask_buf, ws):
    """Offer the "Rummy!" call to players from ``start`` on (skipping the discarder and those
    with no legal call); if nobody can call, the turn player draws.
    """
    p_n = cfg[C_P]
    n_call = callable_depths(rec, cfg, ws)
    q = start
    for _ in range(p_n if n_call > 0 else 0):
        if q == rec.discarder:
            break
        rec.cur = q
        rec.phase = PH_CALL
        if _call_mask_from(rec, cfg, q, mask_buf, ws, n_call):
            return
        q = (q + 1) % p_n
    rec.cur = rec.turn
    rec.phase = PH_DRAW


@kernel
def _after_placement(rec, cfg, p):
    """After a meld or lay-off: an empty hand goes out (any) or floats (floating variants)."""
    if hand_total(rec, p) > 0:
        return
    if cfg[C_GOOUT] == GO_ANY:
        rec.went_out = p
        end_hand(rec, cfg, E.OUT_WENT_OUT)
    else:
        rec.floating[p] = 1
        _next_turn(rec, cfg, p)


@kernel
def _meld_uses(t, j, c) -> bool:
    """Does template ``t`` (needing ``j`` jokers) take a card of type ``c``?"""
    if c < 0:
        return False
    if c == JOKER:
        return j >= 1
    return _has_natural(t, c)


@kernel(counted=False)
def apply_action(rec, cfg, tables, a, mask_buf, ws):
    """Apply a legal action (legality is the caller's check)."""
    p = rec.cur
    for q in range(cfg[C_P]):
        rec.rewards[q] = 0.0
    rec.steps += 1
    ph = rec.phase
    if ph == PH_DRAW:
        if a == 0:
            c = rec.deck[rec.deck_pos]
            rec.deck_pos += 1
            rec.hands[p, c] += 1
            rec.taken_single = -1
            rec.took_pile = 0
            rec.phase = PH_PLAY
        elif a == cfg[C_PASS]:
            end_hand(rec, cfg, E.OUT_STOCK)
        else:
            d = a - cfg[C_TAKE]
            x = _take_pile(rec, p, d)
            rec.pile_draws += 1
            rec.took_pile = d + 1
            rec.taken_single = x if d == 0 else -1
            if d >= 1 or cfg[C_MUST_MELD]:
                rec.oblig = x
                rec.oblig_new = cfg[C_NEW_MELD]
            rec.phase = PH_PLAY
    elif ph == PH_CALL:
        if a == cfg[C_PASS]:
            _offer_call(rec, cfg, (p + 1) % cfg[C_P], mask_buf, ws)
        else:
            d = a - cfg[C_TAKE]
            x = _take_pile(rec, p, d)
            rec.oblig = x
            rec.oblig_new = 0
            rec.taken_single = -1
            rec.took_pile = d + 1
            if cfg[C_CALL] == 1:
                rec.phase = PH_CALL_LAYOFF
            else:
                rec.turn = p  # players between the discarder and the caller lose their turn
                rec.phase = PH_PLAY
    elif ph == PH_PLAY or ph == PH_CALL_LAYOFF:
        if a >= cfg[C_DISCARD]:
            c = a - cfg[C_DISCARD]
            give_up(rec, p, c, 1)
            rec.pile[rec.pile_n] = c
            rec.pile_n += 1
            if hand_total(rec, p) == 0:
                rec.went_out = p
                end_hand(rec, cfg, E.OUT_WENT_OUT)
            else:
                rec.floating[p] = 0
                rec.discarder = p
                if not _next_turn(rec, cfg, p) and cfg[C_CALL] != 2:
                    _offer_call(rec, cfg, rec.turn, mask_buf, ws)
        else:
            if a >= cfg[C_JOKER]:
                m = (a - cfg[C_JOKER]) // 2
                e = (a - cfg[C_JOKER]) % 2
                c = JOKER
                pos = fit_joker(rec, m, e)
                place_on_slot(rec, cfg, p, m, c, pos)
                if rec.oblig == JOKER and not rec.oblig_new:
                    rec.oblig = -1
                if rec.taken_single == JOKER:
                    rec.taken_single = -1  # copies are alike: the card taken is the one played
            elif a >= cfg[C_LAYOFF]:
                c = (a - cfg[C_LAYOFF]) // cfg[C_M]
                m = (a - cfg[C_LAYOFF]) % cfg[C_M]
                pos = fit_natural(rec, m, c)
                place_on_slot(rec, cfg, p, m, c, pos)
                if rec.oblig == c and not rec.oblig_new:
                    rec.oblig = -1
                if rec.taken_single == c:
                    rec.taken_single = -1
            else:
                t = a - cfg[C_MELD]
                j = template_needs(t, rec.hands[p], TPL_KIND, TPL_A, TPL_B, TPL_C)
                if _meld_uses(t, j, rec.oblig):
                    rec.oblig = -1
                if _meld_uses(t, j, rec.taken_single):
                    rec.taken_single = -1
                create_meld(rec, cfg, p, t)
            if ph == PH_CALL_LAYOFF:
                rec.oblig = -1
                if hand_total(rec, p) == 0 and cfg[C_GOOUT] == GO_ANY:
                    rec.went_out = p
                    end_hand(rec, cfg, E.OUT_WENT_OUT)
                else:
                    if hand_total(rec, p) == 0:
                        rec.floating[p] = 1
                    rec.cur = rec.turn
                    rec.phase = PH_DRAW
            else:
                _after_placement(rec, cfg, p)
    batch.truncate(rec, cfg[C_MAX_STEPS])

    # -- masks ----------------------------------------------------------------------------------
    return False


@kernel(counted=False)
def _call_mask_from(rec, cfg, q, out, ws, n_call) -> bool:
    """Write player ``q``'s legal calls (TAKE_DISCARD[d] and PASS) given the callable depths
    flagged by ``callable_depths`` (``n_call`` its result); True if any call is legal.
    """
    out[:] = 0
    out[cfg[C_PASS]] = 1
    anyc = False
    need_left = 1 if cfg[C_GOOUT] == GO_DISCARD_REQUIRED else 0
    top = rec.pile_n - 1
    # the caller must be able to complete the turn after taking the cards (added one by one)
    rs, sp, jk, total = hand_summary(rec, q)
    fits = table_fits(rec)
    for d in range(n_call):
        x = rec.pile[top - d]
        total += 1
        if x == JOKER:
            jk += 1
        else:
            rs, sp = _add_natural(rs, sp, x)
        if not ws[WS_CALL + d]:
            continue
        if cfg[C_CALL] == 1:
            ok = (fits >> x & 1) != 0  # layoff_only: the caller lays it off, no discard
        else:
            ok = can_place(rec, fits, rs, sp, jk, total, x, False, need_left)
        if ok:
            out[cfg[C_TAKE] + d] = 1
            anyc = True
    return anyc


@kernel(counted=False)
def _call_mask(rec, cfg, q, out, ws) -> bool:
    """Write player ``q``'s legal calls (TAKE_DISCARD[d] and PASS); True if any call is legal."""
    return _call_mask_from(rec, cfg, q, out, ws, callable_depths(rec, cfg, ws))


@kernel
def _draw_mask(rec, cfg, p, out):
    stock = cfg[C_D] - rec.deck_pos
    if stock > 0:
        out[0] = 1
    else:
        out[cfg[C_PASS]] = 1
    n_pile = rec.pile_n if rec.pile_draws < cfg[C_MAX_PILE] else 0
    top = rec.pile_n - 1
    go = cfg[C_GOOUT]
    need_left = 1 if go == GO_DISCARD_REQUIRED else 0
    # depth d takes the top d + 1 cards: add them to the hand's summary one by one
    rs, sp, jk, total = hand_summary(rec, p)
    fits = table_fits(rec) if n_pile > 0 else 0
    for d in range(n_pile):
        x = rec.pile[top - d]
        total += 1
        if x == JOKER:
            jk += 1
        else:
            rs, sp = _add_natural(rs, sp, x)
        if d >= 1 or cfg[C_MUST_MELD]:
            # the deepest card taken must be melded this turn
            ok = can_place(rec, fits, rs, sp, jk, total, x, cfg[C_NEW_MELD] != 0, need_left)
        else:
            # the single top discard may not be discarded: another card can be, or (the only
            # card, not with discard_required) it is laid off (``turn_completable``)
            ok = total >= 2 or (go != GO_DISCARD_REQUIRED and (fits >> x & 1) != 0)
        if ok:
            out[cfg[C_TAKE] + d] = 1


@kernel(counted=False)
def _feasible(ws, rs, sp, jokers) -> int:
    """``core.jmelds.feasible_templates`` of this game's packed hand summary (ranks' suits in
    4-bit fields of ``rs``, suits' positions in 14-bit fields of ``sp``). Writes template ids
    and jokers to ``ws`` and returns how many.
    """
    out_t = ws[WS_T:WS_J]
    out_j = ws[WS_J:WS_KNOWN]
    n = 0
    for r in range(13):
        n = rank_groups(r, rs >> (4 * r) & 15, jokers, out_t, out_j, n)
    for s in range(4):
        n = suit_runs(s, sp >> (14 * s) & 0x3FFF, jokers, TPL_WIN, out_t, out_j, n)
    return n


@kernel(counted=False)
def _play_mask(rec, cfg, p, out, ws):
    hand = rec.hands[p]
    only_layoff = rec.phase == PH_CALL_LAYOFF
    ob = rec.oblig
    ts = rec.taken_single
    go = cfg[C_GOOUT]
    rs, sp, jk, total = hand_summary(rec, p)
    # A candidate placement that leaves no obligation and 2+ cards in the hand keeps the turn
    # completable without trying it: some held card is not the single top discard taken (that
    # one is held once), and the unplayable_discard rule only bites on a last card. Only the
    # other candidates are applied to the record, checked and undone.
    # new melds
    if not only_layoff and rec.n_melds < cfg[C_M]:
        nf = _feasible(ws, rs, sp, jk)
        for k in range(nf):
            t = ws[WS_T + k]
            j = ws[WS_J + k]
            sat = _meld_uses(t, j, ob)
            if (ob < 0 or sat) and total - TPL_SIZE[t] >= 2:
                out[cfg[C_MELD] + t] = 1
                continue
            known_save = ws[WS_KNOWN : WS_KNOWN + 53]
            for c in range(53):
                known_save[c] = rec.known[p, c]
            if sat:
                rec.oblig = -1
            if _meld_uses(t, j, ts):
                rec.taken_single = -1
            create_meld(rec, cfg, p, t)
            ok = _placement_ok(rec, p, go)
            remove_last_meld(rec, cfg, p, t, j, known_save)
            rec.oblig = ob
            rec.taken_single = ts
            if ok:
                out[cfg[C_MELD] + t] = 1
    # lay-offs of naturals: per slot, only the cards at its ends (run) or of its rank (group)
    for m in range(rec.n_melds):
        key = rec.m_key[m]
        is_group = rec.m_kind[m] == 1
        c0 = -1
        c1 = -1
        if not is_group:
            if rec.m_lo[m] >= 1:
                c0 = pos_card(key, rec.m_lo[m] - 1)
            if rec.m_hi[m] <= 12:
                c1 = pos_card(key, rec.m_hi[m] + 1)
            if c1 == c0:
                c1 = -1  # the ace that fits both ends of a 2..K run: one action
        for k in range(4 if is_group else 2):
            c = key + 13 * k if is_group else (c0 if k == 0 else c1)
            if c < 0 or hand[c] < 1 or (only_layoff and c != ob):
                continue
            pos = fit_natural(rec, m, c)
            if pos < 0:
                continue
            sat = ob == c and not rec.oblig_new  # a lay-off never meets a new-meld obligation
            if only_layoff or ((ob < 0 or sat) and total >= 3):
                out[cfg[C_LAYOFF] + c * cfg[C_M] + m] = 1
                continue
            lo, hi, kn = rec.m_lo[m], rec.m_hi[m], rec.known[p, c]
            if sat:
                rec.oblig = -1
            if ts == c:
                rec.taken_single = -1
            place_on_slot(rec, cfg, p, m, c, pos)
            ok = _placement_ok(rec, p, go)
            unplace_on_slot(rec, cfg, p, m, c, pos, lo, hi, kn)
            rec.oblig = ob
            rec.taken_single = ts
            if ok:
                out[cfg[C_LAYOFF] + c * cfg[C_M] + m] = 1
    # lay-offs of jokers
    if hand[JOKER] >= 1 and not (only_layoff and ob != JOKER):
        sat = ob == JOKER and not rec.oblig_new
        for m in range(rec.n_melds):
            for e in range(2):
                pos = fit_joker(rec, m, e)
                if pos < 0:
                    continue
                if only_layoff or ((ob < 0 or sat) and total >= 3):
                    out[cfg[C_JOKER] + 2 * m + e] = 1
                    continue
                lo, hi, kn = rec.m_lo[m], rec.m_hi[m], rec.known[p, JOKER]
                if sat:
                    rec.oblig = -1
                if ts == JOKER:
                    rec.taken_single = -1
                place_on_slot(rec, cfg, p, m, JOKER, pos)
                ok = _placement_ok(rec, p, go)
                unplace_on_slot(rec, cfg, p, m, JOKER, pos, lo, hi, kn)
                rec.oblig = ob
                rec.taken_single = ts
                if ok:
                    out[cfg[C_JOKER] + 2 * m + e] = 1
    # discards
    if only_layoff or ob >= 0:
        return
    for c in range(53):
        if hand[c] < 1 or (c == ts and hand[c] == 1):
            continue
        if go == GO_UNPLAYABLE and total == 1 and can_lay_off(rec, c):
            continue  # a playable last card must be melded (the player floats)
        out[cfg[C_DISCARD] + c] = 1


@kernel
def _placement_ok(rec, p, go) -> bool:
    """After a candidate meld or lay-off (already applied): is the result legal and the turn
    completable? An empty hand is going out (any) or floating; illegal with discard_required.
    """
    if hand_total(rec, p) == 0:
        return go != GO_DISCARD_REQUIRED and rec.oblig < 0
    return turn_completable(rec, p, go)


@kernel(counted=False)
def legal_mask(rec, cfg, tables, out, ws):
    """Write the exact legal-action mask of the player to act into ``out`` (``ws``: a work
    buffer from ``new_work``).
    """
    out[:] = 0
    if rec.done:
        return
    p = rec.cur
    ph = rec.phase
    if ph == PH_DRAW:
        _draw_mask(rec, cfg, p, out)
    elif ph == PH_CALL:
        _call_mask(rec, cfg, p, out, ws)
    elif ph == PH_PLAY or ph == PH_CALL_LAYOFF:
        _play_mask(rec, cfg, p, out, ws)


# -- observations ---------------------------------------------------------------------------


@kernel(counted=False)
def write_obs(rec, cfg, p, out):
    """Player ``p``'s observation (seat-relative; nothing hidden from ``p``)."""
    out[:] = 0.0
    p_n = cfg[C_P]
    d_n = cfg[C_D]
    # piece offsets as locals: stores to ``out`` would otherwise reload them from ``cfg``
    o = cfg[C_OBS:]
    o_hand, o_seq, o_cnt, o_depth, o_known = o[0], o[1], o[2], o[3], o[4]
    o_kind, o_owner, o_cards, o_jok, o_ends = o[5], o[6], o[7], o[8], o[9]
    o_sizes, o_stock, o_pts, o_scores, o_float = o[10], o[11], o[12], o[13], o[14]
    o_dealer, o_phase, o_oblig, o_taken = o[15], o[16], o[17], o[18]
    for c in range(53):
        out[o_hand + c] = rec.hands[p, c] * 0.5
    n = rec.pile_n
    for k in range(n):
        c = rec.pile[n - 1 - k]
        out[o_seq + k] = (c + 1) / 53.0
        out[o_cnt + c] += 0.5
        if out[o_depth + c] == 0.0:
            out[o_depth + c] = 1.0 - k / d_n
    for i in range(1, p_n):
        q = (p + i) % p_n
        base = o_known + (i - 1) * 53
        for c in range(53):
            out[base + c] = rec.known[q, c] * 0.5
    for m in range(rec.n_melds):
        kind = rec.m_kind[m]
        out[o_kind + 2 * m + kind - 1] = 1.0
        out[o_owner + m * p_n + (rec.m_owner[m] - p) % p_n] = 1.0
        nat = rec.m_nat[m]
        if kind == 1:
            r = rec.m_key[m]
            for s in range(4):
                if nat >> s & 1:
                    out[o_cards + m * 52 + s * 13 + r] = 1.0
            out[o_jok + m * 14] = rec.m_jok[m] / 4.0
            out[o_ends + 2 * m] = r / 12.0
            out[o_ends + 2 * m + 1] = r / 12.0
        else:
            s = rec.m_key[m]
            jok = rec.m_jok[m]
            for pos in range(rec.m_lo[m], rec.m_hi[m] + 1):
                if nat >> pos & 1:
                    out[o_cards + m * 52 + pos_card(s, pos)] = 1.0
                if jok >> pos & 1:
                    out[o_jok + m * 14 + pos] = 1.0
            out[o_ends + 2 * m] = rec.m_lo[m] / 13.0
            out[o_ends + 2 * m + 1] = rec.m_hi[m] / 13.0
    for i in range(p_n):
        q = (p + i) % p_n
        out[o_sizes + i] = hand_total(rec, q) / 13.0
        out[o_pts + i] = rec.melded_pts[q] / 100.0
        out[o_scores + i] = rec.scores[q] / cfg[C_TARGET]
        out[o_float + i] = rec.floating[q]
        out[o_dealer + i] = 1.0 if rec.dealer == q else 0.0
    out[o_stock] = (d_n - rec.deck_pos) / d_n
    out[o_phase + rec.phase] = 1.0
    if rec.oblig >= 0 and rec.cur == p:
        out[o_oblig + rec.oblig] = 1.0
    if rec.taken_single >= 0 and rec.cur == p:
        out[o_taken + rec.taken_single] = 1.0


# -- the other hooks of the batch layer (rummy_env.core.batch; registered at the end) -------


@kernel
def num_actions(rec, cfg):
    """Size of the action space."""
    return cfg[C_NA]


@kernel
def final_points(rec, cfg, q):
    """A game: player ``q``'s final score; a hand: its score (equal after one hand)."""
    return rec.scores[q] if cfg[C_GAME] else rec.hand_points[q]


@kernel
def write_final_extra(rec, cfg, out):
    """500 Rum has no finished-episode integers beyond the points, outcome and length."""


@kernel
def world_ok(rec, cfg, mask) -> bool:
    """Does the player to act have a move? Offered a "Rummy!" call, PASS does not count."""
    for a in range(cfg[C_NA]):
        if mask[a] and not (rec.phase == PH_CALL and a == cfg[C_PASS]):
            return True
    return False


__all__ = [
    "C_SIZE",
    "N_PIECES",
    "TABLES",
    "apply_action",
    "card_value",
    "config_vector",
    "legal_mask",
    "new_work",
    "placed_value",
    "play_random_parallel",
    "step_batch",
    "step_batch_parallel",
    "step_single",
    "write_obs",
]

batch.register(make_state_dtype(2, 54, 18).names, globals())
