"""Gin Rummy action table and observation pieces (the versioned public contract of gin_rummy_v0).

Actions: one fixed ``Discrete(n)``; an id always means the same thing.

======================  ===========  ======================================================
name                    ids          meaning
======================  ===========  ======================================================
DRAW_STOCK              0            draw the top card of the stock
TAKE_DISCARD            1            take the top discard (also: accept the upcard offer, and
                                     the 50th-card take)
PASS                    2            decline the upcard offer / the 50th card
DISCARD[c]              3..54        discard card ``c`` face up
KNOCK[c]                55..106      knock, discarding card ``c`` face down
MELD[t]                 107..411     (manual melds) lay meld template ``t`` (``GIN_MELD_MASKS``)
LAYOFF[c, m]            412..567     (manual melds) defender lays card ``c`` off on the
                                     knocker's meld slot ``m`` (id ``412 + 3 c + m``)
END_MELDING             568          (manual melds) finish declaring melds / lay-offs
======================  ===========  ======================================================

With ``auto_meld=True`` (default) only ids 0..106 exist (``n = 107``); with manual melds
``n = 569``.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from rummy_env.core.cards import card_to_str, mask_to_cards
from rummy_env.core.melds import GIN_MELD_KINDS, GIN_MELD_MASKS, NUM_GIN_MELDS
from rummy_env.encodings.pieces import Piece

DRAW_STOCK = 0
TAKE_DISCARD = 1
PASS = 2
DISCARD_BASE = 3
KNOCK_BASE = DISCARD_BASE + 52
MELD_BASE = KNOCK_BASE + 52
LAYOFF_BASE = MELD_BASE + NUM_GIN_MELDS
MAX_MELD_SLOTS = 3
END_MELDING = LAYOFF_BASE + 52 * MAX_MELD_SLOTS
NUM_ACTIONS_AUTO = MELD_BASE
NUM_ACTIONS_MANUAL = END_MELDING + 1

# Phases of a hand (the ``phase`` state field and the ``phase`` observation piece).
PH_UPCARD = 0
PH_DRAW = 1
PH_DISCARD = 2
PH_FIFTY_OFFER = 3
PH_FIFTY_KNOCK = 4
PH_KNOCKER_MELD = 5
PH_DEFENDER_MELD = 6
PH_OVER = 7
NUM_PHASES = 8
PHASE_NAMES = (
    "upcard_offer",
    "draw",
    "discard",
    "fiftieth_card_offer",
    "fiftieth_card_knock",
    "knocker_melds",
    "defender_melds",
    "hand_over",
)

# Hand outcomes (``info["outcome"]``).
OUT_NONE = 0
OUT_KNOCK = 1
OUT_GIN = 2
OUT_UNDERCUT = 3
OUT_DEAD = 4
OUTCOME_NAMES = ("none", "knock", "gin", "undercut", "dead_hand")


def num_actions(auto_meld: bool) -> int:
    """Size of the action space."""
    return NUM_ACTIONS_AUTO if auto_meld else NUM_ACTIONS_MANUAL


def meld_str(t: int) -> str:
    """Text of meld template ``t`` (e.g. ``"group 7c 7d 7h"``)."""
    kind = "group" if GIN_MELD_KINDS[t] == 0 else "run"
    return f"{kind} " + " ".join(card_to_str(c) for c in mask_to_cards(int(GIN_MELD_MASKS[t])))


def action_name(a: int) -> str:
    """Readable name of an action id (e.g. ``"KNOCK[Qs]"``)."""
    a = int(a)
    if a == DRAW_STOCK:
        return "DRAW_STOCK"
    if a == TAKE_DISCARD:
        return "TAKE_DISCARD"
    if a == PASS:
        return "PASS"
    if DISCARD_BASE <= a < KNOCK_BASE:
        return f"DISCARD[{card_to_str(a - DISCARD_BASE)}]"
    if KNOCK_BASE <= a < MELD_BASE:
        return f"KNOCK[{card_to_str(a - KNOCK_BASE)}]"
    if MELD_BASE <= a < LAYOFF_BASE:
        return f"MELD[{meld_str(a - MELD_BASE)}]"
    if LAYOFF_BASE <= a < END_MELDING:
        c, m = divmod(a - LAYOFF_BASE, MAX_MELD_SLOTS)
        return f"LAYOFF[{card_to_str(c)}, slot {m}]"
    if a == END_MELDING:
        return "END_MELDING"
    return f"<invalid action {a}>"


# Action ranges, for the docs and the docstring test: (name, first id, count, manual only).
ACTION_RANGES = (
    ("DRAW_STOCK", DRAW_STOCK, 1, False),
    ("TAKE_DISCARD", TAKE_DISCARD, 1, False),
    ("PASS", PASS, 1, False),
    ("DISCARD[c]", DISCARD_BASE, 52, False),
    ("KNOCK[c]", KNOCK_BASE, 52, False),
    ("MELD[t]", MELD_BASE, NUM_GIN_MELDS, True),
    ("LAYOFF[c, m]", LAYOFF_BASE, 52 * MAX_MELD_SLOTS, True),
    ("END_MELDING", END_MELDING, 1, True),
)


_PIECES = (
    ("hand", (52,), 1.0, "1 for each card in the observer's hand"),
    ("discard_top", (52,), 1.0, "one-hot of the top card of the discard pile (zeros if empty)"),
    (
        "discard_pile",
        (52,),
        1.0,
        "each pile card: 1 - depth/52 (top card 1.0, the next 51/52, ...), 0 if absent",
    ),
    (
        "opponent_known",
        (52,),
        1.0,
        "cards the opponent is known to hold (taken from the pile, or laid out after a knock)",
    ),
    ("stock_size", (1,), 1.0, "cards left in the stock / 31"),
    ("opponent_hand_size", (1,), 1.0, "cards in the opponent's hand / 11"),
    ("knock_limit", (1,), 10.0, "knock limit of this hand / 10 (Oklahoma: from the upcard)"),
    ("spade_double", (1,), 1.0, "1 if this hand's score is doubled (Oklahoma spade upcard)"),
    ("is_dealer", (1,), 1.0, "1 if the observer dealt this hand"),
    ("scores", (2,), np.inf, "match scores (observer, opponent) / target; 0 in hand episodes"),
    ("boxes", (2,), np.inf, "boxes won this match (observer, opponent) / 10"),
    ("phase", (NUM_PHASES,), 1.0, "one-hot of the phase (PHASE_NAMES)"),
)
_MELD_PIECE = (
    "melds",
    (2, MAX_MELD_SLOTS, 52),
    1.0,
    "(manual melds only) cards in each declared meld slot: [observer, opponent][slot][card]",
)


# 3 and 4 players: pieces after the 2-player observation of the observer's table (which is
# unchanged, so a 2-player agent reads the prefix). Seat-relative order: observer, then the
# next seats in seat order (4 players: observer, left opponent, partner, right opponent).
_THREE_PIECES = (
    ("sitting_out", (3,), 1.0, "one-hot of the seat that dealt and sits out this hand"),
    ("match_scores", (3,), np.inf, "each seat's match points / target"),
    ("match_boxes", (3,), np.inf, "each seat's boxes / 10"),
    ("seat_known", (3, 52), 1.0, "cards each seat is publicly known to hold"),
    ("seat_hand_size", (3,), 1.0, "cards in each seat's hand / 11 (0 for the seat out)"),
)
_THREE_MELDS = (
    "seat_melds",
    (3, MAX_MELD_SLOTS, 52),
    1.0,
    "(manual melds only) cards in each seat's declared meld slots",
)
_FOUR_PIECES = (
    ("table_opponent", (4,), 1.0, "one-hot of the observer's opponent at its table this round"),
    ("team_scores", (2,), np.inf, "match points (observer's team, other team) / target"),
    ("team_boxes", (2,), np.inf, "boxes (observer's team, other team) / 10"),
    (
        "partner_outcome",
        (len(OUTCOME_NAMES),),
        1.0,
        "one-hot (OUTCOME_NAMES) of the partner's hand this round once it is over, else 0",
    ),
    (
        "partner_points",
        (2,),
        1.0,
        "points scored in that hand by (partner, its opponent) / the largest hand score",
    ),
)


def _layout(specs: tuple, start: int = 0) -> list[Piece]:
    out, off = [], start
    for name, shape, high, doc in specs:
        p = Piece(name, off, shape, doc, high)
        out.append(p)
        off += p.size
    return out


@cache
def observation_pieces(auto_meld: bool, num_players: int = 2) -> tuple[Piece, ...]:
    """The named pieces of the observation vector, in order. With 3 and 4 players the
    2-player pieces (the observer's table) come first, then those of the match.
    """
    specs = _PIECES if auto_meld else _PIECES + (_MELD_PIECE,)
    out = _layout(specs)
    extra: tuple[tuple[str, tuple[int, ...], float, str], ...]  # (name, shape, high, doc)
    if num_players == 3:
        extra = _THREE_PIECES if auto_meld else _THREE_PIECES + (_THREE_MELDS,)
    elif num_players == 4:
        extra = _FOUR_PIECES
    else:
        extra = ()
    out += _layout(extra, out[-1].offset + out[-1].size)
    return tuple(out)


def observation_size(auto_meld: bool, num_players: int = 2) -> int:
    """Length of the flat observation vector."""
    p = observation_pieces(auto_meld, num_players)[-1]
    return p.offset + p.size


def piece_offsets(auto_meld: bool, num_players: int = 2) -> dict[str, int]:
    """Offset of each piece by name."""
    return {p.name: p.offset for p in observation_pieces(auto_meld, num_players)}


def split_observation(
    obs: np.ndarray, auto_meld: bool, num_players: int = 2
) -> dict[str, np.ndarray]:
    """Named views of a flat observation (or a batch of them, leading axes kept)."""
    out = {}
    for p in observation_pieces(auto_meld, num_players):
        out[p.name] = obs[..., p.offset : p.offset + p.size].reshape(obs.shape[:-1] + p.shape)
    return out


def meld_template(cards: str | list[int | str]) -> int:
    """Template id of the meld made of exactly these cards (``ValueError`` if none)."""
    from rummy_env.core.cards import cards_to_mask

    m = cards_to_mask(cards)
    hits = np.flatnonzero(GIN_MELD_MASKS == np.uint64(m))
    if hits.size == 0:
        raise ValueError(f"{cards!r} is not a Gin meld (3-4 of a rank or a 3-10 card run)")
    return int(hits[0])


def action_id(name: str) -> int:
    """Action id from its name: ``"DRAW_STOCK"``, ``"DISCARD[Kd]"``, ``"KNOCK[Qs]"``,
    ``"MELD[7c 7d 7h]"``, ``"LAYOFF[8s, 0]"``, ``"END_MELDING"`` (inverse of ``action_name``).
    """
    from rummy_env.core.cards import str_to_card

    n = name.strip()
    simple = {"DRAW_STOCK": DRAW_STOCK, "TAKE_DISCARD": TAKE_DISCARD, "PASS": PASS}
    simple["END_MELDING"] = END_MELDING
    if n in simple:
        return simple[n]
    if "[" not in n or not n.endswith("]"):
        raise ValueError(f"unknown action name {name!r}")
    head, arg = n[:-1].split("[", 1)
    if head == "DISCARD":
        return DISCARD_BASE + str_to_card(arg)
    if head == "KNOCK":
        return KNOCK_BASE + str_to_card(arg)
    if head == "MELD":
        for word in ("group ", "run "):
            arg = arg.replace(word, "")
        return MELD_BASE + meld_template(arg)
    if head == "LAYOFF":
        card, slot = (x.strip() for x in arg.replace("slot", "").split(","))
        return LAYOFF_BASE + MAX_MELD_SLOTS * str_to_card(card) + int(slot)
    raise ValueError(f"unknown action name {name!r}")
