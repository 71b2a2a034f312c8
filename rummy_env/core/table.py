"""Table meld slots with jokers, shared by 500 Rum and Rummy 51 (compiled helpers).

A game record holds its table melds as slots (fields ``m_kind``, ``m_key``, ``m_lo``, ``m_hi``,
``m_nat``, ``m_jok``, ``m_owner``, ``n_melds``) and its hands as count vectors ``hands[p, 53]``
with ``known[p, 53]``, the cards each player is publicly known to hold:

- group: ``m_key`` = rank, ``m_nat`` = bitmask of its natural suits, ``m_jok`` = joker count
  (at most 4 cards, naturals of different suits);
- run: ``m_key`` = suit, positions ``m_lo..m_hi`` on the 14-position axis of ``core.jmelds``,
  ``m_nat`` / ``m_jok`` = bitmasks of the positions held by naturals / jokers.

These helpers move cards between a hand and the table; scoring is the game's business. They
read the template tables as module globals, which numba compiles in as constants (passing arrays
to a compiled function that is not inlined costs a reference count increment and decrement per
array and call).
"""

from __future__ import annotations

import numpy as np

from rummy_env.core.jit import kernel
from rummy_env.core.jmelds import JOKER, TPL_A, TPL_B, TPL_C, TPL_KIND, popcount16, pos_card
from rummy_env.core.rng import shuffle_inplace


def table_fields(num_players: int, deck_size: int, max_melds: int) -> list[tuple]:
    """The record fields these helpers use, in layout order: a game's state dtype starts with
    them and adds its own.
    """
    p, d, m = num_players, deck_size, max_melds
    return [
        ("hands", np.int8, (p, 53)),  # card counts in each hand
        ("known", np.int8, (p, 53)),  # cards each player is publicly known to hold
        ("deck", np.int8, (d,)),  # deal order; stock = deck[deck_pos:]
        ("deck_pos", np.int16),
        ("pile", np.int8, (d,)),  # discard pile bottom -> top
        ("pile_n", np.int16),
        ("m_kind", np.int8, (m,)),  # 0 empty, 1 group, 2 run
        ("m_key", np.int8, (m,)),  # group rank / run suit
        ("m_lo", np.int8, (m,)),  # run low position (0..13)
        ("m_hi", np.int8, (m,)),  # run high position
        ("m_nat", np.int16, (m,)),  # natural suits (group) / positions (run)
        ("m_jok", np.int16, (m,)),  # joker count (group) / positions (run)
        ("m_owner", np.int8, (m,)),  # player who laid the meld down
        ("n_melds", np.int16),
    ]


@kernel
def hand_total(rec, p) -> int:
    """Cards in player ``p``'s hand."""
    t = 0
    for c in range(53):
        t += rec.hands[p, c]
    return t


@kernel
def new_deal(rec, decks, jokers, shuffle) -> None:
    """Start a deal: with ``shuffle`` the deck becomes ``decks`` packs and ``jokers`` jokers,
    shuffled by the record's stream (else the deck already placed, a stacked one, is kept);
    every hand, known card and table slot is cleared.
    """
    if shuffle:
        k = 0
        for _dk in range(decks):
            for c in range(52):
                rec.deck[k] = c
                k += 1
        for _j in range(jokers):
            rec.deck[k] = JOKER
            k += 1
        shuffle_inplace(rec, rec.deck, k)
    for q in range(rec.hands.shape[0]):
        for c in range(53):
            rec.hands[q, c] = 0
            rec.known[q, c] = 0
    for m in range(rec.m_kind.shape[0]):
        rec.m_kind[m] = 0
        rec.m_nat[m] = 0
        rec.m_jok[m] = 0
    rec.n_melds = 0


