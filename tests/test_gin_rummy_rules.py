"""Gin Rummy rules (RULES.md §1), one test per rule and option, on stacked decks.

Unless said otherwise player_1 deals, so player_0 is the non-dealer and acts first.
"""

from __future__ import annotations

import numpy as np
import pytest
from gin_rummy_helpers import (
    P0,
    P1,
    cards,
    draw_and_discard_drawn,
    hand,
    legal,
    play,
    remaining_cards,
    stock_cards,
    table,
)

from rummy_env import gin_rummy_v0
from rummy_env.core.cards import parse_cards
from rummy_env.encodings import gin_rummy as E

# player_0: melds A-2-3 clubs, 5-6-7 diamonds, 9-9-9; deadwood K♦ (10)
KNOCKER = "Ac 2c 3c 5d 6d 7d 9h 9s 9c Kd"
# player_1: no melds, deadwood 68
LOOSE = "4h 5h Qs Js 2d 8c Tc Th 3s 6s"


# -- §1.2 deal ----------------------------------------------------------------------------------


def test_deal_ten_cards_each_upcard_and_stock():
    env = table(KNOCKER, LOOSE, "Ks")
    rec = env.state_record
    assert hand(env, 0) == cards(KNOCKER)
    assert hand(env, 1) == cards(LOOSE)
    assert int(rec["pile_n"]) == 1 and int(rec["pile"][0]) == parse_cards("Ks")[0]
    assert len(stock_cards(env)) == 31
    assert env.agent_selection == P0  # the non-dealer is offered the upcard first


def test_first_dealer_is_random_but_seeded():
    dealers = set()
    for seed in range(20):
        env = gin_rummy_v0.raw_env()
        env.reset(seed=seed)
        d = int(env.state_record["dealer"])
        dealers.add(d)
        env2 = gin_rummy_v0.raw_env()
        env2.reset(seed=seed)
        assert int(env2.state_record["dealer"]) == d
        assert np.array_equal(env.state_record["deck"], env2.state_record["deck"])
    assert dealers == {0, 1}


# -- §1.3 upcard offer --------------------------------------------------------------------------


def test_upcard_offer_non_dealer_then_dealer_then_forced_stock_draw():
    env = table(KNOCKER, LOOSE, "Ks")
    assert legal(env) == {"TAKE_DISCARD", "PASS"}
    play(env, "PASS")
    assert env.agent_selection == P1 and legal(env) == {"TAKE_DISCARD", "PASS"}
    play(env, "PASS")
    assert env.agent_selection == P0
    assert legal(env) == {"DRAW_STOCK"}  # both passed: the non-dealer must draw from the stock
    top = stock_cards(env)[0]
    play(env, "DRAW_STOCK")
    assert hand(env, 0) >> top & 1


def test_taking_the_upcard_then_discarding_ends_the_turn():
    env = table(KNOCKER, LOOSE, "Ks")
    play(env, "TAKE_DISCARD")
    assert env.agent_selection == P0 and hand(env, 0) & cards("Ks")
    assert "DISCARD[Ks]" not in legal(env)  # the card just taken may not be discarded
    play(env, "DISCARD[Kd]")
    assert env.agent_selection == P1
    assert legal(env) == {"DRAW_STOCK", "TAKE_DISCARD"}


def test_dealer_takes_the_upcard_after_non_dealer_passes():
    env = table(KNOCKER, LOOSE, "Ks")
    play(env, "PASS", "TAKE_DISCARD")
    assert hand(env, 1) & cards("Ks")
    play(env, "DISCARD[2d]")
    assert env.agent_selection == P0  # play continues with the non-dealer
    assert legal(env) == {"DRAW_STOCK", "TAKE_DISCARD"}


def test_allow_discard_of_drawn_upcard_variant():
    env = table(KNOCKER, LOOSE, "Ks", allow_discard_of_drawn_upcard=True)
    play(env, "TAKE_DISCARD")
    assert "DISCARD[Ks]" in legal(env)
    play(env, "DISCARD[Ks]")
    assert env.agent_selection == P1


