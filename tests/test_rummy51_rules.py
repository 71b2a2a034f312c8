"""Rummy 51 rules (RULES.md §3), one test per rule and option, on stacked decks.

Hands are given per seat (13 cards each). Unless said otherwise the last seat deals, so player_0
acts first; the stock is drawn in the order given. Every mask looked at here is also checked
against the slow reference (``reference_rummy51``).
"""

from __future__ import annotations

import numpy as np
import pytest
from reference_rummy51 import reference_mask

from rummy_env import rummy51_v1
from rummy_env.core.cards import parse_cards
from rummy_env.encodings import rummy51 as E
from rummy_env.render.text import meld_text
from rummy_env.testing import joker_deck

# a hand that holds no meld and lays off on nothing below (penalty 86)
LOOSE = "2c 4d 6h 8s Tc Qd 3s 5c 7d 9h Jc Kh 2h"


def deal(hands, upcard="4s", stock=(), dealer=None, **options):
    """A raw env dealt from a stacked deck (the last seat deals by default)."""
    env = rummy51_v1.raw_env(num_players=len(hands), **options)
    dealer = len(hands) - 1 if dealer is None else dealer
    deck = joker_deck(hands, upcard, stock, num_decks=2, jokers=4, dealer=dealer)
    env.reset(options={"deck": deck, "dealer": dealer})
    return env


def ids(env) -> dict[str, int]:
    lay = env.layout
    return {lay.action_name(a): a for a in range(lay.num_actions)}


def legal(env) -> set[str]:
    """Names of the legal actions of the player to act (checked against the reference)."""
    mask = env.observe(env.agent_selection)["action_mask"]
    got = set(np.flatnonzero(mask).tolist())
    assert got == reference_mask(env.state_record, env.config)
    return {env.layout.action_name(a) for a in got}


def play(env, *names):
    """Step the named actions in order (each must be legal)."""
    table = ids(env)
    for n in names:
        assert n in legal(env), f"{n} is not legal; legal: {sorted(legal(env))}"
        env.step(table[n])


def melds(env) -> list[str]:
    rec = env.state_record
    return [meld_text(rec, m) for m in range(int(rec["n_melds"]))]


def hand(env, p) -> list[int]:
    rec = env.state_record
    return [c for c in range(53) for _ in range(int(rec["hands"][p][c]))]


def kinds(names: set[str], prefix: str) -> set[str]:
    return {n for n in names if n.startswith(prefix)}


# -- 3.1 / 3.2: players, cards, deal -----------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_deal_two_decks_four_jokers_thirteen_each_and_the_upcard(players):
    env = rummy51_v1.raw_env(num_players=players)
    env.reset(seed=players)
    rec = env.state_record
    assert sorted(int(x) for x in rec["deck"]) == sorted(list(range(52)) * 2 + [52] * 4)
    for q in range(players):
        assert int(rec["hands"][q].sum()) == 13
    assert int(rec["pile_n"]) == 1
    assert 108 - int(rec["deck_pos"]) == 108 - 13 * players - 1
    assert int(rec["cur"]) == (int(rec["dealer"]) + 1) % players
    assert env.agent_selection == f"player_{int(rec['cur'])}"


def test_stacked_deal_goes_round_from_the_dealers_left():
    hands = [
        LOOSE,
        "3c 5d 7h 9s Jd Kc 4s 6c 8d Th Qc Ah 3h",
        "Ac Ad 2d 2s 3d 4c 4h 5h 5s 6d 6s 7c 7s",
    ]
    env = deal(hands, "8c", dealer=1)
    for q in range(3):
        assert hand(env, q) == sorted(parse_cards(hands[q]))
    assert env.agent_selection == "player_2"  # left of the dealer
    assert int(env.state_record["pile"][0]) == parse_cards("8c")[0]


# -- 3.3: the turn -------------------------------------------------------------------------------


def test_draw_is_compulsory_then_the_turn_ends_only_with_a_discard():
    env = deal([LOOSE, LOOSE], "4s", stock="9c")
    assert legal(env) == {"DRAW_STOCK", "TAKE_DISCARD"}
    play(env, "DRAW_STOCK")
    names = legal(env)
    assert names == {f"DISCARD[{c}]" for c in "2c 4d 6h 8s Tc Qd 3s 5c 7d 9h Jc Kh 2h 9c".split()}
    play(env, "DISCARD[9c]")
    assert env.agent_selection == "player_1"


