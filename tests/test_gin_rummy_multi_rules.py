"""Gin Rummy for 3 and 4 players (RULES.md §1.10) on stacked decks, read like the rulebook."""

from __future__ import annotations

import numpy as np
import pytest

from rummy_env import gin_rummy_v0
from rummy_env.core.cards import cards_to_mask
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy import kernels as K
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.testing import gin_deck, gin_deck_3p, gin_decks_4p

# Ac..9c run and a king: taking the Tc gives gin (discarding the Kd face down); taking the Kh
# gives a knock with 10 deadwood.
RUN = "Ac 2c 3c 4c 5c 6c 7c 8c 9c Kd"
LOOSE = "2d 4d 6d 8d Td 2h 4h 6h 8h Th"  # no meld, 60 deadwood, nothing to lay off on Ac-9c
TIGHT = "2d 3d 4d 2h 3h 4h 5s 6s 7s As"  # 1 deadwood: undercuts a knock with 10
GIN_PTS = 20 + 60
KNOCK_PTS = 60 - 10
UNDERCUT_PTS = 10 - 1 + 10

TAKE, PASS, DRAW = E.TAKE_DISCARD, E.PASS, E.DRAW_STOCK


def knock(card: str) -> int:
    return E.action_id(f"KNOCK[{card}]")


def env3(hands, dealer, upcard, **options):
    env = gin_rummy_v0.raw_env(num_players=3, **options)
    env.reset(options={"deck": gin_deck_3p(hands, dealer, upcard), "dealer": dealer})
    return env


def env4(hands, dealers, upcards, **options):
    env = gin_rummy_v0.raw_env(num_players=4, **options)
    decks = gin_decks_4p(hands, dealers, upcards)
    env.reset(options={"deck": decks, "dealer": list(dealers)})
    return env


def step_as(env, agent: str, action: int) -> None:
    assert env.agent_selection == agent, (env.agent_selection, agent)
    env.step(action)


def piece(env, agent: str, name: str) -> np.ndarray:
    obs = env.observe(agent)["observation"]
    pieces = E.split_observation(obs, env.config.auto_meld, env.config.num_players)
    return pieces[name]


class Totals:
    """Cumulative rewards over an episode (``_cumulative_rewards`` resets per agent step)."""

    def __init__(self, env):
        self.env = env
        self.sum = dict.fromkeys(env.possible_agents, 0.0)

    def step(self, agent: str, action: int) -> None:
        step_as(self.env, agent, action)
        for a in self.env.possible_agents:
            self.sum[a] += self.env.rewards[a]


def draw_and_discard_drawn(env) -> None:
    """The agent to act draws from the stock and throws the card drawn (never knocks)."""
    rec = env.state_record
    t = int(rec["turn"])
    b = rec["boards"][t]
    j = int(b["cur"])
    before = int(b["hands"][j])
    env.step(DRAW)
    after = int(env.state_record["boards"][t]["hands"][j])
    (drawn,) = [c for c in range(52) if (after & ~before) >> c & 1]
    env.step(E.DISCARD_BASE + drawn)


def greedy(env) -> int:
    """Knock at the lowest deadwood when allowed, else keep the deadwood low (a test policy)."""
    mask = env.observe(env.agent_selection)["action_mask"]
    legal = np.flatnonzero(mask)
    obs = env.observe(env.agent_selection)["observation"]
    hand = 0
    for c in np.flatnonzero(obs[:52]):
        hand |= 1 << int(c)

    def deadwood_without(c: int) -> int:
        return int(K.mindw_check(np.uint64(hand & ~(1 << int(c))), K.TABLES))

    knocks = [a for a in legal if E.KNOCK_BASE <= a < E.MELD_BASE]
    if knocks:
        return min(knocks, key=lambda a: deadwood_without(a - E.KNOCK_BASE))
    if PASS in legal:
        return PASS
    if DRAW in legal:
        return DRAW
    discards = [a for a in legal if E.DISCARD_BASE <= a < E.KNOCK_BASE]
    if discards:
        return min(discards, key=lambda a: deadwood_without(a - E.DISCARD_BASE))
    return int(legal[0])


# -- configuration ------------------------------------------------------------------------------