@kernel
def fit_natural(rec, m, c) -> int:
    """Where natural ``c`` lays off on slot ``m``: -1 no; group: 14; run: the new position
    (an ace that fits both ends of a 2..K run goes high).
    """
    kind = rec.m_kind[m]
    s = c // 13
    r = c % 13
    if kind == 1:
        if rec.m_key[m] != r or rec.m_nat[m] >> s & 1:
            return -1
        if popcount16(rec.m_nat[m]) + rec.m_jok[m] >= 4:
            return -1
        return 14
    if kind != 2 or rec.m_key[m] != s:
        return -1
    lo = rec.m_lo[m]
    hi = rec.m_hi[m]
    if r == 0:
        if hi == 12 and lo > 0:
            return 13
        if lo == 1 and hi < 13:
            return 0
        return -1
    if r == lo - 1:
        return r
    if r == hi + 1 and hi + 1 <= 12:
        return r
    return -1


@kernel
def fit_joker(rec, m, e) -> int:
    """Where a joker lays off on slot ``m`` at end ``e`` (0 group / low, 1 high); -1 no."""
    kind = rec.m_kind[m]
    if kind == 1:
        if e != 0 or popcount16(rec.m_nat[m]) + rec.m_jok[m] >= 4:
            return -1
        return 14
    if kind != 2:
        return -1
    lo = rec.m_lo[m]
    hi = rec.m_hi[m]
    if e == 0:
        if lo == 0 or (lo - 1 == 0 and hi == 13):
            return -1
        return lo - 1
    if hi == 13 or (hi + 1 == 13 and lo == 0):
        return -1
    return hi + 1


@kernel(inline="always")
def fits_slot(rec, m, c) -> bool:
    """True if card type ``c`` (52: a joker, at either end) lays off directly on slot ``m``."""
    if c == JOKER:
        return fit_joker(rec, m, 0) >= 0 or fit_joker(rec, m, 1) >= 0
    return fit_natural(rec, m, c) >= 0


@kernel
def can_lay_off(rec, c) -> bool:
    """True if card type ``c`` lays off directly on some table meld."""
    for m in range(rec.n_melds):
        if fits_slot(rec, m, c):
            return True
    return False


@kernel
def joker_room(rec) -> int:
    """Jokers the table melds can still take as lay-offs (runs up to 13 cards, groups to 4)."""
    n = 0
    for m in range(rec.n_melds):
        if rec.m_kind[m] == 1:
            n += 4 - popcount16(rec.m_nat[m]) - rec.m_jok[m]
        elif rec.m_kind[m] == 2:
            n += 13 - (rec.m_hi[m] - rec.m_lo[m] + 1)
    return n


@kernel(inline="always")
def give_up(rec, p, c, k):
    """Player ``p`` plays ``k`` copies of card type ``c`` from the hand (melds, lays off or
    discards them). The other players cannot tell which copies went, so the copies publicly
    known to be held drop by ``k`` (not below 0) whatever hidden copies the hand still holds:
    known counts follow only what became public.
    """
    rec.hands[p, c] -= k
    kn = rec.known[p, c] - k
    rec.known[p, c] = kn if kn > 0 else 0


