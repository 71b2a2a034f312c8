"""Compiled rollout policy and search prior for the joker games (500 Rum, Rummy 51).

One action-scoring rule serves both games; what differs (action ranges, card values, meld
points) is passed in as arrays built once per config by :func:`five_hundred_rum_params` and
:func:`rummy51_params`. The rollout policy plays the best-scored legal action of the player to act;
ISMCTS uses the same scores as its progressive-widening prior.

The scores, highest first:

- a new meld (``100 +`` its points: the biggest first), a natural lay-off (``90 +`` the
  card's value), a joker lay-off (``85``): meld and lay off whenever the mask allows (the masks
  are exact, so a Rummy 51 opening begun this way can always be completed);
- a 500 Rum "Rummy!" call (``10 - depth``) over passing (``0``);
- taking the top discard when it is a joker, makes a three-card meld with the hand (a joker may
  fill one place) or, once allowed to lay off, fits a table meld (``5``, else ``-5``), over the
  stock (``0``); a 500 Rum deep take (whose deepest card the mask guarantees can be melded)
  scores the values of the cards taken that would meld, less the others', over 5;
- a Rummy 51 joker retrieval: ``80`` (the natural goes onto the table; the joker, usually laid
  off next, is kept flexible);
- a discard: ``-100 +`` the card's value, ``- 150`` for a joker, ``- 40`` if it makes a
  three-card meld with the rest of the hand (never break a meld), ``- 60`` if a table meld
  takes it (the next player could lay it off), ``- 10 x`` its closeness to the rest of the hand
  and ``- 4 x`` its closeness to the cards the next player is known to hold (same rank: 4, same
  suit one rank away: 3, two ranks away: 1): shed the highest card no one wants.

**Rummy 51** follows :class:`rummy_agents.rummy51_greedy.Rummy51GreedyAgent`'s rules more closely
(``lay[L_THRESH] >= 0``), where the generic scores lost to it:

- draw: once opened, take the top discard when it takes a joker's place on the table, lays off
  on a table meld (exactly, ``core.table.can_lay_off``) or makes a three-card meld with the hand
  (a joker may fill a place) with a card left to discard; before opening, when the 51 become
  reachable with it and not without (the exact search of the masks,
  :func:`~rummy_env.rules.rummy51.kernels.opening_reachable`), or it makes a three-card meld of
  naturals with the hand (a joker alone as partner does not count: greedy's arrangement already
  uses the joker);
- melds: the one removing the most penalty from the hand first (a joker counts 25), and a
  joker retrieval before anything else (greedy retrieves as soon as it may);
- discards by greedy's tiers, the highest penalty first within a tier: loose, near its own
  cards, unsafe (lays off, takes a joker's place, or is near a card the next player is known
  to hold), in a natural three-card meld with the hand (a single copy), a joker. *Near* is
  greedy's :func:`~rummy_agents.rummy51_greedy.near` (:func:`near_other`): another suit of the
  rank, or
  the same suit at most two ranks away; a second copy of the card is not near it (two copies
  never meet in one meld).

The weights were tuned by playing the policy (on one sampled world per decision) against the
``greedy`` agents (figures in ``docs/agents.md``).

Ties go to the lower action id, so the policy is deterministic; with ``eps > 0`` a fraction of
decisions is uniformly random (drawn from each game's own stream).
"""

from __future__ import annotations

import numpy as np

from rummy_env.core.jit import kernel
from rummy_env.core.jmelds import NUM_TEMPLATES, TPL_A, TPL_B, TPL_C, TPL_KIND
from rummy_env.core.rng import randint
from rummy_env.core.rng import random_legal as _random_legal
from rummy_env.core.table import can_lay_off, fits_slot, hand_total, joker_room
from rummy_env.encodings.five_hundred_rum import PH_CALL
from rummy_env.rules.five_hundred_rum import kernels as K500
from rummy_env.rules.rummy51 import kernels as K51

JOKER = 52

