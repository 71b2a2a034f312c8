"""500 Rum agents: the greedy agent's legality over random rules, its rules on stacked decks
(Rummy! calls, deep takes), determinism, its meld planner, and the arena on 500 Rum.
"""

from __future__ import annotations

import numpy as np
import pytest

from rummy_agents.arena.play import play_game
from rummy_agents.base import SeatView
from rummy_agents.cli import main
from rummy_agents.five_hundred_rum_greedy import FiveHundredRumGreedyAgent, MeldPlanner, table_melds
from rummy_agents.random_agent import RandomAgent
from rummy_env import five_hundred_rum_v1
from rummy_env.core.cards import parse_cards
from rummy_env.encodings import five_hundred_rum as E
from rummy_env.testing import joker_deck


def deal(hands, upcard, stock=(), dealer=None, **options):
    """A raw env dealt from a stacked deck (``hands[q]`` is seat q's hand; the last seat deals,
    so player_0 acts first).
    """
    env = five_hundred_rum_v1.raw_env(num_players=len(hands), **options)
    cfg = env.config
    dealer = len(hands) - 1 if dealer is None else dealer
    deck = joker_deck(hands, upcard, stock, num_decks=cfg.decks, jokers=cfg.jokers, dealer=dealer)
    env.reset(options={"deck": deck, "dealer": dealer})
    return env


def play(env, *names):
    """Step the named actions (each must be legal)."""
    lay = env.layout
    table = {lay.action_name(a): a for a in range(lay.num_actions)}
    for n in names:
        mask = env.observe(env.agent_selection)["action_mask"]
        assert mask[table[n]] == 1, f"{n} is not legal"
        env.step(table[n])


def greedy_action(env, agent=None) -> str:
    """The name of the action the greedy agent picks for the player to act."""
    agent = agent or FiveHundredRumGreedyAgent(seed=0)
    name = env.agent_selection
    obs = env.observe(name)
    a = agent.act(obs, SeatView(env, name))
    assert obs["action_mask"][a] == 1
    return env.layout.action_name(a)


def phase(env) -> str:
    return E.PHASE_NAMES[int(env.state_record["phase"])]


def hand_counts(text: str) -> list[int]:
    h = [0] * 53
    for c in parse_cards(text):
        h[min(c, 52)] += 1
    return h


# -- legality over random rules -----------------------------------------------------------------


def random_options(rng: np.random.Generator) -> dict:
    p = int(rng.integers(2, 9))
    opts = {
        "num_players": p,
        "no_jokers": bool(rng.random() < 0.25),
        "values_5_10_15": bool(rng.random() < 0.3),
        "rummy_call": str(rng.choice(["full", "layoff_only", "none"])),
        "must_meld_discard": bool(rng.random() < 0.3),
        "deepest_card_new_meld": bool(rng.random() < 0.3),
        "going_out": str(rng.choice(["any", "discard_required", "floating", "unplayable_discard"])),
    }
    if 3 <= p <= 4 and rng.random() < 0.3:
        opts["num_decks"] = 2
    return opts


def test_greedy_only_chooses_masked_actions_over_random_rules():
    rng = np.random.default_rng(2024)
    for g in range(40):
        opts = random_options(rng)
        env = five_hundred_rum_v1.raw_env(**opts)
        p = opts["num_players"]
        # greedy in most seats, a random player in one so the tables vary
        agents = [FiveHundredRumGreedyAgent(seed=g * 10 + q) for q in range(p)]
        agents[int(rng.integers(p))] = RandomAgent(seed=g)
        rec = play_game(env, agents, seed=g, max_decisions=5000)  # raises on a masked action
        assert not rec["truncated"], opts
        assert rec["outcome"] in ("went_out", "stock_exhausted")


def test_greedy_plays_whole_500_point_games():
    env = five_hundred_rum_v1.raw_env(episode="game", must_go_out_to_win=True)
    agents = [FiveHundredRumGreedyAgent(seed=1), FiveHundredRumGreedyAgent(seed=2)]
    rec = play_game(env, agents, seed=5, max_decisions=20000)
    assert not rec["truncated"] and rec["hands"] >= 2
    assert max(rec["returns"]) >= 500


