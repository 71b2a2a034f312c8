"""Rummy 51 greedy agent: only masked actions over random rules (and its documented rules checked
at every decision), opening, building, joker retrieval and discards on stacked decks,
determinism, and the arena on Rummy 51 (per-game agent names, penalty scoring, drawn hands).
"""

from __future__ import annotations

import csv
from typing import Any

import numpy as np
import pytest

from rummy_agents.arena.play import game_result, play_game
from rummy_agents.arena.registry import make_agent
from rummy_agents.base import SeatView
from rummy_agents.cli import main
from rummy_agents.five_hundred_rum_greedy import FiveHundredRumGreedyAgent
from rummy_agents.random_agent import RandomAgent
from rummy_agents.rummy51_greedy import Rummy51GreedyAgent, links, near
from rummy_env import rummy51_v1
from rummy_env.core.cards import parse_cards
from rummy_env.envs.five_hundred_rum import meld_text
from rummy_env.testing import joker_deck

# a hand that holds no meld and lays off on nothing below (penalty 86)
LOOSE = "2c 4d 6h 8s Tc Qd 3s 5c 7d 9h Jc Kh 2h"


def deal(hands, upcard="4s", stock=(), dealer=None, **options):
    """A raw env dealt from a stacked deck (the last seat deals, so player_0 acts first)."""
    env = rummy51_v1.raw_env(num_players=len(hands), **options)
    dealer = len(hands) - 1 if dealer is None else dealer
    deck = joker_deck(hands, upcard, stock, num_decks=2, jokers=4, dealer=dealer)
    env.reset(options={"deck": deck, "dealer": dealer})
    return env


def play(env, *names):
    """Step the named actions in order (each must be legal)."""
    lay = env.layout
    table = {lay.action_name(a): a for a in range(lay.num_actions)}
    for n in names:
        assert env.observe(env.agent_selection)["action_mask"][table[n]] == 1, f"{n} illegal"
        env.step(table[n])


def greedy_turn(env, agent=None) -> list[str]:
    """Let the greedy agent play the whole turn of the player to act; the action names."""
    agent = agent or Rummy51GreedyAgent(seed=0)
    name = env.agent_selection
    out: list[str] = []
    while env.agent_selection == name and not env.terminations[name]:
        obs = env.observe(name)
        a = agent.act(obs, SeatView(env, name))
        assert obs["action_mask"][a] == 1
        out.append(env.layout.action_name(a))
        env.step(a)
    return out


class PolicyAgent:
    """The compiled Rummy 51 rollout policy (``rummy_agents.joker_rollouts``) as an agent: it plays
    on a
    world sampled from its view (its own moves depend only on what it sees).
    """

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def act(self, observation, view) -> int:
        from rummy_agents.ismcts import joker_params as _joker_params
        from rummy_agents.joker_rollouts import best_action

        world = view.sample_worlds(1, self.rng)
        lay, vals, pts = _joker_params(world)
        return int(best_action(world.states[0], world.masks[0], lay, vals, pts))


def policy_turn(env) -> list[str]:
    """Let :class:`PolicyAgent` play the whole turn of the player to act; the action names."""
    return greedy_turn(env, PolicyAgent())


# greedy and the compiled policy on the same rulebook situations
TURNS = pytest.mark.parametrize("turn", [greedy_turn, policy_turn], ids=["greedy", "policy"])


def melds(env) -> list[str]:
    rec = env.state_record
    return [meld_text(rec, m) for m in range(int(rec["n_melds"]))]


def hand(env, p) -> list[int]:
    rec = env.state_record
    return [c for c in range(53) for _ in range(int(rec["hands"][p][c]))]


def cards(text: str) -> list[int]:
    return sorted(parse_cards(text))


# -- legality and the documented rules over random options --------------------------------------