def test_defaults_by_player_count():
    assert GinRummyConfig().target == 100
    assert GinRummyConfig(num_players=3).target == 100
    assert GinRummyConfig(num_players=4).target == 125
    assert GinRummyConfig(num_players=4, target=200).target == 200
    assert GinRummyConfig().replace(num_players=4).target == 125
    env = gin_rummy_v0.raw_env(num_players=4)
    assert env.possible_agents == [f"player_{i}" for i in range(4)]
    assert env.observation_space("player_3")["observation"].shape == (240,)
    assert env.action_space("player_3").n == 107
    assert gin_rummy_v0.raw_env(num_players=3, auto_meld=False).observation_space("player_0")[
        "observation"
    ].shape == (1173,)


@pytest.mark.parametrize("bad", [1, 5, 0])
def test_player_count_is_checked(bad):
    with pytest.raises(ValueError, match="num_players"):
        gin_rummy_v0.raw_env(num_players=bad)


def test_next_dealer_is_fixed_with_more_than_two():
    with pytest.raises(ValueError, match="next_dealer"):
        gin_rummy_v0.raw_env(num_players=3, next_dealer="winner")


def test_reset_arguments_are_checked_before_anything_changes():
    env = gin_rummy_v0.raw_env(num_players=4)
    env.reset(seed=3)
    before = env.state_record.tobytes()
    with pytest.raises(TypeError, match=r"options\['dealer'\]"):
        env.reset(options={"dealer": 1})
    with pytest.raises(ValueError, match=r"options\['dealer'\]\[1\]"):
        env.reset(options={"dealer": [0, 1]})
    with pytest.raises(TypeError, match=r"options\['deck'\]"):
        env.reset(options={"deck": list(range(52))})
    for not_two_decks in (np.array(0), np.array(7.5), 5, np.arange(3)):  # 0-d arrays have no len
        with pytest.raises(TypeError, match=r"options\['deck'\]"):
            env.reset(options={"deck": not_two_decks})
    with pytest.raises(ValueError, match=r"options\['deck'\]\[1\]"):
        env.reset(options={"deck": [list(range(52)), list(range(51))]})
    assert env.state_record.tobytes() == before
    env3_ = gin_rummy_v0.raw_env(num_players=3)
    with pytest.raises(ValueError, match=r"options\['dealer'\]"):
        env3_.reset(options={"dealer": 3})


# -- 3 players ----------------------------------------------------------------------------------


def test_dealer_sits_out_and_acts_in_nothing():
    env = env3({1: RUN, 2: LOOSE}, dealer=0, upcard="Tc")
    assert env.agent_selection == "player_1"  # the seat after the dealer is dealt first
    rec = env.state_record
    assert list(rec["board_of"]) == [-1, 0, 0]
    assert list(piece(env, "player_0", "sitting_out")) == [1, 0, 0]
    assert list(piece(env, "player_1", "sitting_out")) == [0, 0, 1]  # seat-relative
    assert not piece(env, "player_0", "hand").any()  # the dealer sees no hand
    assert not env.observe("player_0")["action_mask"].any()
    assert piece(env, "player_0", "is_dealer")[0] == 1
    # the other two hold 10 cards each; the seat out 0
    assert list(piece(env, "player_0", "seat_hand_size") * 11) == [0, 10, 10]


def test_three_player_hand_episode_pays_the_two_players():
    env = env3({1: RUN, 2: LOOSE}, dealer=0, upcard="Tc")
    tot = Totals(env)
    tot.step("player_1", TAKE)
    tot.step("player_1", knock("Kd"))
    assert all(env.terminations.values())
    assert tot.sum == {"player_0": 0.0, "player_1": GIN_PTS, "player_2": -GIN_PTS}
    assert env.infos["player_1"]["outcome"] == "gin"
    assert env.infos["player_0"]["hand_points"] == 0
    assert env.infos["player_2"]["settlement"] == -GIN_PTS


