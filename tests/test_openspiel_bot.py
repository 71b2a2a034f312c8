"""The OpenSpiel simple-bot bridge: in sync with our env, legal, and the real bot's choices.

``OpenSpielSimpleBot`` rebuilds an OpenSpiel state from its own seat's observations only (the
opponent's hidden cards are placeholders). Run in ``strict`` mode it raises as soon as an
observation is not exactly what its OpenSpiel state shows, so playing whole games checks the
sync. The reference test mirrors the *real* deal in a second OpenSpiel state (every card known)
and checks that the bridge's choice is the real bot's choice at every decision: the simple bot
reads only its own observation tensor, so the placeholders never change what it does.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rummy_agents.base import SeatView
from rummy_agents.gin_rummy_rules import GinRummySimpleAgent
from rummy_agents.random_agent import RandomAgent
from rummy_env import gin_rummy_v0
from rummy_env.core import mask_to_cards, str_to_card
from rummy_env.encodings import gin_rummy as E

pyspiel = pytest.importorskip("pyspiel")

from rummy_agents.openspiel_bot import (  # noqa: E402 - after the importorskip
    OS_TO_OUR,
    OUR_TO_OS,
    OpenSpielSimpleBot,
    PublicView,
)

gr = pyspiel.gin_rummy

CONFIGS = {
    "standard": {},
    "fiftieth": {"fiftieth_card_action": True},
    "allow_taken_discard": {"allow_discard_of_drawn_upcard": True},
    "oklahoma": {"oklahoma": True, "oklahoma_ace_gin_only": True},
    "knock_7": {"knock_limit": 7},
    "match": {"episode": "match", "target": 50},
    "match_fiftieth": {"episode": "match", "target": 50, "fiftieth_card_action": True},
}


def _opponent(kind: str, seed: int):
    if kind == "random":
        return RandomAgent(seed=seed)
    if kind == "simple":
        return GinRummySimpleAgent(seed=seed)
    return OpenSpielSimpleBot(strict=True)


def _play(env, agents, seed: int) -> list[int]:
    env.reset(seed=seed)
    views = {a: SeatView(env, a) for a in env.possible_agents}
    actions = []
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = agents[env.possible_agents.index(name)].act(obs, views[name])
        assert obs["action_mask"][a] == 1, E.action_name(a)
        actions.append(int(a))
        env.step(a)
    return actions


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_bridge_stays_in_sync(name: str) -> None:
    env = gin_rummy_v0.env(**CONFIGS[name])
    bots = []
    for g in range(6 if name.startswith("match") else 12):
        kind = ("random", "simple", "bot")[g % 3]
        bot = OpenSpielSimpleBot(strict=True)
        bots.append(bot)
        opp = _opponent(kind, g)
        if kind == "bot":
            bots.append(opp)
        agents = [bot, opp] if g % 2 == 0 else [opp, bot]
        _play(env, agents, 1000 * len(name) + g)
    total = Counter()
    for b in bots:
        total.update(b.departures)
    assert total["desync"] == 0 and total["openspiel_over"] == 0, total
    assert sum(b.decisions for b in bots) > 100


def test_public_view_decodes_the_pile_in_order() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=3)
    agents = [GinRummySimpleAgent(seed=0), GinRummySimpleAgent(seed=1)]
    for _ in range(30):
        a = env.agent_selection
        rec = env.state_record
        if rec["done"]:
            break
        obs = env.observe(a)
        pv = PublicView.parse(obs)
        p = env.possible_agents.index(a)
        assert pv.pile == tuple(int(c) for c in rec["pile"][: int(rec["pile_n"])])
        assert pv.hand == frozenset(mask_to_cards(int(rec["hands"][p])))
        assert pv.stock == 52 - int(rec["deck_pos"])
        assert pv.dealer == (int(rec["dealer"]) == p)
        env.step(agents[p].act(obs, SeatView(env, a)))


# --------------------------------------------------------------------------------------------
# the real deal, mirrored card for card


class _Mirror:
    """An OpenSpiel state fed the real deal and every move of our env (all cards known)."""

    def __init__(self, env, game) -> None:
        rec = env.state_record
        deck = [int(c) for c in rec["deck"]]
        self.dealer = int(rec["dealer"])
        self.os_player = {1 - self.dealer: 0, self.dealer: 1}
        self.st = game.new_initial_state()
        for c in deck[0:20:2] + deck[1:20:2] + [deck[20]]:
            self.st.apply_action(int(OUR_TO_OS[c]))
        self.alive = True

    def play(self, env, a: int) -> None:
        """Apply our action ``a`` (just stepped in ``env``) to the OpenSpiel state."""
        if not self.alive:
            return
        rec = env.state_record
        st = self.st
        phase = st.current_phase()
        if a == E.DRAW_STOCK:
            st.apply_action(gr.DRAW_STOCK_ACTION)
            st.apply_action(int(OUR_TO_OS[int(rec["deck"][int(rec["deck_pos"]) - 1])]))
        elif a == E.TAKE_DISCARD:
            st.apply_action(gr.KNOCK_ACTION if phase == gr.Phase.WALL else gr.DRAW_UPCARD_ACTION)
        elif a == E.PASS:
            st.apply_action(gr.PASS_ACTION)
        elif a < E.KNOCK_BASE:
            st.apply_action(int(OUR_TO_OS[a - E.DISCARD_BASE]))
        else:
            if phase == gr.Phase.DISCARD:
                st.apply_action(gr.KNOCK_ACTION)
            st.apply_action(int(OUR_TO_OS[a - E.KNOCK_BASE]))
            self.alive = False
        if st.is_terminal():
            self.alive = False


def _reference_action(bot, st) -> int | None:
    """The real bot's choice on the real state, in our action ids."""
    a = int(bot.step(st))
    phase = st.current_phase()
    if phase in (gr.Phase.FIRST_UPCARD, gr.Phase.DRAW):
        return {
            gr.DRAW_UPCARD_ACTION: E.TAKE_DISCARD,
            gr.DRAW_STOCK_ACTION: E.DRAW_STOCK,
            gr.PASS_ACTION: E.PASS,
        }[a]
    if phase == gr.Phase.WALL:
        return E.TAKE_DISCARD if a == gr.KNOCK_ACTION else E.PASS
    if phase == gr.Phase.KNOCK:
        return E.KNOCK_BASE + int(OS_TO_OUR[a])
    if a == gr.KNOCK_ACTION:
        after = st.clone()
        after.apply_action(a)
        return E.KNOCK_BASE + int(OS_TO_OUR[int(bot.step(after))])
    return E.DISCARD_BASE + int(OS_TO_OUR[a])