def random_options(rng: np.random.Generator) -> dict:
    opts = {
        "num_players": int(rng.integers(2, 7)),
        "opening_threshold": int(rng.choice([51, 51, 30, 80])),
        "max_reshuffles": int(rng.integers(0, 3)),
        "retrieved_joker_must_be_melded": bool(rng.random() < 0.4),
        "discard_draw_requires_opening": bool(rng.random() < 0.4),
        "reward": str(rng.choice(["penalty", "zero_sum", "normalized"])),
        "max_steps": 800,
    }
    if rng.random() < 0.25:
        opts.update(episode="match", elimination=40)
    return opts


def test_greedy_only_chooses_masked_actions_and_follows_its_rules_over_random_options():
    """Every decision is masked; whenever the mask allows it the agent opens (a meld before
    opening), retrieves a joker, and melds or lays off before it discards.
    """
    rng = np.random.default_rng(51)
    seen = {"open": 0, "retrieve": 0, "build": 0}
    for g in range(24):
        opts = random_options(rng)
        env = rummy51_v1.raw_env(**opts)
        lay = env.layout
        env.reset(seed=g)
        p = opts["num_players"]
        agents = [Rummy51GreedyAgent(seed=10 * g + q) for q in range(p)]
        agents[int(rng.integers(p))] = RandomAgent(seed=g)  # a random seat varies the tables
        views = {n: SeatView(env, n) for n in env.possible_agents}
        while not any(env.terminations.values()) and not any(env.truncations.values()):
            name = env.agent_selection
            obs = env.observe(name)
            agent = agents[env.possible_agents.index(name)]
            a = agent.act(obs, views[name])
            assert obs["action_mask"][a] == 1, (opts, lay.action_name(a))
            parts = lay.split(obs["observation"])
            if isinstance(agent, Rummy51GreedyAgent) and parts["phase"][1] > 0.5:
                legal = np.flatnonzero(obs["action_mask"])
                melds_ok = legal[(legal >= lay.meld_base) & (legal < lay.layoff_base)]
                retrieve_ok = legal[(legal >= lay.retrieve_base) & (legal < lay.discard_base)]
                place_ok = legal[(legal >= lay.meld_base) & (legal < lay.discard_base)]
                if parts["opened"][0] < 0.5 and melds_ok.size:
                    seen["open"] += 1
                    assert lay.meld_base <= a < lay.layoff_base, (opts, lay.action_name(a))
                if retrieve_ok.size:
                    seen["retrieve"] += 1
                    assert lay.retrieve_base <= a < lay.discard_base, (opts, lay.action_name(a))
                if place_ok.size:
                    seen["build"] += 1
                    assert a < lay.discard_base, (opts, lay.action_name(a))
            env.step(a)
    assert min(seen.values()) > 0, seen


@pytest.mark.parametrize("players", [2, 6])
def test_greedy_without_a_view_infers_the_layout(players):
    env = rummy51_v1.raw_env(num_players=players)
    env.reset(seed=3)
    agent = Rummy51GreedyAgent(seed=0)
    for _ in range(60):
        name = env.agent_selection
        if env.terminations[name]:
            break
        obs = env.observe(name)
        a = agent.act(obs)
        assert obs["action_mask"][a] == 1
        env.step(a)


def test_greedy_is_deterministic_given_a_seed():
    def game(seed: int) -> tuple[list[int], list[int]]:
        env = rummy51_v1.raw_env(num_players=3)
        env.reset(seed=11)
        agents = {n: Rummy51GreedyAgent(seed=seed + i) for i, n in enumerate(env.agents)}
        out = []
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            a = None if term or trunc else agents[name].act(obs, SeatView(env, name))
            out.append(a)
            env.step(a)
        return out, [int(x) for x in env.state_record["hand_penalty"]]

    first = game(7)
    assert len(first[0]) > 10
    assert game(7) == first


def test_greedy_beats_random_in_hands():
    env = rummy51_v1.raw_env()
    wins = 0
    for k in range(6):
        agents = [Rummy51GreedyAgent(seed=k), RandomAgent(seed=k)]
        seat = k % 2
        if seat:
            agents.reverse()
        rec = play_game(env, agents, seed=k, max_decisions=5000)
        wins += env.infos["player_0"]["hand_winner"] == seat and not rec["truncated"]
    assert wins >= 5