# -- §1.4 normal turn ---------------------------------------------------------------------------


def test_card_taken_from_discard_pile_cannot_be_discarded_in_normal_turn():
    env = table(KNOCKER, LOOSE, "Ks")
    play(env, "PASS", "PASS", "DRAW_STOCK", "DISCARD[Kd]")
    play(env, "TAKE_DISCARD")  # player_1 takes K♦
    assert "DISCARD[Kd]" not in legal(env) and "DISCARD[Qs]" in legal(env)
    with pytest.raises(ValueError, match="just taken from the discard pile"):
        play(env, "DISCARD[Kd]")


# -- §1.5 knocking and gin ----------------------------------------------------------------------


def test_knock_allowed_only_within_the_knock_limit():
    env = table(KNOCKER, LOOSE, "Qh")
    play(env, "TAKE_DISCARD")
    # discarding K♦ leaves Q♥ (10) as deadwood: a knock; discarding a 9 breaks the group
    assert "KNOCK[Kd]" in legal(env)
    assert "KNOCK[9h]" not in legal(env)
    assert "KNOCK[Qh]" not in legal(env)  # the taken card cannot be the knock discard either
    env = table(KNOCKER, LOOSE, "Qh", knock_limit=9)
    play(env, "TAKE_DISCARD")
    assert not any(a.startswith("KNOCK") for a in legal(env))
    with pytest.raises(ValueError, match="knock limit 9"):
        play(env, "KNOCK[Kd]")


def test_knocking_is_never_forced():
    env = table(KNOCKER, LOOSE, "3h")
    play(env, "TAKE_DISCARD")
    assert {"KNOCK[Kd]", "DISCARD[Kd]"} <= legal(env)
    play(env, "DISCARD[Kd]")
    assert env.agent_selection == P1 and not env.terminations[P0]


def test_gin_scores_bonus_plus_defender_deadwood_without_layoffs():
    # the defender's 5♣ would fit the knocker's A-2-3-4♣, but no lay-offs on gin
    defender = "4h 5h Qs Js 2d 5c Tc Th 3s 6s"
    env = table(KNOCKER, defender, "4c")
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert E.OUTCOME_NAMES[int(rec["outcome"])] == "gin"
    assert list(rec["deadwood"]) == [0, 65]
    assert list(rec["hand_points"]) == [85, 0]
    assert env.rewards == {P0: 85.0, P1: -85.0}
    assert env.terminations == {P0: True, P1: True}
    assert not rec["laid_off"]


def test_gin_is_never_undercut_even_by_zero_deadwood():
    defender = "Qs Qh Qc 4s 5s 6s 7s 8h 8s 8d"
    env = table(KNOCKER, defender, "4c")
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert list(rec["deadwood"]) == [0, 0]
    assert list(rec["hand_points"]) == [20, 0]
    assert env.rewards[P0] == 20.0


def test_knock_with_layoffs_including_chains_and_fourth_of_a_group():
    # knocker: A-2-3♣, 5-6-7♦, 9♥9♠9♣, deadwood 3♥ after taking it and knocking with K♦
    # defender lays off 4♣ (run end), 8♦ then 9♦ (a chain on 5-6-7♦, or 9♦ to the nines)
    defender = "4c 8d 9d 4h 5h Qs Js 2d Th 3s"
    env = table(KNOCKER, defender, "3h")
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert E.OUTCOME_NAMES[int(rec["outcome"])] == "knock"
    assert int(rec["laid_off"]) == cards("4c 8d 9d")
    assert list(rec["deadwood"]) == [3, 65 - 4 - 8 - 9]
    assert list(rec["hand_points"]) == [41, 0]
    assert env.rewards == {P0: 41.0, P1: -41.0}


def test_undercut_scores_difference_plus_bonus_to_defender():
    # knocker keeps K♥ (10); defender melds everything but 8♦, which it lays off on 5-6-7♦
    defender = "Qs Qh Qc 4s 5s 6s 8d 2h Ah 3h"
    env = table(KNOCKER, defender, "Kh")
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert E.OUTCOME_NAMES[int(rec["outcome"])] == "undercut"
    assert list(rec["deadwood"]) == [10, 0]
    assert list(rec["hand_points"]) == [0, 20]
    assert env.rewards == {P0: -20.0, P1: 20.0}


