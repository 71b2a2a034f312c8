"""The shipped stacked-deck helpers of ``rummy_env.testing``, and the deck forms the envs take.

Valid inputs (every form of cards, seat and count the envs accept) build decks the env accepts
and deal the hands asked for; invalid ones (wrong types: bool, float, str, None, containers;
out of range; duplicates; wrong lengths; seat by seat) raise ``TypeError``/``ValueError`` naming
the argument and, where there is one, the seat or table. With 4 Gin players ``reset`` takes each
table's deck in every form a 2-player deck takes, and refuses the others alike.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy_env import five_hundred_rum_v1, gin_rummy_v0, rummy51_v1
from rummy_env.core.cards import card_to_str, cards_to_mask
from rummy_env.core.validate import ArgumentTypeError
from rummy_env.rules.gin_rummy.multi_game import table_pairs
from rummy_env.testing import gin_deck, gin_deck_3p, gin_decks_4p, joker_deck

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
GIN = list(range(52))


@functools.cache
def gin_env(players: int, eleven: bool = False) -> Any:
    return gin_rummy_v0.raw_env(num_players=players, eleven_card_deal=eleven)


@functools.cache
def joker_env(game: str, players: int, decks: int | None = None, no_jokers: bool = False) -> Any:
    if game == "rummy51":
        return rummy51_v1.raw_env(num_players=players)
    return five_hundred_rum_v1.raw_env(num_players=players, num_decks=decks, no_jokers=no_jokers)


def names(msg: str, name: str) -> bool:
    """``name`` appears in ``msg`` as a name of its own (``dealer`` is not in ``non_dealer``)."""
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", msg) is not None


def raises(fn: Callable[[], Any], exc: type[Exception], *parts: str) -> Exception:
    """Call ``fn``; it must raise ``exc`` whose message names every one of ``parts``."""
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    for p in parts:
        assert names(msg, p), f"{p!r} not named in: {msg}"
    return info.value


# -- the forms of cards ----------------------------------------------------------------------
_INT_TYPES = [int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64]


def _text(c: int) -> str:
    return card_to_str(c)


@st.composite
def card_forms(draw: st.DrawFn, ids: list[int]) -> Any:
    """``ids`` in one of the forms the helpers take (the form of the envs' decks)."""
    kind = draw(st.sampled_from(["ints", "npints", "tuple", "array", "texts", "text", "mixed"]))
    if kind == "ints":
        return list(ids)
    if kind == "npints":
        t = draw(st.sampled_from(_INT_TYPES))
        return [t(c) for c in ids]
    if kind == "tuple":
        return tuple(ids)
    if kind == "array":
        return np.array(ids, dtype=draw(st.sampled_from([np.int8, np.int64, np.uint8])))
    if kind == "texts":
        return [_text(c) for c in ids]
    if kind == "text":
        sep = draw(st.sampled_from([" ", "  ", "\n"]))
        return sep.join(_text(c) for c in ids)
    return [_text(c) if draw(st.booleans()) else c for c in ids]


@st.composite
def one_card(draw: st.DrawFn, c: int) -> Any:
    """The single card ``c`` as an id (Python or numpy) or a text."""
    kind = draw(st.sampled_from(["int", "np", "text"]))
    if kind == "int":
        return c
    if kind == "np":
        return draw(st.sampled_from(_INT_TYPES))(c)
    text = _text(c)
    return text.replace("T", "10") if text[0] == "T" and draw(st.booleans()) else text


def seat_int(draw: st.DrawFn, seat: int) -> Any:
    """A seat as a Python or numpy integer (both are seats for the envs)."""
    return draw(st.sampled_from(_INT_TYPES[:5]))(seat)


# -- values of the wrong type or range -------------------------------------------------------
BAD_SCALARS = st.one_of(
    st.booleans(),
    st.booleans().map(np.bool_),
    st.floats(allow_nan=True),
    st.integers(-3, 60).map(float),
    st.integers(0, 3).map(np.float64),
    st.none(),
    st.just(object()),
)
"""Never an integer (bool is not, a float is not even when whole)."""
BAD_CONTAINERS = st.one_of(
    BAD_SCALARS,
    st.integers(0, 51),
    st.integers(0, 51).map(np.int64).map(np.array),  # a 0-d array
    st.sets(st.integers(0, 51), min_size=1, max_size=3),
    st.dictionaries(st.integers(0, 51), st.integers(0, 51), max_size=2),
    st.just(iter([1, 2, 3])),
    st.just(np.zeros((2, 3), dtype=np.int64)),
)
"""Never a list of cards: not a list, tuple, 1-d array or text."""
BAD_ENTRIES = st.one_of(
    BAD_SCALARS, st.lists(st.integers(0, 51), max_size=2), st.just(np.zeros(2, dtype=int))
)
"""Never one card of a list (a nested list is no card)."""
BAD_TEXT = st.sampled_from(["Xx", "1s", "A", "Ass", "11h", "", "Zz9"])
"""Text that is no card (an empty word cannot be one word of a split text: kept for lists)."""


def bad_ids(gin: bool) -> st.SearchStrategy[Any]:
    """Card ids or texts that are no card of the game (Gin: also the jokers)."""
    out = st.integers(54, 10**6) | st.integers(-(10**6), -1) | BAD_TEXT.filter(bool)
    return out | st.sampled_from([52, 53, "JK", "jk"]) if gin else out


def put(value: Any, k: int, entry: Any) -> list[Any]:
    """``value`` (cards in any form) as a list with entry ``k`` replaced by ``entry``."""
    items = value.split() if isinstance(value, str) else list(value)
    items[k] = entry
    return items


# -- gin_deck ----------------------------------------------------------------------------------
def gin_hand_check(rec: np.void, seat: int, ids: list[int]) -> None:
    assert int(rec["hands"][seat]) == cards_to_mask(ids)


@st.composite
def gin_deal(draw: st.DrawFn, eleven: bool | None = None) -> dict[str, Any]:
    """A random 2-player Gin deal: non-dealer, dealer, upcard (None: eleven-card) and stock."""
    if eleven is None:
        eleven = draw(st.booleans())
    perm = draw(st.permutations(GIN))
    n = 11 if eleven else 10
    nd, d, rest = perm[:n], perm[n : n + 10], perm[n + 10 :]
    up = None if eleven else rest.pop(0)
    k = draw(st.integers(0, len(rest)))
    return {"non_dealer": nd, "dealer": d, "upcard": up, "stock": rest[:k]}


def check_gin_top(deck: list[int], deal: dict[str, Any]) -> None:
    """The deck deals the deal: hands alternate from the non-dealer, then upcard, stock and
    the rest in ascending order.
    """
    assert sorted(deck) == GIN and all(type(c) is int for c in deck)
    nd, d = deal["non_dealer"], deal["dealer"]
    assert deck[0:20:2] == nd[:10] and deck[1:20:2] == d
    pos = 20
    if len(nd) == 11:
        assert deck[20] == nd[10]
        pos = 21
    else:
        assert deck[20] == deal["upcard"]
        pos = 21
    k = len(deal["stock"])
    assert deck[pos : pos + k] == deal["stock"]
    rest = deck[pos + k :]
    assert rest == sorted(rest)


def forms_of(draw: st.DrawFn, deal: dict[str, Any]) -> dict[str, Any]:
    up = deal["upcard"]
    return {
        "non_dealer": draw(card_forms(deal["non_dealer"])),
        "dealer": draw(card_forms(deal["dealer"])),
        "upcard": None if up is None else draw(one_card(up)),
        "stock": draw(card_forms(deal["stock"])),
    }


@SETTINGS
@given(data=st.data())
def test_gin_deck_deals_the_hands_asked_for(data: st.DataObject) -> None:
    deal = data.draw(gin_deal())
    eleven = deal["upcard"] is None
    args = forms_of(data.draw, deal)
    deck = gin_deck(**args)
    check_gin_top(deck, deal)
    env = gin_env(2, eleven)
    seat = data.draw(st.sampled_from([0, 1]))
    env.reset(options={"deck": deck, "dealer": seat_int(data.draw, seat)})
    rec = env.state_record
    gin_hand_check(rec, seat, deal["dealer"])
    gin_hand_check(rec, 1 - seat, deal["non_dealer"])
    if not eleven:
        assert int(rec["pile_n"]) == 1 and int(rec["pile"][0]) == deal["upcard"]
    stock = [int(c) for c in rec["deck"][int(rec["deck_pos"]) :]]
    assert stock[: len(deal["stock"])] == deal["stock"]


GIN_CARD_ARGS = ["non_dealer", "dealer", "stock"]


def gin_args(deal: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, list) else v for k, v in deal.items()}