# -- opening -------------------------------------------------------------------------------------


def test_greedy_opens_when_it_can_laying_every_meld_and_the_joker():
    # A A A (33) + 5-6-7 c (18) = 51; the joker then goes on the table too
    p0 = "Ac Ad Ah JK 5c 6c 7c 2d 3s 4h 8d 9s Qd"
    env = deal([p0, LOOSE], upcard="Kh", stock="2s")
    acts = greedy_turn(env)
    assert acts[0] == "DRAW_STOCK"
    assert {"MELD[group A: c d h]", "MELD[run c 5..7]"} <= set(acts)
    assert acts[-1].startswith("DISCARD")
    rec = env.state_record
    assert rec["opened"][0]
    left = hand(env, 0)
    assert 52 not in left and not any(c % 13 == 0 for c in left)  # no joker, no ace kept
    assert len(left) <= 14 - 7 - 1


def test_greedy_does_not_open_short_and_keeps_its_melds():
    # K K K (30) and 2-3-4-5-6 of clubs (20): 50 < 51, so no meld; it discards a loose card
    p0 = "Ks Kh Kd 2c 3c 4c 5c 6c 9h Js 8d Ts Qd"
    env = deal([p0, LOOSE], stock="2s")
    acts = greedy_turn(env)
    assert acts[0] == "DRAW_STOCK" and len(acts) == 2
    # the 9h: the highest card next to no other (Js Ts pair up, Qd sits by the Kd)
    assert acts[1] == "DISCARD[9h]"
    assert not env.state_record["opened"][0] and int(env.state_record["n_melds"]) == 0
    # with a threshold of 50 the same hand opens
    env = deal([p0, LOOSE], stock="2s", opening_threshold=50)
    acts = greedy_turn(env)
    assert {"MELD[group K: d h s]", "MELD[run c 2..6]"} <= set(acts)


@TURNS
def test_takes_the_upcard_that_makes_the_opening_and_leaves_a_useless_one(turn):
    # Q Q + upcard Qs (30) and 9-10-J of hearts (29)
    p0 = "Qc Qd 9h Th Jh 2d 5s 7c 3c 4h 8d 6s Ac"
    env = deal([p0, LOOSE], upcard="Qs", stock="2s")
    acts = turn(env)
    assert acts[0] == "TAKE_DISCARD" and "MELD[group Q: c d s]" in acts
    assert env.state_record["opened"][0]
    env = deal([p0, LOOSE], upcard="5d", stock="2s")
    assert turn(env)[0] == "DRAW_STOCK"


@pytest.mark.parametrize("variant", [False, True])
def test_greedy_opening_under_discard_draw_requires_opening(variant):
    p0 = "Qc Qd 9h Th Jh 2d 5s 7c 3c 4h 8d 6s Ac"
    env = deal([p0, LOOSE], upcard="Qs", stock="2s", discard_draw_requires_opening=variant)
    acts = greedy_turn(env)
    assert acts[0] == "TAKE_DISCARD" and env.state_record["opened"][0]


# -- building and joker retrieval -----------------------------------------------------------------


def test_greedy_builds_on_the_table_once_opened():
    p0 = "Ks Kh Kd 9c Tc Jc 2d 5h 7s 3c 4h 8d 6s"
    p1 = "Qs Qh Qd 8h 9h Th 8c Qc 2c 4s 3d 6d Kc"
    env = deal([p0, p1], stock="2s 3s")
    play(env, "DRAW_STOCK", "MELD[group K: d h s]", "MELD[run c 9..J]", "DISCARD[2s]")
    acts = greedy_turn(env)
    assert "MELD[run h 8..T]" in acts and {"LAYOFF[8c, 1]", "LAYOFF[Kc, 0]"} <= set(acts)
    assert melds(env)[0] == "Kc Kd Kh Ks" and melds(env)[1].startswith("8c 9c Tc Jc")
    assert not [c for c in hand(env, 1) if c % 13 in (7, 11, 12)]  # no 8, Q or K kept


