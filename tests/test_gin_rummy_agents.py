"""Rule-based Gin Rummy agents: legal play in every configuration, and the simple player's rules
on stacked decks."""

import numpy as np
import pytest

from rummy_agents import GinRummyNoviceAgent, GinRummyPlannerAgent, GinRummySimpleAgent, RandomAgent
from rummy_agents.base import SeatView
from rummy_agents.gin_rummy_rules import (
    _MELD3,
    _draw_outlook,
    _feed_risk,
    completes_meld,
    defender_plan,
    hand_deadwood,
    in_best_meld,
    knocker_meld_plan,
    value_of,
)
from rummy_env import gin_rummy_v0
from rummy_env.core.cards import cards_to_mask, str_to_card
from rummy_env.core.melds import GIN_MELD_MASKS, GROUP_NOPT, GROUP_OPTS, SPREAD, SUIT_DEADWOOD
from rummy_env.encodings import gin_rummy as E
from rummy_env.testing import gin_deck

_DEADWOOD_TABLES = (SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD)

CONFIGS = {
    "default": {},
    "oklahoma": {"oklahoma": True, "oklahoma_ace_gin_only": True},
    "eleven_card_deal": {"eleven_card_deal": True},
    "fiftieth_card_action": {"fiftieth_card_action": True},
    "manual_melds": {"auto_meld": False},
    "match": {"episode": "match", "target": 50},
}


PAIRS = [
    (GinRummySimpleAgent, GinRummyNoviceAgent),
    (GinRummyNoviceAgent, RandomAgent),
    (RandomAgent, GinRummySimpleAgent),
    (GinRummySimpleAgent, GinRummySimpleAgent),
    (GinRummyNoviceAgent, GinRummySimpleAgent),
    (GinRummyPlannerAgent, GinRummySimpleAgent),
    (RandomAgent, GinRummyPlannerAgent),
]


def _phase(obs, auto_meld):
    return int(np.argmax(E.split_observation(obs["observation"], auto_meld)["phase"]))


def _play(env, agents, seed=None, options=None, log=None, cap=20_000):
    """Play one episode; every action is checked against the mask. Returns the decisions."""
    env.reset(seed=seed, options=options)
    auto = env.config.auto_meld
    views = {a: SeatView(env, a) for a in env.possible_agents}
    n = 0
    while not all(env.terminations.values()):
        name = env.agent_selection
        obs = env.observe(name)
        a = agents[name].act(obs, views[name])
        assert isinstance(a, int)
        assert obs["action_mask"][a] == 1, f"{agents[name].name} chose illegal {E.action_name(a)}"
        if log is not None:
            log.append((name, _phase(obs, auto), a))
        env.step(a)
        n += 1
        assert n < cap, "episode did not end"
    return n


@pytest.mark.parametrize("config", list(CONFIGS), ids=list(CONFIGS))
def test_agents_choose_only_masked_actions(config):
    options = CONFIGS[config]
    env = gin_rummy_v0.raw_env(**options)
    phases = set()
    fifty_taken = []
    episodes = 5 if config == "match" else 30
    for ep in range(episodes):
        a_cls, b_cls = PAIRS[ep % len(PAIRS)]
        agents = {"player_0": a_cls(seed=ep), "player_1": b_cls(seed=ep + 100)}
        log = []
        _play(env, agents, seed=ep, log=log)
        for name, ph, a in log:
            phases.add(ph)
            if ph == E.PH_FIFTY_OFFER and not isinstance(agents[name], RandomAgent):
                fifty_taken.append(a == E.TAKE_DISCARD)
    assert E.PH_DISCARD in phases
    if config == "manual_melds":
        assert {E.PH_KNOCKER_MELD, E.PH_DEFENDER_MELD} <= phases
    assert all(fifty_taken)


