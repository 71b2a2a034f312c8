"""What the page plays with: the person's cards, the pile and stock, the table's melds, the
legal moves in words and the hints on the hand, as JSON (:func:`seat_json`).

Everything comes from :mod:`rummy_agents.move_words`, which reads only what the person's seat
sees (their own hand, the face-up pile, the public melds) and the engine's names of the moves.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rummy_agents.move_words import (
    card_words,
    describe_moves,
    hand_hints,
    own_hand,
    table_melds,
)

JOKER = 52


def card_json(c: int) -> dict[str, Any]:
    """A card for the page: id, text (``7♥``), suit (0..3, -1 a joker), red."""
    c = int(c)
    suit = -1 if c >= JOKER else c // 13
    return {"id": c, "text": card_words(c), "suit": suit, "red": suit in (1, 2)}


def _pile_and_stock(env: Any, agent: str) -> tuple[list[int], int]:
    """The face-up discard pile (bottom first) and the stock's size at the seat's table."""
    view = env.table_view(agent)
    seat = list(env.possible_agents).index(agent)
    board = view.seats[seat].board if len(view.boards) > 1 else 0
    b = view.boards[max(board, 0)]
    return [c.face for c in b.pile], int(b.stock)


def seat_json(env: Any, agent: str, my_turn: bool) -> dict[str, Any]:
    """The person's side of the table (``agent``'s seat) as the page shows it.

    Returns:
        ``hand`` (cards), ``pile`` (cards, bottom first), ``stock`` (cards left), ``melds``
        (the melds lay-offs go on: index, owner, words, cards), ``moves`` (the legal moves in
        words, empty unless ``my_turn``) and ``hints`` (best melds, unmelded cards, points).
    """
    pile, stock = _pile_and_stock(env, agent)
    moves = describe_moves(env, agent) if my_turn else []
    hints = hand_hints(env, agent)
    return {
        "hand": [card_json(c) for c in own_hand(env, agent)],
        "pile": [card_json(c) for c in pile],
        "stock": stock,
        "melds": [
            {
                "index": m.index,
                "owner": m.owner,
                "kind": m.kind,
                "words": m.words,
                "cards": [card_json(c) for c in m.cards],
            }
            for m in table_melds(env, agent)
        ],
        "moves": [asdict(m) | {"cards": list(m.cards)} for m in moves],
        "hints": {
            "melds": [[card_json(c) for c in m] for m in hints.melds],
            "unmelded": [card_json(c) for c in hints.unmelded],
            "points": hints.points,
            "label": hints.label,
            "best_discard": hints.best_discard,
            "notes": list(hints.notes),
            "text": hints.text,
        },
    }