@pytest.mark.parametrize("must_meld", [False, True])
def test_greedy_retrieves_a_joker_from_a_run(must_meld):
    p0 = "5h 6h JK 8h Kc Kd Ks 2d 9s 3c 4d Tc Qd"  # 5-6-JK(7)-8 (26) + K K K (30)
    p1 = "Qs Qh Qc 9d Td Jd 7h 2c 4s 3d 6c 5s 8s"  # Q Q Q (30) + 9-10-J d (29); 7h
    env = deal([p0, p1], stock="2s 3s", retrieved_joker_must_be_melded=must_meld)
    play(env, "DRAW_STOCK", "MELD[run h 5..8]", "MELD[group K: c d s]", "DISCARD[2s]")
    acts = greedy_turn(env)
    assert "RETRIEVE[0, 6]" in acts
    assert "5h 6h 7h 8h" in melds(env)[0]
    # the joker it took back is melded at once (it lays off everything it can)
    assert 52 not in hand(env, 1) and " ".join(melds(env)).count("JK") == 1


def test_greedy_retrieves_from_a_group_of_three():
    p0 = "Kc JK JK 9c Tc Jc Qc 2d 5h 7s 3d 4h 8d"  # K JK JK (30) + 9..Q c (39)
    p1 = "Ks Kh Qs Qh Qd 8h 9h Th 2c 4s 3s 6d 5c"
    env = deal([p0, p1], stock="2s 3s")
    play(env, "DRAW_STOCK", "MELD[group K: c + 2 JK]", "MELD[run c 9..Q]", "DISCARD[2s]")
    acts = greedy_turn(env)
    assert {"RETRIEVE[0, 2]", "RETRIEVE[0, 3]"} <= set(acts)
    assert melds(env)[0].startswith("Kc Kh Ks") and 52 not in hand(env, 1)


# -- discards -------------------------------------------------------------------------------------


@TURNS
def test_discards_the_highest_card_no_one_can_use(turn):
    # player_0 opened with K K K (d h s) and 9-10-J c; player_1 has not opened and holds
    # Kc and Qc (they lay off on those melds) and Jh, the highest card no one can use
    p0 = "Ks Kh Kd 9c Tc Jc 2d 5h 7s 3c 4h 8d 6s"
    p1 = "Kc Qc Jh 2s 4d 6c 3h 5s 7c 9d 2h 4s 8c"
    env = deal([p0, p1], stock="3s 3d")
    play(env, "DRAW_STOCK", "MELD[group K: d h s]", "MELD[run c 9..J]", "DISCARD[8d]")
    acts = turn(env)
    assert acts == ["DRAW_STOCK", "DISCARD[Jh]"]


@TURNS
def test_keeps_a_card_next_to_one_the_next_player_took(turn):
    # player_1 takes the Qh from the pile: player_0 then keeps the Jh (and the Qd, Qs: same
    # rank) and discards the 9s, the highest card left that player_1 cannot use
    p0 = "Jh Qd Qs 9s 2c 4d 6c 8h 3h 5s 7d 2d 4s"
    p1 = "2s 5d 7h 9h 3c 8s Ts 6d Ad 4c Kh Jc 5h"
    env = deal([p0, p1], upcard="Ac", stock="Qh 3d")
    play(env, "DRAW_STOCK", "DISCARD[Qh]", "TAKE_DISCARD", "DISCARD[3c]")
    acts = turn(env)
    assert acts == ["DRAW_STOCK", "DISCARD[9s]"]


@TURNS
def test_a_second_copy_of_a_card_does_not_make_it_near(turn):
    # the two Qs cannot meet in one meld (two decks: a group needs other suits, a run other
    # ranks), so both are loose like the 9h and, the higher, the Qs goes first; every other
    # card (and the 7s drawn) is near another of the hand
    p0 = "Qs Qs 9h 2c 3c 5d 6d 2h 3h 4s 5s 7c 8c"
    env = deal([p0, LOOSE], upcard="Kd", stock="7s")
    assert turn(env) == ["DRAW_STOCK", "DISCARD[Qs]"]


