"""A slow, independent pure-Python reading of the Rummy 51 rules (RULES.md §3), to check the
kernels' exact masks.

Nothing here calls the compiled code. The meld geometry (§3.5: groups of different suits, runs
with the ace low or high, lay-offs at a run's ends or as a group's missing suit) is the same as
500 Rum's and comes from ``reference_five_hundred_rum``. Every move the rules allow is generated
straight
from the text, and "the turn can still be completed" is decided by a memoised search over all
sequences of melds, lay-offs and joker retrievals that ends with a legal discard.

Where RULES.md leaves a point open this follows the engine's documented decisions: a joker fills
exactly the run positions whose natural card the hand lacks; an ace laid off on a 2..K run goes
high; the card taken from the pile may be discarded if another copy is held (and once a card of
that type has been melded, the copy still held is the player's own); once opened (in this turn
too) a player may lay off and take jokers back; with ``discard_draw_requires_opening`` the taken
card must be in a meld laid before the opening total is reached or in the meld that reaches it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from reference_five_hundred_rum import (
    GROUP,
    JOKER,
    card_at,
    fit_joker,
    fit_natural,
    lay_on,
    meld_size,
    new_melds,
    table_of,
)

from rummy_env.encodings import rummy51 as E


def penalty(c: int) -> int:
    """§3.1/§3.8: a card left in hand: A 11, 2-10 face value, J Q K 10, joker 25."""
    if c == JOKER:
        return 25
    r = c % 13
    return 11 if r == 0 else min(r + 1, 10)


def meld_points(meld: tuple) -> int:
    """§3.1/§3.4: a meld's points, a joker counting as the card it stands for; an ace is 11,
    or 1 as the low end of A-2-3.
    """
    kind, key, lo, hi, _, _ = meld
    if kind == GROUP:
        return meld_size(meld) * (11 if key == 0 else min(key + 1, 10))
    return sum(
        1 if pos == 0 else 11 if pos == 13 else min(pos + 1, 10) for pos in range(lo, hi + 1)
    )


@dataclass(frozen=True)
class Rules:
    num_players: int
    max_melds: int
    threshold: int
    joker_must_be_melded: bool
    discard_needs_opening: bool
    max_pile_draws: int

    @classmethod
    def of(cls, config) -> Rules:
        return cls(
            config.num_players,
            config.deck_size // 3,
            config.opening_threshold,
            bool(config.retrieved_joker_must_be_melded),
            bool(config.discard_draw_requires_opening),
            config.max_pile_draws,
        )


@dataclass(frozen=True)
class Turn:
    """What matters for finishing the current player's turn."""

    hand: tuple[int, ...]  # 53 counts
    table: tuple[tuple, ...]
    opened: bool  # before or during this turn
    open_pts: int = 0  # points of new melds laid this turn before opening
    oblig: int = -1  # the taken discard still owed to the opening melds
    taken: int = -1  # the card taken from the pile this turn
    owed: int = 0  # retrieved jokers still to be melded

    def without(self, cards) -> tuple[int, ...]:
        h = list(self.hand)
        for c in cards:
            h[c] -= 1
            assert h[c] >= 0
        return tuple(h)


def moves(turn: Turn, rules: Rules, lay: E.Layout) -> list[tuple[int, Turn]]:
    """Every meld, lay-off and joker retrieval the rules allow now, with the turn after it."""
    out = []
    hand, table = turn.hand, turn.table
    if len(table) < rules.max_melds:
        for nm in new_melds(hand):
            used = nm.used
            opened, pts = turn.opened, turn.open_pts
            if not opened:
                pts += meld_points(nm.meld)
                opened = pts >= rules.threshold
            oblig = -1 if turn.oblig in used else turn.oblig
            if opened and not turn.opened and oblig >= 0:
                continue  # §3.3 variant: the taken card belongs in the opening melds
            after = replace(
                turn,
                hand=turn.without(used),
                table=(*table, nm.meld),
                opened=opened,
                open_pts=pts,
                oblig=oblig,
                taken=-1 if turn.taken in used else turn.taken,
                owed=max(turn.owed - used.count(JOKER), 0),
            )
            out.append((lay.meld_base + nm.template, after))
    if not turn.opened:
        return out  # §3.4: no lay-offs or retrievals before opening
    for m, meld in enumerate(table):
        for c in range(52):
            pos = fit_natural(meld, c) if hand[c] >= 1 else None
            if pos is None:
                continue
            new = (*table[:m], lay_on(meld, c, pos), *table[m + 1 :])
            after = replace(
                turn, hand=turn.without([c]), table=new, taken=-1 if turn.taken == c else turn.taken
            )
            out.append((lay.layoff_base + c * lay.max_melds + m, after))
        if hand[JOKER] >= 1:
            for end in (0, 1):
                pos = fit_joker(meld, end)
                if pos is None:
                    continue
                new = (*table[:m], lay_on(meld, JOKER, pos), *table[m + 1 :])
                after = replace(
                    turn,
                    hand=turn.without([JOKER]),
                    table=new,
                    taken=-1 if turn.taken == JOKER else turn.taken,
                    owed=max(turn.owed - 1, 0),
                )
                out.append((lay.joker_base + 2 * m + end, after))
        for k, c, new_meld in retrievals(meld):
            if hand[c] < 1:
                continue
            h = list(turn.without([c]))
            h[JOKER] += 1
            after = replace(
                turn,
                hand=tuple(h),
                table=(*table[:m], new_meld, *table[m + 1 :]),
                taken=-1 if turn.taken == c else turn.taken,
                owed=turn.owed + (1 if rules.joker_must_be_melded else 0),
            )
            out.append((lay.retrieve_base + 14 * m + k, after))
    return out


