"""The words of moves (:mod:`rummy_agents.move_words`) over every legal move of many random
positions of every game and player count: each is distinct, non-empty, no action name, and
names no card the seat cannot see; the hand hints hold the seat's own hand."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rummy_agents.arena.play import make_env
from rummy_agents.move_words import (
    JOKER,
    card_words,
    describe_moves,
    hand_hints,
    own_hand,
    table_melds,
)
from rummy_env.render.table import HIDDEN

TABLES = [
    ("gin_rummy", {}),
    ("gin_rummy", {"auto_meld": False}),
    ("gin_rummy", {"num_players": 3}),
    ("gin_rummy", {"num_players": 4}),
    ("five_hundred_rum", {}),
    ("five_hundred_rum", {"num_players": 5}),
    ("five_hundred_rum", {"values_5_10_15": True, "num_players": 3}),
    ("rummy51", {}),
    ("rummy51", {"num_players": 4}),
]
NAME = re.compile(r"[A-Z]{2,}_|\[|\]")  # DRAW_STOCK, DISCARD[..]: an action name
CARD = re.compile(r"(10|[A2-9JQK])([♣♦♥♠])")


def over(env) -> bool:
    return all(env.terminations[a] or env.truncations[a] for a in env.possible_agents)


def seen_cards(env, agent: str) -> set[int]:
    """Every card face the seat sees: its view of the table."""
    view = env.table_view(agent)
    faces = {c.face for s in view.seats for g in s.groups for c in g}
    faces |= {c.face for b in view.boards for c in b.pile}
    faces |= {c.face for m in view.melds for c in m.cards}
    faces |= set(own_hand(env, agent))
    return faces - {HIDDEN}


def named_cards(text: str) -> set[int]:
    ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    text = re.sub(r"JK\([^)]*\)", "JK", text)  # what a joker stands for is no card seen
    return {"♣♦♥♠".index(s) * 13 + ranks.index(r) for r, s in CARD.findall(text)}


def play_positions(game: str, options: dict, seed: int, steps: int = 250):
    """Positions of a game played by a random policy that prefers melds and lay-offs (so the
    meld, lay-off and retrieval moves come up), each yielded before its move."""
    env = make_env(game, options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if over(env):
            return
        agent = env.agent_selection
        yield env, agent
        legal = np.flatnonzero(env.observe(agent)["action_mask"])
        names = [env.action_name(int(a)) for a in legal]
        keen = [a for a, n in zip(legal, names, strict=True)
                if n.startswith(("MELD", "LAYOFF", "RETRIEVE", "KNOCK"))]  # fmt: skip
        pick = keen if keen and rng.random() < 0.8 else list(legal)
        env.step(int(rng.choice(pick)))


@pytest.mark.parametrize(("game", "options"), TABLES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_legal_move_has_distinct_words_of_seen_cards(game, options, seed):
    kinds = set()
    for env, agent in play_positions(game, options, seed):
        moves = describe_moves(env, agent)
        legal = [int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]
        assert [m.action for m in moves] == legal
        texts = [m.text for m in moves]
        assert all(texts) and len(set(texts)) == len(texts), texts
        seen = seen_cards(env, agent)
        hand = own_hand(env, agent)
        melds = table_melds(env, agent)
        for m in moves:
            kinds.add(m.kind)
            assert m.name == env.action_name(m.action)
            assert not NAME.search(m.text), m.text
            assert named_cards(m.text) <= seen, (m.text, named_cards(m.text) - seen)
            for c in m.cards:  # the cards a move plays are the hand's
                assert c in hand or (m.kind == "meld" and c == JOKER and JOKER in hand)
            if m.kind in ("layoff", "joker", "retrieve"):
                assert 0 <= m.meld < len(melds) and f"meld {m.meld}" in m.text
        hints = hand_hints(env, agent)
        assert sorted(hints.hand) == sorted(hand)
        if hand:
            used = sorted([c for meld in hints.melds for c in meld] + list(hints.unmelded))
            assert used == sorted(hand)  # the melds and the rest are the hand, each card once
            assert hints.points is not None and hints.points >= 0
            assert named_cards(hints.text) <= set(hand)
    assert {"draw", "discard"} <= kinds


def test_the_words_of_some_moves():
    env = make_env("gin_rummy", {})
    env.reset(seed=0)
    agent = env.agent_selection
    texts = [m.text for m in describe_moves(env, agent)]
    assert texts[0].startswith("Take the upcard ") or texts[0] == "Draw from the stock"
    assert card_words(9) == "10♣" and card_words(51) == "K♠" and card_words(52) == "JK"
    with pytest.raises(ValueError, match="agent must be one of"):
        describe_moves(env, "player_9")


def test_gin_knock_and_discard_words_give_the_deadwood():
    from rummy_agents.arena.registry import make_agent
    from rummy_agents.base import SeatView

    env = make_env("gin_rummy", {})
    env.reset(seed=7)
    agents = {a: make_agent("simple", i, "gin_rummy") for i, a in enumerate(env.possible_agents)}
    while not over(env):
        agent = env.agent_selection
        moves = describe_moves(env, agent)
        knocks = [m for m in moves if m.kind == "knock"]
        if knocks:
            assert all(re.match(r"(Knock with \d+ deadwood|Go gin), discarding the", m.text)
                       for m in knocks)  # fmt: skip
            discards = [m for m in moves if m.kind == "discard"]
            assert all(re.search(r"\(deadwood \d+\)$", m.text) for m in discards)
            return
        env.step(int(agents[agent].act(env.observe(agent), SeatView(env, agent))))
    pytest.fail("no knock came up")