# indices of the layout vector (action ranges; -1 where the game has no such range)
L_TAKE = 0  # first TAKE_DISCARD id
L_NTAKE = 1  # TAKE_DISCARD ids (500 Rum: one per depth; Rummy 51: 1)
L_MELD = 2
L_LAYOFF = 3
L_M = 4  # table meld slots
L_JOKER = 5
L_RETRIEVE = 6  # Rummy 51 RETRIEVE base; -1 (500 Rum)
L_DISCARD = 7
L_PASS = 8  # 500 Rum PASS; -1 (Rummy 51)
L_NA = 9
L_PH_CALL = 10  # 500 Rum call-offer phase; -1 (Rummy 51)
L_OPENING = 11  # 1: a player lays off only once opened (Rummy 51)
L_THRESH = 12  # Rummy 51 opening threshold; -1 (500 Rum)
L_SIZE = 13

# score weights (see the module docstring)
RETRIEVE_SCORE = 80.0
CLOSE_W = 10.0  # per point of closeness to the own hand
TABLE_W = 60.0  # a table meld takes the card
NEXT_W = 4.0  # per point of closeness to the next player's known cards


@kernel(inline="always")
def _has_pos(hand, s, pos) -> bool:
    if pos < 0 or pos > 13:
        return False
    return hand[s * 13 + (0 if pos == 13 else pos)] > 0


@kernel
def melds_with_hand(hand, x) -> bool:
    """Does card type ``x`` make a three-card meld with the hand (one joker may fill a place)?"""
    jk = hand[JOKER] > 0
    if x == JOKER:
        return True
    r = x % 13
    s = x // 13
    n = 0
    for s2 in range(4):
        if s2 != s and hand[s2 * 13 + r] > 0:
            n += 1
    if n >= 2 or (n == 1 and jk):
        return True
    for k in range(2 if r == 0 else 1):
        p = r if k == 0 else 13  # the ace is position 0 and 13
        lo2 = _has_pos(hand, s, p - 2)
        lo1 = _has_pos(hand, s, p - 1)
        hi1 = _has_pos(hand, s, p + 1)
        hi2 = _has_pos(hand, s, p + 2)
        if (lo2 and lo1) or (lo1 and hi1) or (hi1 and hi2):
            return True
        if jk and (lo2 or lo1 or hi1 or hi2):
            return True
    return False


@kernel(counted=False)
def melds_with_pile(pile, c) -> bool:
    """Does natural ``c`` form a meld with cards in the discard pile (``pile``: counts per card
    type): a group with two other suits of its rank, or three in a row of its suit?
    """
    s = c // 13
    r = c % 13
    n = 0
    for q in range(4):
        if q != s and pile[q * 13 + r] > 0:
            n += 1
    if n >= 2:
        return True
    pos = 13 if r == 0 and pile[s * 13 + 12] > 0 else r
    for lo in range(max(0, pos - 2), min(pos, 11) + 1):
        ok = True
        for p in range(lo, lo + 3):
            if p != pos and not _has_pos(pile, s, p):
                ok = False
                break
        if ok:
            return True
    return False


@kernel(counted=False)
def greedy_discard_score(hand, nxt, pile, fits, c, vals) -> int:
    """``greedy``'s score of discarding card type ``c`` from ``hand`` (500 Rum; the highest
    is thrown; see :mod:`rummy_agents.five_hundred_rum_greedy`): its value, less 100 for a
    joker, 50 if it lays off on a table meld (``fits``), 30 if it melds with the discard pile
    (counts ``pile``), the next player's known cards near it (``nxt``: same rank or same suit
    one away 12, two away 6; capped at 36) and the rest of the hand's near it (same rank 8,
    same suit one away 6, two away 3; capped at 16). ``vals``: card values.
    """
    score = vals[c]
    if c == JOKER:
        return score - 100
    if fits:
        score -= 50
    if melds_with_pile(pile, c):
        score -= 30
    s = c // 13
    r = c % 13
    danger = 0
    keep = 0
    # only the other suits of its rank and the other ranks of its suit are near it
    for q in range(4):
        if q != s:
            x = q * 13 + r
            danger += nxt[x] * 12
            keep += hand[x] * 8
    for xr in range(13):
        gap = abs(xr - r)
        if xr == 0 or r == 0:
            gap = min(gap, 13 - gap)
        x = s * 13 + xr
        if gap == 1:
            danger += nxt[x] * 12
            keep += hand[x] * 6
        elif gap == 2:
            danger += nxt[x] * 6
            keep += hand[x] * 3
    return score - min(danger, 36) - min(keep, 16)