@SETTINGS
@given(deal=gin_deal(), arg=st.sampled_from(GIN_CARD_ARGS), bad=BAD_CONTAINERS)
def test_gin_deck_refuses_cards_of_the_wrong_type(deal, arg, bad) -> None:
    args = gin_args(deal)
    args[arg] = bad
    raises(lambda: gin_deck(**args), TypeError, arg)


@SETTINGS
@given(data=st.data(), deal=gin_deal(), arg=st.sampled_from(GIN_CARD_ARGS))
def test_gin_deck_refuses_an_entry_that_is_no_card(data, deal, arg) -> None:
    args = gin_args(deal)
    if not args[arg]:  # an empty stock: one free card, to put the bad entry in its place
        used = args["non_dealer"] + args["dealer"] + [args["upcard"]]
        args[arg] = [next(c for c in GIN if c not in used)]
    k = data.draw(st.integers(0, len(args[arg]) - 1))
    bad_type = data.draw(st.booleans())
    entry = data.draw(BAD_ENTRIES if bad_type else bad_ids(gin=True))
    args[arg] = data.draw(card_forms(args[arg])) if not bad_type else args[arg]
    args[arg] = put(args[arg], k, entry)
    raises(lambda: gin_deck(**args), TypeError if bad_type else ValueError, f"{arg}[{k}]")


@SETTINGS
@given(deal=gin_deal(), arg=st.sampled_from(["non_dealer", "dealer"]), n=st.integers(0, 31))
def test_gin_deck_refuses_hands_of_the_wrong_size(deal, arg, n) -> None:
    pool = deal["non_dealer"] + deal["dealer"] + deal["stock"]
    if deal["upcard"] is not None:
        pool.append(deal["upcard"])
    ok = (10, 11) if arg == "non_dealer" else (10,)
    others = [c for c in GIN if c not in pool]
    args = gin_args(deal)
    n = min(n, len(args[arg]) + len(others))
    if n in ok:
        n = 9
    args[arg] = (args[arg] + others)[:n]
    raises(lambda: gin_deck(**args), ValueError, arg)