def test_the_card_taken_from_the_pile_may_not_be_discarded_that_turn():
    env = deal([LOOSE, LOOSE], "Ks")
    play(env, "TAKE_DISCARD")
    names = legal(env)
    assert "DISCARD[Ks]" not in names and "DISCARD[Kh]" in names
    assert "taken" in env.game.explain_illegal(0, ids(env)["DISCARD[Ks]"])


# -- 3.1 / 3.4: values and the 51-point opening ------------------------------------------------


def test_opening_needs_51_points_of_new_melds_and_masks_melds_that_cannot_reach_it():
    # K K K (30) and 9-10-J of clubs (29): 59, an opening
    env = deal(["Ks Kh Kd 9c Tc Jc 2d 5h 7s 3c 4h 8d 6s", LOOSE], stock="2s")
    play(env, "DRAW_STOCK")
    names = kinds(legal(env), "MELD")
    assert names == {"MELD[group K: d h s]", "MELD[run c 9..J]"}
    play(env, "MELD[group K: d h s]")
    # an opening begun but short: no discard, only the meld that completes it
    assert legal(env) == {"MELD[run c 9..J]"}
    play(env, "MELD[run c 9..J]")
    rec = env.state_record
    assert rec["opened"][0] and int(rec["open_pts"]) == 59
    assert "DISCARD[2s]" in legal(env)


def test_fifty_points_is_not_an_opening_so_no_meld_is_allowed():
    # K K K (30) and 2-3-4-5-6 of clubs (20): 50 < 51
    p0 = "Ks Kh Kd 2c 3c 4c 5c 6c 9h Js 8d Ts Qd"
    env = deal([p0, LOOSE], stock="2s")
    play(env, "DRAW_STOCK")
    assert not kinds(legal(env), "MELD")
    # with a threshold of 50 exactly the two melds that make 50 together are allowed
    env2 = deal([p0, LOOSE], stock="2s", opening_threshold=50)
    play(env2, "DRAW_STOCK")
    assert kinds(legal(env2), "MELD") == {"MELD[group K: d h s]", "MELD[run c 2..6]"}


def test_aces_count_11_high_and_in_groups_but_1_at_the_low_end():
    # Q-K-A of hearts (31) + A-2-3 of spades (6) + 5 5 5 (15) = 52
    env = deal(["Qh Kh Ah As 2s 3s 5c 5d 5s 9c Jd 7h 8c", LOOSE], stock="2d")
    play(env, "DRAW_STOCK")
    assert "MELD[run s A..3]" in legal(env)
    play(env, "MELD[run h Q..A]", "MELD[run s A..3]")
    assert int(env.state_record["open_pts"]) == 37 and not env.state_record["opened"][0]
    play(env, "MELD[group 5: c d s]")
    assert int(env.state_record["open_pts"]) == 52 and env.state_record["opened"][0]
    # with the ace of spades high instead (Q-K-A and A-2-3 cannot share it), 4 4 4 short
    env = deal(["Qh Kh Ah 2s 3s 5c 5d 5s 9c Jd 7h 8c 4d", LOOSE], stock="2d")
    play(env, "DRAW_STOCK")
    assert not kinds(legal(env), "MELD")  # 31 + 15 = 46


def test_a_melded_joker_counts_as_the_card_it_stands_for():
    # K K JK = 30 and 9-10-JK(J) of hearts = 29: 59 with two jokers
    env = deal(["Kc Kd JK 9h Th 2d 5s 7c 3c 4h 8d JK Qc", LOOSE], stock="2s")
    play(env, "DRAW_STOCK")
    names = kinds(legal(env), "MELD")
    assert "MELD[group K: c d + 1 JK]" in names and "MELD[run h 9..J]" in names
    play(env, "MELD[group K: c d + 1 JK]")
    assert int(env.state_record["open_pts"]) == 30
    play(env, "MELD[run h 9..J]")
    assert int(env.state_record["open_pts"]) == 59 and env.state_record["opened"][0]
    # with one joker the two melds cannot both be made: no opening, so no meld at all
    env = deal(["Kc Kd JK 9h Th 2d 5s 7c 3c 4h 8d 6s Qc", LOOSE], stock="2s")
    play(env, "DRAW_STOCK")
    assert not kinds(legal(env), "MELD")


