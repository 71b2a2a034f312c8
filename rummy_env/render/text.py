"""Text rendering of game records (``render_mode="ansi"``)."""

from __future__ import annotations

import numpy as np

from rummy_env.core.cards import cards_to_str, mask_to_cards
from rummy_env.core.melds import GIN_VALUES
from rummy_env.encodings import gin_rummy as E


def _mask_str(mask: int) -> str:
    cards = sorted(mask_to_cards(int(mask)), key=lambda c: (c // 13, c % 13))
    return cards_to_str(cards) if cards else "-"


def render_gin(rec: np.void, agents: list[str], match: bool = True) -> str:
    """The table of one Gin Rummy game as text (all hands shown: this is the referee's view);
    ``match=False`` leaves out the match (hand count, scores), for a table inside a 3- or
    4-player match.
    """
    lines = []
    phase = E.PHASE_NAMES[int(rec["phase"])]
    count = f"hand {int(rec['hands_played']) + (0 if rec['done'] else 1)} | " if match else ""
    lines.append(
        f"Gin Rummy | {count}"
        f"dealer {agents[int(rec['dealer'])]} | phase {phase} | "
        f"knock limit {int(rec['knock_limit'])}"
        + (" | spades double" if rec["spade_double"] else "")
    )
    pile = [int(c) for c in rec["pile"][: int(rec["pile_n"])]]
    lines.append(
        f"stock {52 - int(rec['deck_pos'])} cards | discard pile (bottom..top): "
        f"{cards_to_str(pile) if pile else '-'}"
    )
    for p, name in enumerate(agents):
        hand = int(rec["hands"][p])
        dw = sum(int(GIN_VALUES[c]) for c in mask_to_cards(hand))
        marker = " <- to act" if int(rec["cur"]) == p and not rec["done"] else ""
        score = f" | score {int(rec['scores'][p])} boxes {int(rec['boxes'][p])}" if match else ""
        lines.append(f"{name}: {_mask_str(hand)}  (unmelded value {dw}){score}{marker}")
        n = int(rec["n_melds"][p])
        if n:
            melds = " | ".join(_mask_str(int(m)) for m in rec["melds"][p][:n])
            lines.append(f"    melds: {melds}")
    if int(rec["knocker"]) >= 0:
        lines.append(f"{agents[int(rec['knocker'])]} knocked" + (" (gin)" if rec["gin"] else ""))
    if rec["outcome"]:
        pts = ", ".join(f"{a} {int(rec['hand_points'][i])}" for i, a in enumerate(agents))
        lines.append(f"last hand: {E.OUTCOME_NAMES[int(rec['outcome'])]} ({pts})")
    if rec["done"] and int(rec["totals"].sum()):
        tot = ", ".join(f"{a} {int(rec['totals'][i])}" for i, a in enumerate(agents))
        lines.append(f"match totals: {tot}")
    return "\n".join(lines)


def meld_text(rec: np.void, m: int) -> str:
    """A table meld slot of a joker game as text (jokers shown as JK where they stand)."""
    from rummy_env.core.cards import card_to_str
    from rummy_env.render.table import meld_cards

    return " ".join(card_to_str(c.face) for c in meld_cards(rec, m))


def render_joker_table(rec: np.void, agents: list[str], header: str, status) -> str:
    """The table of a joker game (500 Rum, Rummy 51) as text, all hands shown (the referee's
    view): ``header``, the pile, the melds with their owners, and each hand followed by
    ``status(q)``.
    """
    from rummy_env.core.cards import card_to_str

    lines = [header]
    pile = [card_to_str(int(c)) for c in rec["pile"][: int(rec["pile_n"])]]
    lines.append("discard pile (bottom..top): " + (" ".join(pile) or "-"))
    for m in range(int(rec["n_melds"])):
        lines.append(f"  meld {m} ({agents[int(rec['m_owner'][m])]}): {meld_text(rec, m)}")
    for q, name in enumerate(agents):
        cards = [card_to_str(c) for c in range(53) for _ in range(int(rec["hands"][q][c]))]
        marker = " <- to act" if int(rec["cur"]) == q and not rec["done"] else ""
        lines.append(f"{name}: {' '.join(cards) or '-'} | {status(q)}{marker}")
    return "\n".join(lines)


def render_gin_multi(rec: np.void, agents: list[str]) -> str:
    """A 3- or 4-player Gin Rummy match as text: the match line, then each table's hand as
    ``render_gin`` shows it (its seats named after the players; all hands shown).
    """
    n_p = len(agents)
    scores = ", ".join(
        f"{a} {int(rec['scores'][q])} ({int(rec['boxes'][q])} boxes)" for q, a in enumerate(agents)
    )
    if n_p == 3:
        head = f"Gin Rummy, 3 players | {agents[int(rec['dealer'])]} dealt and sits out"
    else:
        head = f"Gin Rummy, 4 players (teams 0+2, 1+3) | round {int(rec['round']) + 1}"
        scores = (
            f"team {agents[0]}+{agents[2]} {int(rec['scores'][0])} ({int(rec['boxes'][0])} "
            f"boxes), team {agents[1]}+{agents[3]} {int(rec['scores'][1])} "
            f"({int(rec['boxes'][1])} boxes)"
        )
    lines = [f"{head} | scores: {scores}"]
    for t in range(rec["boards"].shape[0]):
        seats = [agents[int(s)] for s in rec["seat"][t]]
        turn = " (to act)" if int(rec["turn"]) == t and not rec["done"] else ""
        lines.append(f"-- table {t}: {seats[0]} vs {seats[1]}{turn}")
        lines.append(render_gin(rec["boards"][t], seats, match=False))
    if rec["done"] and int(np.abs(rec["settle"]).sum()):
        lines.append("settlement: " + ", ".join(
            f"{a} {int(rec['settle'][q]):+d}" for q, a in enumerate(agents)
        ))  # fmt: skip
    return "\n".join(lines)
