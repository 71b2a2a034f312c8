"""A slow, independent pure-Python reading of the 500 Rum rules (RULES.md §2), to check the
kernels' exact masks.

Nothing here calls the compiled code. The state record is read into plain tuples, every move
the rules allow is generated straight from the text (melds of 3+ cards; lay-offs at a run's
ends or as a group's missing suit; discards; draws; calls), and "the turn can still be
completed" is decided by searching over sequences of placements on copies of the state.

The search for a pending "meld the deepest card x" obligation only tries, before x is placed,
lay-offs onto table runs of x's suit (the chain that can bridge a run's end to x); then x is
placed by a new meld containing it or a lay-off. That loses nothing: in any way of completing
the turn, a placement that does not lead up to x's placement can be made after it instead
(placements on other melds, or at the other end of x's run, do not affect x's), and a new meld
made this turn that x is then laid off on (with a chain) is itself a meld containing x. After
the obligation is met the search is unrestricted.

A pile card is "Rummy!"-callable (§2.5 Decision) if it can be melded from the table and the
pile cards above it alone: each meld it could end up in (a table meld, or a new meld of those
cards) is built up by every sequence of lay-offs of those cards (``meldable_from``).

Where RULES.md leaves a point open this follows the engine's documented departures: a joker
fills exactly the run positions whose natural card the hand lacks; an ace laid off on a 2..K
run goes high; the single top discard just taken may be discarded if another copy is held
(two decks, or jokers), and once a card of that type has been melded this turn the copy still
held is the player's own; "Rummy!" calls are offered only after discards; a call obliges the
caller to meld the called card (by any means: the new-meld variant applies to draws only).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations

from rummy_env.core.jmelds import TPL_A, TPL_B, TPL_C, TPL_KIND
from rummy_env.encodings import five_hundred_rum as E

JOKER = 52
GROUP, RUN = 1, 2
ACE_LOW, ACE_HIGH = 0, 13

# the action table's template ids (the contract), keyed by what the template lays down
TEMPLATE_ID = {
    (int(TPL_KIND[t]), int(TPL_A[t]), int(TPL_B[t]), int(TPL_C[t])): t for t in range(len(TPL_KIND))
}


def rank(c: int) -> int:
    return c % 13


def suit(c: int) -> int:
    return c // 13


def card_at(s: int, pos: int) -> int:
    """The natural card at run position ``pos`` (0 and 13 are both the ace)."""
    return s * 13 + (0 if pos == ACE_HIGH else pos)


def run_positions(c: int) -> tuple[int, ...]:
    """Positions a natural card can take in a run: an ace is low (0) or high (13)."""
    return (ACE_HIGH, ACE_LOW) if rank(c) == 0 else (rank(c),)


@dataclass(frozen=True)
class Rules:
    num_players: int
    deck_size: int
    max_melds: int
    values_5_10_15: bool
    rummy_call: str
    must_meld_discard: bool
    deepest_card_new_meld: bool
    going_out: str
    max_pile_draws: int

    @classmethod
    def of(cls, config) -> Rules:
        return cls(
            num_players=config.num_players,
            deck_size=config.deck_size,
            max_melds=config.deck_size // 3,
            values_5_10_15=bool(config.values_5_10_15),
            rummy_call=config.rummy_call,
            must_meld_discard=bool(config.must_meld_discard),
            deepest_card_new_meld=bool(config.deepest_card_new_meld),
            going_out=config.going_out,
            max_pile_draws=config.max_pile_draws,
        )


def card_value(c: int, values_5_10_15: bool = False) -> int:
    """§2.1: 2-10 face value (5/10/15: 2-9 worth 5), J Q K 10, A 15, joker 15."""
    if c == JOKER or rank(c) == 0:
        return 15
    if values_5_10_15:
        return 5 if rank(c) <= 8 else 10
    return min(rank(c) + 1, 10)


def placed_value(c: int, pos: int | None, values_5_10_15: bool = False) -> int:
    """Value of a card melded at a run position (``None``: in a group): a low ace is 1 (5)."""
    if c != JOKER and pos == ACE_LOW:
        return 5 if values_5_10_15 else 1
    return card_value(c, values_5_10_15)


# -- table melds -------------------------------------------------------------------------------
# A meld is (kind, key, lo, hi, nat, jok) like the record: group: key = rank, nat = suits of the
# naturals (bits), jok = number of jokers; run: key = suit, lo..hi positions, nat / jok = bits of
# the positions held by naturals / jokers.


def meld_size(meld: tuple) -> int:
    kind, _, lo, hi, nat, jok = meld
    if kind == GROUP:
        return bin(nat).count("1") + jok
    return hi - lo + 1


def meld_cards(meld: tuple) -> list[int]:
    """The card types in a table meld (jokers as 52)."""
    kind, key, lo, hi, nat, jok = meld
    if kind == GROUP:
        return [s * 13 + key for s in range(4) if nat >> s & 1] + [JOKER] * jok
    out = []
    for pos in range(lo, hi + 1):
        out.append(JOKER if jok >> pos & 1 else card_at(key, pos))
    return out


def is_valid_meld(meld: tuple) -> bool:
    """§2.2: a group of 3-4 of one rank in different suits, or a run of 3+ of one suit (ace low
    or high, not both), jokers anywhere, at least one natural.
    """
    kind, key, lo, hi, nat, jok = meld
    if kind == GROUP:
        return 3 <= meld_size(meld) <= 4 and nat != 0 and 0 <= key < 13
    if kind != RUN or not (0 <= lo and hi <= 13 and hi - lo >= 2) or (lo == 0 and hi == 13):
        return False
    span = sum(1 << p for p in range(lo, hi + 1))
    return nat & jok == 0 and nat | jok == span and nat != 0


def fit_natural(meld: tuple, c: int) -> int | None:
    """Where natural ``c`` lays off on ``meld``: a run position, -1 for a group, None if it
    does not fit (§2.2: the missing suit of a group of 3, the next card at either end of a
    run; ace low or high but not both; an ace fitting both ends of 2..K goes high).
    """
    kind, key, lo, hi, nat, _ = meld
    if kind == GROUP:
        if key == rank(c) and not nat >> suit(c) & 1 and meld_size(meld) < 4:
            return -1
        return None
    if key != suit(c):
        return None
    for pos in run_positions(c):
        if pos in (lo - 1, hi + 1) and not (min(lo, pos) == 0 and max(hi, pos) == 13):
            return pos
    return None


def fit_joker(meld: tuple, end: int) -> int | None:
    """Where a joker lays off on ``meld`` at ``end`` (0: group or run low end, 1: high end)."""
    kind, _, lo, hi, _, _ = meld
    if kind == GROUP:
        return -1 if end == 0 and meld_size(meld) < 4 else None
    pos = lo - 1 if end == 0 else hi + 1
    if not 0 <= pos <= 13 or (min(lo, pos) == 0 and max(hi, pos) == 13):
        return None
    return pos


def lay_on(meld: tuple, c: int, pos: int) -> tuple:
    """``meld`` with card type ``c`` added at ``pos`` (-1: group)."""
    kind, key, lo, hi, nat, jok = meld
    if kind == GROUP and c == JOKER:
        return (kind, key, lo, hi, nat, jok + 1)
    if kind == GROUP:
        return (kind, key, lo, hi, nat | 1 << suit(c), jok)
    lo, hi = min(lo, pos), max(hi, pos)
    if c == JOKER:
        return (kind, key, lo, hi, nat, jok | 1 << pos)
    return (kind, key, lo, hi, nat | 1 << pos, jok)


def lays_off(table: tuple, c: int) -> bool:
    """True if card type ``c`` lays off directly on some table meld."""
    for meld in table:
        if c == JOKER:
            if fit_joker(meld, 0) is not None or fit_joker(meld, 1) is not None:
                return True
        elif fit_natural(meld, c) is not None:
            return True
    return False


@dataclass(frozen=True)
class NewMeld:
    template: int
    meld: tuple
    used: tuple[int, ...]  # card types taken from the hand (jokers as 52)
    points: int


def new_melds(hand: tuple[int, ...], values_5_10_15: bool = False) -> list[NewMeld]:
    """Every new meld the hand can lay down (§2.2), jokers filling the places the hand lacks."""
    out = []
    jokers = hand[JOKER]
    for r in range(13):
        held = [s for s in range(4) if hand[s * 13 + r] > 0]
        for k in range(1, len(held) + 1):
            for suits in combinations(held, k):
                for j in range(0, min(jokers, 4 - k) + 1):
                    if k + j < 3:
                        continue
                    nat = sum(1 << s for s in suits)
                    used = tuple(s * 13 + r for s in suits) + (JOKER,) * j
                    pts = sum(placed_value(c, None, values_5_10_15) for c in used)
                    meld = (GROUP, r, 0, 0, nat, j)
                    out.append(NewMeld(TEMPLATE_ID[(GROUP, r, nat, j)], meld, used, pts))
    for s in range(4):
        for lo in range(14):
            for hi in range(lo + 2, 14):
                if lo == 0 and hi == 13:
                    continue
                nat = jok = 0
                used: list[int] = []
                pts = 0
                for pos in range(lo, hi + 1):
                    c = card_at(s, pos)
                    if hand[c] > 0:
                        nat |= 1 << pos
                        used.append(c)
                        pts += placed_value(c, pos, values_5_10_15)
                    else:
                        jok |= 1 << pos
                        used.append(JOKER)
                        pts += 15
                if nat == 0 or used.count(JOKER) > jokers:
                    continue
                meld = (RUN, s, lo, hi, nat, jok)
                out.append(NewMeld(TEMPLATE_ID[(RUN, s, lo, hi)], meld, tuple(used), pts))
    return out


# -- the turn ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """What matters for finishing the current player's turn."""

    hand: tuple[int, ...]  # 53 counts
    table: tuple[tuple, ...]
    oblig: int = -1  # card type still to be melded (-1: none)
    oblig_new: bool = False  # ... in a new meld
    taken_single: int = -1  # the single top discard taken this turn

    def without(self, cards) -> tuple[int, ...]:
        h = list(self.hand)
        for c in cards:
            h[c] -= 1
            assert h[c] >= 0
        return tuple(h)