def test_no_layoff_or_retrieval_before_opening_then_allowed_in_the_opening_turn():
    p0 = "Ks Kh Kd 9c Tc Jc 2d 5h 7s 3c 4h 8d 6s"  # opens with 59
    p1 = "Qs Qh Qd 8h 9h Th Kc 5c 7d 2c 4s 3d 6h"  # Kc fits p0's kings; Q Q Q + 8-9-10 = 57
    env = deal([p0, p1], stock="2s 3s")
    play(env, "DRAW_STOCK", "MELD[group K: d h s]", "MELD[run c 9..J]", "DISCARD[2s]")
    play(env, "DRAW_STOCK")
    names = legal(env)
    assert not kinds(names, "LAYOFF")  # player_1 has not opened
    assert "need the opening" in env.game.explain_illegal(0, ids(env)["LAYOFF[Kc, 0]"])
    play(env, "MELD[group Q: d h s]", "MELD[run h 8..T]")
    assert "LAYOFF[Kc, 0]" in legal(env)  # opened this turn: building is allowed
    play(env, "LAYOFF[Kc, 0]")
    assert melds(env)[0] == "Kc Kd Kh Ks"


# -- 3.5: building -------------------------------------------------------------------------------


def test_building_on_others_melds_with_naturals_and_jokers():
    p0 = "Ks Kh Kd 9c Tc Jc 2d 5h 7s 3c 4h 8d 6s"
    p1 = "Qs Qh Qd 8h 9h Th 8c Qc JK 2c 4s 3d 6d"
    env = deal([p0, p1], stock="2s 3s")
    play(env, "DRAW_STOCK", "MELD[group K: d h s]", "MELD[run c 9..J]", "DISCARD[2s]")
    play(env, "DRAW_STOCK", "MELD[group Q: d h s]", "MELD[run h 8..T]")
    names = legal(env)
    assert {"LAYOFF[8c, 1]", "LAYOFF[Qc, 1]", "LAYOFF[Qc, 2]"} <= names
    assert {"LAYOFF_JOKER[1, low]", "LAYOFF_JOKER[1, high]", "LAYOFF_JOKER[0, low]"} <= names
    play(env, "LAYOFF[8c, 1]", "LAYOFF_JOKER[1, high]")
    assert melds(env)[1] == "8c 9c Tc Jc JK"  # the joker is the queen of clubs
    assert "LAYOFF[Qc, 1]" not in legal(env)  # that place is taken


# -- 3.6: joker retrieval ------------------------------------------------------------------------


def _opened_pair(p0, p1, stock="2s 3s", **options):
    """player_0 opens with its first two melds, player_1 draws (not yet opened)."""
    return deal([p0, p1], stock=stock, **options)


def test_a_joker_in_a_run_is_retrieved_with_the_natural_card_it_stands_for():
    p0 = "5h 6h JK 8h Kc Kd Ks 2d 9s 3c 4d Tc Qd"  # 5-6-JK(7)-8 (26) + K K K (30)
    p1 = "Qs Qh Qc 9d Td Jd 7h 2c 4s 3d 6c 5s 8s"  # Q Q Q (30) + 9-10-J d (29); 7h
    env = _opened_pair(p0, p1)
    play(env, "DRAW_STOCK", "MELD[run h 5..8]", "MELD[group K: c d s]", "DISCARD[2s]")
    assert melds(env)[0] == "5h 6h JK 8h"
    play(env, "DRAW_STOCK")
    assert not kinds(legal(env), "RETRIEVE")  # not opened
    play(env, "MELD[group Q: c h s]", "MELD[run d 9..J]")
    assert kinds(legal(env), "RETRIEVE") == {"RETRIEVE[0, 6]"}  # the 7 is at position 6
    play(env, "RETRIEVE[0, 6]")
    assert melds(env)[0] == "5h 6h 7h 8h"
    rec = env.state_record
    assert int(rec["hands"][1][52]) == 1 and int(rec["known"][1][52]) == 1  # seen taking it
    assert rec["built_others"]