def retrievals(meld: tuple) -> list[tuple[int, int, tuple]]:
    """§3.6: (k, natural card, meld afterwards) for each joker that can be taken back: in a run,
    by the natural of its position k; in a group of 3, by a natural of a suit k its naturals
    lack (one joker per natural); never from a group of 4.
    """
    kind, key, lo, hi, nat, jok = meld
    out = []
    if kind == GROUP:
        if meld_size(meld) != 3 or jok < 1:
            return out
        for s in range(4):
            if not nat >> s & 1:
                out.append((s, s * 13 + key, (kind, key, lo, hi, nat | 1 << s, jok - 1)))
        return out
    for pos in range(lo, hi + 1):
        if jok >> pos & 1:
            out.append(
                (pos, card_at(key, pos), (kind, key, lo, hi, nat | 1 << pos, jok & ~(1 << pos)))
            )
    return out


def discardable(turn: Turn, c: int) -> bool:
    """§3.3/§3.4/§3.6: a card may be discarded unless an opening is begun but short, the taken
    discard is still owed to it, a retrieved joker is still to be melded, or it is the single
    copy of the card taken from the pile this turn.
    """
    if turn.hand[c] < 1 or turn.oblig >= 0 or turn.owed > 0:
        return False
    if not turn.opened and turn.open_pts > 0:
        return False
    return not (c == turn.taken and turn.hand[c] == 1)


def _key(turn: Turn) -> tuple:
    return (turn.hand, tuple(sorted(turn.table)), turn.opened, turn.open_pts, turn.oblig,
            turn.taken, turn.owed)  # fmt: skip


def can_complete(turn: Turn, rules: Rules, lay: E.Layout) -> bool:
    """Is there a sequence of melds, lay-offs and retrievals after which a discard is legal?"""
    seen: dict[tuple, bool] = {}

    def search(t: Turn) -> bool:
        k = _key(t)
        if k in seen:
            return seen[k]
        seen[k] = False
        ok = any(discardable(t, c) for c in range(53)) or any(
            search(t2) for _, t2 in moves(t, rules, lay)
        )
        seen[k] = ok
        return ok

    return search(turn)


def hand_of(rec, p: int) -> tuple[int, ...]:
    return tuple(int(x) for x in rec["hands"][p])


def turn_of(rec, p: int) -> Turn:
    return Turn(
        hand=hand_of(rec, p),
        table=table_of(rec),
        opened=bool(rec["opened"][p]),
        open_pts=int(rec["open_pts"]),
        oblig=int(rec["oblig"]),
        taken=int(rec["taken_single"]),
        owed=int(rec["owed"]),
    )


@lru_cache(maxsize=16)
def _layout(p: int) -> E.Layout:
    return E.Layout(p)


def reference_mask(rec, config) -> set[int]:
    """The set of legal action ids of the player to act, by the rules."""
    rules = Rules.of(config)
    lay = _layout(config.num_players)
    if rec["done"]:
        return set()
    p = int(rec["cur"])
    ph = int(rec["phase"])
    if ph == E.PH_DRAW:
        out = {lay.draw_stock}  # the stock is never empty when a player draws
        n = int(rec["pile_n"])
        if n >= 1 and int(rec["pile_draws"]) < rules.max_pile_draws:
            x = int(rec["pile"][n - 1])
            h = list(hand_of(rec, p))
            h[x] += 1
            opened = bool(rec["opened"][p])
            oblig = x if rules.discard_needs_opening and not opened else -1
            turn = Turn(hand=tuple(h), table=table_of(rec), opened=opened, oblig=oblig, taken=x)
            if can_complete(turn, rules, lay):
                out.add(lay.take_discard)
        return out
    if ph != E.PH_PLAY:
        return set()
    turn = turn_of(rec, p)
    out = {lay.discard_base + c for c in range(53) if discardable(turn, c)}
    for a, after in moves(turn, rules, lay):
        if can_complete(after, rules, lay):
            out.add(a)
    return out