@SETTINGS
@given(data=st.data(), deal=gin_deal())
def test_gin_deck_refuses_a_card_used_twice(data, deal) -> None:
    """Within one part or across two: the message names both parts."""
    args = gin_args(deal)
    parts = [a for a in ["non_dealer", "dealer", "upcard", "stock"] if args[a] not in (None, [])]
    a, b = data.draw(st.lists(st.sampled_from(parts), min_size=2, max_size=2))
    card = args[a] if a == "upcard" else data.draw(st.sampled_from(args[a]))
    if b == "upcard":
        if a == "upcard":
            return  # one card cannot repeat itself
        args["upcard"] = card
    elif a == b:
        if len(args[b]) < 2:
            return
        k = data.draw(st.sampled_from([i for i, c in enumerate(args[b]) if c != card]))
        args[b][k] = card
    else:
        args[b][data.draw(st.integers(0, len(args[b]) - 1))] = card
    raises(lambda: gin_deck(**args), ValueError, a, b, card_to_str(card))


@SETTINGS
@given(deal=gin_deal(eleven=False), bad=st.one_of(BAD_SCALARS.filter(lambda v: v is not None)))
def test_gin_deck_refuses_an_upcard_of_the_wrong_type(deal, bad) -> None:
    args = gin_args(deal)
    args["upcard"] = bad
    raises(lambda: gin_deck(**args), TypeError, "upcard")
    args["upcard"] = [deal["upcard"]]  # a list is not one card
    raises(lambda: gin_deck(**args), TypeError, "upcard")


@SETTINGS
@given(deal=gin_deal(eleven=False), bad=bad_ids(gin=True) | st.just("As Kd") | st.just(""))
def test_gin_deck_refuses_an_upcard_that_is_no_gin_card(deal, bad) -> None:
    args = gin_args(deal)
    args["upcard"] = bad
    raises(lambda: gin_deck(**args), ValueError, "upcard")


@SETTINGS
@given(deal=gin_deal())
def test_gin_deck_upcard_only_without_the_eleven_card_deal(deal) -> None:
    args = gin_args(deal)
    if deal["upcard"] is None:  # 11 cards: no upcard
        if args["stock"]:
            args["upcard"] = args["stock"].pop(0)
        else:
            args["upcard"] = next(c for c in GIN if c not in deal["non_dealer"] + deal["dealer"])
    else:
        args["upcard"] = None
    raises(lambda: gin_deck(**args), ValueError, "upcard", "non_dealer")


# -- gin_deck_3p -------------------------------------------------------------------------------
@SETTINGS
@given(data=st.data(), deal=gin_deal(), dealer=st.integers(0, 2))
def test_gin_deck_3p_deals_the_hands_by_seat(data, deal, dealer) -> None:
    first, second = (dealer + 1) % 3, (dealer + 2) % 3
    args = forms_of(data.draw, deal)
    hands = {
        seat_int(data.draw, first): args["non_dealer"],
        seat_int(data.draw, second): args["dealer"],
    }
    deck = gin_deck_3p(hands, seat_int(data.draw, dealer), args["upcard"], args["stock"])
    check_gin_top(deck, deal)
    env = gin_env(3, deal["upcard"] is None)
    env.reset(options={"deck": deck, "dealer": dealer})
    rec = env.state_record
    assert int(rec["board_of"][dealer]) == -1  # the dealer sits out
    for seat, ids in ((first, deal["non_dealer"]), (second, deal["dealer"])):
        board = rec["boards"][int(rec["board_of"][seat])]
        assert int(board["hands"][int(rec["local"][seat])]) == cards_to_mask(ids)
    if deal["upcard"] is not None:
        assert int(rec["boards"][0]["pile"][0]) == deal["upcard"]


def base_3p(deal: dict[str, Any], dealer: int) -> dict[str, Any]:
    first, second = (dealer + 1) % 3, (dealer + 2) % 3
    return {
        "hands": {first: list(deal["non_dealer"]), second: list(deal["dealer"])},
        "dealer": dealer,
        "upcard": deal["upcard"],
        "stock": list(deal["stock"]),
    }


@SETTINGS
@given(deal=gin_deal(), dealer=st.integers(0, 2), bad=BAD_SCALARS | st.text(max_size=3))
def test_gin_deck_3p_refuses_a_dealer_of_the_wrong_type(deal, dealer, bad) -> None:
    args = base_3p(deal, dealer)
    args["dealer"] = bad
    e = raises(lambda: gin_deck_3p(**args), TypeError, "dealer")
    assert "0..2" in str(e)


@SETTINGS
@given(deal=gin_deal(), bad=st.integers(3, 10**6) | st.integers(-(10**6), -1))
def test_gin_deck_3p_refuses_a_dealer_that_is_no_seat(deal, bad) -> None:
    args = base_3p(deal, 0)
    args["dealer"] = bad
    raises(lambda: gin_deck_3p(**args), ValueError, "dealer")


