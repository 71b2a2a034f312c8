"""What a picture of the table shows, read from a game record: the ``TableView``.

One view serves every drawing (``rummy_env.render.picture``: the ``rgb_array`` picture, SVG for
pages and the browser): the builders here decide what is visible, the drawing only places it.

A view is the referee's (every hand face up) or one seat's: the other hands face down, except
the cards everyone has seen them take (a discard-pile pick-up, a Gin knocker's lay-out), which
the state tracks as ``known``. Nothing a seat could not see reaches a seat's view.

Card faces are card ids (``rummy_env.core.cards``: ``suit * 13 + rank``, jokers 52 and 53) or
``HIDDEN`` for a face-down card.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rummy_env.core.cards import RANKS, SUIT_SYMBOLS, SUITS

HIDDEN = -1
"""The face of a face-down card."""

JOKER = 52


@dataclass(frozen=True)
class Card:
    """A card as drawn: ``face`` (a card id or ``HIDDEN``) and, for a joker standing in a
    meld, the card it stands for (``stand_in``: ``"7h"``, or ``"7"`` in a set).
    """

    face: int
    stand_in: str = ""


@dataclass
class SeatView:
    """One seat: its name, its cards (in groups: a Gin lay-out's melds, then the rest), a line
    of status (score, state), and whether it is to act.
    """

    name: str
    groups: list[list[Card]]
    status: str = ""
    to_act: bool = False
    dealer: bool = False
    board: int = 0  # the board it plays at (3- and 4-player Gin), -1 sitting out


@dataclass
class BoardView:
    """A playing area: stock and discard pile (bottom first), and its title."""

    title: str
    stock: int
    pile: list[Card]
    note: str = ""  # e.g. a Gin knocker's face-down discard
    visible: bool = True  # False: another table, which this seat does not see (4-player Gin)


@dataclass
class MeldView:
    """A meld on the table (500 Rum, Rummy 51) and who laid it down."""

    owner: str
    cards: list[Card]


@dataclass
class TableView:
    """Everything a picture of the table shows."""

    title: str
    info: list[str]
    seats: list[SeatView]
    boards: list[BoardView]
    melds: list[MeldView] = field(default_factory=list)
    last_action: str = ""
    result: str = ""
    viewer: str = ""  # the seat whose view this is, "" for the referee's
    table_melds: bool = False  # melds go on the table (500 Rum, Rummy 51): the picture keeps room


def card_text(card: int) -> str:
    """A card id as text with its suit symbol (``7♥``, ``JK``; ``??`` face down)."""
    if card == HIDDEN:
        return "??"
    if card >= JOKER:
        return "JK"
    return RANKS[card % 13] + SUIT_SYMBOLS[card // 13]


def _sorted_mask(mask: int) -> list[int]:
    """Card ids of a 52-bit mask, by suit then rank."""
    return [c for c in range(52) if mask >> c & 1]


def _sorted_counts(counts: np.ndarray) -> list[int]:
    """Card ids of a count vector (jokers last), by suit then rank, repeats kept."""
    return [c for c in range(len(counts)) for _ in range(int(counts[c]))]


def _visible(seat: int, viewer: int | None) -> bool:
    return viewer is None or viewer == seat


# --- Gin Rummy ----------------------------------------------------------------------------------


def _gin_seat_groups(board: np.void, p: int, see_all: bool) -> tuple[list[list[Card]], int]:
    """Seat ``p``'s cards at a Gin board and how many are hidden: its laid-out melds (public),
    the cards it laid off on the knocker's melds (public; the automatic lay-out keeps them
    apart from those melds), then its hand.
    """
    hand = int(board["hands"][p])
    shown = hand if see_all else hand & int(board["known"][p])
    groups = [
        [Card(c) for c in _sorted_mask(int(m))]
        for m in board["melds"][p][: int(board["n_melds"][p])]
    ]
    knocker = int(board["knocker"])
    if knocker >= 0 and knocker != p:
        in_melds = 0
        for m in board["melds"][knocker][: int(board["n_melds"][knocker])]:
            in_melds |= int(m)
        laid = int(board["laid_off"]) & ~in_melds
        if laid:
            groups.append([Card(c) for c in _sorted_mask(laid)])
    rest = [Card(c) for c in _sorted_mask(shown)]
    hidden = bin(hand & ~shown).count("1")
    rest += [Card(HIDDEN)] * hidden
    if rest:
        groups.append(rest)
    return [g for g in groups if g], hidden


def _gin_deadwood(mask: int) -> int | None:
    from rummy_env.core.melds import deadwood

    cards = _sorted_mask(mask)
    if len(cards) > 11:
        return None
    hand = np.zeros(52, np.int8)
    hand[cards] = 1
    return int(deadwood(hand)[0])


def _gin_board(board: np.void, title: str, viewer_local: int | None) -> BoardView:
    pile = [Card(int(c)) for c in board["pile"][: int(board["pile_n"])]]
    note = ""
    kc = int(board["knock_card"])
    if kc >= 0 and int(board["phase"]) != 7:
        # the knocker's discard is face down until the hand is over
        shown = viewer_local is None or viewer_local == int(board["knocker"])
        note = f"knock discard {card_text(kc) if shown else '(face down)'}"
    return BoardView(title, 52 - int(board["deck_pos"]), pile, note)


def gin_view(rec: np.void, agents: list[str], viewer: int | None, names: dict) -> TableView:
    """The view of a 2-player Gin Rummy table (``viewer``: a seat, or None for the referee)."""
    from rummy_env.encodings import gin_rummy as E

    done = bool(rec["done"])
    info = [
        f"hand {int(rec['hands_played']) + (0 if done else 1)}",
        f"phase {E.PHASE_NAMES[int(rec['phase'])]}",
        f"knock limit {int(rec['knock_limit'])}",
    ]
    if rec["spade_double"]:
        info.append("spades double")
    seats = []
    for p, name in enumerate(agents):
        see = _visible(p, viewer)
        groups, hidden = _gin_seat_groups(rec, p, see)
        status = f"score {int(rec['scores'][p])}, boxes {int(rec['boxes'][p])}"
        if see and not done:
            dw = _gin_deadwood(int(rec["hands"][p]))
            if dw is not None:
                status += f", deadwood {dw}"
        if int(rec["knocker"]) == p:
            status += ", knocked" + (" (gin)" if rec["gin"] else "")
        seats.append(
            SeatView(
                names.get(name, name),
                groups,
                status,
                to_act=int(rec["cur"]) == p and not done,
                dealer=int(rec["dealer"]) == p,
            )
        )
    result = ""
    if int(rec["outcome"]):
        pts = ", ".join(f"{a} {int(rec['hand_points'][i])}" for i, a in enumerate(agents))
        result = f"last hand: {E.OUTCOME_NAMES[int(rec['outcome'])]} ({pts})"
    if done and int(np.abs(rec["totals"]).sum()):
        result += "; match totals " + ", ".join(
            f"{a} {int(rec['totals'][i])}" for i, a in enumerate(agents)
        )
    board = _gin_board(rec, "", viewer)
    return TableView("Gin Rummy", info, seats, [board], result=result.strip("; "))


def gin_multi_view(rec: np.void, agents: list[str], viewer: int | None, names: dict) -> TableView:
    """The view of a 3- or 4-player Gin Rummy match: every board it plays, each player's
    match score, who sits out.
    """
    from rummy_env.encodings import gin_rummy as E

    n_p = len(agents)
    done = bool(rec["done"])
    if n_p == 3:
        info = [f"3 players, hand {int(rec['hands_played']) + (0 if done else 1)}"]
    else:
        info = [f"4 players, teams {agents[0]}+{agents[2]} / {agents[1]}+{agents[3]}"]
        info.append(f"round {int(rec['round']) + 1}")
    seats: list[SeatView | None] = [None] * n_p
    boards = []
    for t in range(rec["boards"].shape[0]):
        bd = rec["boards"][t]
        sp = [int(s) for s in rec["seat"][t]]
        playing = int(rec["turn"]) == t and not done
        title = f"table {t}: {agents[sp[0]]} vs {agents[sp[1]]}"
        if n_p == 4 and viewer is not None and viewer not in sp:
            # a seat sees nothing of the other table's cards during play (RULES 1.10)
            boards.append(BoardView(title, 0, [], "not seen from your seat", visible=False))
            for j, q in enumerate(sp):
                to_act = playing and int(bd["cur"]) == j
                name = names.get(agents[q], agents[q])
                seats[q] = SeatView(name, [], "at the other table", to_act=to_act, board=t)
            continue
        # the player sitting out (3 players) sees the table, never a hand
        local = None if viewer is None else (sp.index(viewer) if viewer in sp else -1)
        boards.append(_gin_board(bd, title, local))
        for j, q in enumerate(sp):
            see = viewer is None or viewer == q
            groups, _ = _gin_seat_groups(bd, j, see)
            status = f"{E.PHASE_NAMES[int(bd['phase'])]}"
            if see and not bd["done"]:
                dw = _gin_deadwood(int(bd["hands"][j]))
                if dw is not None:
                    status += f", deadwood {dw}"
            if int(bd["knocker"]) == j:
                status += ", knocked" + (" (gin)" if bd["gin"] else "")
            seats[q] = SeatView(
                names.get(agents[q], agents[q]),
                groups,
                status,
                to_act=playing and int(bd["cur"]) == j,
                board=t,
            )
    for q in range(n_p):
        score = f"score {int(rec['scores'][q if n_p == 3 else q % 2])}"
        if seats[q] is None:
            seats[q] = SeatView(names.get(agents[q], agents[q]), [], "sits out", board=-1)
        seat = seats[q]
        assert seat is not None
        seat.status = f"{score} | {seat.status}" if seat.status else score
        seat.dealer = int(rec["dealer"]) == q
    result = ""
    if int(rec["outcome"]) or done:
        pts = ", ".join(f"{a} {int(rec['hand_points'][q])}" for q, a in enumerate(agents))
        result = f"last hand points: {pts}"
    if done and int(np.abs(rec["settle"]).sum()):
        result += "; settlement " + ", ".join(
            f"{a} {int(rec['settle'][q]):+d}" for q, a in enumerate(agents)
        )
    return TableView("Gin Rummy", info, list(seats), boards, result=result)  # type: ignore[arg-type]


# --- 500 Rum and Rummy 51 -----------------------------------------------------------------------

_RUN_NAMES = "A23456789TJQKA"


def meld_cards(rec: np.void, m: int) -> list[Card]:
    """The cards of table meld ``m`` of a joker game, jokers with the card they stand for."""
    kind = int(rec["m_kind"][m])
    key = int(rec["m_key"][m])
    if kind == 1:  # a set of rank ``key``: its natural suits, then its jokers
        cards = [Card(s * 13 + key) for s in range(4) if int(rec["m_nat"][m]) >> s & 1]
        return cards + [Card(JOKER, RANKS[key])] * int(rec["m_jok"][m])
    out = []
    for pos in range(int(rec["m_lo"][m]), int(rec["m_hi"][m]) + 1):
        card = key * 13 + pos % 13  # position 13 is the high ace
        if int(rec["m_jok"][m]) >> pos & 1:
            out.append(Card(JOKER, _RUN_NAMES[pos] + SUITS[key]))
        else:
            out.append(Card(card))
    return out


def joker_view(
    rec: np.void,
    agents: list[str],
    viewer: int | None,
    names: dict,
    title: str,
    info: list[str],
    stock: int,
    status,
    result: str,
) -> TableView:
    """The view of a 500 Rum or Rummy 51 table: hands, pile, melds with owners."""
    done = bool(rec["done"])
    seats = []
    for q, name in enumerate(agents):
        counts = rec["hands"][q]
        if _visible(q, viewer):
            cards = [Card(c) for c in _sorted_counts(counts)]
        else:
            known = np.minimum(rec["known"][q], counts)
            cards = [Card(c) for c in _sorted_counts(known)]
            cards += [Card(HIDDEN)] * int(counts.sum() - known.sum())
        seats.append(
            SeatView(
                names.get(name, name),
                [cards] if cards else [],
                status(q),
                to_act=int(rec["cur"]) == q and not done,
                dealer=int(rec["dealer"]) == q,
            )
        )
    pile = [Card(int(c)) for c in rec["pile"][: int(rec["pile_n"])]]
    melds = [
        MeldView(names.get(agents[int(rec["m_owner"][m])], agents[int(rec["m_owner"][m])]),
                 meld_cards(rec, m))
        for m in range(int(rec["n_melds"]))
    ]  # fmt: skip
    return TableView(
        title, info, seats, [BoardView("", stock, pile)], melds, result=result, table_melds=True
    )


def describe(view: TableView) -> str:
    """The view as plain text, one line per item (for logs and tests)."""
    lines = [" | ".join([view.title, *view.info])]
    for b in view.boards:
        pile = " ".join(card_text(c.face) for c in b.pile) or "-"
        lines.append(f"{b.title + ': ' if b.title else ''}stock {b.stock}, pile {pile} {b.note}")
    for m in view.melds:
        lines.append(f"meld ({m.owner}): " + " ".join(card_text(c.face) for c in m.cards))
    for s in view.seats:
        cards = " / ".join(" ".join(card_text(c.face) for c in g) for g in s.groups)
        lines.append(f"{s.name}{' *' if s.to_act else ''}: {cards or '-'} ({s.status})")
    if view.last_action:
        lines.append(view.last_action)
    if view.result:
        lines.append(view.result)
    return "\n".join(lines)


__all__ = [
    "HIDDEN",
    "BoardView",
    "Card",
    "MeldView",
    "SeatView",
    "TableView",
    "card_text",
    "describe",
    "gin_multi_view",
    "gin_view",
    "joker_view",
    "meld_cards",
]