@dataclass(frozen=True)
class Placement:
    action: int
    cards: tuple[int, ...]  # card types leaving the hand
    table: tuple[tuple, ...]  # the table afterwards
    points: int
    places: frozenset  # card types this placement counts as melding for an obligation
    kind: str  # "meld" or "layoff"
    slot: int  # the table slot it makes or extends


def placements(turn: Turn, rules: Rules, lay: E.Layout) -> list[Placement]:
    """Every new meld and lay-off the hand can make now (before any completion check)."""
    out = []
    hand, table = turn.hand, turn.table
    if len(table) < rules.max_melds:
        for nm in new_melds(hand, rules.values_5_10_15):
            places = frozenset(nm.used)  # includes JOKER if a joker is used
            a = lay.meld_base + nm.template
            new = (*table, nm.meld)
            out.append(Placement(a, nm.used, new, nm.points, places, "meld", len(table)))
    for m, meld in enumerate(table):
        for c in range(52):
            if hand[c] < 1:
                continue
            pos = fit_natural(meld, c)
            if pos is None:
                continue
            new = (*table[:m], lay_on(meld, c, pos), *table[m + 1 :])
            pts = placed_value(c, None if pos < 0 else pos, rules.values_5_10_15)
            a = lay.layoff_base + c * lay.max_melds + m
            out.append(Placement(a, (c,), new, pts, frozenset((c,)), "layoff", m))
        if hand[JOKER] >= 1:
            for end in (0, 1):
                pos = fit_joker(meld, end)
                if pos is None:
                    continue
                new = (*table[:m], lay_on(meld, JOKER, pos), *table[m + 1 :])
                a = lay.joker_base + 2 * m + end
                out.append(Placement(a, (JOKER,), new, 15, frozenset((JOKER,)), "layoff", m))
    return out