def test_group_of_three_releases_one_joker_per_natural_and_a_fourth_card_closes_it():
    p0 = "Kc JK JK 9c Tc Jc Qc 2d 5h 7s 3d 4h 8d"  # K JK JK (30) + 9-10-J-Q c (39)
    p1 = "Ks Kh Kd Qs Qh Qd 8h 9h Th 2c 4s 3s 6d"
    env = _opened_pair(p0, p1)
    play(env, "DRAW_STOCK", "MELD[group K: c + 2 JK]", "MELD[run c 9..Q]", "DISCARD[2s]")
    play(env, "DRAW_STOCK", "MELD[group Q: d h s]", "MELD[run h 8..T]")
    names = legal(env)
    assert kinds(names, "RETRIEVE") == {
        "RETRIEVE[0, 1]",
        "RETRIEVE[0, 2]",
        "RETRIEVE[0, 3]",
    }  # d h s
    assert {"LAYOFF[Kh, 0]", "LAYOFF[Ks, 0]", "LAYOFF[Kd, 0]"} <= names
    play(env, "RETRIEVE[0, 2]")
    assert melds(env)[0] == "Kc Kh JK"
    play(env, "RETRIEVE[0, 3]")
    assert melds(env)[0] == "Kc Kh Ks"
    assert int(env.state_record["hands"][1][52]) == 2


def test_a_group_of_four_never_releases_its_joker():
    p0 = "Kc Kh JK 9c Tc Jc Qc 2d 5h 7s 3d 4h 8d"  # K K JK (30) + 9..Q c (39)
    p1 = "Ks Kd Qs Qh Qd 8h 9h Th 2c 4s 3s 6d 5c"
    env = _opened_pair(p0, p1)
    play(env, "DRAW_STOCK", "MELD[group K: c h + 1 JK]", "MELD[run c 9..Q]", "DISCARD[2s]")
    play(env, "DRAW_STOCK", "MELD[group Q: d h s]", "MELD[run h 8..T]")
    assert {"RETRIEVE[0, 1]", "RETRIEVE[0, 3]", "LAYOFF[Kd, 0]"} <= legal(env)
    play(env, "LAYOFF[Kd, 0]")  # closes the group: 4 cards, the joker locked
    assert melds(env)[0] == "Kc Kd Kh JK"
    names = legal(env)
    assert not kinds(names, "RETRIEVE") and "LAYOFF[Ks, 0]" not in names
    assert "groups of 4" in env.game.explain_illegal(0, ids(env)["RETRIEVE[0, 3]"])


def test_variant_retrieved_joker_must_be_melded_the_same_turn():
    p0 = "5h 6h JK 8h Kc Kd Ks 2d 9s 3c 4d Tc Qd"
    p1 = "Qs Qh Qc 9d Td Jd 7h 2c 4s 3d 6c 5s 8s"
    env = _opened_pair(p0, p1, retrieved_joker_must_be_melded=True)
    play(env, "DRAW_STOCK", "MELD[run h 5..8]", "MELD[group K: c d s]", "DISCARD[2s]")
    play(env, "DRAW_STOCK", "MELD[group Q: c h s]", "MELD[run d 9..J]", "RETRIEVE[0, 6]")
    names = legal(env)
    assert not kinds(names, "DISCARD")
    assert "must be melded" in env.game.explain_illegal(0, ids(env)["DISCARD[2c]"])
    assert {"LAYOFF_JOKER[0, low]", "LAYOFF_JOKER[0, high]"} <= names
    play(env, "LAYOFF_JOKER[1, low]")  # the joker goes back on the table (as the 8 of d)
    assert kinds(legal(env), "DISCARD")
    # without the variant the joker may be kept and even discarded
    env = _opened_pair(p0, p1)
    play(env, "DRAW_STOCK", "MELD[run h 5..8]", "MELD[group K: c d s]", "DISCARD[2s]")
    play(env, "DRAW_STOCK", "MELD[group Q: c h s]", "MELD[run d 9..J]", "RETRIEVE[0, 6]")
    assert "DISCARD[JK]" in legal(env)


# -- 3.7: going out and Rummy ------------------------------------------------------------------


RUMMY_HAND = "Ac Ad Ah 2s 3s 4s 5s 9h Th Jh Kc Kd Ks"  # 13 cards in 4 melds: 33+14+29+30