def test_loser_deals_next_and_winner_plays_the_previous_dealer():
    env = env3({1: RUN, 2: LOOSE}, dealer=0, upcard="Tc", episode="match", target=1000)
    step_as(env, "player_1", TAKE)
    step_as(env, "player_1", knock("Kd"))  # player_1 goes gin, player_2 lost
    rec = env.state_record
    assert int(rec["dealer"]) == 2 and list(rec["board_of"]) == [0, 0, -1]
    assert env.agent_selection == "player_0"  # seat after the new dealer, player_2
    assert int(rec["scores"][1]) == GIN_PTS
    # two more scored hands, played by a policy: the loser of each deals the next
    seen = 0
    while seen < 2:
        hands = int(env.state_record["hands_played"])
        dealer = int(env.state_record["dealer"])
        players = {int(s) for s in env.state_record["seat"][0]}
        env.step(greedy(env))
        rec = env.state_record
        if int(rec["hands_played"]) == hands:
            continue
        if E.OUTCOME_NAMES[int(rec["outcome"])] == "dead_hand":
            assert int(rec["dealer"]) == dealer  # a dead hand: the same dealer deals again
            continue
        winner = max(players, key=lambda s: int(rec["hand_points"][s]))
        loser = (players - {winner}).pop()
        assert int(rec["dealer"]) == loser
        assert {int(s) for s in rec["seat"][0]} == {winner, dealer}
        seen += 1


def test_dead_hand_is_dealt_again_by_the_same_dealer():
    env = env3({1: RUN, 2: LOOSE}, dealer=0, upcard="Qs", episode="match")
    step_as(env, "player_1", PASS)
    step_as(env, "player_2", PASS)
    step_as(env, "player_1", DRAW)
    env.step(greedy_discard_drawn(env))
    while int(env.state_record["hands_played"]) == 0:
        draw_and_discard_drawn(env)
    rec = env.state_record
    assert E.OUTCOME_NAMES[int(rec["outcome"])] == "dead_hand"
    assert int(rec["dealer"]) == 0 and list(rec["board_of"]) == [-1, 0, 0]
    assert int(rec["boards"][0]["deck_pos"]) == 21  # a fresh deal
    assert list(rec["scores"]) == [0, 0, 0]


def greedy_discard_drawn(env) -> int:
    """After a stock draw: throw the card drawn."""
    rec = env.state_record
    b = rec["boards"][int(rec["turn"])]
    drawn = int(b["deck"][int(b["deck_pos"]) - 1])
    return E.DISCARD_BASE + drawn


def test_three_player_settlement_with_a_shutout_against_one_loser_only():
    env = env3({1: RUN, 2: LOOSE}, dealer=0, upcard="Tc", episode="match")
    rec = env.game.states[0]
    # the match so far: player_1 90 points (3 boxes), player_2 40 (1 box), player_0 nothing
    rec["scores"] = [0, 90, 40]
    rec["boxes"] = [0, 3, 1]
    tot = Totals(env)
    tot.step("player_1", TAKE)
    tot.step("player_1", knock("Kd"))  # gin: 80 more, 170 >= 100
    assert all(env.terminations.values())
    s1 = 90 + GIN_PTS + 4 * 20
    vs_p0 = s1 + 200 - 0  # player_0 scored nothing: shutout, the game bonus doubled
    vs_p2 = s1 + 100 - (40 + 20)
    assert env.infos["player_0"]["settlement"] == -vs_p0
    assert env.infos["player_2"]["settlement"] == -vs_p2
    assert env.infos["player_1"]["settlement"] == vs_p0 + vs_p2
    assert tot.sum == {"player_0": -vs_p0, "player_1": vs_p0 + vs_p2, "player_2": -vs_p2}
    assert env.infos["player_1"]["totals"] == s1 + 100
    assert env.infos["player_2"]["totals"] == 60


def test_three_player_double_total_shutout():
    env = env3({1: RUN, 2: LOOSE}, dealer=0, upcard="Tc", episode="match", shutout="double_total")
    rec = env.game.states[0]
    rec["scores"] = [0, 90, 40]
    rec["boxes"] = [0, 3, 1]
    tot = Totals(env)
    tot.step("player_1", TAKE)
    tot.step("player_1", knock("Kd"))
    s1 = 90 + GIN_PTS + 4 * 20
    assert tot.sum["player_0"] == -2 * (s1 + 100)
    assert tot.sum["player_2"] == -(s1 + 100 - 60)


def test_three_player_eleven_card_deal():
    env = gin_rummy_v0.raw_env(num_players=3, eleven_card_deal=True)
    deck = gin_deck_3p({2: RUN + " Qh", 0: LOOSE}, dealer=1)
    env.reset(options={"deck": deck, "dealer": 1})
    assert env.agent_selection == "player_2"
    assert int(piece(env, "player_2", "hand").sum()) == 11
    legal = np.flatnonzero(env.observe("player_2")["action_mask"])
    assert all(E.DISCARD_BASE <= a < E.MELD_BASE for a in legal)


