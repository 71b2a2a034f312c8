"""The words of a move for a person, and the hints on their hand (the terminal and the browser).

A legal move is described from the engine's own name of it (``env.action_name``: ``DISCARD[Js]``,
``LAYOFF[Js, 3]``, ``MELD[run h 5..8]``, ...) read against the table as the person's seat sees it:
``"Discard the J♠"``, ``"Knock with 8 deadwood, discarding the J♠ face down"``, ``"Lay off the J♠
on the spade run 9♠ 10♠ J♠ (meld 3)"``, ``"Retrieve the joker from meld 2 with the 5♦"``. The
action ids themselves are never decoded here: the name says what the move is, the seat's view
(its own hand, the pile, the public melds) says what it touches, so nothing hidden from the seat
is ever named.

:func:`hand_hints` gives what the terminal shows under the hand: the best melds the hand holds,
the unmelded cards and their points (Gin Rummy: the deadwood, and the deadwood after the best
discard), and the duties of the turn (a card that must be melded, Rummy 51's opening points).

Example:
    >>> from rummy_agents.arena.play import make_env
    >>> env = make_env("gin_rummy", {})
    >>> _ = env.reset(seed=0)
    >>> moves = describe_moves(env, env.agent_selection)
    >>> moves[0].text
    'Draw from the stock'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rummy_env.core.cards import RANKS, SUIT_SYMBOLS, SUITS, str_to_card

JOKER = 52
"""The joker's card type (500 Rum, Rummy 51)."""

SUIT_NAMES = ("club", "diamond", "heart", "spade")
"""Suit names, in card-id order (``cdhs``)."""

RANK_WORDS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
"""Ranks as a person reads them (a ten is ``10``)."""

RANK_PLURALS = (
    "aces", "2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s", "10s", "jacks", "queens", "kings",
)  # fmt: skip

KINDS = (
    "draw", "take", "pass", "discard", "knock", "meld", "layoff", "joker", "retrieve", "end",
)  # fmt: skip
"""The kinds of move (:attr:`MoveWords.kind`)."""

_RUN_POS = "A23456789TJQKA"  # run positions 0..13 (13: the high ace), as the engine names them
_NAME = re.compile(r"^([A-Z_]+)(?:\[(.*)\])?$")