def test_going_out_needs_a_final_discard_and_a_rummy_adds_25_to_the_others():
    env = deal([RUMMY_HAND, LOOSE], stock="7c")
    env = deal([RUMMY_HAND, LOOSE], stock="Kh")
    play(env, "DRAW_STOCK", "MELD[group A: c d h]", "MELD[run s 2..5]", "MELD[run h 9..J]")
    # melding the last four cards would leave nothing to discard
    names = kinds(legal(env), "MELD")
    assert "MELD[group K: c d s]" in names and "MELD[group K: c d h s]" not in names
    play(env, "MELD[group K: c d s]")
    assert kinds(legal(env), "DISCARD") == {"DISCARD[Kh]"}
    play(env, "DISCARD[Kh]")
    rec = env.state_record
    assert rec["done"] and int(rec["outcome"]) == E.OUT_WENT_OUT and rec["rummy"]
    assert list(rec["hand_penalty"]) == [0, 86 + 25]
    assert env.rewards == {"player_0": 0.0, "player_1": -111.0}
    assert env.infos["player_1"]["rummy"] and env.infos["player_1"]["hand_winner"] == 0


def test_no_rummy_after_an_earlier_opening():
    hand0 = "Ac Ad Ah 2s 3s 4s 5s 9h Th Jh Kc Kd 8c"  # opens 76, goes out a turn later
    env = deal([hand0, LOOSE], stock="7c 6d Ks")
    play(env, "DRAW_STOCK", "MELD[group A: c d h]", "MELD[run s 2..5]", "MELD[run h 9..J]")
    play(env, "DISCARD[7c]", "DRAW_STOCK", "DISCARD[6d]")
    play(env, "DRAW_STOCK", "MELD[group K: c d s]", "DISCARD[8c]")
    rec = env.state_record
    assert rec["done"] and not rec["rummy"] and list(rec["hand_penalty"]) == [0, 86]


def test_no_rummy_when_building_on_another_players_meld():
    p0 = "Ks Kh Kd 9c Tc Jc 2d 5h 7s 3c 4h 8d 6s"
    p1 = "Ac Ad Ah 2s 3s 4s 5s 9h Th Jh 8c Qc 6d"  # opens, builds on p0's melds, goes out
    env = deal([p0, p1], stock="2c Kc")
    play(env, "DRAW_STOCK", "MELD[group K: d h s]", "MELD[run c 9..J]", "DISCARD[2c]")
    play(env, "DRAW_STOCK", "MELD[group A: c d h]", "MELD[run s 2..5]", "MELD[run h 9..J]")
    play(env, "LAYOFF[8c, 1]", "LAYOFF[Qc, 1]", "LAYOFF[Kc, 0]", "DISCARD[6d]")
    rec = env.state_record
    assert rec["done"] and rec["hand_winner"] == 1 and not rec["rummy"]
    assert int(rec["hand_penalty"][0]) == sum(
        {0: 11}.get(c % 13, min(c % 13 + 1, 10)) for c in parse_cards("2d 5h 7s 3c 4h 8d 6s")
    )


# -- 3.2: the stock runs out ---------------------------------------------------------------------


def _stock_out(env):
    """Both players draw from the stock and discard what they drew, until the hand ends or the
    pile is reshuffled; returns the number of draws.
    """
    draws = 0
    resh = int(env.state_record["reshuffles"])
    while not env.state_record["done"] and int(env.state_record["reshuffles"]) == resh:
        p = int(env.state_record["cur"])
        before = hand(env, p)
        play(env, "DRAW_STOCK")
        draws += 1
        new = [c for c in hand(env, p) if before.count(c) < hand(env, p).count(c)][0]
        env.step(env.layout.discard_base + new)
    return draws


def test_spent_stock_becomes_the_pile_without_its_top_card_then_the_hand_is_a_draw():
    env = deal([LOOSE, LOOSE], max_reshuffles=1)
    assert _stock_out(env) == 81
    rec = env.state_record
    assert int(rec["reshuffles"]) == 1 and not rec["done"]
    assert int(rec["pile_n"]) == 1 and 108 - int(rec["deck_pos"]) == 81  # upcard + 81 - top
    assert _stock_out(env) == 81
    rec = env.state_record
    assert rec["done"] and int(rec["outcome"]) == E.OUT_DRAW and int(rec["hand_winner"]) == -1
    assert list(rec["hand_penalty"]) == [86, 86]  # no winner: everyone pays the hand
    env = deal([LOOSE, LOOSE], max_reshuffles=0)
    assert _stock_out(env) == 81 and env.state_record["done"]