def test_equal_deadwood_is_an_undercut():
    defender = "Qs Qh Qc 4s 5s 6s Td 2h Ah 3h"  # T♦ cannot be laid off: deadwood 10 = 10
    env = table(KNOCKER, defender, "Kh")
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert list(rec["deadwood"]) == [10, 10]
    assert list(rec["hand_points"]) == [0, 10]


@pytest.mark.parametrize("gin_bonus,undercut_bonus", [(25, 20), (25, 25)])
def test_bonus_options(gin_bonus, undercut_bonus):
    env = table(KNOCKER, "4h 5h Qs Js 2d 5c Tc Th 3s 6s", "4c", gin_bonus=gin_bonus)
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    assert int(env.state_record["hand_points"][0]) == gin_bonus + 65
    env = table(KNOCKER, "Qs Qh Qc 4s 5s 6s 8d 2h Ah 3h", "Kh", undercut_bonus=undercut_bonus)
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    assert int(env.state_record["hand_points"][1]) == 10 + undercut_bonus


def test_auto_meld_knocker_breaks_ties_by_fewest_possible_layoffs():
    # J♣J♦J♥ + Q♥K♥ deadwood, or J-Q-K♥ + J♣J♦ deadwood: both 20. The group admits one lay-off
    # (J♠); the run admits T♥ and the hearts below it. The environment chooses the group.
    knocker = "Jc Jd Jh Qh Kh Ac 2c 3c 4c 5c"
    env = table(knocker, LOOSE.replace("Js", "7d"), "8h", stock="Kd", knock_limit=20)
    play(env, "PASS", "PASS", "DRAW_STOCK", "KNOCK[Kd]")
    rec = env.state_record
    melds = sorted(int(m) for m in rec["melds"][0][: int(rec["n_melds"][0])])
    assert melds == sorted([cards("Jc Jd Jh"), cards("Ac 2c 3c 4c 5c")])
    assert int(rec["deadwood"][0]) == 20


# -- §1.6 exhausted stock -----------------------------------------------------------------------


def _play_to_stock(env, n_left):
    """Both players draw from the stock and discard the card drawn until n_left cards remain."""
    play(env, "PASS", "PASS")
    while len(stock_cards(env)) > n_left:
        draw_and_discard_drawn(env)


def test_dead_hand_when_two_stock_cards_remain_after_a_discard():
    env = table(KNOCKER, LOOSE, "Ks")
    _play_to_stock(env, 3)
    assert not env.terminations[P0]
    assert env.agent_selection == P0  # player_0 draws the third-last card
    draw_and_discard_drawn(env)
    rec = env.state_record
    assert len(stock_cards(env)) == 2
    assert E.OUTCOME_NAMES[int(rec["outcome"])] == "dead_hand"
    assert env.terminations == {P0: True, P1: True}
    assert env.rewards == {P0: 0.0, P1: 0.0}


def test_knock_still_allowed_after_drawing_the_third_last_card():
    stock = remaining_cards(KNOCKER, LOOSE, "Ks", "4c")[:28] + parse_cards("4c")
    env = table(KNOCKER, LOOSE, "Ks", stock)
    _play_to_stock(env, 3)
    play(env, "DRAW_STOCK")  # player_0 draws 4♣: gin by knocking with K♦
    assert "KNOCK[Kd]" in legal(env)
    play(env, "KNOCK[Kd]")
    assert E.OUTCOME_NAMES[int(env.state_record["outcome"])] == "gin"


def _fiftieth_table(p1_hand, last_card, **options):
    stock = remaining_cards(KNOCKER, p1_hand, "Ks", last_card)[:28] + parse_cards(last_card)
    env = table(KNOCKER, p1_hand, "Ks", stock, **options)
    _play_to_stock(env, 3)
    play(env, "DRAW_STOCK", f"DISCARD[{last_card}]")
    return env