@kernel
def fits_table(rec, x) -> bool:
    """True if natural ``x`` would extend a table meld: a group of its rank (a full group
    still counts, an approximation) or a run of its suit at either end.
    """
    r = x % 13
    s = x // 13
    for m in range(rec.n_melds):
        k = rec.m_kind[m]
        if k == 1:
            if rec.m_key[m] == r:
                return True
        elif k == 2 and rec.m_key[m] == s:
            lo = rec.m_lo[m]
            hi = rec.m_hi[m]
            if r == 0:
                if lo == 1 or hi == 12:
                    return True
            elif r == lo - 1 or r == hi + 1:
                return True
    return False


@kernel
def closeness(hand, c) -> int:
    """How much card ``c`` belongs with the rest of the hand (near-melds it would break)."""
    if c == JOKER:
        return 0
    r = c % 13
    s = c // 13
    t = 0
    for s2 in range(4):
        if hand[s2 * 13 + r] > (1 if s2 == s else 0):
            t += 4
    for d in (-2, -1, 1, 2):
        for k in range(2 if r == 0 else 1):
            p = (r if k == 0 else 13) + d
            if _has_pos(hand, s, p):
                t += 3 if (d == 1 or d == -1) else 1
    return t


@kernel(inline="always")
def _next_player(rec) -> int:
    """The seat after the player to act (it sees the discard first)."""
    return (rec.cur + 1) % rec.hands.shape[0]


@kernel
def _deep_take_score(rec, d, vals, hand) -> float:
    """A 500 Rum take down to depth ``d`` (the mask guarantees its deepest card melds): the
    values of the taken cards that meld with the hand plus the others taken, less the values
    of those that do not, over 5 (a top card that melds scores 5).
    """
    n = rec.pile_n
    for j in range(n - 1 - d, n):
        hand[rec.pile[j]] += 1
    net = 0.0
    for j in range(n - 1 - d, n):
        c = rec.pile[j]
        hand[c] -= 1
        if j == n - 1 - d or fits_table(rec, c) or melds_with_hand(hand, c):
            net += vals[c]
        else:
            net -= vals[c]
        hand[c] += 1
    for j in range(n - 1 - d, n):
        hand[rec.pile[j]] -= 1
    return net / 5.0


@kernel
def _removed(t, hand, vals) -> float:
    """Penalty that laying template ``t`` removes from the hand (a joker fills each place
    of a run whose natural is not held).
    """
    if TPL_KIND[t] == 1:
        r = TPL_A[t]
        v = vals[JOKER] * TPL_C[t]
        for q in range(4):
            if TPL_B[t] >> q & 1:
                v += vals[q * 13 + r]
        return v
    s = TPL_A[t]
    v = 0.0
    for pos in range(TPL_B[t], TPL_C[t] + 1):
        c = s * 13 + (0 if pos == 13 else pos)
        v += vals[c] if hand[c] > 0 else vals[JOKER]
    return v


@kernel
def _rummy51_take_score(rec, x, hand, can_lay, lay) -> float:
    """Rummy 51: take the top discard ``x`` (5) or draw (-5)?"""
    n = hand_total(rec, rec.cur)
    if can_lay:
        if K51.can_retrieve_with(rec, x) or can_lay_off(rec, x):
            return 5.0
        return 5.0 if n >= 3 and melds_with_hand(hand, x) else -5.0
    ws = K51.make_work()
    need = lay[L_THRESH]
    room = joker_room(rec)
    r0 = K51.opening_reachable(hand, need, -1, room, ws)
    hand[x] += 1
    r1 = K51.opening_reachable(hand, need, x, room, ws)
    hand[x] -= 1
    if r1 and not r0:
        return 5.0
    return 5.0 if n >= 3 and _melds_natural(hand, x) else -5.0


