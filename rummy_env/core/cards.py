"""Card identities shared by every game.

A card id is an ``int``: natural cards are ``suit * 13 + rank`` with suits ``c d h s`` (0..3) and
ranks ``A 2 .. 9 T J Q K`` (0..12); the two jokers are 52 and 53. Games with two decks hold each
id twice, so hands are count vectors over the 54 ids (``NUM_CARD_TYPES``).

Text form: rank then suit (``"As"``, ``"Td"``, ``"Qh"``, also ``"10d"``), jokers ``"JK"``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from rummy_env.core.validate import ArgumentTypeError, is_int

NUM_SUITS = 4
NUM_RANKS = 13
NUM_NATURAL = 52
NUM_CARD_TYPES = 54
JOKER_IDS = (52, 53)

SUITS = "cdhs"
RANKS = "A23456789TJQK"
SUIT_SYMBOLS = "♣♦♥♠"


def card_suit(card: int) -> int:
    """Suit index (0..3) of a natural card."""
    return card // NUM_RANKS


def card_rank(card: int) -> int:
    """Rank index (0 = ace .. 12 = king) of a natural card."""
    return card % NUM_RANKS


def is_joker(card: int) -> bool:
    """True for the joker ids 52 and 53."""
    return card >= NUM_NATURAL


def card_to_str(card: int) -> str:
    """Text form of a card id: ``"As"``, ``"Td"``, jokers ``"JK"``."""
    if not 0 <= card < NUM_CARD_TYPES:
        raise ValueError(f"card id {card} is out of range 0..{NUM_CARD_TYPES - 1}")
    if card >= NUM_NATURAL:
        return "JK"
    return RANKS[card % NUM_RANKS] + SUITS[card // NUM_RANKS]


def str_to_card(text: str) -> int:
    """Card id of a text form (``"As"``, ``"10d"``, ``"Td"``, ``"JK"``; case-insensitive suit).

    Raises:
        ValueError: if the text names no card.

    """
    t = text.strip()
    if t.upper() in ("JK", "JOKER", "JO"):
        return 52
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2:
        raise ValueError(f"cannot read card {text!r}: expected rank+suit like 'As', 'Td' or 'JK'")
    rank = RANKS.find(t[0].upper())
    suit = SUITS.find(t[1].lower())
    if rank < 0 or suit < 0:
        raise ValueError(f"cannot read card {text!r}: rank must be one of {RANKS}, suit of {SUITS}")
    return suit * NUM_RANKS + rank


def parse_cards(cards: str | Iterable[int | str], name: str = "cards") -> list[int]:
    """Card ids from a space-separated string or an iterable of ids / text forms.

    Raises:
        TypeError: (``ArgumentTypeError``) for an entry that is neither an integer id nor text
            (``bool``, floats, ``None``, nested lists), or for a bare non-iterable value.
        ValueError: for an id out of range or text that names no card.

    """
    if isinstance(cards, str):
        items: Iterable[int | str] = cards.split()
    elif isinstance(cards, np.ndarray) and cards.ndim == 0 or not isinstance(cards, Iterable):
        raise ArgumentTypeError(
            f"{name} must be a list of card ids (0..{NUM_CARD_TYPES - 1}) or text like "
            f"'As', got {cards!r}"
        )
    else:
        items = cards
    out: list[int] = []
    for k, c in enumerate(items):
        if isinstance(c, str):
            try:
                out.append(str_to_card(c))
            except ValueError as e:
                raise ValueError(f"{name}[{k}]: {e}") from None
        elif is_int(c):
            ci = int(c)
            if not 0 <= ci < NUM_CARD_TYPES:
                raise ValueError(
                    f"{name}[{k}]: card id {ci} is out of range 0..{NUM_CARD_TYPES - 1}"
                )
            out.append(ci)
        else:
            raise ArgumentTypeError(
                f"{name}[{k}] must be a card id (0..{NUM_CARD_TYPES - 1}) or text like 'As', "
                f"got {c!r}"
            )
    return out


def cards_to_str(cards: Iterable[int]) -> str:
    """Space-separated text of card ids, in the given order."""
    return " ".join(card_to_str(int(c)) for c in cards)


def counts_to_cards(counts: np.ndarray) -> list[int]:
    """Sorted card ids held in a count vector over card types (each id repeated by its count)."""
    counts = np.asarray(counts)
    return [int(c) for c in np.repeat(np.arange(counts.shape[-1]), counts.astype(np.int64))]


def cards_to_counts(
    cards: str | Iterable[int | str], num_types: int = NUM_CARD_TYPES
) -> np.ndarray:
    """Count vector (int8) of a collection of cards (with ``num_types=53``, the joker games'
    card types, both joker ids count as type 52).
    """
    counts = np.zeros(num_types, dtype=np.int8)
    for c in parse_cards(cards):
        if c in JOKER_IDS and num_types == NUM_NATURAL + 1:
            c = NUM_NATURAL  # one joker type: 52 and 53 are the same card
        if c >= num_types:
            raise ValueError(f"card {card_to_str(c)} is not part of a {num_types}-type deck")
        counts[c] += 1
    return counts


def cards_to_mask(cards: str | Iterable[int | str]) -> int:
    """52-bit integer mask of natural cards (bit ``id`` set); jokers are rejected."""
    m = 0
    for c in parse_cards(cards):
        if c >= NUM_NATURAL:
            raise ValueError("a 52-bit card mask cannot hold a joker")
        m |= 1 << c
    return m


def mask_to_cards(mask: int) -> list[int]:
    """Card ids of the set bits of a 52-bit mask, ascending."""
    mask = int(mask)
    return [c for c in range(NUM_NATURAL) if mask >> c & 1]


def make_deck(num_decks: int = 1, jokers: int = 0) -> np.ndarray:
    """Unshuffled deck as card ids: ``num_decks`` copies of the 52 naturals, then the jokers.

    ``jokers`` is the total number of jokers; they alternate between ids 52 and 53.
    """
    if num_decks < 1:
        raise ValueError(f"num_decks must be at least 1, got {num_decks}")
    if jokers < 0:
        raise ValueError(f"jokers must be non-negative, got {jokers}")
    naturals = np.tile(np.arange(NUM_NATURAL, dtype=np.int8), num_decks)
    jk = np.array([52 + (i % 2) for i in range(jokers)], dtype=np.int8)
    return np.concatenate([naturals, jk])


def describe_deck(expected: np.ndarray) -> str:
    """What a full deck of ``expected`` holds, in words (for error messages)."""
    want = np.bincount(expected.astype(np.int64), minlength=NUM_CARD_TYPES)
    nat = want[:NUM_NATURAL]
    jokers = int(want[NUM_NATURAL:].sum())
    if (nat == nat[0]).all():
        times = {1: "once", 2: "twice"}.get(int(nat[0]), f"{int(nat[0])} times")
        text = f"{expected.size} cards: each of the 52 natural cards {times}"
    else:  # pragma: no cover - every game plays whole decks
        text = f"{expected.size} cards: {cards_to_str(c for c in expected if c < NUM_NATURAL)}"
    if jokers:
        text += f" and {jokers} joker(s) (id 52 or 53, or 'JK')"
    return text


def validate_deck(
    deck: str | Iterable[int | str], expected: np.ndarray, name: str = "deck"
) -> np.ndarray:
    """Check that a stacked deck is a permutation of ``expected``; return it as int8 ids.

    Jokers are interchangeable: either joker id (52 or 53) may stand for any joker of
    ``expected``, and the jokers of the result are those of ``expected``, in its order.

    Raises:
        TypeError: (``ArgumentTypeError``) if the deck is not a string or a list of ids / texts.
        ValueError: naming the missing, extra or unknown cards and the full deck expected.

    """
    if not isinstance(deck, (str, list, tuple, np.ndarray)):
        raise ArgumentTypeError(
            f"{name} must be a list of card ids or text like 'As' (a stacked deck of "
            f"{describe_deck(expected)}), got {deck!r}"
        )
    ids = parse_cards(deck, name)
    arr = np.asarray(ids, dtype=np.int64)
    if arr.size != expected.size:
        raise ValueError(f"{name} has {arr.size} cards, this game uses {describe_deck(expected)}")
    jokers = arr >= NUM_NATURAL
    exp = expected.astype(np.int64)
    got = np.bincount(np.where(jokers, NUM_NATURAL, arr), minlength=NUM_CARD_TYPES)
    want = np.bincount(np.where(exp >= NUM_NATURAL, NUM_NATURAL, exp), minlength=NUM_CARD_TYPES)
    if not np.array_equal(got, want):
        extra = [card_to_str(c) for c in range(NUM_CARD_TYPES) if got[c] > want[c]]
        missing = [card_to_str(c) for c in range(NUM_CARD_TYPES) if got[c] < want[c]]
        raise ValueError(
            f"{name} is not a full deck: duplicated/unexpected {extra}, missing {missing}; "
            f"expected {describe_deck(expected)}"
        )
    arr[jokers] = exp[exp >= NUM_NATURAL]
    return arr.astype(np.int8)