def test_greedy_without_a_view_infers_the_layout():
    for p in (2, 5):
        env = five_hundred_rum_v1.raw_env(num_players=p)
        env.reset(seed=3)
        agent = FiveHundredRumGreedyAgent(seed=0)
        for _ in range(60):
            name = env.agent_selection
            if env.terminations[name]:
                break
            obs = env.observe(name)
            a = agent.act(obs)
            assert obs["action_mask"][a] == 1
            env.step(a)


def test_greedy_is_deterministic_given_a_seed():
    def actions(seed: int) -> tuple[list[int], list[float]]:
        env = five_hundred_rum_v1.raw_env(num_players=3)
        env.reset(seed=11)
        agents = {n: FiveHundredRumGreedyAgent(seed=seed + i) for i, n in enumerate(env.agents)}
        out = []
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            a = None if term or trunc else agents[name].act(obs, SeatView(env, name))
            out.append(a)
            env.step(a)
        return out, [env.state_record["hand_points"][q] for q in range(3)]

    assert actions(7) == actions(7)


# -- its rules on stacked decks -----------------------------------------------------------------

# player_1 holds nothing that melds or lays off on 7-8-9 of hearts
LOOSE = "Ac 3c 5c 9c Jc 2d 6d 8d Td 4h 2s 7s 9s"


def test_greedy_calls_rummy_and_lays_the_card_off():
    env = deal(["7h 8h 9h 2c 4d 6s 8c Tc Qd Kd 3s 5s Js", LOOSE], "Qs", ["Th"])
    play(env, "DRAW_STOCK", "MELD[run h 7..9]", "DISCARD[Th]")  # Th fits the run: callable
    assert phase(env) == "rummy_call_offer" and env.agent_selection == "player_1"
    agent = FiveHundredRumGreedyAgent(seed=0)
    assert greedy_action(env, agent) == "TAKE_DISCARD[0]"
    play(env, "TAKE_DISCARD[0]")
    assert greedy_action(env, agent) == "LAYOFF[Th, 0]"


@pytest.mark.parametrize("rummy_call", ["full", "layoff_only"])
def test_greedy_calls_in_every_call_variant(rummy_call):
    env = deal(
        ["7h 8h 9h 2c 4d 6s 8c Tc Qd Kd 3s 5s Js", LOOSE], "Qs", ["Th"], rummy_call=rummy_call
    )
    play(env, "DRAW_STOCK", "MELD[run h 7..9]", "DISCARD[Th]")
    assert greedy_action(env) == "TAKE_DISCARD[0]"


# player_0 holds the kings of diamonds and hearts; the king of clubs is the upcard
HERO = "Kd Kh 4c 7c 9d 5h Jh 3s 6s 8s Ts Qc Qd"


def test_greedy_takes_the_upcard_that_melds():
    env = deal([HERO, LOOSE], "Kc")
    assert greedy_action(env) == "TAKE_DISCARD[0]"
    play(env, "TAKE_DISCARD[0]")
    assert greedy_action(env) == "MELD[group K: c d h]"


def test_greedy_takes_a_deep_discard_when_the_meld_pays():
    env = deal([HERO, LOOSE], "Kc", ["2c", "3h"])
    play(env, "DRAW_STOCK", "DISCARD[4c]")  # pile: Kc 4c
    play(env, "DRAW_STOCK", "DISCARD[2d]")  # pile: Kc 4c 2d
    # K-K-K (30 points) for the 4c and 2d left in hand (6 points)
    agent = FiveHundredRumGreedyAgent(seed=0)
    assert greedy_action(env, agent) == "TAKE_DISCARD[2]"
    play(env, "TAKE_DISCARD[2]")
    assert greedy_action(env, agent) == "MELD[group K: c d h]"


def test_greedy_leaves_a_deep_discard_that_does_not_pay():
    hero = "2d 2h 4c 7c 9d 5h Jh 3s 6s 8s Ks Qc Kh"
    env = deal([hero, "Ac 3c 5c 9c Jc Qd 6d 8d Td 4h 2s 7s 9s"], "2c", ["4d", "3h"])
    play(env, "DRAW_STOCK", "DISCARD[Ks]")  # pile: 2c Ks
    play(env, "DRAW_STOCK", "DISCARD[Qd]")  # pile: 2c Ks Qd
    # 2-2-2 (6 points) would leave the Ks and Qd (20 points) in hand
    assert "TAKE_DISCARD[2]" in {
        env.layout.action_name(a)
        for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    }
    assert greedy_action(env) == "DRAW_STOCK"