@kernel
def _melds_natural(hand, x) -> bool:
    """:func:`melds_with_hand` without the hand's jokers."""
    j = hand[JOKER]
    hand[JOKER] = 0
    ok = melds_with_hand(hand, x)
    hand[JOKER] = j
    return ok


@kernel
def near_other(hand, c) -> bool:
    """Is a natural of the hand other than a copy of ``c`` near it (``greedy``'s ``near``: same
    rank and another suit, or same suit at most two ranks apart, the ace next to 2 and K)?
    """
    return closeness(hand, c) > (4 if hand[c] > 1 else 0)  # closeness counts a copy as 4


@kernel
def _rummy51_discard_score(rec, c, hand, vals) -> float:
    """Rummy 51: discards by tier, the highest penalty first within a tier."""
    if c == JOKER:
        tier = 4
    elif hand[c] == 1 and _melds_natural(hand, c):
        tier = 3
    elif (
        can_lay_off(rec, c)
        or K51.can_retrieve_with(rec, c)
        or near_other(rec.known[_next_player(rec)], c)
    ):
        tier = 2
    elif near_other(hand, c):
        tier = 1
    else:
        tier = 0
    return -100.0 - 30.0 * tier + vals[c]


@kernel
def score_action(rec, a, lay, vals, tpl_pts, hand, can_lay) -> float:
    """Score of legal action ``a`` for the player to act (see the module docstring)."""
    if a == 0:
        return 0.0
    take = lay[L_TAKE]
    if take <= a < take + lay[L_NTAKE]:
        d = a - take
        if lay[L_PH_CALL] >= 0 and rec.phase == lay[L_PH_CALL]:
            return 10.0 - d
        if d >= 1:
            return _deep_take_score(rec, d, vals, hand)
        x = rec.pile[rec.pile_n - 1]
        if lay[L_THRESH] >= 0:
            return _rummy51_take_score(rec, x, hand, can_lay, lay)
        if x == JOKER:
            return 5.0
        if can_lay and fits_table(rec, x):
            return 5.0
        if melds_with_hand(hand, x):
            return 5.0
        return -5.0
    if a == lay[L_PASS]:
        if lay[L_PH_CALL] >= 0 and rec.phase == lay[L_PH_CALL]:
            return 0.0
        return -1.0
    if lay[L_MELD] <= a < lay[L_LAYOFF]:
        if lay[L_THRESH] >= 0:
            return 200.0 + _removed(a - lay[L_MELD], hand, vals)
        return 100.0 + tpl_pts[a - lay[L_MELD]]
    if lay[L_LAYOFF] <= a < lay[L_JOKER]:
        c = (a - lay[L_LAYOFF]) // lay[L_M]
        return 90.0 + vals[c]
    end_j = lay[L_RETRIEVE] if lay[L_RETRIEVE] >= 0 else lay[L_DISCARD]
    if lay[L_JOKER] <= a < end_j:
        return 85.0
    if lay[L_DISCARD] <= a < lay[L_DISCARD] + 53:
        c = a - lay[L_DISCARD]
        if lay[L_THRESH] >= 0:
            return _rummy51_discard_score(rec, c, hand, vals)
        s = -100.0 + vals[c] - CLOSE_W * closeness(hand, c)
        if c == JOKER:
            s -= 150.0
        else:
            if fits_table(rec, c):
                s -= TABLE_W
            s -= NEXT_W * closeness(rec.known[_next_player(rec)], c)
            if melds_with_hand(hand, c):
                s -= 40.0
        return s
    return RETRIEVE_SCORE if lay[L_THRESH] < 0 else 1000.0  # a joker retrieval


@kernel
def _can_lay(rec, lay) -> bool:
    """May the player to act lay off? Under an opening rule only once it owns a table meld
    (read from the table, a field both record layouts have).
    """
    if lay[L_OPENING] == 0:
        return True
    for m in range(rec.n_melds):
        if rec.m_kind[m] != 0 and rec.m_owner[m] == rec.cur:
            return True
    return False