@SETTINGS
@given(data=st.data(), deal=gin_deal(), dealer=st.integers(0, 2))
def test_gin_deck_3p_refuses_hands_not_of_the_two_playing_seats(data, deal, dealer) -> None:
    args = base_3p(deal, dealer)
    h = list(args["hands"].values())
    kind = data.draw(st.sampled_from(["type", "key", "seats"]))
    if kind == "type":
        not_dict = BAD_CONTAINERS.filter(lambda v: not isinstance(v, dict))
        args["hands"] = data.draw(not_dict | st.just(h) | st.just(tuple(h)) | st.just("x"))
        raises(lambda: gin_deck_3p(**args), TypeError, "hands")
        return
    if kind == "key":
        key = data.draw(BAD_SCALARS.filter(lambda v: v is not None) | st.sampled_from(["1", "a"]))
        args["hands"] = {key: h[0], **{k: v for k, v in list(args["hands"].items())[1:]}}
        raises(lambda: gin_deck_3p(**args), TypeError, "hands")
        return
    seats = data.draw(
        st.lists(st.integers(-1, 4), min_size=0, max_size=4, unique=True).filter(
            lambda s: sorted(s) != sorted(args["hands"])
        )
    )
    args["hands"] = {s: h[i % 2] for i, s in enumerate(seats)}
    raises(lambda: gin_deck_3p(**args), ValueError, "hands", "seats")


@SETTINGS
@given(data=st.data(), deal=gin_deal(), dealer=st.integers(0, 2))
def test_gin_deck_3p_names_the_seat_of_a_bad_hand(data, deal, dealer) -> None:
    args = base_3p(deal, dealer)
    seat = data.draw(st.sampled_from(sorted(args["hands"])))
    hand = args["hands"][seat]
    kind = data.draw(st.sampled_from(["type", "entry", "id", "size", "twice"]))
    exc: type[Exception] = ValueError
    name = f"hands[{seat}]"
    if kind == "type":
        args["hands"][seat], exc = data.draw(BAD_CONTAINERS), TypeError
    elif kind in ("entry", "id"):
        k = data.draw(st.integers(0, len(hand) - 1))
        bad = data.draw(BAD_ENTRIES if kind == "entry" else bad_ids(gin=True))
        args["hands"][seat] = put(hand, k, bad)
        exc, name = (TypeError if kind == "entry" else ValueError), f"hands[{seat}][{k}]"
    elif kind == "size":
        n = data.draw(st.integers(0, 9) | st.just(12))
        args["hands"][seat] = hand[:n] if n <= 10 else hand + [c for c in GIN if c not in hand][:2]
    else:
        hand[0] = hand[1]
    e = raises(lambda: gin_deck_3p(**args), exc, name)
    assert f"seat {seat}" in str(e)


# -- gin_decks_4p ------------------------------------------------------------------------------
@st.composite
def deal_4p(draw: st.DrawFn, round_index: int = 0) -> dict[str, Any]:
    """Hands of seats 0..3, dealers, upcards and stocks of a 4-player round."""
    eleven = draw(st.booleans())
    hands: dict[int, list[int]] = {}
    dealers, upcards, stocks = [], [], []
    for pair in table_pairs(round_index):
        deal = draw(gin_deal(eleven))
        d = draw(st.sampled_from(pair))
        nd = pair[0] if d == pair[1] else pair[1]
        hands[nd], hands[d] = deal["non_dealer"], deal["dealer"]
        dealers.append(d)
        upcards.append(deal["upcard"])
        stocks.append(deal["stock"])
    return {"hands": hands, "dealers": dealers, "upcards": upcards, "stocks": stocks}


def table_deal(deal: dict[str, Any], t: int, round_index: int = 0) -> dict[str, Any]:
    d = deal["dealers"][t]
    pair = table_pairs(round_index)[t]
    nd = pair[0] if d == pair[1] else pair[1]
    return {
        "non_dealer": deal["hands"][nd],
        "dealer": deal["hands"][d],
        "upcard": deal["upcards"][t],
        "stock": deal["stocks"][t],
    }


@SETTINGS
@given(data=st.data(), deal=deal_4p())
def test_gin_decks_4p_deals_the_hands_by_seat(data, deal) -> None:
    hands = {seat_int(data.draw, s): data.draw(card_forms(h)) for s, h in deal["hands"].items()}
    up = [None if u is None else data.draw(one_card(u)) for u in deal["upcards"]]
    stocks = [data.draw(card_forms(s)) for s in deal["stocks"]]
    dealers = [seat_int(data.draw, d) for d in deal["dealers"]]
    wrap = data.draw(st.sampled_from([list, tuple, np.array]))
    decks = gin_decks_4p(hands, wrap(dealers), tuple(up), tuple(stocks))
    assert len(decks) == 2
    for t in range(2):
        check_gin_top(decks[t], table_deal(deal, t))
    env = gin_env(4, deal["upcards"][0] is None)
    env.reset(options={"deck": decks, "dealer": deal["dealers"]})
    rec = env.state_record
    for seat, ids in deal["hands"].items():
        t, j = int(rec["board_of"][seat]), int(rec["local"][seat])
        assert int(rec["boards"][t]["hands"][j]) == cards_to_mask(ids)
        assert seat in table_pairs(0)[t]
    for t in range(2):
        assert int(rec["boards"][t]["dealer"]) == table_pairs(0)[t].index(deal["dealers"][t])


@SETTINGS
@given(data=st.data(), round_index=st.integers(0, 9))
def test_gin_decks_4p_follows_the_tables_of_the_round(data, round_index) -> None:
    deal = data.draw(deal_4p(round_index))
    ri = seat_int(data.draw, round_index)
    decks = gin_decks_4p(deal["hands"], deal["dealers"], deal["upcards"], deal["stocks"], ri)
    for t in range(2):
        check_gin_top(decks[t], table_deal(deal, t, round_index))