def test_fiftieth_card_action_take_the_card_and_knock_with_it():
    p1 = "Qs Qh Qc 4s 5s 6s 8h 8s 8c 2h"  # deadwood 2 already: the 50th card only to knock
    env = _fiftieth_table(p1, "Kh", fiftieth_card_action=True)
    assert env.agent_selection == P1 and legal(env) == {"TAKE_DISCARD", "PASS"}
    play(env, "TAKE_DISCARD")
    assert all(a.startswith("KNOCK") for a in legal(env))
    assert "KNOCK[Kh]" in legal(env)  # may discard that very card face down
    play(env, "KNOCK[Kh]")
    rec = env.state_record
    assert int(rec["knocker"]) == 1 and int(rec["deadwood"][1]) == 2


def test_fiftieth_card_action_pass_is_a_dead_hand():
    env = _fiftieth_table("Qs Qh Qc 4s 5s 6s 8h 8s Ah 2h", "8d", fiftieth_card_action=True)
    assert env.agent_selection == P1
    play(env, "TAKE_DISCARD")  # with 8♦: 8-8-8, deadwood A+2 after discarding
    assert "KNOCK[Ah]" in legal(env) and "KNOCK[8d]" not in legal(env)
    env = _fiftieth_table("Qs Qh Qc 4s 5s 6s 8h 8s Ah 2h", "8d", fiftieth_card_action=True)
    play(env, "PASS")
    assert E.OUTCOME_NAMES[int(env.state_record["outcome"])] == "dead_hand"


def test_fiftieth_card_not_offered_when_no_knock_is_possible():
    env = _fiftieth_table(LOOSE, "Kh", fiftieth_card_action=True)
    assert env.terminations[P1]
    assert E.OUTCOME_NAMES[int(env.state_record["outcome"])] == "dead_hand"


def test_without_fiftieth_card_action_the_hand_is_dead_at_once():
    env = _fiftieth_table("Qs Qh Qc 4s 5s 6s 8h 8s 8c 2h", "Kh")
    assert env.terminations[P1]
    assert E.OUTCOME_NAMES[int(env.state_record["outcome"])] == "dead_hand"


# -- §1.3 variant: eleven-card deal -------------------------------------------------------------


def test_eleven_card_deal():
    nd = KNOCKER + " 4c"
    env = table(nd, LOOSE, None, eleven_card_deal=True)
    rec = env.state_record
    assert int(rec["pile_n"]) == 0 and len(stock_cards(env)) == 31
    assert hand(env, 0) == cards(nd) and hand(env, 1) == cards(LOOSE)
    moves = legal(env)
    assert all(m.startswith(("DISCARD", "KNOCK")) for m in moves)  # no draw on the first move
    assert "KNOCK[Kd]" in moves  # knocking on the first move is allowed (here: gin)
    play(env, "DISCARD[Kd]")
    assert env.agent_selection == P1 and legal(env) == {"DRAW_STOCK", "TAKE_DISCARD"}


# -- §1.7 hand score: normalised rewards, truncation --------------------------------------------


def test_normalized_reward():
    env = table(KNOCKER, "4h 5h Qs Js 2d 5c Tc Th 3s 6s", "4c", reward="normalized")
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    assert env.rewards[P0] == pytest.approx(85 / 120)
    assert env.infos[P0]["hand_points"] == 85


def test_max_steps_truncates():
    env = table(KNOCKER, LOOSE, "Ks", max_steps=3)
    play(env, "PASS", "PASS")
    assert not env.truncations[P0]
    play(env, "DRAW_STOCK")
    assert env.truncations == {P0: True, P1: True}
    assert env.terminations == {P0: False, P1: False}


# -- §1.9 Oklahoma ------------------------------------------------------------------------------


