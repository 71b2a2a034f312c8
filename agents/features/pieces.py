"""The feature pieces, the legacy feature-set names and the blocks the pieces are cut from.

A *piece* is a named run of feature entries appended to the observation; a feature set is an
ordered tuple of pieces. Each piece is a slice of a *block*, the output of one kernel
(:mod:`rummy_agents.features.gin`, :mod:`rummy_agents.features.joker_cards`), so that pieces
computed together are computed once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rummy_agents.features.gin import GIN_DEADWOOD_SIZE, GIN_RELATIVE_SIZE
from rummy_agents.features.joker_cards import (
    CARD_PLANES,
    DISCARD_PLANES,
    PLAN_BLOCK,
    TAKE_DEPTHS,
    TURN_BLOCK,
    TURN_NUMBERS,
)
from rummy_env.core.jmelds import NUM_TEMPLATES

GIN = ("gin_rummy",)
JOKER_GAMES = ("five_hundred_rum", "rummy51")
R500 = ("five_hundred_rum",)
GAME_NAMES = {"gin_rummy": "Gin Rummy", "five_hundred_rum": "500 Rum", "rummy51": "Rummy 51"}

BLOCK_SIZES = {
    "gin": GIN_DEADWOOD_SIZE,
    "gin_rel": GIN_RELATIVE_SIZE,
    "cards": CARD_PLANES,
    "turn": TURN_BLOCK,
    "takes": TAKE_DEPTHS,
    "discards": DISCARD_PLANES,
    "plan": PLAN_BLOCK,
}
"""Width of each block: ``gin`` (Gin Rummy's deadwood), ``gin_rel`` (the same, relative to the
best discard), ``cards`` (the six card planes),
``turn`` (going out, held points, melded copies, fewest-cards melds), ``takes`` (take gains per
pile depth), ``discards`` (discard scores) and ``plan`` (``greedy``'s plan, shortest opponent).
"""


@dataclass(frozen=True)
class Piece:
    """One named run of feature entries.

    Attributes:
        name: the piece's name.
        games: the games whose observations it reads.
        block: the block it is a slice of (:data:`BLOCK_SIZES`).
        start: its first entry in the block.
        size: its number of entries.
        card_planes: offsets (in the piece) of its 52-wide planes indexed by natural card, for a
            policy's card head.
        actions: the action block its entries are aligned with, one entry per action:
            ``"meld"`` (``MELD[t]``), ``"take"`` (``TAKE_DISCARD[d]``), ``"discard"``
            (``DISCARD[c]`` of naturals), or ``""``.
    """

    name: str
    games: tuple[str, ...]
    block: str
    start: int
    size: int
    card_planes: tuple[int, ...] = ()
    actions: str = ""


def _card_plane(name: str, k: int) -> Piece:
    return Piece(name, JOKER_GAMES, "cards", 52 * k, 52, (0,))


PIECES: dict[str, Piece] = {
    p.name: p
    for p in (
        Piece("gin_deadwood", GIN, "gin", 0, GIN_DEADWOOD_SIZE, (0, 54)),
        Piece("gin_deadwood_relative", GIN, "gin_rel", 0, GIN_RELATIVE_SIZE, (0, 52)),
        _card_plane("melds_with_hand", 0),
        _card_plane("hand_closeness", 1),
        _card_plane("next_player_closeness", 2),
        _card_plane("table_fit", 3),
        _card_plane("top_discard", 4),
        _card_plane("top_discard_melds", 5),
        Piece("going_out", JOKER_GAMES, "turn", 0, TURN_NUMBERS),
        Piece("held_points", JOKER_GAMES, "turn", TURN_NUMBERS, 52, (0,)),
        Piece("free_arrangement_copies", JOKER_GAMES, "turn", TURN_NUMBERS + 52, 52, (0,)),
        Piece(
            "fewest_cards_melds", JOKER_GAMES, "turn", TURN_NUMBERS + 104, NUM_TEMPLATES, (), "meld"
        ),
        Piece("take_gains", R500, "takes", 0, TAKE_DEPTHS, actions="take"),
        Piece("discard_scores", R500, "discards", 0, 52, (0,), "discard"),
        Piece("free_discard_scores", R500, "discards", 52, 52, (0,), "discard"),
        Piece("greedy_plan_melds", R500, "plan", 0, NUM_TEMPLATES, actions="meld"),
        Piece("fewest_opponent_cards", R500, "plan", NUM_TEMPLATES, PLAN_BLOCK - NUM_TEMPLATES),
    )
}
"""Every piece by name, in the order of the module docstring of :mod:`rummy_agents.features`."""

_CARD_PIECES = (
    "melds_with_hand",
    "hand_closeness",
    "next_player_closeness",
    "table_fit",
    "top_discard",
    "top_discard_melds",
)
_OUT = (*_CARD_PIECES, "going_out")
_PLAN = (*_OUT, "held_points", "free_arrangement_copies")
_MELDS = (*_PLAN, "fewest_cards_melds")
_TAKES = (*_MELDS, "take_gains")
_DISCARDS = (*_TAKES, "discard_scores", "free_discard_scores")

LEGACY_NAMES: dict[str, tuple[str, ...]] = {
    "none": (),
    "gin_deadwood": ("gin_deadwood",),
    "gin_deadwood_relative": ("gin_deadwood", "gin_deadwood_relative"),
    "joker_cards": _CARD_PIECES,
    "joker_cards_out": _OUT,
    "joker_cards_plan": _PLAN,
    "joker_cards_melds": _MELDS,
    "joker_cards_takes": _TAKES,
    "joker_cards_discards": _DISCARDS,
    "joker_cards_planner": (*_DISCARDS, "greedy_plan_melds", "fewest_opponent_cards"),
}
"""The feature-set names checkpoints store (``features`` in their metadata), each with the
pieces it stands for: the same entries, in the same order, as when the checkpoint was trained.
"""


def parse_pieces(features: str | Sequence[str]) -> tuple[str, ...]:
    """The piece names of a feature set given as a legacy name (:data:`LEGACY_NAMES`), a piece
    name, piece names joined by ``+``, or a sequence of piece names.

    Raises:
        ValueError: for an unknown name or a piece named twice.
    """
    if isinstance(features, str):
        if features in LEGACY_NAMES:
            return LEGACY_NAMES[features]
        names = tuple(features.split("+"))
    else:
        names = tuple(features)
    for n in names:
        if not isinstance(n, str) or n not in PIECES:
            raise ValueError(
                f"features: unknown feature set or piece {n!r} in {features!r}; feature sets: "
                f"{', '.join(LEGACY_NAMES)}; pieces: {', '.join(PIECES)}"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"features: a piece is named twice in {features!r}")
    return names


def pieces_size(pieces: tuple[str, ...]) -> int:
    """Number of feature entries of ``pieces``."""
    return sum(PIECES[n].size for n in pieces)


__all__ = [
    "BLOCK_SIZES",
    "GAME_NAMES",
    "JOKER_GAMES",
    "LEGACY_NAMES",
    "PIECES",
    "Piece",
    "parse_pieces",
    "pieces_size",
]