def after(turn: Turn, pl: Placement) -> Turn:
    """The turn after a placement; the obligation is met by a new meld containing the card,
    or (unless a new meld is required) by laying the card off.
    """
    oblig = turn.oblig
    if oblig >= 0 and oblig in pl.places and (pl.kind == "meld" or not turn.oblig_new):
        oblig = -1
    # once a card of the type just taken is melded, that is the card taken (the player chooses
    # which of two identical copies goes down), so a copy still held may be discarded
    taken = -1 if turn.taken_single in pl.cards else turn.taken_single
    return replace(
        turn, hand=turn.without(pl.cards), table=pl.table, oblig=oblig, taken_single=taken
    )


def discardable(turn: Turn, c: int, rules: Rules) -> bool:
    """§2.4/§2.8: a card may be discarded once the obligation is met, unless it is the single
    top discard just taken (and no other copy is held), or (unplayable_discard) it is the last
    card and could be laid off.
    """
    if turn.oblig >= 0 or turn.hand[c] < 1:
        return False
    if c == turn.taken_single and turn.hand[c] == 1:
        return False
    if rules.going_out == "unplayable_discard" and sum(turn.hand) == 1 and lays_off(turn.table, c):
        return False
    return True


def can_finish(turn: Turn, rules: Rules, lay: E.Layout) -> bool:
    """No obligation pending: can the turn end by a discard, or by melding every card (legal
    unless going_out is discard_required), after some more placements?
    """
    assert turn.oblig < 0
    if any(discardable(turn, c, rules) for c in range(53)):
        return True
    if sum(turn.hand) == 0:
        return rules.going_out != "discard_required"
    return any(can_finish(after(turn, pl), rules, lay) for pl in placements(turn, rules, lay))