@pytest.mark.parametrize("upcard,limit", [("7h", 7), ("Kc", 10), ("Td", 10), ("Ah", 1), ("2h", 2)])
def test_oklahoma_upcard_sets_knock_limit(upcard, limit):
    env = table(KNOCKER, LOOSE.replace("Th", "Ts") if upcard == "Th" else LOOSE, upcard,
                oklahoma=True)  # fmt: skip
    assert int(env.state_record["knock_limit"]) == limit


def test_oklahoma_limit_applies_to_knocks():
    # upcard 7♥: deadwood 4 may knock, deadwood 8 may not
    env = table("Ac 2c 3c 5d 6d 7d 9h 9s 9c 4d", LOOSE, "7h", stock="Kd", oklahoma=True)
    play(env, "PASS", "PASS", "DRAW_STOCK")
    assert "KNOCK[Kd]" in legal(env)
    env = table("Ac 2c 3c 5d 6d 7d 9h 9s 9c 8c", LOOSE.replace("8c", "4d"), "7h", stock="Kd",
                oklahoma=True)  # fmt: skip
    play(env, "PASS", "PASS", "DRAW_STOCK")
    assert "KNOCK[Kd]" not in legal(env)


def test_oklahoma_ace_gin_only():
    env = table(KNOCKER, LOOSE, "Ah", oklahoma=True, oklahoma_ace_gin_only=True)
    assert int(env.state_record["knock_limit"]) == 0


def test_oklahoma_spade_upcard_doubles_score_and_extra_boxes():
    knocker = "As 2s 3s 5d 6d 7d 9h 9d 9c Kd"
    defender = "4h 5h Qc Jd 2d 8c Tc Th 3d 7h"  # no melds, deadwood 69
    env = table(knocker, defender, "4s", oklahoma=True, oklahoma_extra_boxes=True,
                episode="match", target=1000)  # fmt: skip
    rec = env.state_record
    assert int(rec["spade_double"]) == 1 and int(rec["knock_limit"]) == 4
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert list(rec["hand_points"]) == [2 * (20 + 69), 0]
    assert int(rec["boxes"][0]) == 1 + 4  # the box for the hand + 4 extra boxes (gin on spades)


def test_oklahoma_extra_box_for_undercut():
    env = table(KNOCKER, "Qs Qh Qc 4s 5s 6s 8d 2h Ah 3h", "Kh", oklahoma=True,
                oklahoma_extra_boxes=True, episode="match", target=1000)  # fmt: skip
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert list(rec["hand_points"]) == [0, 20]
    assert int(rec["boxes"][1]) == 2


# -- §1.8 match ---------------------------------------------------------------------------------


GIN_TABLE = (KNOCKER, "4h 5h Qs Js 2d 5c Tc Th 3s 6s", "4c")  # player_0 gins for 85


def test_match_ends_at_target_with_shutout_game_bonus_and_box():
    env = table(*GIN_TABLE, episode="match", target=50)
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert env.terminations[P0]
    # 85 points + 1 box (20) + shutout game bonus (200); the loser has 0
    assert list(rec["totals"]) == [305, 0]
    assert env._cumulative_rewards[P0] == 305.0 and env._cumulative_rewards[P1] == -305.0


def test_match_shutout_double_total_variant():
    env = table(*GIN_TABLE, episode="match", target=50, shutout="double_total")
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    assert list(env.state_record["totals"]) == [(85 + 20 + 100) * 2, 0]


def test_match_without_shutout_and_box_bonus_option():
    env = table(*GIN_TABLE, episode="match", target=50, box_bonus=25, game_bonus=150)
    env.game.states["scores"][0] = [0, 5]  # player_1 won an earlier hand
    env.game.states["boxes"][0] = [0, 1]
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert list(rec["totals"]) == [85 + 25 + 150, 5 + 25]
    diff = 85 + 25 + 150 - 30
    # this hand paid 85; the bonuses settle the rest of the final difference
    assert env.rewards[P0] == 85 + (diff - (85 - 5))