@kernel
def best_action(rec, mask, lay, vals, tpl_pts) -> int:
    """The best-scored legal action (-1 when none is legal)."""
    hand = rec.hands[rec.cur]
    can_lay = _can_lay(rec, lay)
    best = -1
    best_s = -np.inf
    for a in range(lay[L_NA]):
        if mask[a]:
            s = score_action(rec, a, lay, vals, tpl_pts, hand, can_lay)
            if s > best_s:
                best_s = s
                best = a
    return best


@kernel
def joker_unsearched(rec, a, lay) -> bool:
    """Is action ``a`` of the kind :func:`joker_forced_at` plays without a search (a meld,
    lay-off, joker retrieval, or a 500 Rum "Rummy!" call offered)?
    """
    if lay[L_MELD] <= a < lay[L_DISCARD]:
        return True
    return lay[L_PH_CALL] >= 0 and rec.phase == lay[L_PH_CALL] and a != lay[L_PASS]


@kernel
def joker_forced_at(states, i, masks, lay, vals, tpl_pts) -> int:
    """The move of game ``i`` played without a search (-1: none): a meld, lay-off or joker
    retrieval when the policy would play one, and a 500 Rum "Rummy!" call when one is offered.
    These never hurt the greedy plan (melding early is what every baseline does), so the
    search spends its budget on draws and discards.
    """
    rec = states[i]
    a = best_action(rec, masks[i], lay, vals, tpl_pts)
    return a if a >= 0 and joker_unsearched(rec, a, lay) else -1


@kernel
def joker_rollout_actions(states, masks, lay, vals, tpl_pts, eps, out) -> None:
    """Heuristic rollout actions for every game of a batch (``out[i] = 0`` where no action is
    legal: a finished game, on which the engine's step is a no-op).
    """
    na = lay[L_NA]
    for i in range(states.shape[0]):
        rec = states[i]
        if eps > 0.0 and randint(rec, 1 << 20) < eps * (1 << 20):
            a = _random_legal(rec, masks[i], na)
        else:
            a = best_action(rec, masks[i], lay, vals, tpl_pts)
        out[i] = a if a >= 0 else 0


@kernel
def joker_prior_at(states, i, masks, lay, vals, tpl_pts, out) -> None:
    """Scores of the legal actions of game ``i`` (``-inf`` where illegal): the widening order."""
    rec = states[i]
    hand = rec.hands[rec.cur]
    can_lay = _can_lay(rec, lay)
    mask = masks[i]
    for a in range(lay[L_NA]):
        if mask[a]:
            out[a] = score_action(rec, a, lay, vals, tpl_pts, hand, can_lay)
        else:
            out[a] = -np.inf


@kernel
def _fits_others(rec, c, seat, all_melds) -> bool:
    """Does card type ``c`` lay off on a table meld (only on those ``seat`` did not lay unless
    ``all_melds``)?
    """
    for m in range(rec.n_melds):
        if (all_melds or rec.m_owner[m] != seat) and fits_slot(rec, m, c):
            return True
    return False