def can_complete(turn: Turn, rules: Rules, lay: E.Layout) -> bool:
    """Can the player still finish this turn legally (obligation met, then discard or out)?"""
    if turn.oblig < 0:
        return can_finish(turn, rules, lay)
    seen: set = set()

    def search(t: Turn) -> bool:
        key = (t.hand, t.table)
        if key in seen:
            return False
        seen.add(key)
        x = t.oblig
        for pl in placements(t, rules, lay):
            nxt = after(t, pl)
            if nxt.oblig < 0:
                if can_finish(nxt, rules, lay):
                    return True
                continue
            # not yet x: only chain lay-offs onto a table run of x's suit can help
            if t.oblig_new or x == JOKER or pl.kind != "layoff":
                continue
            meld = t.table[pl.slot]
            if meld[0] == RUN and meld[1] == suit(x) and search(nxt):
                return True
        return False

    return search(turn)


# -- reading the record -----------------------------------------------------------------------


def table_of(rec) -> tuple[tuple, ...]:
    return tuple(
        (
            int(rec["m_kind"][m]),
            int(rec["m_key"][m]),
            int(rec["m_lo"][m]) if int(rec["m_kind"][m]) == RUN else 0,
            int(rec["m_hi"][m]) if int(rec["m_kind"][m]) == RUN else 0,
            int(rec["m_nat"][m]),
            int(rec["m_jok"][m]),
        )
        for m in range(int(rec["n_melds"]))
    )


def hand_of(rec, p: int) -> tuple[int, ...]:
    return tuple(int(x) for x in rec["hands"][p])


def pile_of(rec) -> list[int]:
    """Discard pile, bottom to top."""
    return [int(c) for c in rec["pile"][: int(rec["pile_n"])]]


def stock_size(rec, rules: Rules) -> int:
    return rules.deck_size - int(rec["deck_pos"])


def turn_of(rec, p: int) -> Turn:
    return Turn(
        hand_of(rec, p),
        table_of(rec),
        int(rec["oblig"]),
        bool(rec["oblig_new"]),
        int(rec["taken_single"]),
    )


def taking(hand: tuple[int, ...], pile: list[int], d: int) -> tuple[tuple[int, ...], int]:
    """The hand after taking the pile down to depth ``d`` (0 = top), and the deepest card."""
    h = list(hand)
    for c in pile[len(pile) - 1 - d :]:
        h[c] += 1
    return tuple(h), pile[len(pile) - 1 - d]


def draw_actions(rec, rules: Rules, lay: E.Layout, p: int) -> set[int]:
    """§2.4 draw: the stock top (while there is a stock; any drawn card leaves a discard or a
    lay-off for a floater, so the turn stays completable), else PASS (which ends the hand);
    the pile down to depth ``d`` if the deepest card can be melded this turn (the top card
    alone needs no meld unless must_meld_discard) and the turn can be completed.
    """
    out = set()
    if stock_size(rec, rules) > 0:
        out.add(lay.draw_stock)
    else:
        out.add(lay.pass_action)
    pile, table = pile_of(rec), table_of(rec)
    if int(rec["pile_draws"]) >= rules.max_pile_draws:
        pile = []  # the cap on pile draws per hand (a documented departure): stock only
    for d in range(len(pile)):
        hand, x = taking(hand_of(rec, p), pile, d)
        must = d >= 1 or rules.must_meld_discard
        turn = Turn(
            hand,
            table,
            oblig=x if must else -1,
            oblig_new=must and rules.deepest_card_new_meld,
            taken_single=x if d == 0 else -1,
        )
        if can_complete(turn, rules, lay):
            out.add(lay.take_base + d)
    return out


def lay_offs_reach(cards: tuple[int, ...], meld: tuple, x: int) -> bool:
    """Can card type ``x`` be laid off on ``meld`` after laying off some of ``cards`` (counts,
    ``x`` among them) on it one at a time, in any order? Tries every order (memoised).
    """
    seen: set = set()

    def search(cards: tuple[int, ...], meld: tuple) -> bool:
        if (cards, meld) in seen:
            return False
        seen.add((cards, meld))
        for c in range(53):
            if cards[c] < 1:
                continue
            if c == JOKER:
                spots = [fit_joker(meld, end) for end in (0, 1)]
            else:
                spots = [fit_natural(meld, c)]
            for pos in spots:
                if pos is None:
                    continue
                if c == x:
                    return True
                rest = tuple(n - (k == c) for k, n in enumerate(cards))
                if search(rest, lay_on(meld, c, pos)):
                    return True
        return False

    return search(cards, meld)