# -- 3.8: scoring and rewards ----------------------------------------------------------------------


P2 = "2c 3d 4h 5s 6c 7d 9s Tc Jd Qh Ks 8c 2d"  # penalty 86 too (+25 after a Rummy)


@pytest.mark.parametrize("reward", ["penalty", "zero_sum", "normalized", "payout"])
def test_reward_forms(reward):
    env = deal([RUMMY_HAND, LOOSE, P2], stock="Kh", reward=reward)
    play(env, "DRAW_STOCK", "MELD[group A: c d h]", "MELD[run s 2..5]", "MELD[run h 9..J]")
    play(env, "MELD[group K: c d s]", "DISCARD[Kh]")
    assert list(env.state_record["hand_penalty"]) == [0, 111, 111]
    got = [env.rewards[f"player_{q}"] for q in range(3)]
    expect = {
        "penalty": [0.0, -111.0, -111.0],
        # each player's mean penalty difference to the others
        "zero_sum": [111.0, -55.5, -55.5],
        "normalized": [1.0, -0.555, -0.555],
        # pot 3, no loser below 100: all to the winner
        "payout": [2.0, -1.0, -1.0],
    }[reward]
    assert got == pytest.approx(expect)
    if reward != "penalty":
        assert sum(got) == pytest.approx(0.0) or reward == "normalized"


def test_payout_shares_a_quarter_among_losers_below_100():
    # a plain win (no Rummy): both losers hold 86, below 100
    hand0 = "Ac Ad Ah 2s 3s 4s 5s 9h Th Jh Kc Kd 8c"
    env = deal([hand0, LOOSE, P2], stock="7c 6d 9d Ks", reward="payout")
    play(env, "DRAW_STOCK", "MELD[group A: c d h]", "MELD[run s 2..5]", "MELD[run h 9..J]")
    play(env, "DISCARD[7c]", "DRAW_STOCK", "DISCARD[6d]", "DRAW_STOCK", "DISCARD[9d]")
    play(env, "DRAW_STOCK", "MELD[group K: c d s]", "DISCARD[8c]")
    assert list(env.state_record["hand_penalty"]) == [0, 86, 86]
    w1, w2 = 100 - 86, 100 - 86
    expect = [2.25 - 1, 0.75 * w1 / (w1 + w2) - 1, 0.75 * w2 / (w1 + w2) - 1]
    assert [env.rewards[f"player_{q}"] for q in range(3)] == pytest.approx(expect)


def test_payout_goes_all_to_the_winner_when_no_loser_is_below_100():
    env = deal([RUMMY_HAND, LOOSE], stock="Kh", reward="payout")
    play(env, "DRAW_STOCK", "MELD[group A: c d h]", "MELD[run s 2..5]", "MELD[run h 9..J]")
    play(env, "MELD[group K: c d s]", "DISCARD[Kh]")
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}  # 111 >= 100


def test_match_penalties_add_up_and_elimination_ends_it():
    env = deal([RUMMY_HAND, LOOSE], stock="Kh", episode="match", elimination=101)
    play(env, "DRAW_STOCK", "MELD[group A: c d h]", "MELD[run s 2..5]", "MELD[run h 9..J]")
    play(env, "MELD[group K: c d s]", "DISCARD[Kh]")
    rec = env.state_record
    assert rec["done"] and int(rec["winner"]) == 0 and list(rec["out"]) == [0, 1]
    assert list(rec["penalties"]) == [0, 111]
    assert env.infos["player_0"]["winner"] == 0


def test_match_goes_on_below_the_elimination_total_with_the_next_dealer():
    env = deal([RUMMY_HAND, LOOSE], stock="Kh", episode="match", elimination=200)
    play(env, "DRAW_STOCK", "MELD[group A: c d h]", "MELD[run s 2..5]", "MELD[run h 9..J]")
    play(env, "MELD[group K: c d s]", "DISCARD[Kh]")
    rec = env.state_record
    assert not rec["done"] and int(rec["hands_played"]) == 1
    assert list(rec["penalties"]) == [0, 111] and env.rewards["player_1"] == -111.0
    assert int(rec["dealer"]) == 0 and env.agent_selection == "player_1"
    assert int(rec["n_melds"]) == 0 and all(int(rec["hands"][q].sum()) == 13 for q in range(2))