@pytest.mark.parametrize("name", ["standard", "fiftieth", "oklahoma"])
def test_bridge_plays_exactly_the_real_bot(name: str) -> None:
    options = CONFIGS[name]
    env = gin_rummy_v0.raw_env(**options)
    compared = 0
    for g in range(20):
        env.reset(seed=500 + g)
        bridge = OpenSpielSimpleBot(strict=True)
        bot_seat = g % 2
        opp = GinRummySimpleAgent(seed=g) if g % 4 < 2 else RandomAgent(seed=g)
        game = pyspiel.load_game(
            "gin_rummy",
            {
                "oklahoma": bool(options.get("oklahoma", False)),
                "gin_bonus": 20,
                "undercut_bonus": 10,
            },
        )
        mirror = _Mirror(env, game)
        reference = pyspiel.make_simple_gin_rummy_bot(
            game.get_parameters(), mirror.os_player[bot_seat]
        )
        while not env.state_record["done"]:
            agent = env.agent_selection
            p = env.possible_agents.index(agent)
            obs = env.observe(agent)
            view = SeatView(env, agent)
            if p == bot_seat:
                a = bridge.act(obs, view)
                if mirror.alive:
                    assert mirror.st.current_player() == mirror.os_player[p]
                    ref = _reference_action(reference, mirror.st)
                    assert a == ref, (g, E.action_name(a), E.action_name(ref))
                    compared += 1
            else:
                a = opp.act(obs, view)
            assert obs["action_mask"][a] == 1
            env.step(a)
            mirror.play(env, a)
        assert not bridge.departures, bridge.departures
    assert compared > 150