def test_greedy_discards_the_high_loose_card():
    env = deal(["7h 8h 9h 2c 4d 6s 8c Th Qd Kd 3s 5s Js", LOOSE], "Qs", ["5d"])
    play(env, "DRAW_STOCK", "MELD[run h 7..9]", "LAYOFF[Th, 0]")
    # Js is the only 10-point card with no partner in hand (Qd-Kd are neighbours)
    assert greedy_action(env) == "DISCARD[Js]"


def test_greedy_keeps_a_card_next_to_the_next_players_pick():
    hero = "2c 5c Kc Jd 4d 7d 3h 6h 9h Js 8s 4s 2h"
    env = deal([hero, "Ac 3c 7c Qc 2d 6d 9d Kd 5h 8h Qh 3s 6s"], "9c", ["5d", "3d"])
    play(env, "DRAW_STOCK", "DISCARD[Jd]")
    play(env, "TAKE_DISCARD[0]", "DISCARD[Ac]")  # player_1 is known to hold the Jd
    agent = FiveHundredRumGreedyAgent(seed=0)
    assert greedy_action(env, agent) == "DRAW_STOCK"
    play(env, "DRAW_STOCK")
    assert greedy_action(env, agent) == "MELD[run d 3..5]"
    play(env, "MELD[run d 3..5]")
    # Kc and Js are the loose 10-point cards; the Js would go next to player_1's Jd
    for seed in range(5):
        assert greedy_action(env, FiveHundredRumGreedyAgent(seed=seed)) == "DISCARD[Kc]"


# -- hold_melds: new melds kept in hand until the hand goes out -----------------------------------


def test_hold_melds_keeps_a_new_meld_and_throws_a_loose_card():
    env = deal(["7h 8h 9h 2c 4d 6s 8c Tc Qd Kd 3s 5s Js", LOOSE], "Qs", ["5d"])
    play(env, "DRAW_STOCK")
    # greedy lays 7-8-9 of hearts at once; held, it stays in hand and a loose card goes
    assert greedy_action(env) == "MELD[run h 7..9]"
    held = greedy_action(env, FiveHundredRumGreedyAgent(seed=0, hold_melds=3))
    assert held.startswith("DISCARD[") and held not in ("DISCARD[7h]", "DISCARD[8h]", "DISCARD[9h]")


def test_hold_melds_lays_everything_in_the_turn_it_goes_out():
    # four melds in hand; the 9c drawn is the one card left to discard: it goes out
    env = deal(["7h 8h 9h Th Kc Kd Ks 2s 3s 4s 5c 5d 5h", "Ac 3c 6c Qc Jc 2d 6d 8d Td 4h 8s 7s Js"],
               "Qs", ["9c"])  # fmt: skip
    play(env, "DRAW_STOCK")
    agent = FiveHundredRumGreedyAgent(seed=0, hold_melds=3)
    a = greedy_action(env, agent)
    assert a.startswith("MELD[")  # not a discard, though player_1 holds 13 cards
    while not a.startswith("DISCARD"):
        play(env, a)
        a = greedy_action(env, agent)
    assert a == "DISCARD[9c]"
    play(env, "DISCARD[9c]")
    assert phase(env) == "hand_over"


def test_hold_melds_melds_once_an_opponent_is_short():
    env = deal(["7h 8h 9h 2c 4d 6s 8c Tc Qd Kd 3s 5s Js", LOOSE], "Qs", ["5d"])
    play(env, "DRAW_STOCK")
    # player_1 holds 13 cards: more than 12 keeps the meld, 13 or fewer lays it
    assert greedy_action(env, FiveHundredRumGreedyAgent(seed=0, hold_melds=12)).startswith(
        "DISCARD["
    )
    assert (
        greedy_action(env, FiveHundredRumGreedyAgent(seed=0, hold_melds=13)) == "MELD[run h 7..9]"
    )


def test_hold_melds_still_lays_off_onto_the_table():
    env = deal(["7h 8h 9h 2c 4d 6s 8c Tc Qd Kd 3s 5s Js", LOOSE], "Qs", ["5d", "Kc", "6h"])
    play(env, "DRAW_STOCK", "MELD[run h 7..9]", "DISCARD[2c]")
    play(env, "DRAW_STOCK", "DISCARD[Ac]")
    play(env, "DRAW_STOCK")  # the 6h lays off below the run on the table
    assert greedy_action(env, FiveHundredRumGreedyAgent(seed=0, hold_melds=3)) == "LAYOFF[6h, 0]"