def test_match_continues_below_target_and_loser_deals_next():
    env = table(*GIN_TABLE, episode="match", target=100)
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    rec = env.state_record
    assert not env.terminations[P0]
    assert env.infos[P0]["outcome"] == "gin" and env.infos[P0]["hand_points"] == 85
    assert env.rewards == {P0: 85.0, P1: -85.0}
    assert list(rec["scores"]) == [85, 0] and int(rec["hands_played"]) == 1
    assert int(rec["dealer"]) == 1  # player_1 lost: deals the next hand
    assert E.PHASE_NAMES[int(rec["phase"])] == "upcard_offer"
    assert env.agent_selection == P0


@pytest.mark.parametrize("rule,dealer", [("winner", 0), ("alternate", 0), ("loser", 1)])
def test_next_dealer_variants(rule, dealer):
    env = table(*GIN_TABLE, dealer_seat=1, episode="match", next_dealer=rule)
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    assert int(env.state_record["dealer"]) == dealer


def test_dead_hand_in_a_match_is_redealt_by_the_same_dealer():
    env = table(KNOCKER, LOOSE, "Ks", episode="match")
    _play_to_stock(env, 3)
    draw_and_discard_drawn(env)
    rec = env.state_record
    assert not env.terminations[P0]
    assert int(rec["hands_played"]) == 1 and int(rec["dealer"]) == 1
    assert list(rec["scores"]) == [0, 0]
    assert len(stock_cards(env)) == 31


def test_oklahoma_target_option_is_independent():
    env = gin_rummy_v0.raw_env(oklahoma=True, target=150, episode="match")
    assert env.config.target == 150


# -- manual melds (auto_meld=False) -------------------------------------------------------------


def test_manual_knocker_declares_melds_with_exact_mask():
    defender = "4c 8d 9d 4h 5h Qs Js 2d Th 3s"
    env = table(KNOCKER, defender, "3h", auto_meld=False)
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    assert env.agent_selection == P0
    assert legal(env) == {
        "MELD[run Ac 2c 3c]",
        "MELD[run 5d 6d 7d]",
        "MELD[group 9c 9h 9s]",
    }  # END_MELDING is illegal: 34 unmelded > 10
    play(env, "MELD[Ac 2c 3c]", "MELD[5d 6d 7d]")
    assert "END_MELDING" not in legal(env)
    play(env, "MELD[9c 9h 9s]")
    assert legal(env) == {"END_MELDING"}
    play(env, "END_MELDING")
    # the defender: lay-offs on the knocker's slots (0: A-2-3♣, 1: 5-6-7♦, 2: nines)
    assert env.agent_selection == P1
    moves = legal(env)
    assert {"LAYOFF[4c, slot 0]", "LAYOFF[8d, slot 1]", "LAYOFF[9d, slot 2]"} <= moves
    assert "LAYOFF[9d, slot 1]" not in moves  # 9♦ reaches the run only after 8♦
    play(env, "LAYOFF[8d, 1]")
    assert "LAYOFF[9d, slot 1]" in legal(env)
    play(env, "LAYOFF[9d, 1]", "LAYOFF[4c, 0]", "END_MELDING")
    rec = env.state_record
    assert list(rec["deadwood"]) == [3, 44] and list(rec["hand_points"]) == [41, 0]


def test_manual_knocker_may_leave_a_meld_unmelded_within_the_limit():
    knocker = "Ac 2c 3c 5d 6d 7d 9h 9s 9c 2h"  # deadwood 2
    env = table(knocker, LOOSE, "Ah", auto_meld=False)
    play(env, "TAKE_DISCARD", "KNOCK[2h]")  # keeps A♥: deadwood 1
    play(env, "MELD[5d 6d 7d]", "MELD[9c 9h 9s]")
    assert "END_MELDING" in legal(env)  # A-2-3♣ left unmelded: 1 + 6 = 7 <= 10
    play(env, "END_MELDING")
    play(env, "END_MELDING")
    assert int(env.state_record["deadwood"][0]) == 7