def base_4p(deal: dict[str, Any]) -> dict[str, Any]:
    return {
        "hands": {s: list(h) for s, h in deal["hands"].items()},
        "dealers": list(deal["dealers"]),
        "upcards": list(deal["upcards"]),
        "stocks": [list(s) for s in deal["stocks"]],
    }


PAIR_ARGS = ["dealers", "upcards", "stocks"]


@SETTINGS
@given(data=st.data(), deal=deal_4p(), arg=st.sampled_from(PAIR_ARGS))
def test_gin_decks_4p_wants_one_entry_per_table(data, deal, arg) -> None:
    args = base_4p(deal)
    if data.draw(st.booleans()):
        args[arg] = data.draw(BAD_CONTAINERS.filter(lambda v: not isinstance(v, np.ndarray)))
        raises(lambda: gin_decks_4p(**args), TypeError, arg)
    else:
        n = data.draw(st.sampled_from([0, 1, 3, 4]))
        args[arg] = (args[arg] * 2)[:n]
        raises(lambda: gin_decks_4p(**args), ValueError, arg)


@SETTINGS
@given(data=st.data(), deal=deal_4p(), t=st.integers(0, 1))
def test_gin_decks_4p_names_the_table_of_a_bad_dealer(data, deal, t) -> None:
    args = base_4p(deal)
    if data.draw(st.booleans()):
        args["dealers"][t] = data.draw(BAD_SCALARS | st.sampled_from(["1", "2"]))
        exc: type[Exception] = TypeError
    else:
        args["dealers"][t] = data.draw(
            st.integers(-5, 8).filter(lambda d: d not in table_pairs(0)[t])
        )
        exc = ValueError
    e = raises(lambda: gin_decks_4p(**args), exc, f"dealers[{t}]")
    assert f"table {t}" in str(e)


@SETTINGS
@given(data=st.data(), deal=deal_4p(), t=st.integers(0, 1))
def test_gin_decks_4p_names_the_table_of_a_bad_upcard_or_stock(data, deal, t) -> None:
    args = base_4p(deal)
    kind = data.draw(st.sampled_from(["up_type", "up_value", "stock_type", "stock_twice"]))
    if kind == "up_type":
        args["upcards"][t] = data.draw(BAD_SCALARS.filter(lambda v: v is not None))
        exc, name = TypeError, f"upcards[{t}]"
    elif kind == "up_value":
        args["upcards"][t] = data.draw(bad_ids(gin=True))
        exc, name = ValueError, f"upcards[{t}]"
    elif kind == "stock_type":
        args["stocks"][t] = data.draw(BAD_CONTAINERS)
        exc, name = TypeError, f"stocks[{t}]"
    else:
        d = args["dealers"][t]
        args["stocks"][t] = [args["hands"][d][0]]
        exc, name = ValueError, f"stocks[{t}]"
    e = raises(lambda: gin_decks_4p(**args), exc, name)
    assert f"table {t}" in str(e)


@SETTINGS
@given(data=st.data(), deal=deal_4p(), seat=st.integers(0, 3))
def test_gin_decks_4p_names_the_seat_of_a_bad_hand(data, deal, seat) -> None:
    args = base_4p(deal)
    kind = data.draw(st.sampled_from(["type", "entry", "size", "missing", "key"]))
    if kind == "type":
        args["hands"][seat] = data.draw(BAD_CONTAINERS)
        e = raises(lambda: gin_decks_4p(**args), TypeError, f"hands[{seat}]")
    elif kind == "entry":
        k = data.draw(st.integers(0, 9))
        args["hands"][seat] = put(args["hands"][seat], k, data.draw(BAD_ENTRIES))
        e = raises(lambda: gin_decks_4p(**args), TypeError, f"hands[{seat}][{k}]")
    elif kind == "size":
        args["hands"][seat] = args["hands"][seat][: data.draw(st.integers(0, 9))]
        e = raises(lambda: gin_decks_4p(**args), ValueError, f"hands[{seat}]")
    elif kind == "missing":
        del args["hands"][seat]
        raises(lambda: gin_decks_4p(**args), ValueError, "hands", "seats")
        return
    else:  # the key of the seat is no integer (True == 1: it replaces the key, not adds one)
        key = data.draw(BAD_SCALARS.filter(lambda v: v is not None) | st.just("1"))
        hands = args["hands"]
        args["hands"] = {key: hands[seat], **{s: h for s, h in hands.items() if s != seat}}
        raises(lambda: gin_decks_4p(**args), TypeError, "hands")
        return
    assert f"seat {seat}" in str(e)


@SETTINGS
@given(deal=deal_4p(), bad=BAD_SCALARS | st.integers(-(10**6), -1) | st.just("0"))
def test_gin_decks_4p_refuses_a_round_that_is_not_a_count(deal, bad) -> None:
    args = base_4p(deal)
    exc = ValueError if isinstance(bad, int) and not isinstance(bad, bool) else TypeError
    raises(lambda: gin_decks_4p(**args, round_index=bad), exc, "round_index")


