"""Stacked decks that deal chosen hands (for rule tests, puzzles and differential testing)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rummy_env.core.cards import card_to_str, parse_cards


def gin_deck(
    non_dealer: str | Iterable[int | str],
    dealer: str | Iterable[int | str],
    upcard: str | int | None = None,
    stock: str | Iterable[int | str] = (),
) -> list[int]:
    """A full 52-card Gin Rummy deck, top first, that deals the given hands.

    Cards are dealt one at a time starting with the non-dealer; then the upcard; then the stock
    in the given order, followed by every remaining card in ascending id order. With 11 cards for
    the non-dealer and no upcard it is an ``eleven_card_deal`` deck.

    Raises:
        ValueError: on duplicated cards or wrong hand sizes.

    """
    nd = parse_cards(non_dealer)
    d = parse_cards(dealer)
    up = [] if upcard is None else parse_cards([upcard] if isinstance(upcard, int) else upcard)
    st = parse_cards(stock)
    eleven = len(nd) == 11
    if len(d) != 10 or len(nd) != (11 if eleven else 10):
        raise ValueError(
            f"need 10 dealer cards and 10 (or 11) non-dealer cards, got {len(d)}, {len(nd)}"
        )
    if eleven == bool(up):
        raise ValueError("an upcard is dealt with 10 cards each, never in the eleven-card deal")
    top: list[int] = []
    for i in range(10):
        top += [nd[i], d[i]]
    if eleven:
        top.append(nd[10])
    top += up + st
    seen: set[int] = set()
    for c in top:
        if c in seen or c >= 52:
            raise ValueError(f"card {card_to_str(c)} is used twice or is not a Gin card")
        seen.add(c)
    return top + [c for c in range(52) if c not in seen]


def gin_deck_3p(
    hands: Mapping[int, str | Iterable[int | str]],
    dealer: int,
    upcard: str | int | None = None,
    stock: str | Iterable[int | str] = (),
) -> list[int]:
    """A stacked deck for 3-player Gin Rummy (``num_players=3``) from the hands by seat.

    ``dealer`` sits out; ``hands`` holds the hands of the two other seats (keys: seats). The seat
    after the dealer, ``(dealer + 1) % 3``, takes the non-dealer's part (11 cards in the
    eleven-card deal). Pass the deck with ``reset(options={"deck": ..., "dealer": dealer})``.

    Raises:
        ValueError: on a dealer that is not a seat, hands of the wrong seats, or the errors of
            :func:`gin_deck`.

    """
    if dealer not in (0, 1, 2):
        raise ValueError(f"dealer must be a seat in 0..2, got {dealer!r}")
    first, second = (dealer + 1) % 3, (dealer + 2) % 3
    if set(hands) != {first, second}:
        raise ValueError(
            f"with dealer {dealer} the hands are those of seats {first} and {second}, got seats "
            f"{sorted(hands)}"
        )
    return gin_deck(hands[first], hands[second], upcard, stock)


def gin_decks_4p(
    hands: Mapping[int, str | Iterable[int | str]],
    dealers: Sequence[int],
    upcards: Sequence[str | int | None] = (None, None),
    stocks: Sequence[str | Iterable[int | str]] = ((), ()),
    round_index: int = 0,
) -> list[list[int]]:
    """The two stacked decks of a 4-player Gin Rummy round (``num_players=4``) from the hands
    of seats 0..3.

    Table 0 is ``player_0``'s, table 1 ``player_2``'s; in round ``round_index`` the opponents are
    as in ``rummy_env.rules.gin_rummy.multi_game.table_pairs``. ``dealers`` names the dealer of
    each table (a seat at it). Pass the decks with ``reset(options={"deck": decks, "dealer":
    dealers})`` (round 0).

    Raises:
        ValueError: on hands not given for the four seats, a dealer not at its table, or the
            errors of :func:`gin_deck`.

    """
    from rummy_env.rules.gin_rummy.multi_game import table_pairs

    if set(hands) != {0, 1, 2, 3}:
        raise ValueError(f"need the hands of seats 0..3, got seats {sorted(hands)}")
    if len(dealers) != 2:
        raise ValueError(f"need one dealer per table, got {list(dealers)!r}")
    decks = []
    for t, pair in enumerate(table_pairs(round_index)):
        d = dealers[t]
        if d not in pair:
            raise ValueError(f"dealers[{t}] must be a seat at table {t} {pair}, got {d!r}")
        nd = pair[0] if d == pair[1] else pair[1]
        decks.append(gin_deck(hands[nd], hands[d], upcards[t], stocks[t]))
    return decks


def joker_deck(
    hands: Sequence[str | Iterable[int | str]],
    upcard: str | int,
    stock: str | Iterable[int | str] = (),
    num_decks: int = 1,
    jokers: int | None = None,
    dealer: int = 0,
) -> list[int]:
    """A full stacked deck, top first, that deals the given hands in 500 Rum (or Rummy 51).

    ``hands[q]`` is seat ``q``'s hand; all hands have the same size. Cards are dealt one at a
    time starting left of ``dealer`` (seat ``dealer + 1``); then the ``upcard`` starts the
    discard pile; then the ``stock`` in the given order (its first card is drawn first),
    followed by every remaining card in ascending id order (jokers last). Jokers are ``"JK"``
    (id 52); ``jokers=None`` means two per deck.

    Raises:
        ValueError: on unequal hand sizes or cards used more often than the deck holds them.

    """
    if jokers is None:
        jokers = 2 * num_decks
    parsed = [parse_cards(h) for h in hands]
    n_players = len(parsed)
    if n_players < 2 or len({len(h) for h in parsed}) != 1:
        sizes = [len(h) for h in parsed]
        raise ValueError(f"need at least 2 hands of equal size, got sizes {sizes}")
    if not 0 <= dealer < n_players:
        raise ValueError(f"dealer must be a seat in 0..{n_players - 1}, got {dealer}")
    up = parse_cards([upcard] if isinstance(upcard, int) else upcard)
    if len(up) != 1:
        raise ValueError(f"the upcard must be one card, got {len(up)}")
    top: list[int] = []
    for i in range(len(parsed[0])):
        for off in range(1, n_players + 1):
            top.append(parsed[(dealer + off) % n_players][i])
    top += up + parse_cards(stock)
    available = {c: num_decks for c in range(52)}
    available[52] = jokers
    for c in top:
        c = 52 if c >= 52 else c
        if available[c] <= 0:
            raise ValueError(f"card {card_to_str(c)} is used more often than the deck holds it")
        available[c] -= 1
    top = [52 if c >= 52 else c for c in top]
    return top + [c for c in range(53) for _ in range(available[c])]