@pytest.mark.parametrize("cls", [GinRummySimpleAgent, GinRummyNoviceAgent, GinRummyPlannerAgent])
def test_fiftieth_card_offer_is_taken_to_knock(cls):
    """Both players draw and discard the drawn card until 2 stock cards remain; the last
    discard (7s) lets the dealer knock: it takes the 50th card and knocks."""
    non_dealer = "2c 4d 6c 8s Tc Jd Qs Ks 3c 9d"
    dealer = "As 2s 3s 4h 5h 6h 7c 7d Kh Qh"
    used = set((non_dealer + " " + dealer + " 9h 7s").split())
    filler = [c for c in (r + s for s in "cdhs" for r in "A23456789TJQK") if c not in used]
    env = _table(non_dealer, dealer, "9h", stock=filler[:28] + ["7s"], fiftieth_card_action=True)
    env.step(E.PASS)
    env.step(E.PASS)
    while True:
        seat = 0 if env.agent_selection == "player_0" else 1
        before = int(env.state_record["hands"][seat])
        env.step(E.DRAW_STOCK)
        (drawn,) = [
            c for c in range(52) if (int(env.state_record["hands"][seat]) & ~before) >> c & 1
        ]
        env.step(E.DISCARD_BASE + drawn)
        if int(env.state_record["phase"]) != E.PH_DRAW:
            break
    assert int(env.state_record["phase"]) == E.PH_FIFTY_OFFER
    agent = cls(seed=0)
    assert _act(env, agent) == E.TAKE_DISCARD
    env.step(E.TAKE_DISCARD)
    assert int(env.state_record["phase"]) == E.PH_FIFTY_KNOCK
    a = _act(env, agent)
    # Kh and Qh tie on deadwood (10): the simple player knocks with the higher rank
    assert a in (E.action_id("KNOCK[Kh]"), E.action_id("KNOCK[Qh]"))
    if cls is not GinRummyNoviceAgent:
        assert a == E.action_id("KNOCK[Kh]")
    env.step(a)
    assert env.infos["player_1"]["outcome"] == "knock"


# ---------------------------------------------------------------------------------------------
# The simple player's rules on stacked decks (player_0 is the non-dealer and acts first)


def _table(non_dealer, dealer, upcard, stock=(), **options):
    env = gin_rummy_v0.raw_env(**options)
    env.reset(options={"deck": gin_deck(non_dealer, dealer, upcard, stock), "dealer": 1})
    return env


def _act(env, agent):
    name = env.agent_selection
    a = agent.act(env.observe(name), SeatView(env, name))
    return a


DEALER = "Kc Qc Jc 9d Td 2h 3d 4c 6c 8d"


def test_simple_takes_upcard_that_completes_a_meld_then_discards_highest():
    # 7c 7d + upcard 7h make a group; the rest is unmelded
    env = _table("7c 7d As 3s 5h 9h Jh Qd Ks 2d", DEALER, "7h")
    agent = GinRummySimpleAgent(seed=0)
    a = _act(env, agent)
    assert a == E.TAKE_DISCARD
    env.step(a)
    # least deadwood: discard one of Jh Qd Ks (value 10); highest rank -> Ks
    assert _act(env, agent) == E.action_id("DISCARD[Ks]")


def test_simple_passes_upcard_that_melds_nothing():
    env = _table("7c 7d As 3s 5h 9h Jh Qd Ks 2d", DEALER, "5c")
    assert _act(env, GinRummySimpleAgent(seed=0)) == E.PASS


def test_simple_take_rules_any_meld_versus_best_meld():
    # 7d makes 7c 7d 7h, but the best arrangement keeps the run 5h-8h and leaves 7d unmelded
    hand = "5h 6h 7h 8h 7c As 3s Js Qd 2d"
    assert completes_meld(str_to_card("7d"), cards_to_mask(hand))
    assert not in_best_meld(str_to_card("7d"), cards_to_mask(hand))
    assert in_best_meld(str_to_card("9h"), cards_to_mask(hand))
    env = _table(hand, DEALER, "7d")
    assert _act(env, GinRummySimpleAgent(seed=0)) == E.TAKE_DISCARD
    assert _act(env, GinRummySimpleAgent(seed=0, take_rule="best_meld")) == E.PASS


def test_simple_draws_stock_and_discards_highest_deadwood():
    env = _table("2c 4d 6h 8s Tc Jd Qh Ks 3c 5d", DEALER, "9h", stock="Ac")
    agent = GinRummySimpleAgent(seed=0)
    env.step(_act(env, agent))  # PASS (9h melds nothing)
    env.step(E.PASS)  # dealer passes
    assert _act(env, agent) == E.DRAW_STOCK  # forced
    env.step(E.DRAW_STOCK)
    # Ac 2c 3c is a run now; Tc Jd Qh Ks all leave the least deadwood; highest rank: Ks
    assert _act(env, agent) == E.action_id("DISCARD[Ks]")


def test_simple_draws_discard_when_it_melds():
    env = _table("2c 4d 6h 8s Tc Jd Qh Ks 3c 5d", DEALER, "9h", stock="9s")
    agent = GinRummySimpleAgent(seed=0)
    env.step(E.PASS)
    env.step(E.PASS)
    env.step(E.DRAW_STOCK)
    env.step(E.action_id("DISCARD[Ks]"))  # player_0 discards Ks
    env.step(E.DRAW_STOCK)  # player_1 draws and discards Ac
    env.step(E.action_id("DISCARD[4c]"))
    # 4c fits 2c 3c 4c: the simple player takes it
    assert _act(env, agent) == E.TAKE_DISCARD