@kernel
def place_card(rec, p, m, c, pos):
    """Lay card type ``c`` from ``p``'s hand at position ``pos`` of slot ``m`` (14: group)."""
    give_up(rec, p, c, 1)
    if rec.m_kind[m] == 1:
        if c == JOKER:
            rec.m_jok[m] += 1
        else:
            rec.m_nat[m] |= 1 << (c // 13)
    else:
        if c == JOKER:
            rec.m_jok[m] |= 1 << pos
        else:
            rec.m_nat[m] |= 1 << pos
        if pos < rec.m_lo[m]:
            rec.m_lo[m] = pos
        if pos > rec.m_hi[m]:
            rec.m_hi[m] = pos


@kernel
def unplace_card(rec, p, m, c, pos, old_lo, old_hi, old_known):
    """Undo ``place_card``."""
    rec.hands[p, c] += 1
    rec.known[p, c] = old_known
    if rec.m_kind[m] == 1:
        if c == JOKER:
            rec.m_jok[m] -= 1
        else:
            rec.m_nat[m] &= ~(1 << (c // 13))
    else:
        if c == JOKER:
            rec.m_jok[m] &= ~(1 << pos)
        else:
            rec.m_nat[m] &= ~(1 << pos)
        rec.m_lo[m] = old_lo
        rec.m_hi[m] = old_hi


@kernel
def lay_template(rec, p, t) -> int:
    """Lay template ``t`` from ``p``'s hand into the next slot (naturals where the hand holds
    them, jokers elsewhere). Returns the number of jokers used.
    """
    m = rec.n_melds
    rec.n_melds += 1
    rec.m_owner[m] = p
    a, b, c = TPL_A[t], TPL_B[t], TPL_C[t]
    if TPL_KIND[t] == 1:
        rec.m_kind[m] = 1
        rec.m_key[m] = a
        rec.m_nat[m] = b
        rec.m_jok[m] = c
        rec.m_lo[m] = 0
        rec.m_hi[m] = 0
        j = c
        for s in range(4):
            if b >> s & 1:
                give_up(rec, p, s * 13 + a, 1)
    else:
        rec.m_kind[m] = 2
        rec.m_key[m] = a
        rec.m_lo[m] = b
        rec.m_hi[m] = c
        natm = 0
        jokm = 0
        j = 0
        for pos in range(b, c + 1):
            card = pos_card(a, pos)
            if rec.hands[p, card] >= 1:
                natm |= 1 << pos
                give_up(rec, p, card, 1)
            else:
                jokm |= 1 << pos
                j += 1
        rec.m_nat[m] = natm
        rec.m_jok[m] = jokm
    give_up(rec, p, JOKER, j)
    return j


@kernel
def unlay_template(rec, p, t, j, known_save):
    """Undo ``lay_template`` (the last slot goes back to ``p``'s hand)."""
    m = rec.n_melds - 1
    a, b = TPL_A[t], TPL_B[t]
    if TPL_KIND[t] == 1:
        for s in range(4):
            if b >> s & 1:
                rec.hands[p, s * 13 + a] += 1
    else:
        for pos in range(rec.m_lo[m], rec.m_hi[m] + 1):
            if rec.m_nat[m] >> pos & 1:
                rec.hands[p, pos_card(a, pos)] += 1
    rec.hands[p, JOKER] += j
    rec.m_kind[m] = 0
    rec.m_nat[m] = 0
    rec.m_jok[m] = 0
    rec.n_melds -= 1
    for card in range(53):
        rec.known[p, card] = known_save[card]


@kernel
def write_table_obs(rec, p, p_n, out, o_kind, o_owner, o_cards, o_jok, o_ends):
    """Write the table melds as the pieces of ``encodings.pieces.table_specs`` (owners
    seat-relative to ``p``), at the given offsets of ``out``.
    """
    for m in range(rec.n_melds):
        kind = rec.m_kind[m]
        out[o_kind + 2 * m + kind - 1] = 1.0
        out[o_owner + m * p_n + (rec.m_owner[m] - p) % p_n] = 1.0
        if kind == 1:
            r = rec.m_key[m]
            for s in range(4):
                if rec.m_nat[m] >> s & 1:
                    out[o_cards + m * 52 + s * 13 + r] = 1.0
            out[o_jok + m * 14] = rec.m_jok[m] / 4.0
            out[o_ends + 2 * m] = r / 12.0
            out[o_ends + 2 * m + 1] = r / 12.0
        else:
            s = rec.m_key[m]
            for pos in range(14):
                if rec.m_nat[m] >> pos & 1:
                    out[o_cards + m * 52 + pos_card(s, pos)] = 1.0
                if rec.m_jok[m] >> pos & 1:
                    out[o_jok + m * 14 + pos] = 1.0
            out[o_ends + 2 * m] = rec.m_lo[m] / 13.0
            out[o_ends + 2 * m + 1] = rec.m_hi[m] / 13.0