def card_words(c: int) -> str:
    """A card as a person reads it: ``7♥``, ``10♠``, ``JK``."""
    c = int(c)
    if c >= JOKER:
        return "JK"
    return RANK_WORDS[c % 13] + SUIT_SYMBOLS[c // 13]


def cards_words(cards: Any) -> str:
    """Cards separated by spaces (``-`` for none)."""
    out = " ".join(card_words(c) for c in cards)
    return out or "-"


def display_key(c: int) -> tuple[int, int]:
    """Sort key of a card in display order: spades, hearts, clubs, diamonds (the colours
    alternate), then rank; jokers last.
    """
    return (4, 0) if c >= JOKER else ((3, 2, 0, 1).index(c // 13), c % 13)


@dataclass(frozen=True)
class MeldSeen:
    """A meld on the table as the seat sees it.

    Attributes:
        index: its number, as the lay-off moves number it (a Gin knocker's meld slot, a joker
            game's table slot).
        owner: who laid it.
        cards: its card ids (jokers are 52).
        stand_ins: what each joker stands for (``"7h"`` in a run, ``"7"`` in a group; ``""``
            for a natural).
        kind: ``"run"`` or ``"group"``.
        words: ``"the spade run 9♠ 10♠ J♠"``.
    """

    index: int
    owner: str
    cards: tuple[int, ...]
    stand_ins: tuple[str, ...]
    kind: str
    words: str


@dataclass(frozen=True)
class MoveWords:
    """One legal move in words.

    Attributes:
        action: the action id.
        name: the engine's name of it.
        kind: one of :data:`KINDS`.
        text: the move in words (``"Discard the J♠"``).
        cards: the cards of the hand it plays (a joker is 52), in display order.
        meld: the table meld it goes on (lay-offs, retrievals), -1 for none.
        depth: the pile cards it takes below the top (500 Rum), -1 for none.
        note: what it leaves (``"deadwood 8"``), or "".
    """

    action: int
    name: str
    kind: str
    text: str
    cards: tuple[int, ...] = ()
    meld: int = -1
    depth: int = -1
    note: str = ""


@dataclass(frozen=True)
class HandHints:
    """What the person's hand holds.

    Attributes:
        hand: the cards, in display order.
        melds: the melds of a best arrangement (new melds only).
        unmelded: the cards left out of them.
        points: the points of the unmelded cards (Gin Rummy: the deadwood; 500 Rum: the points
            they cost at the end of the hand; Rummy 51: their penalty); None when the seat holds
            no hand now.
        best_discard: Gin Rummy, 11 cards: the deadwood after the best discard (else None).
        notes: the duties of the turn (a card to meld, opening points) and like remarks.
        text: all of it in one line.
        label: what ``points`` are (``deadwood``, ``points in hand``, ``penalty in hand``).
    """

    hand: tuple[int, ...]
    melds: tuple[tuple[int, ...], ...] = ()
    unmelded: tuple[int, ...] = ()
    points: int | None = None
    best_discard: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    text: str = ""
    label: str = ""


# ---------------------------------------------------------------------------------------------
# What the seat sees


def _game(env: Any) -> str:
    return env.unwrapped.metadata["name"].rsplit("_v", 1)[0]


def _rec(env: Any) -> np.void:
    return env.unwrapped.game.states[0]


def _seat(env: Any, agent: str) -> int:
    names = list(env.possible_agents)
    if agent not in names:
        raise ValueError(f"agent must be one of {', '.join(names)}, got {agent!r}")
    return names.index(agent)


def _gin_board(env: Any, seat: int) -> tuple[np.void, int]:
    """(the 2-player hand record the seat plays or watches, its index there, -1 sitting out)."""
    rec = _rec(env)
    if "boards" not in (rec.dtype.names or ()):
        return rec, seat
    t = max(int(rec["board_of"][seat]), 0)  # 3 players: the one table, watched while out
    local = int(rec["local"][seat]) if int(rec["board_of"][seat]) >= 0 else -1
    return rec["boards"][t], local


def own_hand(env: Any, agent: str) -> list[int]:
    """The cards of ``agent``'s hand (its own: every seat sees it), in display order (jokers
    as 52, one entry per copy).
    """
    seat = _seat(env, agent)
    if _game(env) == "gin_rummy":
        board, local = _gin_board(env, seat)
        if local < 0:
            return []
        mask = int(board["hands"][local])
        return sorted((c for c in range(52) if mask >> c & 1), key=display_key)
    counts = _rec(env)["hands"][seat]
    cards = [int(c) for c in np.repeat(np.arange(len(counts)), np.maximum(counts, 0))]
    return sorted(cards, key=display_key)


def _shown(cards: list[int], stand_ins: list[str]) -> str:
    """Cards in words, each joker with what it stands for: ``5♥ JK(6♥) 7♥``, ``JK(7)``."""
    shown = []
    for c, s in zip(cards, stand_ins, strict=True):
        if c < JOKER:
            shown.append(card_words(c))
        elif len(s) == 2:  # a joker in a run: the very card
            shown.append(f"JK({card_words(str_to_card(s))})")
        else:
            shown.append(f"JK({RANK_WORDS[RANKS.index(s)]})" if s else "JK")
    return " ".join(shown)


def _meld_words(kind: str, cards: list[int], stand_ins: list[str]) -> str:
    shown = _shown(cards, stand_ins)
    nat = [c for c in cards if c < JOKER]
    if kind == "run":
        suit = nat[0] // 13 if nat else SUITS.index(stand_ins[0][1])
        return f"the {SUIT_NAMES[suit]} run {shown}"
    rank = nat[0] % 13 if nat else RANKS.index(stand_ins[0])
    return f"the group of {RANK_PLURALS[rank]} {shown}"


def _kind_of(cards: list[int], stand_ins: list[str]) -> str:
    nat = [c for c in cards if c < JOKER]
    if any(len(s) == 2 for s in stand_ins):
        return "run"
    if any(len(s) == 1 for s in stand_ins):
        return "group"
    return "group" if len({c % 13 for c in nat}) == 1 else "run"


def table_melds(env: Any, agent: str) -> list[MeldSeen]:
    """The melds a lay-off of ``agent`` can go on, numbered as its lay-off moves number them:
    in 500 Rum and Rummy 51 every table meld (by slot); in Gin Rummy the melds the knocker of
    the seat's hand laid out (by slot), once laid.
    """
    seat = _seat(env, agent)
    names = list(env.possible_agents)
    if _game(env) == "gin_rummy":
        board, _ = _gin_board(env, seat)
        knocker = int(board["knocker"])
        if knocker < 0:
            return []
        rec = _rec(env)
        owner = (
            names[int(rec["seat"][max(int(rec["board_of"][seat]), 0)][knocker])]
            if "boards" in (rec.dtype.names or ())
            else names[knocker]
        )
        out = []
        for m in range(int(board["n_melds"][knocker])):
            mask = int(board["melds"][knocker][m])
            cards = [c for c in range(52) if mask >> c & 1]
            kind = _kind_of(cards, [""] * len(cards))
            out.append(
                MeldSeen(m, owner, tuple(cards), ("",) * len(cards), kind,
                         _meld_words(kind, cards, [""] * len(cards)))
            )  # fmt: skip
        return out
    view = env.table_view(agent)
    out = []
    for m, meld in enumerate(view.melds):
        cards = [c.face for c in meld.cards]
        stand = [c.stand_in for c in meld.cards]
        kind = _kind_of(cards, stand)
        out.append(
            MeldSeen(m, meld.owner, tuple(cards), tuple(stand), kind,
                     _meld_words(kind, cards, stand))
        )  # fmt: skip
    return out


def _pile(env: Any, agent: str) -> list[int]:
    """The discard pile of the seat's table, bottom first (all face up)."""
    seat = _seat(env, agent)
    if _game(env) == "gin_rummy":
        board, _ = _gin_board(env, seat)
        return [int(c) for c in board["pile"][: int(board["pile_n"])]]
    rec = _rec(env)
    return [int(c) for c in rec["pile"][: int(rec["pile_n"])]]


def _phase(env: Any, agent: str) -> str:
    from rummy_env.encodings import five_hundred_rum as E500
    from rummy_env.encodings import gin_rummy as EG
    from rummy_env.encodings import rummy51 as E51

    game = _game(env)
    if game == "gin_rummy":
        board, _ = _gin_board(env, _seat(env, agent))
        return EG.PHASE_NAMES[int(board["phase"])]
    phases = E500.PHASE_NAMES if game == "five_hundred_rum" else E51.PHASE_NAMES
    return phases[int(_rec(env)["phase"])]


# ---------------------------------------------------------------------------------------------
# Moves


def _template_cards(text: str, hand: list[int]) -> tuple[list[int], list[str]]:
    """The cards a joker game's new meld (``group 9: c d + 1 JK``, ``run h 5..8``) takes from
    ``hand``, with the stand-ins of its jokers, as the engine fills it: a run takes the
    naturals the hand holds and a joker for each one it lacks.
    """
    if text.startswith("group"):
        m = re.fullmatch(r"group (\w): ([cdhs ]*?)(?: \+ (\d) JK)?", text)
        if m is None:
            raise ValueError(f"cannot read the meld {text!r}")
        rank = RANKS.index(m.group(1))
        suits = m.group(2).split()
        jokers = int(m.group(3) or 0)
        cards = [SUITS.index(s) * 13 + rank for s in suits] + [JOKER] * jokers
        return cards, [""] * len(suits) + [RANKS[rank]] * jokers
    m = re.fullmatch(r"run (\w) (\w)\.\.(\w)", text)
    if m is None:
        raise ValueError(f"cannot read the meld {text!r}")
    suit = SUITS.index(m.group(1))
    lo, hi = _RUN_POS.index(m.group(2)), _RUN_POS.rindex(m.group(3))
    cards, stand = [], []
    for pos in range(lo, hi + 1):
        c = suit * 13 + pos % 13
        if c in hand:
            cards.append(c)
            stand.append("")
        else:
            cards.append(JOKER)
            stand.append(_RUN_POS[pos] + SUITS[suit])
    return cards, stand


def _parse(name: str) -> tuple[str, list[str]]:
    m = _NAME.match(name)
    if m is None:
        raise ValueError(f"cannot read the move name {name!r}")
    args = [a.strip() for a in m.group(2).split(",")] if m.group(2) is not None else []
    return m.group(1), args


def describe_moves(env: Any, agent: str, actions: Any = None) -> list[MoveWords]:
    """The words of ``agent``'s legal moves (or of ``actions``, legal ones), in action id order.

    Args:
        env: an env of the registry (any wrapper of it).
        agent: the seat whose moves they are; only what it sees is named.
        actions: the action ids (None: the legal moves of ``agent`` now; none unless it is to
            act).

    Raises:
        ValueError: for an unknown agent.
    """
    seat = _seat(env, agent)
    if actions is None:
        if env.agent_selection != agent:
            return []
        mask = env.observe(agent)["action_mask"]
        actions = [int(a) for a in np.flatnonzero(mask == 1)]
    game = _game(env)
    hand = own_hand(env, agent)
    pile = _pile(env, agent)
    melds = table_melds(env, agent)
    phase = _phase(env, agent)
    after: np.ndarray | None = None
    if game == "gin_rummy" and len(hand) == 11:
        from rummy_agents.gin_rummy_rules import deadwood_per_discard

        after = deadwood_per_discard(sum(1 << c for c in hand))
    del seat
    out = []
    for a in actions:
        name = env.action_name(int(a))
        out.append(_describe(int(a), name, game, phase, hand, pile, melds, after))
    return out


def _on(melds: list[MeldSeen], m: int) -> str:
    if 0 <= m < len(melds):
        return f"{melds[m].words} (meld {m})"
    return f"meld {m}"


def _describe(
    a: int,
    name: str,
    game: str,
    phase: str,
    hand: list[int],
    pile: list[int],
    melds: list[MeldSeen],
    after: np.ndarray | None,
) -> MoveWords:
    verb, args = _parse(name)
    top = pile[-1] if pile else None
    if verb == "DRAW_STOCK":
        return MoveWords(a, name, "draw", "Draw from the stock")
    if verb == "TAKE_DISCARD":
        d = int(args[0]) if args else 0
        if phase == "fiftieth_card_offer":
            return MoveWords(
                a, name, "take", "Take the 50th card (you must knock with it)", depth=0
            )
        taken = pile[len(pile) - 1 - d :] if pile else []
        call = "Call Rummy!: " if phase == "rummy_call_offer" else ""
        if d == 0:
            card = card_words(top) if top is not None else "top card"
            if phase == "upcard_offer":
                text = f"Take the upcard {card}"
            else:
                text = f"Take the {card} from the pile"
            return MoveWords(a, name, "take", call + text, depth=0)
        if not taken:  # not in play: a deep take has the pile's cards shown
            return MoveWords(a, name, "take", f"{call}Take {d + 1} cards from the pile", depth=d)
        deepest = taken[0]
        text = (
            f"{call}Take {len(taken)} cards from the pile, down to the {card_words(deepest)} "
            f"({cards_words(taken[::-1])}; the {card_words(deepest)} must be melded this turn)"
        )
        return MoveWords(a, name, "take", text, depth=d)
    if verb == "PASS":
        text = {
            "upcard_offer": "Pass: leave the upcard",
            "fiftieth_card_offer": "Pass on the 50th card",
            "rummy_call_offer": "Pass: no Rummy! call",
        }.get(phase, "Pass: do not take from the pile (the hand ends)")
        return MoveWords(a, name, "pass", text)
    if verb == "END_MELDING":
        text = "Done laying off" if phase == "defender_melds" else "Done laying out melds"
        return MoveWords(a, name, "end", text)
    if verb in ("DISCARD", "KNOCK"):
        c = str_to_card(args[0]) if args[0] != "JK" else JOKER
        note = ""
        if after is not None and c < 52:
            note = f"deadwood {int(after[c])}"
        if verb == "DISCARD":
            text = f"Discard the {card_words(c)}" if c < JOKER else "Discard a joker"
            return MoveWords(a, name, "discard", text + (f" ({note})" if note else ""), (c,),
                             note=note)  # fmt: skip
        dw = int(after[c]) if after is not None else None
        if dw == 0:
            text = f"Go gin, discarding the {card_words(c)} face down"
        elif dw is not None:
            text = f"Knock with {dw} deadwood, discarding the {card_words(c)} face down"
        else:
            text = f"Knock, discarding the {card_words(c)} face down"
        return MoveWords(a, name, "knock", text, (c,), note=note)
    if verb == "MELD":
        spec = args[0] if len(args) == 1 else ", ".join(args)
        if game == "gin_rummy":
            cards = [str_to_card(t) for t in spec.split()[1:]]
            stand = [""] * len(cards)
        else:
            cards, stand = _template_cards(spec, hand)
        return MoveWords(a, name, "meld", f"Meld {_shown(cards, stand)}", tuple(cards))
    if verb == "LAYOFF":
        c = str_to_card(args[0])
        m = int(args[1].split()[-1])
        return MoveWords(a, name, "layoff", f"Lay off the {card_words(c)} on {_on(melds, m)}",
                         (c,), meld=m)  # fmt: skip
    if verb == "LAYOFF_JOKER":
        m, end = int(args[0]), args[1]
        where = ""
        if 0 <= m < len(melds) and melds[m].kind == "run":
            where = f" at its {end} end"
        return MoveWords(a, name, "joker", f"Lay off a joker on {_on(melds, m)}{where}",
                         (JOKER,), meld=m)  # fmt: skip
    if verb == "RETRIEVE":
        m, k = int(args[0]), int(args[1])
        c = _retrieve_card(melds[m], k) if 0 <= m < len(melds) else -1
        what = f"the {card_words(c)}" if c >= 0 else f"the natural at {k}"
        desc = melds[m].words if 0 <= m < len(melds) else ""
        text = f"Retrieve the joker from meld {m} with {what}" + (f" ({desc})" if desc else "")
        return MoveWords(a, name, "retrieve", text, (c,) if c >= 0 else (), meld=m)
    raise ValueError(f"no words for the move {name!r}")


def _retrieve_card(meld: MeldSeen, k: int) -> int:
    """The natural that takes the place of a joker of ``meld`` at run position / group suit
    ``k`` (what the engine's ``RETRIEVE[m, k]`` puts there).
    """
    if meld.kind == "run":
        suit = next(SUITS.index(s[1]) for s in meld.stand_ins if len(s) == 2)
        return suit * 13 + k % 13
    rank = next((c % 13 for c in meld.cards if c < JOKER), None)
    if rank is None:
        rank = RANKS.index(next(s for s in meld.stand_ins if s))
    return k * 13 + rank


# ---------------------------------------------------------------------------------------------
# The hand


def gin_arrangement(hand: list[int]) -> tuple[list[list[int]], list[int], int]:
    """(melds, unmelded cards, deadwood) of a best arrangement of a Gin Rummy hand."""
    from rummy_agents.gin_rummy_rules import knocker_meld_plan
    from rummy_env.core.melds import GIN_MELD_MASKS, GIN_VALUES

    mask = sum(1 << c for c in hand)
    rest = mask
    melds = []
    for t in knocker_meld_plan(mask):
        m = int(GIN_MELD_MASKS[t])
        rest &= ~m
        melds.append(sorted((c for c in range(52) if m >> c & 1), key=display_key))
    left = sorted((c for c in range(52) if rest >> c & 1), key=display_key)
    return melds, left, sum(int(GIN_VALUES[c]) for c in left)


def joker_arrangement(
    game: str, hand: list[int], config: Any
) -> tuple[list[list[int]], list[int], int]:
    """(melds, unmelded cards, their points) of a best arrangement of a 500 Rum or Rummy 51
    hand in new melds (the planners of the greedy agents, without lay-offs).
    """
    counts = [0] * 53
    for c in hand:
        counts[c] += 1
    if game == "rummy51":
        from rummy_agents.rummy51_greedy import PENALTY, Rummy51Planner

        plan = Rummy51Planner().best(counts, [], opened=True, layoffs=False)
        values = PENALTY
    else:
        from rummy_agents.five_hundred_rum_greedy import MeldPlanner, card_value

        v51015 = bool(getattr(config, "values_5_10_15", False))
        plan = MeldPlanner(v51015).best(counts, [])
        values = [card_value(c, v51015) for c in range(53)]
    if plan is None:
        left = sorted(hand, key=display_key)
        return [], left, sum(values[c] for c in left)
    from rummy_env.core.jmelds import template_str

    rest = list(hand)
    melds = []
    for kind, t, _ in plan.steps:
        if kind != "meld":
            continue
        cards, _stand = _template_cards(template_str(t), rest)
        for c in cards:
            rest.remove(c)
        melds.append(cards)
    left = sorted(rest, key=display_key)
    return melds, left, sum(values[c] for c in left)


def hand_hints(env: Any, agent: str) -> HandHints:
    """The hints on ``agent``'s hand: best melds, unmelded cards and their points (Gin Rummy:
    deadwood, and after the best discard with 11 cards), the duties of the turn.

    Raises:
        ValueError: for an unknown agent.
    """
    seat = _seat(env, agent)
    game = _game(env)
    hand = own_hand(env, agent)
    rec = _rec(env)
    notes: list[str] = []
    if not hand:
        if game == "gin_rummy":
            notes.append("you sit out this hand")
        return HandHints((), notes=tuple(notes), text="; ".join(notes) or "no cards")
    best = None
    if game == "gin_rummy":
        melds, left, points = gin_arrangement(hand)
        if len(hand) == 11:
            from rummy_agents.gin_rummy_rules import deadwood_per_discard

            best = int(deadwood_per_discard(sum(1 << c for c in hand)).min())
        label = "deadwood"
    else:
        melds, left, points = joker_arrangement(game, hand, env.unwrapped.config)
        label = "penalty in hand" if game == "rummy51" else "points in hand"
        if int(rec["cur"]) == seat and not rec["done"]:
            oblig = int(rec["oblig"])
            if oblig >= 0:
                what = "meld" if game == "five_hundred_rum" else "use in your opening melds"
                notes.append(f"you must {what} the {card_words(oblig)} this turn")
            if game == "rummy51":
                need = env.unwrapped.config.opening_threshold
                if not rec["opened"][seat]:
                    notes.append(f"not opened: {int(rec['open_pts'])} of {need} points laid")
                if int(rec["owed"]):
                    notes.append(f"retrieved jokers still to meld: {int(rec['owed'])}")
    parts = [
        "melds: " + (", ".join(cards_words(m) for m in melds) if melds else "none"),
        f"unmelded: {cards_words(left)}",
        f"{label} {points}",
    ]
    if best is not None:
        parts.append(f"after your best discard: {best}")
    text = "; ".join(parts + notes)
    return HandHints(
        tuple(hand),
        tuple(tuple(m) for m in melds),
        tuple(left),
        points,
        best,
        tuple(notes),
        text,
        label,
    )


__all__ = [
    "KINDS",
    "HandHints",
    "MeldSeen",
    "MoveWords",
    "card_words",
    "cards_words",
    "describe_moves",
    "display_key",
    "gin_arrangement",
    "hand_hints",
    "joker_arrangement",
    "own_hand",
    "table_melds",
]