def test_manual_gin_allows_no_layoffs_but_own_melds():
    defender = "4h 5h 6h Js 2d 5c Tc Th 3s 6s"
    env = table(KNOCKER, defender, "4c", auto_meld=False)
    play(env, "TAKE_DISCARD", "KNOCK[Kd]")
    play(env, "MELD[Ac 2c 3c 4c]", "MELD[5d 6d 7d]", "MELD[9c 9h 9s]", "END_MELDING")
    moves = legal(env)
    assert not any(m.startswith("LAYOFF") for m in moves)  # 5♣ would fit, but gin
    assert "MELD[run 4h 5h 6h]" in moves
    play(env, "MELD[4h 5h 6h]", "END_MELDING")
    rec = env.state_record
    assert E.OUTCOME_NAMES[int(rec["outcome"])] == "gin"
    assert list(rec["hand_points"]) == [20 + int(rec["deadwood"][1]), 0]


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options,match",
    [
        ({"knock_limit": -1}, "knock_limit"),
        ({"gin_bonus": "20"}, "gin_bonus"),
        ({"shutout": "triple"}, "shutout"),
        ({"next_dealer": "north"}, "next_dealer"),
        ({"episode": "game"}, "episode"),
        ({"reward": "shaped"}, "reward"),
        ({"oklahoma": True, "eleven_card_deal": True}, "eleven_card_deal"),
        ({"oklahoma_ace_gin_only": True}, "oklahoma_ace_gin_only"),
        ({"oklahoma_extra_boxes": True}, "oklahoma_extra_boxes"),
        ({"num_players": 5}, "num_players"),
        ({"num_players": 3, "next_dealer": "alternate"}, "next_dealer"),
        ({"num_players": 4, "target": 0}, "target"),
        ({"max_steps": 0}, "max_steps"),
        ({"auto_meld": 1}, "auto_meld"),
        ({"knock_limt": 5}, "knock_limt"),
    ],
)
def test_bad_options_raise_naming_the_option(options, match):
    with pytest.raises(ValueError, match=match):
        gin_rummy_v0.raw_env(**options)


@pytest.mark.parametrize(
    "deck,match",
    [
        (list(range(51)), "51 cards"),
        (list(range(51)) + [0], "duplicated"),
        (["As"] * 52, "duplicated"),
        (["Xx"] + list(range(1, 52)), "cannot read card"),
        (list(range(1, 53)), "JK"),
    ],
)
def test_malformed_decks_raise(deck, match):
    env = gin_rummy_v0.raw_env()
    with pytest.raises(ValueError, match=match):
        env.reset(options={"deck": deck})


def test_illegal_actions_raise_with_name_and_reason():
    env = table(KNOCKER, LOOSE, "Ks")
    with pytest.raises(ValueError, match=r"DISCARD\[Kd\].*upcard_offer"):
        play(env, "DISCARD[Kd]")
    play(env, "PASS", "PASS")
    with pytest.raises(ValueError, match="must draw stock"):
        play(env, "TAKE_DISCARD")
    play(env, "DRAW_STOCK")
    with pytest.raises(ValueError, match=r"DISCARD\[Qs\].*not in the hand"):
        play(env, "DISCARD[Qs]")
    with pytest.raises(ValueError, match="out of range"):
        env.step(999)
    with pytest.raises(ValueError, match="auto_meld=False"):
        env.step(E.END_MELDING)


def test_wrapped_env_terminates_on_illegal_move():
    env = gin_rummy_v0.env()
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(E.KNOCK_BASE + 51)  # illegal: the wrapper ends the game
    assert all(env.terminations.values())
    assert env.rewards[agent] == -1


def test_pile_draws_are_capped_so_every_hand_ends():
    env = table(KNOCKER, LOOSE, "Ks", max_pile_draws=2)
    play(env, "PASS", "PASS", "DRAW_STOCK", "DISCARD[Kd]")
    play(env, "TAKE_DISCARD", "DISCARD[Qs]")  # player_1 takes K♦: first pile draw
    play(env, "TAKE_DISCARD", "DISCARD[Ac]")  # player_0 takes Q♠: second
    assert env.agent_selection == P1 and legal(env) == {"DRAW_STOCK"}
    with pytest.raises(ValueError, match="2 pile draws"):
        play(env, "TAKE_DISCARD")