def test_greedy_options_take_any_gain_and_order_near_cards_by_links():
    # 9c 9h 9s or 7h 8h 9h Th (one 9h): the Th adds 34 - 27 = 7 to the free arrangement, less
    # than its penalty, so greedy draws and take_gain="any" takes it
    p0 = "9c 9h 9s 7h 8h 2c 4d 6s Qd 3s Kc 5d Ad"
    env = deal([p0, LOOSE], upcard="Th", stock="2s")
    assert greedy_turn(env)[0] == "DRAW_STOCK"
    env = deal([p0, LOOSE], upcard="Th", stock="2s")
    assert greedy_turn(env, Rummy51GreedyAgent(seed=0, take_gain="any"))[0] == "TAKE_DISCARD"
    # every card is near another (no meld, nothing unsafe): greedy throws the highest penalty,
    # the Ts; near_order throws from the cards with the fewest links, 3d and 5d (each only two
    # ranks from the other), the higher
    p0 = "9s Ts 3d 5d 2c 2h 7c 8c 6h 6s 4s 4h 8d"
    held = np.bincount(cards("9s Ts 3d 5d 5d"), minlength=53).tolist()
    assert [links(held, c) for c in parse_cards("Ts 5d")] == [2, 1]  # the second 5d is no link
    env = deal([p0, LOOSE], upcard="Kc", stock="7h")
    assert greedy_turn(env) == ["DRAW_STOCK", "DISCARD[Ts]"]
    env = deal([p0, LOOSE], upcard="Kc", stock="7h")
    plus = make_agent("greedy_plus", 0, game="rummy51")
    assert greedy_turn(env, plus) == ["DRAW_STOCK", "DISCARD[5d]"]


def test_joker_layoff_out_keeps_the_joker_until_it_goes_out():
    # K K K + 9-10-J c open (59); greedy then lays the joker off on the run, where the next
    # player could retrieve it with the 8c; joker_layoff="out" keeps it in hand
    p0 = "Ks Kh Kd 9c Tc Jc JK 2d 5h 7s 3c 6c 8d"
    env = deal([p0, LOOSE], stock="4s")
    assert any(a.startswith("LAYOFF_JOKER") for a in greedy_turn(env))
    assert melds(env) == ["JK 9c Tc Jc", "Kd Kh Ks"] and 52 not in hand(env, 0)
    env = deal([p0, LOOSE], stock="4s")
    keep = Rummy51GreedyAgent(seed=0, joker_layoff="out")
    acts = greedy_turn(env, keep)
    assert not any(a.startswith("LAYOFF_JOKER") for a in acts)
    assert melds(env) == ["9c Tc Jc", "Kd Kh Ks"] and 52 in hand(env, 0)
    assert env.state_record["opened"][0]
    # a turn that goes out lays the joker too (four melds, the joker, the 5d discarded: Rummy)
    p0 = "Ks Kh Kd 9c Tc Jc JK Qs Qh Qd 2c 3c 4c"
    env = deal([p0, LOOSE], stock="5d")
    acts = greedy_turn(env, keep)
    assert any(a.startswith("LAYOFF_JOKER") for a in acts) and acts[-1] == "DISCARD[5d]"
    assert env.terminations["player_0"] and hand(env, 0) == []


