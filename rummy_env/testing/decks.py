"""Stacked decks that deal chosen hands (for rule tests, puzzles and differential testing)."""

from __future__ import annotations

from collections.abc import Iterable

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