def test_simple_knocks_as_soon_as_it_can_with_least_deadwood():
    env = _table("As 2s 3s 4h 5h 6h 7c 7d 7s 9c", DEALER, "Kd", stock="2c")
    agent = GinRummySimpleAgent(seed=0)
    assert _act(env, agent) == E.PASS
    env.step(E.PASS)
    env.step(E.PASS)
    env.step(E.DRAW_STOCK)
    # knocking discarding 9c leaves 2 (2c), discarding 2c leaves 9: knock with 9c
    assert _act(env, agent) == E.action_id("KNOCK[9c]")


def test_simple_goes_gin_when_possible():
    env = _table("As 2s 3s 4h 5h 6h 7c 7d 7s 9c", DEALER, "Kd", stock="7h")
    agent = GinRummySimpleAgent(seed=0)
    env.step(E.PASS)
    env.step(E.PASS)
    env.step(E.DRAW_STOCK)
    a = _act(env, agent)
    assert a == E.action_id("KNOCK[9c]")
    env.step(a)
    assert env.infos["player_0"]["outcome"] == "gin"


def test_simple_oklahoma_respects_the_upcard_limit():
    # upcard 2d: knock limit 2. After drawing 3c the best knock leaves 3 > 2: no knock
    env = _table("As 2s 3s 4h 5h 6h 7c 7d 7s 9c", DEALER, "2d", stock="3c", oklahoma=True)
    agent = GinRummySimpleAgent(seed=0)
    env.step(E.PASS)
    env.step(E.PASS)
    env.step(E.DRAW_STOCK)
    assert _act(env, agent) == E.action_id("DISCARD[9c]")


def test_simple_eleven_card_deal_first_move_knocks():
    env = _table("As 2s 3s 4h 5h 6h 7c 7d 7s 9c Kh", DEALER, None, eleven_card_deal=True)
    assert _act(env, GinRummySimpleAgent(seed=0)) == E.action_id("KNOCK[Kh]")


# ---------------------------------------------------------------------------------------------
# The planner: one-draw lookahead over the unseen cards


def test_planner_keeps_a_run_draw_the_simple_player_breaks():
    """After drawing Ac (Ac 2c 3c melds), four tens tie on deadwood: Tc Jd Qh Kh. The simple
    player throws the highest rank, Kh, breaking Qh-Kh; the planner keeps the pair (Jh, a king
    or a queen from the stock would meld it) and throws Jd."""
    env = _table("2c 4d 6h 8s Tc Jd Qh Kh 3c 5d", DEALER, "9s", stock="Ac")
    env.step(E.PASS)
    env.step(E.PASS)
    env.step(E.DRAW_STOCK)
    assert _act(env, GinRummySimpleAgent(seed=0)) == E.action_id("DISCARD[Kh]")
    assert _act(env, GinRummyPlannerAgent(seed=0)) == E.action_id("DISCARD[Jd]")


def test_planner_takes_a_non_melding_discard_only_with_a_take_margin():
    """Ad melds nothing (no 2d 3d): the default planner passes like the simple player; with
    ``take_margin=0`` it takes it, since Ad for Ks beats the mean stock draw."""
    env = _table("2c 4d 6h 8s Tc Jd Qh Ks 3c 5d", DEALER, "Ad")
    assert _act(env, GinRummyPlannerAgent(seed=0)) == E.PASS
    assert _act(env, GinRummyPlannerAgent(seed=0, take_margin=0)) == E.TAKE_DISCARD


def test_draw_outlook_with_one_unseen_card_is_the_best_deadwood_after_drawing_it():
    hand = cards_to_mask("As 2s 3s 4h 5h 6h 7c 7d 9c Kd")
    for card in ("7s", "8c", "Qh"):
        c = str_to_card(card)
        dw = [hand_deadwood((hand | 1 << c) & ~(1 << d)) for d in range(52)]
        best = min(int(dw[d]) for d in range(52) if (hand | 1 << c) >> d & 1)
        mean, p_knock = _draw_outlook(
            np.uint64(hand), np.uint64(1 << c), 10, *_DEADWOOD_TABLES
        )  # fmt: skip
        assert mean == best
        assert p_knock == float(best <= 10)


def test_feed_risk_counts_melds_the_opponent_can_hold():
    seven = str_to_card("7h")
    known = cards_to_mask("7c 7d")
    # both other sevens of a group are known in the opponent's hand: certain
    assert _feed_risk(seven, np.uint64(0), np.uint64(known), 0.3, _MELD3) == 1.0
    # every other card of every three-card meld with 7h is dead (nothing unseen or known)
    assert _feed_risk(seven, np.uint64(0), np.uint64(0), 0.3, _MELD3) == 0.0
    # only 6h 8h unseen: one run (6h 7h 8h) with probability q * q
    unseen = cards_to_mask("6h 8h")
    assert _feed_risk(seven, np.uint64(unseen), np.uint64(0), 0.5, _MELD3) == 0.25


