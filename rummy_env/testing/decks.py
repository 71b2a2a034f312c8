"""Stacked decks that deal chosen hands (for rule tests, puzzles and differential testing).

Every helper checks all of its arguments before it builds anything, with the envs' rules:
cards are a list, tuple or 1-d array of card ids (Python or numpy integers) or texts like
``"As"``, or one space-separated text; seats, counts and indices are Python or numpy integers
(``bool`` and floats are not). A value of the wrong type raises ``TypeError``
(:class:`~rummy_env.core.validate.ArgumentTypeError`, also a ``ValueError``), a bad value
``ValueError``; the message names the argument (and the seat where there is one), the value and
what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rummy_env.core.cards import (
    NUM_CARD_TYPES,
    NUM_NATURAL,
    card_to_str,
    parse_cards,
    str_to_card,
)
from rummy_env.core.validate import ArgumentTypeError, _show, check_int, is_int

Cards = str | Sequence[int | str] | np.ndarray
"""A hand or stock: a list, tuple or 1-d array of card ids or texts, or one text."""

Card = str | int
"""One card: an id or a text like ``"As"`` (``"JK"`` for a joker)."""

_CARD_FORMS = "a list of card ids or texts like 'As', or one space-separated text"
HAND = 10
"""Cards dealt to each player in Gin Rummy (the non-dealer gets one more in the eleven-card
deal)."""
MAX_JOKER_PLAYERS = 8
"""Most hands :func:`joker_deck` deals (500 Rum's limit; Rummy 51 plays up to 6)."""


def _is_sequence(value: Any) -> bool:
    """A list, tuple or 1-d array (a str, dict, set or iterator is no ordered list of cards)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 1
    return isinstance(value, (list, tuple))


def _label(name: str, role: str) -> str:
    """An argument's name for messages, with its role (seat, table) where it has one."""
    return f"{name} ({role})" if role else name


def _cards(name: str, role: str, value: Any, *, gin: bool) -> list[int]:
    """The card ids of a hand or stock ``value``; ``name`` is the argument and ``role`` what it
    is (``"seat 2, ..."``), for messages.

    Raises:
        ArgumentTypeError: for a value or an entry of the wrong type.
        ValueError: for an id out of range, text naming no card, or a joker in Gin (``gin``).
    """
    if not isinstance(value, str) and not _is_sequence(value):
        raise ArgumentTypeError(f"{_label(name, role)} must be {_CARD_FORMS}, got {_show(value)}")
    try:
        ids = parse_cards(value, name)
    except ValueError as e:  # ArgumentTypeError included: the same class, with the role
        raise type(e)(f"{e} ({role})" if role else str(e)) from None
    if gin:
        for k, c in enumerate(ids):
            if c >= NUM_NATURAL:
                raise ValueError(
                    f"{name}[{k}]: {card_to_str(c)} (id {c}) is not a Gin Rummy card; Gin uses "
                    f"the 52 natural cards (ids 0..{NUM_NATURAL - 1}), no jokers"
                    + (f" ({role})" if role else "")
                )
    return ids


def _card(name: str, role: str, value: Any, *, gin: bool) -> int:
    """The id of the single card ``value`` (an id or a text).

    Raises:
        ArgumentTypeError: for a value that is neither an integer nor a text.
        ValueError: for an id out of range, text that is not exactly one card, or a joker in Gin.
    """
    top = NUM_NATURAL - 1 if gin else NUM_CARD_TYPES - 1
    allowed = f"one card: an id 0..{top} or a text like 'As'" + ("" if gin else " or 'JK'")
    label = _label(name, role)
    if isinstance(value, str):
        words = value.split()
        if len(words) != 1:
            raise ValueError(f"{label} must be {allowed}, got {len(words)} cards {_show(value)}")
        try:
            card = str_to_card(words[0])
        except ValueError as e:
            raise ValueError(f"{label} must be {allowed}: {e}") from None
    elif is_int(value):
        card = int(value)
    else:
        raise ArgumentTypeError(f"{label} must be {allowed}, got {_show(value)}")
    if not 0 <= card <= top:
        raise ValueError(f"{label} must be {allowed}, got {_show(value)}")
    return card


def _pair(name: str, value: Any, what: str, rows: bool = False) -> Sequence[Any]:
    """``value`` if it is a list, tuple or 1-d array of two entries, one per table (with
    ``rows`` also a 2-d array: one row of cards per table).

    Raises:
        ArgumentTypeError: for another type (a str, a dict, a bare value, ...).
        ValueError: for another length.
    """
    allowed = f"a list of two {what}, one per table (table 0's, then table 1's)"
    if rows and isinstance(value, np.ndarray) and value.ndim == 2:
        value = list(value)
    if not _is_sequence(value):
        raise ArgumentTypeError(f"{name} must be {allowed}, got {_show(value)}")
    if len(value) != 2:
        raise ValueError(f"{name} must be {allowed}, got {len(value)} entries {_show(value)}")
    return value


def _hands_by_seat(hands: Any, seats: Sequence[int], why: str) -> dict[int, Any]:
    """``hands`` (a mapping seat -> hand) as a dict with ``int`` keys, if its seats are
    exactly ``seats``.

    Raises:
        ArgumentTypeError: if ``hands`` is no mapping or a key is not an integer.
        ValueError: if the seats are not ``seats`` (``why`` says why those).
    """
    want = ", ".join(str(s) for s in seats)
    allowed = f"a dict {{seat: hand}} with the hands of seats {want}"
    if not isinstance(hands, Mapping):
        raise ArgumentTypeError(f"hands must be {allowed} ({why}), got {_show(hands)}")
    for key in hands:
        if not is_int(key):
            raise ArgumentTypeError(
                f"hands must be {allowed} ({why}): seats are integers, got the key {_show(key)}"
            )
    by_seat = {int(k): v for k, v in hands.items()}
    if sorted(by_seat) != sorted(seats):
        raise ValueError(f"hands must be {allowed} ({why}), got seats {sorted(by_seat)}")
    return by_seat


Part = tuple[str, str, Any]
"""A part of a Gin deal: (argument name, its role for messages or ``""``, value)."""


def _gin_parts(non_dealer: Part, dealer: Part, upcard: Part, stock: Part) -> list[int]:
    """The top of a Gin deck from its parts: hands dealt one card at a time from the
    non-dealer, the upcard, then the stock.

    Raises:
        ArgumentTypeError, ValueError: as :func:`gin_deck`, naming the part.
    """
    nd = _cards(*non_dealer, gin=True)
    d = _cards(*dealer, gin=True)
    up = None if upcard[2] is None else _card(*upcard, gin=True)
    st = _cards(*stock, gin=True)
    nd_label, up_label = _label(*non_dealer[:2]), _label(*upcard[:2])
    if len(d) != HAND:
        raise ValueError(f"{_label(*dealer[:2])} must hold {HAND} cards, got {len(d)}")
    if len(nd) not in (HAND, HAND + 1):
        raise ValueError(
            f"{nd_label} must hold {HAND} cards ({HAND + 1} in the eleven-card deal), got {len(nd)}"
        )
    eleven = len(nd) == HAND + 1
    if eleven and up is not None:
        raise ValueError(
            f"{up_label} must be None when {nd_label} holds {HAND + 1} cards (the eleven-card "
            f"deal has no upcard), got {_show(upcard[2])}"
        )
    if not eleven and up is None:
        raise ValueError(
            f"{up_label} is needed when {nd_label} holds {HAND} cards (it is the "
            f"{2 * HAND + 1}st card dealt): give one card, or {HAND + 1} non-dealer cards for "
            "the eleven-card deal"
        )
    where: dict[int, str] = {}
    for part, ids in (
        (non_dealer, nd),
        (dealer, d),
        (upcard, [] if up is None else [up]),
        (stock, st),
    ):
        label = _label(*part[:2])
        for c in ids:
            if c in where:
                same = "twice in" if where[c] == label else f"in both {where[c]} and"
                raise ValueError(
                    f"card {card_to_str(c)} is {same} {label}; a Gin deck holds each card once"
                )
            where[c] = label
    top: list[int] = []
    for i in range(HAND):
        top += [nd[i], d[i]]
    if eleven:
        top.append(nd[HAND])
    return top + ([] if up is None else [up]) + st


def _full_gin_deck(top: list[int]) -> list[int]:
    """``top`` followed by every other Gin card in ascending id order."""
    used = set(top)
    return top + [c for c in range(NUM_NATURAL) if c not in used]


def gin_deck(
    non_dealer: Cards,
    dealer: Cards,
    upcard: Card | None = None,
    stock: Cards = (),
) -> list[int]:
    """A full 52-card Gin Rummy deck, top first, that deals the given hands.

    Cards are dealt one at a time starting with the non-dealer; then the upcard; then the stock
    in the given order, followed by every remaining card in ascending id order. With 11 cards for
    the non-dealer and no upcard it is an ``eleven_card_deal`` deck. Pass it with
    ``reset(options={"deck": deck, "dealer": seat})``.

    Args:
        non_dealer: the non-dealer's 10 cards (11 in the eleven-card deal).
        dealer: the dealer's 10 cards.
        upcard: the upcard (one card); ``None`` only in the eleven-card deal.
        stock: the top of the stock, first drawn first.

    Raises:
        TypeError: (``ArgumentTypeError``) for cards of the wrong type (not a list, tuple,
            1-d array or text; an entry that is not an integer id or a text).
        ValueError: for a card used twice, a joker or an unknown card, the wrong hand sizes, or
            an upcard missing (10 non-dealer cards) or given (11).

    """
    top = _gin_parts(
        ("non_dealer", "", non_dealer),
        ("dealer", "", dealer),
        ("upcard", "", upcard),
        ("stock", "", stock),
    )
    return _full_gin_deck(top)


def gin_deck_3p(
    hands: Mapping[int, Cards],
    dealer: int,
    upcard: Card | None = None,
    stock: Cards = (),
) -> list[int]:
    """A stacked deck for 3-player Gin Rummy (``num_players=3``) from the hands by seat.

    ``dealer`` sits out; ``hands`` holds the hands of the two other seats (keys: seats). The seat
    after the dealer, ``(dealer + 1) % 3``, takes the non-dealer's part (11 cards in the
    eleven-card deal). Pass the deck with ``reset(options={"deck": ..., "dealer": dealer})``.

    Args:
        hands: ``{seat: cards}`` for the seats ``(dealer + 1) % 3`` and ``(dealer + 2) % 3``.
        dealer: the seat (0..2) that deals and sits out.
        upcard: as in :func:`gin_deck`.
        stock: as in :func:`gin_deck`.

    Raises:
        TypeError: (``ArgumentTypeError``) for a dealer that is not an integer, hands that are
            not a dict with integer keys, or the type errors of :func:`gin_deck`.
        ValueError: for a dealer that is not a seat, hands of the wrong seats, or the errors of
            :func:`gin_deck` (naming ``hands[seat]``).

    """
    dealer = check_int("dealer", dealer, 0, 2)
    first, second = (dealer + 1) % 3, (dealer + 2) % 3
    by_seat = _hands_by_seat(hands, (first, second), f"dealer {dealer} sits out")
    top = _gin_parts(
        (f"hands[{first}]", f"seat {first}, the non-dealer's part", by_seat[first]),
        (f"hands[{second}]", f"seat {second}, the dealer's part", by_seat[second]),
        ("upcard", "", upcard),
        ("stock", "", stock),
    )
    return _full_gin_deck(top)


def gin_decks_4p(
    hands: Mapping[int, Cards],
    dealers: Sequence[int],
    upcards: Sequence[Card | None] = (None, None),
    stocks: Sequence[Cards] = ((), ()),
    round_index: int = 0,
) -> list[list[int]]:
    """The two stacked decks of a 4-player Gin Rummy round (``num_players=4``) from the hands
    of seats 0..3.

    Table 0 is ``player_0``'s, table 1 ``player_2``'s; in round ``round_index`` the opponents are
    as in ``rummy_env.rules.gin_rummy.multi_game.table_pairs``. ``dealers`` names the dealer of
    each table (a seat at it). Pass the decks with ``reset(options={"deck": decks, "dealer":
    dealers})`` (round 0).

    Args:
        hands: ``{seat: cards}`` for the seats 0..3.
        dealers: ``[dealer at table 0, dealer at table 1]``, each a seat at its table.
        upcards: one upcard per table (as in :func:`gin_deck`; ``None`` only in the
            eleven-card deal).
        stocks: the top of each table's stock.
        round_index: the round (an integer >= 0) whose tables are dealt.

    Raises:
        TypeError: (``ArgumentTypeError``) for arguments of the wrong type (``dealers``,
            ``upcards`` or ``stocks`` that are not a list of two; seats or ``round_index`` that
            are not integers) or the type errors of :func:`gin_deck`.
        ValueError: for hands not given for the four seats, lists whose length is not 2, a
            dealer not at its table, or the errors of :func:`gin_deck` (naming ``hands[seat]``,
            ``upcards[table]`` or ``stocks[table]``).

    """
    from rummy_env.rules.gin_rummy.multi_game import table_pairs

    round_index = check_int("round_index", round_index, 0)
    by_seat = _hands_by_seat(hands, (0, 1, 2, 3), "four players")
    dealers = _pair("dealers", dealers, "dealers")
    upcards = _pair("upcards", upcards, "upcards (None only in the eleven-card deal)")
    stocks = _pair("stocks", stocks, "stocks", rows=True)
    pairs = table_pairs(round_index)
    parts = []
    for t, pair in enumerate(pairs):
        d = dealers[t]
        allowed = f"a seat at table {t} in round {round_index} ({pair[0]} or {pair[1]})"
        if not is_int(d):
            raise ArgumentTypeError(f"dealers[{t}] must be {allowed}, got {_show(d)}")
        d = int(d)
        if d not in pair:
            raise ValueError(f"dealers[{t}] must be {allowed}, got {d}")
        nd = pair[0] if d == pair[1] else pair[1]
        parts.append(
            (
                (f"hands[{nd}]", f"seat {nd}, the non-dealer at table {t}", by_seat[nd]),
                (f"hands[{d}]", f"seat {d}, the dealer at table {t}", by_seat[d]),
                (f"upcards[{t}]", f"table {t}", upcards[t]),
                (f"stocks[{t}]", f"table {t}", stocks[t]),
            )
        )
    tops = [_gin_parts(*p) for p in parts]  # every table checked before either deck is built
    return [_full_gin_deck(top) for top in tops]


def joker_deck(
    hands: Sequence[Cards],
    upcard: Card,
    stock: Cards = (),
    num_decks: int = 1,
    jokers: int | None = None,
    dealer: int = 0,
) -> list[int]:
    """A full stacked deck, top first, that deals the given hands in 500 Rum (or Rummy 51).

    ``hands[q]`` is seat ``q``'s hand; all hands have the same size. Cards are dealt one at a
    time starting left of ``dealer`` (seat ``dealer + 1``); then the ``upcard`` starts the
    discard pile; then the ``stock`` in the given order (its first card is drawn first),
    followed by every remaining card in ascending id order (jokers last). Jokers are ``"JK"``
    (ids 52 and 53 both stand for a joker; the deck holds them as 52).

    Args:
        hands: 2 to 8 hands of the same size (at least one card), seat by seat.
        upcard: the first card of the discard pile (one card).
        stock: the top of the stock, first drawn first.
        num_decks: 1 or 2 decks of 52 natural cards (as the envs use).
        jokers: jokers in the deck, 0..``2 * num_decks``; ``None``: two per deck.
        dealer: the dealing seat, ``0..len(hands) - 1``.

    Raises:
        TypeError: (``ArgumentTypeError``) for arguments of the wrong type (``hands`` that are
            not a list of hands; counts or seats that are not integers) or cards of the wrong
            type.
        ValueError: for a count or seat out of range, hands of unequal sizes, or cards used
            more often than the deck holds them.

    """
    num_decks = check_int("num_decks", num_decks, 1, 2)
    if jokers is not None:
        jokers = check_int("jokers", jokers, 0, 2 * num_decks)
    else:
        jokers = 2 * num_decks
    if isinstance(hands, np.ndarray) and hands.ndim == 2:
        hands = list(hands)  # one row of card ids per seat
    if not isinstance(hands, (list, tuple)):
        raise ArgumentTypeError(
            f"hands must be a list with one hand per seat (2..{MAX_JOKER_PLAYERS} hands), each "
            f"{_CARD_FORMS}, got {_show(hands)}"
        )
    if not 2 <= len(hands) <= MAX_JOKER_PLAYERS:
        raise ValueError(
            f"hands must hold one hand per seat, 2..{MAX_JOKER_PLAYERS} hands, got {len(hands)}"
        )
    parsed = [_cards(f"hands[{q}]", f"seat {q}", h, gin=False) for q, h in enumerate(hands)]
    sizes = [len(h) for h in parsed]
    for q, n in enumerate(sizes):
        if n != sizes[0]:
            raise ValueError(
                f"hands[{q}] (seat {q}) has {n} cards, hands[0] (seat 0) has {sizes[0]}: all "
                "hands must have the same size"
            )
    if not sizes[0]:
        raise ValueError("hands[0] (seat 0) and every other hand are empty: deal at least 1 card")
    dealer = check_int("dealer", dealer, 0, len(parsed) - 1)
    up = _card("upcard", "", upcard, gin=False)
    st = _cards("stock", "", stock, gin=False)
    top: list[int] = []
    for i in range(len(parsed[0])):
        for off in range(1, len(parsed) + 1):
            top.append(parsed[(dealer + off) % len(parsed)][i])
    top += [up] + st
    top = [min(c, NUM_NATURAL) for c in top]  # either joker id is a joker
    available = {c: num_decks for c in range(NUM_NATURAL)}
    available[NUM_NATURAL] = jokers
    used: dict[int, int] = {}
    for c in top:
        used[c] = used.get(c, 0) + 1
        if used[c] > available[c]:
            holds = f"jokers={jokers}" if c == NUM_NATURAL else f"num_decks={num_decks}"
            raise ValueError(
                f"card {card_to_str(c)} is used {used[c]} times (hands, upcard and stock "
                f"together), more often than the deck holds it ({available[c]} with {holds})"
            )
    return top + [c for c in range(NUM_NATURAL + 1) for _ in range(available[c] - used.get(c, 0))]