# -- 4-player Gin: the deck forms of reset ---------------------------------------------------
DECK_FORMS: dict[str, Callable[[list[int]], Any]] = {
    "list of ids": list,
    "tuple of ids": tuple,
    "numpy ints": lambda d: [np.int64(c) for c in d],
    "int8 array": lambda d: np.array(d, dtype=np.int8),
    "list of texts": lambda d: [card_to_str(c) for c in d],
    "text": lambda d: " ".join(card_to_str(c) for c in d),
    "text array": lambda d: np.array([card_to_str(c) for c in d]),
}


@SETTINGS
@given(
    p0=st.permutations(GIN),
    p1=st.permutations(GIN),
    f0=st.sampled_from(sorted(DECK_FORMS)),
    f1=st.sampled_from(sorted(DECK_FORMS)),
    outer=st.sampled_from([list, tuple]),
    dealer=st.sampled_from([list, tuple, np.array]),
)
def test_four_players_take_each_table_deck_in_every_two_player_form(
    p0, p1, f0, f1, outer, dealer
) -> None:
    env2 = gin_env(2)
    env2.reset(options={"deck": DECK_FORMS[f0](p0), "dealer": 0})  # a form 2 players take
    env3 = gin_env(3)
    env3.reset(options={"deck": DECK_FORMS[f1](p1), "dealer": 0})
    env = gin_env(4)
    env.reset(
        options={"deck": outer([DECK_FORMS[f0](p0), DECK_FORMS[f1](p1)]), "dealer": dealer([1, 3])}
    )
    rec = env.state_record
    assert rec["boards"]["deck"][0].tolist() == p0 and rec["boards"]["deck"][1].tolist() == p1
    # a (2, 52) array of ids is two decks too
    env.reset(options={"deck": np.array([p1, p0]), "dealer": (0, 2)})
    assert env.state_record["boards"]["deck"][0].tolist() == p1


def test_four_players_take_two_text_decks():
    """The case of the issue: two text decks with dealers [1, 3]."""
    text = [" ".join(card_to_str(c) for c in GIN), " ".join(card_to_str(c) for c in GIN[::-1])]
    env = gin_env(4)
    env.reset(options={"deck": text, "dealer": [1, 3]})
    assert env.state_record["boards"]["deck"][1].tolist() == GIN[::-1]


ANY_DECK = st.one_of(
    st.permutations(GIN).map(list),  # valid
    st.permutations(GIN).map(lambda p: " ".join(card_to_str(c) for c in p)),
    st.permutations(GIN).map(lambda p: p[:-1]),  # short
    st.permutations(GIN).map(lambda p: p + [p[0]]),  # long
    st.permutations(GIN).map(lambda p: [p[1]] + p[1:]),  # a duplicate
    st.permutations(GIN).map(lambda p: p[:-1] + [52]),  # a joker
    st.permutations(GIN).map(lambda p: p[:-1] + [True]),
    st.permutations(GIN).map(lambda p: p[:-1] + [1.0]),
    st.permutations(GIN).map(lambda p: p[:-1] + ["Xx"]),
    st.permutations(GIN).map(lambda p: np.array(p, dtype=np.float64)),
    st.permutations(GIN).map(set),
    st.permutations(GIN).map(lambda p: dict(enumerate(p))),
    st.permutations(GIN).map(lambda p: np.array([p])),  # a 2-d array
    st.sampled_from(["As", "", "As Kd", 5, 5.0, True, np.int64(3), np.array(3)]),
)


def outcome(fn: Callable[[], Any]) -> tuple[type[Exception] | None, str]:
    try:
        fn()
    except (TypeError, ValueError) as e:
        return (ArgumentTypeError if isinstance(e, TypeError) else ValueError), str(e)
    return None, ""


@SETTINGS
@given(x=ANY_DECK, t=st.integers(0, 1), other=st.permutations(GIN))
def test_four_players_refuse_a_table_deck_as_two_players_refuse_the_deck(x, t, other) -> None:
    """Whatever 2 players do with ``x`` as their deck, 4 players do with ``x`` as a table's
    deck: accept it (and deal it at that table), or raise the same class of error naming
    ``options['deck'][t]``; a rejected reset changes nothing.
    """
    env2 = gin_env(2)
    exc2, _ = outcome(lambda: env2.reset(options={"deck": x, "dealer": 0}))
    env = gin_env(4)
    env.reset(seed=1)
    before = env.game.states.copy()
    decks = [other, other]
    decks[t] = x
    exc4, msg = outcome(lambda: env.reset(options={"deck": decks, "dealer": [0, 2]}))
    assert exc4 is exc2, msg
    if exc4 is None:
        assert env.state_record["boards"]["deck"][t].tolist() == env2.state_record["deck"].tolist()
    else:
        assert f"options['deck'][{t}]" in msg, msg
        assert np.array_equal(env.game.states, before)