def _play_stacked(deck_args, **options):
    env = _table(*deck_args, **options)
    agents = {"player_0": GinRummySimpleAgent(seed=0), "player_1": GinRummySimpleAgent(seed=1)}
    log = []
    views = {a: SeatView(env, a) for a in env.possible_agents}
    while not all(env.terminations.values()):
        name = env.agent_selection
        a = agents[name].act(env.observe(name), views[name])
        log.append((name, E.action_name(a)))
        env.step(a)
    return env, log


def test_manual_melds_match_auto_meld():
    """Knocker declares a best arrangement, defender melds and lays off everything possible:
    the same score as the env's automatic arrangement."""
    deck = (
        "As 2s 3s 4h 5h 6h 7c 7d 7s 9c",
        "7h 4s 8h Kc Qc Jc 9d Td 2h 3d",
        "Kd",
        "2c",
    )
    env_m, log = _play_stacked(deck, auto_meld=False)
    env_a, _ = _play_stacked(deck)
    names = [n for _, n in log]
    assert "KNOCK[9c]" in names
    k = names.index("KNOCK[9c]")
    melds = names[k + 1 : k + 4]
    assert all(m.startswith("MELD[") for m in melds) and names[k + 4] == "END_MELDING"
    defender = names[k + 5 :]
    assert "MELD[run Jc Qc Kc]" in defender
    laid = {n.split(",")[0] for n in defender if n.startswith("LAYOFF[")}
    assert laid == {"LAYOFF[4s", "LAYOFF[7h", "LAYOFF[8h"}
    assert defender[-1] == "END_MELDING"
    for p in ("player_0", "player_1"):
        assert env_m.infos[p]["hand_points"] == env_a.infos[p]["hand_points"]
        assert env_m.infos[p]["deadwood"] == env_a.infos[p]["deadwood"]
    assert env_m.infos["player_0"]["hand_points"] == 24 - 2


# ---------------------------------------------------------------------------------------------
# Helpers against brute force


def _brute_best(hand: int) -> int:
    cands = [int(m) for m in GIN_MELD_MASKS if int(m) & hand == int(m)]
    best = value_of(hand)

    def rec(i, used):
        nonlocal best
        best = min(best, value_of(hand & ~used))
        for j in range(i, len(cands)):
            if not cands[j] & used:
                rec(j + 1, used | cands[j])

    rec(0, 0)
    return best


def test_knocker_plan_is_a_minimum_deadwood_arrangement():
    rng = np.random.default_rng(0)
    for _ in range(200):
        cards = rng.choice(52, size=10, replace=False)
        hand = sum(1 << int(c) for c in cards)
        plan = knocker_meld_plan(hand)
        used = 0
        for t in plan:
            m = int(GIN_MELD_MASKS[t])
            assert m & hand == m and not m & used
            used |= m
        assert len(plan) <= E.MAX_MELD_SLOTS
        assert value_of(hand & ~used) == hand_deadwood(hand) == _brute_best(hand)


def test_defender_plan_never_worse_than_melding_alone():
    rng = np.random.default_rng(1)
    for _ in range(100):
        cards = rng.permutation(52)
        knocker = sum(1 << int(c) for c in cards[:10])
        defender = sum(1 << int(c) for c in cards[10:20])
        table = [int(GIN_MELD_MASKS[t]) for t in knocker_meld_plan(knocker)]
        _, lay, dw = defender_plan(defender, table, gin=False)
        assert dw <= hand_deadwood(defender)
        _, lay_gin, dw_gin = defender_plan(defender, table, gin=True)
        assert lay_gin == [] and dw_gin == hand_deadwood(defender)


@pytest.mark.parametrize("options", [{}, {"auto_meld": False}], ids=["auto", "manual"])
def test_act_batch_plays_the_vector_env(options):
    import rummy_env

    venv = rummy_env.make_vec("gin_rummy", 8, seed=0, **options)
    obs, _ = venv.reset()
    agents = [GinRummySimpleAgent(seed=0), GinRummyNoviceAgent(seed=1)]
    finished = 0
    for t in range(300):
        a = agents[t % 2].act_batch(obs["observation"], obs["action_mask"])
        assert (obs["action_mask"][np.arange(8), a] == 1).all()
        obs, _, term, _, _ = venv.step(a)
        finished += int(term.sum())
    assert finished > 0