def meldable_from(cards: tuple[int, ...], table: tuple[tuple, ...], x: int) -> bool:
    """§2.5 Decision: can card type ``x`` be melded using only the table melds and ``cards``
    (counts, ``x`` among them), in any order: new melds among the cards, lay-offs onto table
    melds, lay-offs onto melds those cards formed or extended first?

    ``x`` ends up in one meld: a table meld, or a new meld of the cards, a group of ``x``'s
    rank or a run of its suit (any meld for a joker). Only the placements that build that
    meld up to ``x`` matter (any other placement only uses up cards), so this tries each such
    table meld and new meld of the cards in turn, then every sequence of lay-offs onto it.
    """

    def may_take_x(meld: tuple) -> bool:
        kind, key = meld[0], meld[1]
        return x == JOKER or key == (rank(x) if kind == GROUP else suit(x))

    starts = [(cards, meld) for meld in table if may_take_x(meld)]
    for nm in new_melds(cards):
        if x in nm.used:
            return True
        if not may_take_x(nm.meld):
            continue
        rest = list(cards)
        for c in nm.used:
            rest[c] -= 1
        starts.append((tuple(rest), nm.meld))
    return any(lay_offs_reach(rest, meld, x) for rest, meld in starts)


def callable_depths(rec, rules: Rules) -> list[int]:
    """§2.5: depths of pile cards a "Rummy!" call may take down to: (full) the card can be
    melded using only the table melds and the pile cards above it (``meldable_from``);
    layoff_only: the top card only, and only by a lay-off.
    """
    if rules.rummy_call == "none":
        return []
    pile, table = pile_of(rec), table_of(rec)
    if rules.rummy_call == "layoff_only":
        return [0] if pile and lays_off(table, pile[-1]) else []
    out = []
    for d in range(len(pile)):
        cards, x = taking((0,) * 53, pile, d)
        if meldable_from(cards, table, x):
            out.append(d)
    return out


def call_actions(rec, rules: Rules, lay: E.Layout, q: int) -> set[int]:
    """What player ``q`` may do when offered a call: PASS, or call at a callable depth if the
    turn can then be completed (full: meld the card, discard; layoff_only: lay it off).
    """
    out = {lay.pass_action}
    pile, table = pile_of(rec), table_of(rec)
    for d in callable_depths(rec, rules):
        hand, x = taking(hand_of(rec, q), pile, d)
        if rules.rummy_call == "layoff_only":
            ok = lays_off(table, x)
        else:
            ok = can_complete(Turn(hand, table, oblig=x), rules, lay)
        if ok:
            out.add(lay.take_base + d)
    return out


def play_actions(rec, rules: Rules, lay: E.Layout, p: int) -> set[int]:
    """§2.4 meld and discard, each only if the turn can still be completed afterwards; after a
    layoff_only call, only lay-offs of the called card.
    """
    turn = turn_of(rec, p)
    out = set()
    if int(rec["phase"]) == E.PH_CALL_LAYOFF:
        for pl in placements(turn, rules, lay):
            if pl.kind == "layoff" and pl.cards == (turn.oblig,):
                out.add(pl.action)
        return out
    for pl in placements(turn, rules, lay):
        if can_complete(after(turn, pl), rules, lay):
            out.add(pl.action)
    for c in range(53):
        if discardable(turn, c, rules):
            out.add(lay.discard_base + c)
    return out


def reference_mask(rec, config) -> set[int]:
    """The set of legal action ids of the player to act."""
    rules = Rules.of(config)
    lay = E.Layout(config.num_players, config.deck_size)
    if rec["done"]:
        return set()
    ph, p = int(rec["phase"]), int(rec["cur"])
    if ph == E.PH_DRAW:
        return draw_actions(rec, rules, lay, p)
    if ph == E.PH_CALL:
        return call_actions(rec, rules, lay, p)
    if ph in (E.PH_PLAY, E.PH_CALL_LAYOFF):
        return play_actions(rec, rules, lay, p)
    return set()


def has_call(rec, config, q: int) -> bool:
    """True if player ``q`` could call "Rummy!" on the pile as it is."""
    rules = Rules.of(config)
    lay = E.Layout(config.num_players, config.deck_size)
    return len(call_actions(rec, rules, lay, q)) > 1


def placement_of(rec, config, a: int) -> Placement | None:
    """The placement action ``a`` makes now (None for draws, discards, calls, PASS)."""
    rules = Rules.of(config)
    lay = E.Layout(config.num_players, config.deck_size)
    turn = turn_of(rec, int(rec["cur"]))
    for pl in placements(turn, rules, lay):
        if pl.action == a:
            return pl
    return None