@pytest.mark.parametrize(
    ("deck", "exc", "part"),
    [
        (GIN, ArgumentTypeError, "a single deck"),
        (" ".join(card_to_str(c) for c in GIN), ArgumentTypeError, "a single deck"),
        ([GIN], ArgumentTypeError, "[table 0's deck, table 1's deck]"),
        ([GIN, GIN, GIN], ArgumentTypeError, "[table 0's deck, table 1's deck]"),
        ({0: GIN, 1: GIN}, ArgumentTypeError, "[table 0's deck, table 1's deck]"),
        (np.zeros((2, 52, 1), dtype=int), ArgumentTypeError, "[table 0's deck, table 1's deck]"),
        (5, ArgumentTypeError, "[table 0's deck, table 1's deck]"),
        ([5, GIN], ArgumentTypeError, "options['deck'][0] is a single card"),
        ([GIN, "As"], ValueError, "options['deck'][1] has 1 cards"),
        ([GIN, GIN[:-1] + [0]], ValueError, "options['deck'][1] is not a full deck"),
    ],
)
def test_four_player_deck_of_the_wrong_form(deck, exc, part) -> None:
    env = gin_env(4)
    with pytest.raises(exc) as info:
        env.reset(options={"deck": deck, "dealer": [0, 2]})
    assert "options['deck']" in str(info.value) and part in str(info.value)


@pytest.mark.parametrize(
    ("dealer", "exc", "name"),
    [
        (1, ArgumentTypeError, "options['dealer']"),
        ([1], ArgumentTypeError, "options['dealer']"),
        ("13", ArgumentTypeError, "options['dealer']"),
        ({0: 1, 1: 3}, ArgumentTypeError, "options['dealer']"),
        ([True, 3], ArgumentTypeError, "options['dealer'][0]"),
        ([1, 3.0], ArgumentTypeError, "options['dealer'][1]"),
        ([np.float64(1), 3], ArgumentTypeError, "options['dealer'][0]"),
        ([None, 3], ArgumentTypeError, "options['dealer'][0]"),
        ([2, 3], ValueError, "options['dealer'][0]"),
        ([1, 1], ValueError, "options['dealer'][1]"),
    ],
)
def test_four_player_dealer_of_the_wrong_form(dealer, exc, name) -> None:
    env = gin_env(4)
    with pytest.raises(exc) as info:
        env.reset(options={"dealer": dealer})
    assert name in str(info.value)
    if exc is ValueError:
        assert not isinstance(info.value, TypeError)


# -- joker_deck --------------------------------------------------------------------------------
JOKER_GAMES = [
    ("five_hundred_rum", p, d, nj)
    for p in range(2, 9)
    for d in (1, 2)
    for nj in (False, True)
    if p * (13 if p == 2 else 7) + 1 <= 52 * d + (0 if nj else 2 * d)  # the deal fits the deck
] + [("rummy51", p, 2, False) for p in range(2, 7)]
"""(game, players, decks, no_jokers) of every deck the envs deal: 500 Rum, Rummy 51."""


@st.composite
def joker_deal(draw: st.DrawFn) -> dict[str, Any]:
    """A full deal of 500 Rum or Rummy 51 with the env's rules (hand sizes, deck)."""
    game, players, decks, no_jokers = draw(st.sampled_from(JOKER_GAMES))
    env = joker_env(game, players, decks, no_jokers)
    size = 13 if game == "rummy51" or players == 2 else 7
    jokers = 0 if no_jokers else (4 if game == "rummy51" else 2 * decks)
    cards = [c for c in range(52) for _ in range(decks)] + [52 + (i % 2) for i in range(jokers)]
    perm = draw(st.permutations(cards))
    hands = [perm[q * size : (q + 1) * size] for q in range(players)]
    up = perm[players * size]
    rest = perm[players * size + 1 :]
    stock = rest[: draw(st.integers(0, len(rest)))]
    return {
        "env": env, "hands": hands, "upcard": up, "stock": stock, "num_decks": decks,
        "jokers": jokers, "dealer": draw(st.integers(0, players - 1)),
    }  # fmt: skip


def joker_text(c: int) -> str:
    return "JK" if c >= 52 else card_to_str(c)


@SETTINGS
@given(data=st.data(), deal=joker_deal())
def test_joker_deck_deals_the_hands_asked_for(data, deal) -> None:
    def form(ids: list[int]) -> Any:
        if data.draw(st.booleans()):
            return data.draw(card_forms(ids))
        texts = [joker_text(c) for c in ids]
        return " ".join(texts) if data.draw(st.booleans()) else texts

    up = deal["upcard"]
    deck = joker_deck(
        [form(h) for h in deal["hands"]],
        data.draw(one_card(up)) if up < 52 else data.draw(st.sampled_from(["JK", 52, 53])),
        form(deal["stock"]),
        num_decks=seat_int(data.draw, deal["num_decks"]),
        jokers=seat_int(data.draw, deal["jokers"]),
        dealer=seat_int(data.draw, deal["dealer"]),
    )
    total = 52 * deal["num_decks"] + deal["jokers"]
    assert len(deck) == total and all(type(c) is int for c in deck)
    full = {c: deal["num_decks"] for c in range(52)} | {52: deal["jokers"]}
    assert Counter(deck) == Counter(full)  # a full deck, every joker as 52
    env = deal["env"]
    env.reset(options={"deck": deck, "dealer": deal["dealer"]})
    rec = env.state_record
    for q, h in enumerate(deal["hands"]):
        want = np.bincount([min(c, 52) for c in h], minlength=53)
        assert rec["hands"][q].tolist() == want.tolist(), q
    assert int(rec["pile_n"]) == 1 and min(int(rec["pile"][0]), 52) == min(up, 52)
    stock = [int(c) for c in rec["deck"][int(rec["deck_pos"]) :]]
    assert [min(c, 52) for c in stock[: len(deal["stock"])]] == [min(c, 52) for c in deal["stock"]]
    # jokers=None: two per deck
    if deal["jokers"] == 2 * deal["num_decks"]:
        again = joker_deck(
            deal["hands"], up, deal["stock"], deal["num_decks"], None, deal["dealer"]
        )
        assert again == deck