@kernel
def rummy51_evidence(states, seat, thresh, out) -> None:
    """Count, per world, what a player who melds as soon as it can would never leave.

    ``out[i]``: over the other players of world ``i`` who have had a turn this hand (their cards
    have not changed since), how many of these facts ``greedy`` would never leave:

    - not opened, and the hand reaches the opening (``thresh`` points, a card left to discard);
    - opened, and the hand still holds a meld, or (2 players only: with more, other players
      have changed the table since) a card, a joker too, that lays off on a table meld (in the
      seat's play phase only on melds the seat did not lay: it may have laid them this turn;
      a lay-off of the seat's own this turn can still open a place, an error this accepts).

    A turn ends with one discard, so ``pile_n - 1 + pile_draws`` turns are complete (all
    players have had one once the stock was reshuffled).
    """
    ws = K51.make_work()
    for i in range(states.shape[0]):
        rec = states[i]
        p_n = rec.hands.shape[0]
        done = rec.pile_n - 1 + rec.pile_draws if rec.reshuffles == 0 else 1 << 20
        all_melds = rec.phase == 0
        room = joker_room(rec)
        q = (rec.dealer + 1) % p_n
        k = 0  # turns before q's first one
        n = 0
        for _ in range(p_n):
            if rec.out[q] == 0:
                h = rec.hands[q]
                if q != seat and rec.opened[q] == 0 and done > k:
                    if K51.opening_reachable(h, thresh, -1, room, ws):
                        n += 1
                elif q != seat and rec.opened[q] == 1:
                    if K51.opening_reachable(h, 1, -1, room, ws):
                        n += 1
                    for c in range(53 if p_n == 2 else 0):
                        if h[c] > 0 and _fits_others(rec, c, seat, all_melds):
                            n += 1
                            break
                k += 1
            q = (q + 1) % p_n
        out[i] = n


# ---------------------------------------------------------------------------------------------
# Per-game parameters (plain Python, once per config)


def _layout_vector(layout, ph_call: int, opening: bool) -> np.ndarray:
    lay = np.full(L_SIZE, -1, np.int64)
    lay[L_TAKE] = layout.take_base if hasattr(layout, "take_base") else 1
    lay[L_NTAKE] = layout.meld_base - lay[L_TAKE]
    lay[L_MELD] = layout.meld_base
    lay[L_LAYOFF] = layout.layoff_base
    lay[L_M] = layout.max_melds
    lay[L_JOKER] = layout.joker_base
    lay[L_RETRIEVE] = getattr(layout, "retrieve_base", -1)
    lay[L_DISCARD] = layout.discard_base
    lay[L_PASS] = getattr(layout, "pass_action", -1)
    lay[L_NA] = layout.num_actions
    lay[L_PH_CALL] = ph_call
    lay[L_OPENING] = int(opening)
    return lay


def _template_points(placed) -> np.ndarray:
    """Points of each meld template: the sum of ``placed(card, pos)`` over its cards (``pos``:
    the run position, 0 the low ace, 13 the high ace; -1 in a group).
    """
    pts = np.zeros(NUM_TEMPLATES, np.float64)
    for t in range(NUM_TEMPLATES):
        if TPL_KIND[t] == 1:
            size = bin(int(TPL_B[t])).count("1") + int(TPL_C[t])
            pts[t] = size * placed(int(TPL_A[t]), -1)
        else:
            s = int(TPL_A[t])
            for pos in range(int(TPL_B[t]), int(TPL_C[t]) + 1):
                pts[t] += placed(s * 13 + (0 if pos == 13 else pos), pos)
    return pts


def five_hundred_rum_params(config, layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(layout vector, card values, template points) of a 500 Rum config, from the rules'
    own card values (:func:`~rummy_env.rules.five_hundred_rum.kernels.placed_value`).
    """
    cfg = K500.config_vector(config)
    vals = np.array([K500.card_value(c, cfg) for c in range(53)], np.float64)
    pts = _template_points(lambda c, pos: K500.placed_value(c, pos, cfg))
    return _layout_vector(layout, PH_CALL, False), vals, pts


def rummy51_params(config, layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(layout vector, card penalties, template points) of a Rummy 51 config, from the rules'
    own penalties and template points (``TPL_VAL``: the opening value of each template).
    """
    vals = np.array([K51.card_penalty(c) for c in range(53)], np.float64)
    pts = K51.TPL_VAL.astype(np.float64)
    lay = _layout_vector(layout, -1, True)
    lay[L_THRESH] = config.opening_threshold
    return lay, vals, pts


__all__ = [
    "best_action",
    "closeness",
    "fits_table",
    "melds_with_hand",
    "near_other",
    "rummy51_params",
    "five_hundred_rum_params",
    "joker_prior_at",
    "joker_rollout_actions",
    "joker_unsearched",
    "rummy51_evidence",
    "score_action",
]