def test_hold_melds_keeps_new_melds_in_hand_until_it_goes_out():
    # player_0 opened with K K K and 9-10-J c; it still holds 2-3-4 c and Q Q Q
    p0 = "Ks Kh Kd 9c Tc Jc 2c 3c 4c Qs Qh Qd 5h"

    def second_turn(draw: str, agent: Rummy51GreedyAgent) -> tuple[Any, list[str]]:
        env = deal([p0, LOOSE], upcard="Kc", stock=f"2s 3s {draw}")
        play(env, "DRAW_STOCK", "MELD[group K: d h s]", "MELD[run c 9..J]", "DISCARD[2s]")
        play(env, "DRAW_STOCK", "DISCARD[3s]")  # player_1, 13 cards
        return env, greedy_turn(env, agent)

    # greedy lays both melds at once
    env, acts = second_turn("6d", Rummy51GreedyAgent(seed=0))
    assert {"MELD[run c 2..4]", "MELD[group Q: d h s]"} <= set(acts)
    # holding while every other player has more than 12 cards: it only discards, keeping both
    env, acts = second_turn("6d", Rummy51GreedyAgent(seed=0, hold_melds=12))
    assert acts == ["DRAW_STOCK", "DISCARD[6d]"]
    assert cards("2c 3c 4c Qs Qh Qd 5h") == hand(env, 0)
    # player_1's 13 cards are not more than 13: no hold
    env, acts = second_turn("6d", Rummy51GreedyAgent(seed=0, hold_melds=13))
    assert "MELD[group Q: d h s]" in acts
    # an 8c lays off (never held) and then both melds go out with the 5h discarded
    env, acts = second_turn("8c", Rummy51GreedyAgent(seed=0, hold_melds=12))
    assert "LAYOFF[8c, 1]" in acts and acts[-1] == "DISCARD[5h]"
    assert env.terminations["player_0"] and hand(env, 0) == []


def test_hold_open_waits_to_open_until_it_goes_out():
    # K K K + 9-10-J c reach the opening (60); greedy opens at once
    p0 = "Ks Kh Kd 9c Tc Jc 2d 5h 7s 3c 6c 8d 4h"
    env = deal([p0, LOOSE], stock="Ah")
    assert {"MELD[group K: d h s]", "MELD[run c 9..J]"} <= set(greedy_turn(env))
    assert env.state_record["opened"][0]
    # hold_open keeps the opening in hand while player_1 holds more than 12 cards (the 8d
    # is the highest loose card: the Ah is near the Kh)
    env = deal([p0, LOOSE], stock="Ah")
    acts = greedy_turn(env, Rummy51GreedyAgent(seed=0, hold_open=12))
    assert acts == ["DRAW_STOCK", "DISCARD[8d]"]
    assert not env.state_record["opened"][0] and len(hand(env, 0)) == 13
    # player_1's 13 cards are not more than 13: it opens
    env = deal([p0, LOOSE], stock="Ah")
    assert "MELD[run c 9..J]" in greedy_turn(env, Rummy51GreedyAgent(seed=0, hold_open=13))
    # a turn that goes out opens and melds everything: Rummy, player_1 pays 25 more
    p0 = "Ks Kh Kd 9c Tc Jc JK Qs Qh Qd 2c 3c 4c"
    env = deal([p0, LOOSE], stock="5d")
    acts = greedy_turn(env, Rummy51GreedyAgent(seed=0, hold_open=0))
    assert acts[-1] == "DISCARD[5d]" and env.terminations["player_0"] and hand(env, 0) == []
    assert env.rewards["player_1"] == -(86 + 25)


def test_greedy_rejects_bad_options():
    with pytest.raises(ValueError, match="take_gain"):
        Rummy51GreedyAgent(take_gain="all")
    with pytest.raises(ValueError, match="joker_layoff"):
        Rummy51GreedyAgent(joker_layoff="never")
    with pytest.raises(ValueError, match="hold_melds"):
        Rummy51GreedyAgent(hold_melds=-1)
    with pytest.raises(ValueError, match="hold_open"):
        Rummy51GreedyAgent(hold_open=-2)


def test_near():
    assert near(*parse_cards("5h 5c")) and not near(*parse_cards("5h 5h"))
    assert near(*parse_cards("5h 7h")) and not near(*parse_cards("5h 8h"))
    assert near(*parse_cards("Ah Kh")) and near(*parse_cards("Ah 2h"))


# -- arena ----------------------------------------------------------------------------------------


def test_registry_resolves_greedy_per_game():
    assert isinstance(make_agent("greedy", 0, game="rummy51"), Rummy51GreedyAgent)
    assert isinstance(make_agent("greedy", 0, game="five_hundred_rum"), FiveHundredRumGreedyAgent)
    with pytest.raises(ValueError, match="several games"):
        make_agent("greedy", 0)