# -- 4 players ----------------------------------------------------------------------------------


def test_tables_take_turns_and_opponents_rotate_by_round():
    hands = {0: RUN, 1: LOOSE, 2: RUN, 3: LOOSE}
    env = env4(hands, (1, 3), ("Kh", "Kh"), episode="match")
    rec = env.state_record
    assert [list(s) for s in rec["seat"]] == [[0, 1], [2, 3]]
    assert list(piece(env, "player_0", "table_opponent")) == [0, 1, 0, 0]
    # one decision at a time, player_0's table first
    step_as(env, "player_0", TAKE)
    step_as(env, "player_2", TAKE)
    step_as(env, "player_0", knock("Kd"))  # 50 for team A
    assert env.infos["player_0"]["hand_points"] == KNOCK_PTS
    # the partner sees the result of the hand once it is over
    assert piece(env, "player_2", "partner_outcome")[E.OUT_KNOCK] == 1
    scale = GinRummyConfig().hand_score_scale()
    assert list(piece(env, "player_2", "partner_points") * scale) == [KNOCK_PTS, 0]
    # player_3's partner, player_1, lost that hand
    assert piece(env, "player_3", "partner_outcome")[E.OUT_KNOCK] == 1
    assert list(piece(env, "player_3", "partner_points") * scale) == [0, KNOCK_PTS]
    # table 1 is still being played: nothing of it shows at table 0
    assert not piece(env, "player_0", "partner_outcome").any()
    assert not piece(env, "player_1", "partner_points").any()
    step_as(env, "player_2", knock("Kd"))  # 50 more: team A scores 100 < 125
    rec = env.state_record
    assert list(rec["scores"]) == [100, 0, 100, 0]
    assert int(rec["round"]) == 1
    # round 1: player_0 plays player_3, player_2 plays player_1; team B (no score) deals
    assert [list(s) for s in rec["seat"]] == [[0, 3], [2, 1]]
    assert list(rec["table_dealer"]) == [3, 1]
    assert env.agent_selection == "player_0"
    assert list(piece(env, "player_0", "table_opponent")) == [0, 0, 0, 1]
    assert list(piece(env, "player_0", "team_scores") * 125) == [100, 0]
    assert list(piece(env, "player_1", "team_scores") * 125) == [0, 100]
    assert list(piece(env, "player_0", "partner_outcome")) == [0] * 5  # a new round


def _round(hands, dealers, upcards, moves, **options):
    env = env4(hands, dealers, upcards, **options)
    tot = Totals(env)
    for agent, action in moves:
        tot.step(agent, action)
    return env, tot


def test_one_team_wins_both_tables_scores_the_sum():
    hands = {0: RUN, 1: LOOSE, 2: RUN, 3: LOOSE}
    moves = [("player_0", TAKE), ("player_2", TAKE)]
    moves += [("player_0", knock("Kd")), ("player_2", knock("Kd"))]
    env, tot = _round(hands, (1, 3), ("Tc", "Kh"), moves)
    score = GIN_PTS + KNOCK_PTS
    assert tot.sum == {"player_0": score / 2, "player_1": -score / 2,
                       "player_2": score / 2, "player_3": -score / 2}  # fmt: skip
    assert env.infos["player_2"]["round_points"] == score
    assert env.infos["player_1"]["settlement"] == -score


def test_one_table_each_the_higher_hand_scores_the_difference():
    hands = {0: RUN, 1: LOOSE, 2: LOOSE, 3: RUN}
    moves = [("player_0", TAKE), ("player_3", TAKE)]
    moves += [("player_0", knock("Kd")), ("player_3", knock("Kd"))]
    env, tot = _round(hands, (1, 2), ("Kh", "Tc"), moves)  # A: knock 50, B: gin 80
    diff = GIN_PTS - KNOCK_PTS
    assert tot.sum == {"player_0": -diff / 2, "player_1": diff / 2,
                       "player_2": -diff / 2, "player_3": diff / 2}  # fmt: skip
    assert env.infos["player_0"]["round_points"] == 0
    assert env.infos["player_3"]["round_points"] == diff