def base_joker(deal: dict[str, Any]) -> dict[str, Any]:
    return {
        "hands": [list(h) for h in deal["hands"]],
        "upcard": deal["upcard"],
        "stock": list(deal["stock"]),
        "num_decks": deal["num_decks"],
        "jokers": deal["jokers"],
        "dealer": deal["dealer"],
    }


@SETTINGS
@given(data=st.data(), deal=joker_deal())
def test_joker_deck_refuses_counts_and_seats_out_of_type_or_range(data, deal) -> None:
    args = base_joker(deal)
    arg = data.draw(st.sampled_from(["num_decks", "jokers", "dealer"]))
    if data.draw(st.booleans()):
        bad = data.draw(
            BAD_SCALARS.filter(lambda v: v is not None or arg != "jokers") | st.just("1")
        )
        args[arg] = bad
        raises(lambda: joker_deck(**args), TypeError, arg)
        return
    top = {"num_decks": 2, "jokers": 2 * deal["num_decks"], "dealer": len(deal["hands"]) - 1}[arg]
    low = 1 if arg == "num_decks" else 0
    args[arg] = data.draw(st.integers(top + 1, 10**6) | st.integers(-(10**6), low - 1))
    e = raises(lambda: joker_deck(**args), ValueError, arg)
    assert f"{low}..{top}" in str(e)


@SETTINGS
@given(data=st.data(), deal=joker_deal())
def test_joker_deck_names_the_seat_of_a_bad_hand(data, deal) -> None:
    args = base_joker(deal)
    q = data.draw(st.integers(0, len(args["hands"]) - 1))
    hand = args["hands"][q]
    kind = data.draw(st.sampled_from(["type", "entry", "id", "size"]))
    if kind == "type":
        args["hands"][q] = data.draw(BAD_CONTAINERS)
        e = raises(lambda: joker_deck(**args), TypeError, f"hands[{q}]")
    elif kind in ("entry", "id"):
        k = data.draw(st.integers(0, len(hand) - 1))
        bad = data.draw(BAD_ENTRIES if kind == "entry" else bad_ids(gin=False))
        args["hands"][q] = put(hand, k, bad)
        exc = TypeError if kind == "entry" else ValueError
        e = raises(lambda: joker_deck(**args), exc, f"hands[{q}][{k}]")
    else:
        args["hands"][q] = hand[: data.draw(st.integers(0, len(hand) - 1))]
        e = raises(lambda: joker_deck(**args), ValueError, f"hands[{q}]")
    assert f"seat {q}" in str(e)


@SETTINGS
@given(data=st.data(), deal=joker_deal())
def test_joker_deck_refuses_hands_that_are_not_a_list_of_2_to_8(data, deal) -> None:
    args = base_joker(deal)
    if data.draw(st.booleans()):
        args["hands"] = data.draw(
            BAD_CONTAINERS.filter(lambda v: not isinstance(v, np.ndarray) or v.ndim != 2)
            | st.just("As Kd")
        )
        raises(lambda: joker_deck(**args), TypeError, "hands")
    else:
        n = data.draw(st.sampled_from([0, 1, 9, 10]))
        args["hands"] = [["As"]] * n
        e = raises(lambda: joker_deck(**args), ValueError, "hands")
        assert "2..8" in str(e)


@SETTINGS
@given(data=st.data(), deal=joker_deal())
def test_joker_deck_refuses_a_bad_upcard_or_stock(data, deal) -> None:
    args = base_joker(deal)
    kind = data.draw(st.sampled_from(["up_type", "up_value", "stock_type", "stock_entry"]))
    if kind == "up_type":
        args["upcard"] = data.draw(BAD_SCALARS | st.just([0]))
        raises(lambda: joker_deck(**args), TypeError, "upcard")
    elif kind == "up_value":
        args["upcard"] = data.draw(bad_ids(gin=False) | st.just("As Kd"))
        raises(lambda: joker_deck(**args), ValueError, "upcard")
    elif kind == "stock_type":
        args["stock"] = data.draw(BAD_CONTAINERS)
        raises(lambda: joker_deck(**args), TypeError, "stock")
    else:
        args["stock"] = [*args["stock"], data.draw(BAD_ENTRIES)]
        raises(lambda: joker_deck(**args), TypeError, f"stock[{len(args['stock']) - 1}]")


@SETTINGS
@given(data=st.data(), deal=joker_deal())
def test_joker_deck_refuses_a_card_used_more_often_than_the_deck_holds_it(data, deal) -> None:
    args = base_joker(deal)
    used = [c for h in args["hands"] for c in h] + [args["upcard"]] + args["stock"]
    counts = Counter(min(c, 52) for c in used)
    full = {c: deal["num_decks"] for c in range(52)} | {52: deal["jokers"]}
    # any card (a joker too, also with no jokers in the deck), dealt once more than it is held
    card = data.draw(st.sampled_from(sorted(full)))
    args["stock"] += ["JK" if card == 52 else card] * (full[card] - counts[card] + 1)
    e = raises(lambda: joker_deck(**args), ValueError, joker_text(card))
    assert "more often" in str(e)