def test_hold_melds_honours_a_deep_take():
    env = deal([HERO, LOOSE], "Kc", ["2c", "3h"])
    play(env, "DRAW_STOCK", "DISCARD[4c]")
    play(env, "DRAW_STOCK", "DISCARD[2d]")
    agent = FiveHundredRumGreedyAgent(seed=0, hold_melds=3)
    assert greedy_action(env, agent) == "TAKE_DISCARD[2]"
    play(env, "TAKE_DISCARD[2]")  # the Kc is owed to a meld: no discard is legal yet
    assert greedy_action(env, agent) == "MELD[group K: c d h]"


@pytest.mark.parametrize("bad", [-1, True, "x"])
def test_hold_melds_rejects_a_bad_count(bad):
    with pytest.raises((ValueError, TypeError), match="hold_melds|invalid literal"):
        FiveHundredRumGreedyAgent(hold_melds=bad)


def test_hold_melds_only_chooses_masked_actions_over_random_rules():
    rng = np.random.default_rng(77)
    for g in range(15):
        opts = random_options(rng)
        env = five_hundred_rum_v1.raw_env(**opts)
        p = opts["num_players"]
        agents = [FiveHundredRumGreedyAgent(seed=g * 10 + q, hold_melds=q % 4) for q in range(p)]
        rec = play_game(env, agents, seed=g, max_decisions=5000)
        assert not rec["truncated"], opts


# -- meld planner ---------------------------------------------------------------------------------


def test_planner_prefers_run_and_group_over_the_four_of_a_kind():
    plan = MeldPlanner().best(hand_counts("3c 4c 5c 5d 5h 5s"), [])
    assert plan.points == 3 + 4 + 5 + 15
    assert sum(plan.left) == 0


def test_planner_values_a_low_ace_as_one():
    assert MeldPlanner().best(hand_counts("Ah 2h 3h"), []).points == 6
    assert MeldPlanner(v51015=True).best(hand_counts("Ah 2h 3h"), []).points == 15


def test_planner_bridges_a_gap_with_a_joker_for_the_obligation():
    env = deal(["5h 6h 7h 2c 5d 6s 8c", "9h Kc 2d Qs 4d Jc 3s", "JK Ad 3c Qc 8d 5s 7s"], "Kd")
    play(env, "DRAW_STOCK", "MELD[run h 5..7]")
    obs = env.observe(env.agent_selection)
    table = table_melds(env.layout.split(obs["observation"]))
    assert table == [[2, 2, 4, 6, (1 << 7) - (1 << 4), 0]]
    plan = MeldPlanner().best(hand_counts("JK 9h"), table, oblig=parse_cards("9h")[0])
    assert plan is not None and plan.points == 15 + 9
    assert plan.steps == [("joker", 0, 1), ("layoff", parse_cards("9h")[0], 0)]
    assert MeldPlanner().best(hand_counts("9h"), table, oblig=parse_cards("9h")[0]) is None


# -- arena ----------------------------------------------------------------------------------------


def test_arena_runs_500_rum_greedy_against_random(tmp_path, capsys):
    out = tmp_path / "arena"
    argv = ["arena", "--game", "five_hundred_rum", "--agents", "random,greedy", "--deals", "4"]
    argv += ["--seed", "3", "--out", str(out), "--no-plot", "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "| greedy | random | 8 |" in text
    assert (out / "summary.json").exists() and (out / "games.csv").exists()


def test_arena_plays_four_player_games(capsys):
    argv = ["arena", "--game", "five_hundred_rum", "--agents", "random,greedy", "--deals", "1"]
    argv += ["--option", "num_players=4", "--out", "none", "--no-progress", "--no-plot"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "| greedy | random | 2 |" in text
    assert "4 players, seats alternating" in text


def test_arena_plays_500_rum_game_episodes(capsys):
    argv = ["arena", "--game", "five_hundred_rum", "--agents", "random,greedy", "--deals", "1"]
    argv += ["--episode", "game", "--seed", "0", "--out", "none", "--no-progress"]
    assert main(argv) == 0
    assert "episode=game" in capsys.readouterr().out