def test_match_eliminated_players_are_skipped():
    hands = [RUMMY_HAND, LOOSE, "3c 5d 7h 9s Jd Qs 4d 6c 8d Th Qc Ah 3h"]
    env = deal(hands, stock="Kh", episode="match", elimination=100)
    play(env, "DRAW_STOCK", "MELD[group A: c d h]", "MELD[run s 2..5]", "MELD[run h 9..J]")
    play(env, "MELD[group K: c d s]", "DISCARD[Kh]")
    rec = env.state_record
    pen2 = int(rec["penalties"][2])
    assert list(rec["out"]) == [0, 1, int(pen2 >= 100)]
    if not rec["done"]:
        assert int(rec["hands"][1].sum()) == 0 and env.agent_selection != "player_1"


# -- variant discard_draw_requires_opening -------------------------------------------------------


def test_variant_discard_draw_requires_opening():
    p0 = "Ks Kh Kd 9c Tc 2d 5h 7s 3c 4h 8d 6s Qd"  # K K K (30) + 9-10 clubs: the Jc opens
    env = deal([p0, LOOSE], upcard="Jc", discard_draw_requires_opening=True)
    assert "TAKE_DISCARD" in legal(env)
    play(env, "TAKE_DISCARD")
    names = legal(env)
    assert not kinds(names, "DISCARD")
    assert "must go into the opening" in env.game.explain_illegal(0, ids(env)["DISCARD[2d]"])
    play(env, "MELD[run c 9..J]", "MELD[group K: d h s]", "DISCARD[2d]")
    # a top discard that no opening can use may not be taken
    env = deal([p0, LOOSE], upcard="2h", discard_draw_requires_opening=True)
    assert legal(env) == {"DRAW_STOCK"}
    assert "opening" in env.game.explain_illegal(0, ids(env)["TAKE_DISCARD"])
    # an opening completed without the card taken is not allowed: here K K K + 9-10-J with
    # the second Jc... the card must be in a meld laid before the 51 are reached
    p0b = "Ks Kh Kd 9c Tc Jc 2d 5h 7s 3c 4h 8d Qd"
    env = deal([p0b, LOOSE], upcard="Qc", discard_draw_requires_opening=True)
    play(env, "TAKE_DISCARD")
    names = kinds(legal(env), "MELD")
    assert "MELD[run c 9..J]" not in names  # 30 + 29 would open without the Qc
    assert {"MELD[run c 9..Q]", "MELD[run c T..Q]", "MELD[group K: d h s]"} <= names


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"num_players": 7}, "num_players"),
        ({"num_players": 1}, "num_players"),
        ({"opening_threshold": -1}, "opening_threshold"),
        ({"episode": "game"}, "episode"),
        ({"reward": "raw"}, "reward"),
        ({"reward": "payout", "episode": "match"}, "payout"),
        ({"max_reshuffles": 1.5}, "max_reshuffles"),
        ({"retrieved_joker_must_be_melded": 1}, "retrieved_joker_must_be_melded"),
        ({"num_decks": 1}, "unknown Rummy 51 option"),
    ],
)
def test_bad_options_raise_naming_the_problem(options, match):
    with pytest.raises(ValueError, match=match):
        rummy51_v1.raw_env(**options)


def test_illegal_actions_raise_with_the_action_name_and_the_reason():
    env = deal(["Ks Kh Kd 2c 3c 4c 5c 6c 9h Js 8d Ts Qd", LOOSE], stock="2s")  # 50: no opening
    with pytest.raises(ValueError, match=r"DISCARD\[2c\] is illegal in phase 'draw'"):
        env.step(ids(env)["DISCARD[2c]"])
    with pytest.raises(ValueError, match="out of range"):
        env.step(99999)
    with pytest.raises(ValueError, match="integer"):
        env.step("x")
    play(env, "DRAW_STOCK")
    with pytest.raises(ValueError, match="opening"):
        env.step(ids(env)["MELD[group K: d h s]"])


def test_malformed_stacked_decks_are_rejected():
    env = rummy51_v1.raw_env()
    with pytest.raises(ValueError):
        env.reset(options={"deck": list(range(52))})
    with pytest.raises(ValueError):
        env.reset(options={"deck": [0] * 108})