def test_one_table_each_with_equal_scores_nobody_scores_and_the_round_is_dealt_again():
    hands = {0: RUN, 1: LOOSE, 2: LOOSE, 3: RUN}
    moves = [("player_0", TAKE), ("player_3", TAKE)]
    moves += [("player_0", knock("Kd")), ("player_3", knock("Kd"))]
    env, tot = _round(hands, (1, 2), ("Kh", "Kh"), moves, episode="match")
    assert set(tot.sum.values()) == {0.0}
    rec = env.state_record
    assert list(rec["scores"]) == [0, 0, 0, 0] and list(rec["boxes"]) == [0, 0, 0, 0]
    # the same pairs, the same dealers
    assert int(rec["round"]) == 0
    assert [list(s) for s in rec["seat"]] == [[0, 1], [2, 3]]
    assert list(rec["table_dealer"]) == [1, 2]


def test_undercut_counts_for_the_defenders_team():
    hands = {0: RUN, 1: TIGHT, 2: RUN, 3: LOOSE}
    moves = [("player_0", TAKE), ("player_2", TAKE)]
    moves += [("player_0", knock("Kd")), ("player_2", knock("Kd"))]
    env, tot = _round(hands, (1, 3), ("Kh", "Kh"), moves)
    # B undercut at table 0 (19), A knocked at table 1 (50): A scores 31
    diff = KNOCK_PTS - UNDERCUT_PTS
    assert tot.sum["player_0"] == diff / 2 and tot.sum["player_1"] == -diff / 2
    assert env.infos["player_1"]["outcome"] == "undercut"


def test_a_dead_table_is_won_by_nobody():
    hands = {0: RUN, 1: LOOSE, 2: LOOSE, 3: RUN}
    env = env4(hands, (1, 3), ("Kh", "Qs"))
    tot = Totals(env)
    tot.step("player_0", TAKE)
    tot.step("player_2", PASS)
    tot.step("player_0", knock("Kd"))  # table 0 is over: team A 50
    tot.step("player_3", PASS)
    tot.step("player_2", DRAW)  # table 1 alone now
    env.step(greedy_discard_drawn(env))
    while not env.state_record["done"]:
        draw_and_discard_drawn(env)
        for a in env.possible_agents:
            tot.sum[a] += env.rewards[a]
    assert env.infos["player_2"]["outcome"] == "dead_hand"
    assert tot.sum["player_0"] == KNOCK_PTS / 2 and tot.sum["player_3"] == -KNOCK_PTS / 2


def test_target_125_boxes_and_game_bonus_go_to_the_team():
    hands = {0: RUN, 1: LOOSE, 2: RUN, 3: LOOSE}
    env = env4(hands, (1, 3), ("Kh", "Kh"), episode="match")
    rec = env.game.states[0]
    rec["scores"] = [30, 20, 30, 20]  # team A 30, team B 20 so far
    rec["boxes"] = [1, 1, 1, 1]
    tot = Totals(env)
    tot.step("player_0", TAKE)
    tot.step("player_2", TAKE)
    tot.step("player_0", knock("Kd"))
    assert not env.state_record["done"]
    tot.step("player_2", knock("Kd"))  # 100 more: 130 >= 125
    assert all(env.terminations.values())
    a_total = 130 + 2 * 20 + 100
    b_total = 20 + 1 * 20
    diff = a_total - b_total
    assert env.infos["player_0"]["totals"] == a_total
    assert env.infos["player_3"]["totals"] == b_total
    assert env.infos["player_2"]["settlement"] == diff
    assert env.infos["player_1"]["settlement"] == -diff
    assert tot.sum == {"player_0": diff / 2, "player_1": -diff / 2,
                       "player_2": diff / 2, "player_3": -diff / 2}  # fmt: skip


def test_four_player_shutout_doubles_the_game_bonus():
    hands = {0: RUN, 1: LOOSE, 2: RUN, 3: LOOSE}
    env = env4(hands, (1, 3), ("Tc", "Tc"), episode="match")
    tot = Totals(env)
    for agent, action in [("player_0", TAKE), ("player_2", TAKE)]:
        tot.step(agent, action)
    tot.step("player_0", knock("Kd"))
    tot.step("player_2", knock("Kd"))  # 160 >= 125 in one round, team B scored nothing
    diff = 2 * GIN_PTS + 20 + 200
    assert tot.sum["player_0"] == diff / 2 and tot.sum["player_3"] == -diff / 2
    # ``totals`` hold every bonus, the shutout included, as with 2 players
    for a in ("player_0", "player_2"):
        assert env.infos[a]["totals"] == diff and env.infos[a]["settlement"] == diff
    assert env.infos["player_1"]["totals"] == 0 == env.infos["player_3"]["totals"]