def _stacked(nondealer: str, dealer: str, upcard: str) -> list[int]:
    nd = [str_to_card(c) for c in nondealer.split()]
    de = [str_to_card(c) for c in dealer.split()]
    up = str_to_card(upcard)
    rest = [c for c in range(52) if c not in set(nd) | set(de) | {up}]
    deck = []
    for a, b in zip(nd, de, strict=True):
        deck += [a, b]
    return deck + [up] + rest


def _bridge_takes_the_upcard(deck: list[int], **options):
    """Deal ``deck`` (player_1 deals), let the strict bridge in seat 0 take the upcard (asserted)
    and choose its next move; returns ``(env, bridge, view, move)``."""
    env = gin_rummy_v0.raw_env(**options)
    env.reset(options={"deck": deck, "dealer": 1})
    bridge = OpenSpielSimpleBot(strict=True)
    view = SeatView(env, "player_0")
    assert bridge.act(env.observe("player_0"), view) == E.TAKE_DISCARD
    env.step(E.TAKE_DISCARD)
    return env, bridge, view, bridge.act(env.observe("player_0"), view)


@pytest.mark.parametrize("allow", [False, True])
def test_knock_with_the_card_just_taken(allow: bool) -> None:
    """The simple bot takes a Kd upcard that lets it knock and knocks with that very Kd.

    Our default rules forbid discarding it: the bridge knocks with Qs instead (deadwood 10 is
    within the limit) and counts the departure; with the variant allowing it, nothing changes.
    """
    deck = _stacked("Ac 2c 3c 4d 4h 4s 7h 8h 9h Qs", "5c 6c 9c Tc 2d 3d 6d 8d 9d Td", "Kd")
    env, bridge, _, a = _bridge_takes_the_upcard(deck, allow_discard_of_drawn_upcard=allow)
    if allow:
        assert a == E.KNOCK_BASE + str_to_card("Kd")
        assert not bridge.departures
    else:
        assert a == E.KNOCK_BASE + str_to_card("Qs")
        assert bridge.departures["discard_taken_card"] == 1
    env.step(a)
    assert env.state_record["done"]


def test_knock_only_with_the_card_just_taken_becomes_a_discard_and_play_goes_on() -> None:
    """The bot takes a 7c upcard because discarding it would let it knock (Ad 2h 2s 3s = 8);
    our rules forbid that discard and no other knock is legal (deadwood 12 at best), so the
    bridge discards instead. The tracked OpenSpiel history must hold that discard, not the
    bot's knock, and the bot must forget the meld actions it queued for the knock: at its next
    decision it draws, in strict mode, in step with our env.
    """
    deck = _stacked("Ad 2h 4h 5h 6h 2s 3s Ts Js Qs", "Kc Kd Kh 9c 9d 8h 8s 5d Jd Qc", "7c")
    env, bridge, view, a = _bridge_takes_the_upcard(deck)
    assert E.DISCARD_BASE <= a < E.KNOCK_BASE and a != E.DISCARD_BASE + str_to_card("7c")
    assert bridge.departures["discard_taken_card"] == 1
    env.step(a)
    env.step(E.DRAW_STOCK)  # the opponent draws and throws its first legal discard
    mask = env.observe("player_1")["action_mask"]
    env.step(int(np.flatnonzero(mask[E.DISCARD_BASE : E.KNOCK_BASE])[0]) + E.DISCARD_BASE)
    b = bridge.act(env.observe("player_0"), view)
    assert b in (E.TAKE_DISCARD, E.DRAW_STOCK)
    assert bridge.departures["desync"] == 0


def test_unsupported_configs_are_refused() -> None:
    for options in ({"eleven_card_deal": True}, {"auto_meld": False}):
        env = gin_rummy_v0.raw_env(**options)
        env.reset(seed=0)
        a = env.agent_selection
        with pytest.raises(ValueError):
            OpenSpielSimpleBot().act(env.observe(a), SeatView(env, a))


def test_bot_beats_random() -> None:
    env = gin_rummy_v0.raw_env()
    wins = 0
    for g in range(10):
        bot = OpenSpielSimpleBot(strict=True)
        agents = [bot, RandomAgent(seed=g)] if g % 2 == 0 else [RandomAgent(seed=g), bot]
        _play(env, agents, 77 + g)
        pts = env.state_record["hand_points"]
        seat = agents.index(bot)
        wins += int(pts[seat] > pts[1 - seat])
    assert wins >= 9
    assert np.isfinite(wins)