def test_game_result_counts_the_player_who_went_out_and_draws():
    def g(pens, winner_key, winner, truncated=False):
        infos = [{"penalty_total": p, winner_key: winner} for p in pens]
        return {"infos": infos, "truncated": truncated, "returns": [-p for p in pens]}

    def res(game, a_seats):
        return game_result(game, a_seats)[2:]

    assert res(g([0, 40], "hand_winner", 0), [0]) == (40.0, 1)
    assert res(g([0, 40], "hand_winner", 0), [1]) == (-40.0, -1)
    assert res(g([12, 40], "hand_winner", -1), [0]) == (28.0, 0)  # a drawn hand
    assert res(g([120, 40], "winner", 1), [0]) == (-80.0, -1)  # a match
    assert res(g([0, 40], "hand_winner", 0, truncated=True), [0]) == (40.0, 0)
    # three players, A in seats 0 and 2: B's penalty 30 minus A's mean 20
    assert res(g([0, 30, 40], "hand_winner", 0), [0, 2]) == (10.0, 1)
    assert res(g([0, 30, 40], "hand_winner", 0), [1]) == (-10.0, -1)


def test_arena_runs_rummy51_greedy_against_random(tmp_path, capsys):
    out = tmp_path / "arena"
    argv = ["arena", "--game", "rummy51", "--agents", "random,greedy", "--deals", "3"]
    argv += ["--seed", "0", "--out", str(out), "--no-plot", "--no-progress", "--bootstrap", "5"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "| greedy | random | 6 | 6 | 0 | 0 | 0 |" in text
    assert "B's penalty - A's penalty" in text
    for f in csv.DictReader((out / "games.csv").open()):
        ra, rb, margin = float(f["return_a"]), float(f["return_b"]), float(f["margin"])
        result = int(f["result"])
        assert result == -1 and ra < 0 and rb == 0 and margin == ra - rb  # penalty reward


def test_arena_counts_drawn_rummy51_hands_as_draws(tmp_path, capsys):
    argv = ["arena", "--game", "rummy51"]
    argv += ["--agents", "random,rummy_agents.random_agent:RandomAgent"]
    argv += ["--deals", "4", "--seed", "0", "--out", str(tmp_path), "--no-plot", "--no-progress"]
    argv += ["--option", "max_reshuffles=0", "--option", "reward=zero_sum", "--bootstrap", "5"]
    assert main(argv) == 0
    capsys.readouterr()
    rows = list(csv.DictReader((tmp_path / "games.csv").open()))
    draws = [r for r in rows if r["outcome"] == "draw"]
    assert draws and all(int(r["result"]) == 0 for r in draws)
    for r in rows:  # zero_sum in two players: each return is the penalty difference
        assert float(r["margin"]) == pytest.approx(float(r["return_a"]))


# -- the compiled rollout policy (ISMCTS) on greedy's situations ----------------------------------


def test_policy_draws_when_the_upcard_only_pairs_with_its_joker():
    # the 8d would make 8d-JK-Td or 8d-9d-JK, but the joker is the only partner: greedy's free
    # arrangement gains less than the card's penalty, so both draw from the stock
    p0 = "JK Td 2c 4h 6s Qc 3d 5h 7s Kc 2h 4s 6c"
    env = deal([p0, LOOSE], upcard="8d", stock="2s")
    assert greedy_turn(env)[0] == "DRAW_STOCK"
    env = deal([p0, LOOSE], upcard="8d", stock="2s")
    assert policy_turn(env)[0] == "DRAW_STOCK"


def test_policy_retrieves_a_joker_before_anything_else():
    p0 = "5h 6h JK 8h Kc Kd Ks 2d 9s 3c 4d Tc Qd"
    p1 = "Qs Qh Qc 9d Td Jd 7h 2c 4s 3d 6c 5s 8s"
    env = deal([p0, p1], stock="2s 3s")
    play(env, "DRAW_STOCK", "MELD[run h 5..8]", "MELD[group K: c d s]", "DISCARD[2s]")
    acts = policy_turn(env)
    # it opens (Q Q Q + 9-10-J d: retrieving needs an opened player), then takes the joker
    # back before any lay-off, and lays it off
    kinds = [a.split("[")[0] for a in acts]
    assert kinds[:3] == ["DRAW_STOCK", "MELD", "MELD"] and acts[3] == "RETRIEVE[0, 6]"
    assert "5h 6h 7h 8h" in melds(env)[0] and 52 not in hand(env, 1)


# -- the ISMCTS belief: opponents who meld as soon as they can ------------------------------------


def evidence(env, seat: int, states=None) -> np.ndarray:
    from rummy_agents.joker_rollouts import rummy51_evidence

    states = env.game.states if states is None else states
    out = np.zeros(states.shape[0], np.int64)
    rummy51_evidence(states, seat, env.config.opening_threshold, out)
    return out


def test_evidence_flags_a_player_who_could_have_opened_and_did_not():
    p1 = "Ac Ad Ah JK 5c 6c 7c 2d 3s 4h 8d 9s Qd"  # A A A (33) + 5-6-7 c (18) = 51
    env = deal([LOOSE, p1], stock="Ks 7h")
    assert evidence(env, 0)[0] == 0  # player_1 has not had a turn yet
    play(env, "DRAW_STOCK", "DISCARD[Ks]", "DRAW_STOCK", "DISCARD[7h]")
    assert evidence(env, 0)[0] == 1  # it kept the 51 in hand
    env = deal([LOOSE, p1], stock="Ks 7h")
    play(env, "DRAW_STOCK", "DISCARD[Ks]")
    greedy_turn(env)  # greedy opens and lays off what it can
    assert env.state_record["opened"][1] and evidence(env, 0)[0] == 0


@pytest.mark.parametrize("players", [2, 3])
def test_evidence_flags_an_opened_player_who_kept_a_card_that_lays_off(players):
    # player_0 opens with K K K and 9-10-J c but keeps the 8c, which lays off on its run
    p0 = "Ks Kh Kd 9c Tc Jc 8c 5h 7s 3c 4h 2d 6s"
    others = [LOOSE, "3d 5s 7c 9d Jh 2h 4c 6d 8h Qs Kd 3h 5d"][: players - 1]
    env = deal([p0, *others], stock="2s")
    play(env, "DRAW_STOCK", "MELD[group K: d h s]", "MELD[run c 9..J]", "DISCARD[2s]")
    # with more players, others may have changed the table since its turn: no evidence then
    assert evidence(env, 1)[0] == (1 if players == 2 else 0)


def test_belief_worlds_keep_the_seat_information_and_favour_consistent_opponents():
    from rummy_agents.ismcts import rummy51_belief_worlds

    rng = np.random.default_rng(0)
    env = rummy51_v1.raw_env()
    env.reset(seed=5)
    agents = [Rummy51GreedyAgent(seed=0), Rummy51GreedyAgent(seed=1)]
    checked = 0
    for _ in range(60):
        name = env.agent_selection
        seat = env.possible_agents.index(name)
        view = SeatView(env, name)
        if checked < 6 and env.state_record["opened"][1 - seat]:
            rec = env.state_record
            worlds = rummy51_belief_worlds(view, 64, rng)
            uniform = view.sample_worlds(256, rng)
            for w in worlds.states:
                assert (w["hands"][seat] == rec["hands"][seat]).all()
                assert (w["known"] == rec["known"]).all()
                assert (w["hands"][1 - seat] >= rec["known"][1 - seat]).all()
                assert w["hands"][1 - seat].sum() == rec["hands"][1 - seat].sum()
                assert (w["m_kind"] == rec["m_kind"]).all() and w["pile_n"] == rec["pile_n"]
            assert (worlds.masks == env.observe(name)["action_mask"]).all()
            assert (
                evidence(env, seat, worlds.states).mean()
                < evidence(env, seat, uniform.states).mean()
            )
            checked += 1
        env.step(agents[seat].act(env.observe(name), view))
        if env.state_record["done"]:
            break
    assert checked > 0