@pytest.mark.parametrize("shutout", ["bonus_200", "double_total"])
def test_totals_mean_the_same_with_2_3_and_4_players(shutout):
    """The winner's ``totals``: boxes, game bonus and the shutout when every loser had it (with
    3 players it is judged per loser, so one shut-out loser shows only in the settlements)."""
    base = 90 + GIN_PTS + 4 * 20
    won = base + 200 if shutout == "bonus_200" else 2 * (base + 100)
    # 3 players, both losers scored nothing: the shutout is in the winner's totals
    env = env3({1: RUN, 2: LOOSE}, dealer=0, upcard="Tc", episode="match", shutout=shutout)
    rec = env.game.states[0]
    rec["scores"] = [0, 90, 0]
    rec["boxes"] = [0, 3, 0]
    tot = Totals(env)
    tot.step("player_1", TAKE)
    tot.step("player_1", knock("Kd"))
    assert env.infos["player_1"]["totals"] == won
    assert env.infos["player_1"]["settlement"] == 2 * won
    assert tot.sum == {"player_0": -won, "player_1": 2 * won, "player_2": -won}
    # 2 players, the same match: the same totals
    env2 = gin_rummy_v0.raw_env(episode="match", shutout=shutout)
    env2.reset(options={"deck": gin_deck(RUN, LOOSE, upcard="Tc"), "dealer": 1})
    st = env2.game.states[0]
    st["scores"] = [90, 0]
    st["boxes"] = [3, 0]
    step_as(env2, "player_0", TAKE)
    step_as(env2, "player_0", knock("Kd"))
    assert all(env2.terminations.values())
    assert env2.infos["player_0"]["totals"] == won


def test_oklahoma_at_both_tables():
    hands = {0: RUN, 1: LOOSE, 2: RUN, 3: LOOSE}
    env = gin_rummy_v0.raw_env(num_players=4, oklahoma=True)
    decks = gin_decks_4p(hands, (1, 3), ("3h", "Ks"), stocks=("5h", ()))
    env.reset(options={"deck": decks, "dealer": [1, 3]})
    assert piece(env, "player_0", "knock_limit")[0] == pytest.approx(0.3)
    assert piece(env, "player_2", "knock_limit")[0] == pytest.approx(1.0)
    assert piece(env, "player_2", "spade_double")[0] == 1
    assert piece(env, "player_0", "spade_double")[0] == 0
    step_as(env, "player_0", PASS)
    step_as(env, "player_2", TAKE)  # the Ks: a knock with 10, doubled
    step_as(env, "player_1", PASS)
    step_as(env, "player_2", knock("Kd"))
    assert env.infos["player_2"]["hand_points"] == 2 * KNOCK_PTS
    step_as(env, "player_0", DRAW)  # the 5h: 5 deadwood, over the limit of 3 set by the 3h
    legal = np.flatnonzero(env.observe("player_0")["action_mask"])
    assert not any(E.KNOCK_BASE <= a < E.MELD_BASE for a in legal)
    assert env.state_record["boards"]["knock_limit"].tolist() == [3, 10]


def test_decks_helpers_deal_the_hands_by_seat():
    hands = {0: RUN, 1: LOOSE, 2: TIGHT, 3: RUN}
    env = env4(hands, (0, 3), ("Kh", "Tc"))
    rec = env.state_record
    for seat, text in hands.items():
        t, j = int(rec["board_of"][seat]), int(rec["local"][seat])
        assert int(rec["boards"][t]["hands"][j]) == cards_to_mask(text)
    assert env.agent_selection == "player_1"  # player_0 deals at table 0
    with pytest.raises(ValueError, match="dealers"):
        gin_decks_4p(hands, (0, 1), ("Kh", "Tc"))
    with pytest.raises(ValueError, match="seats"):
        gin_deck_3p({0: RUN, 1: LOOSE}, dealer=0, upcard="Kh")
