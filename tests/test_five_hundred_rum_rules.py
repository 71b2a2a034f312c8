"""500 Rum rules (RULES.md §2), one test per rule and option, on stacked decks.

Hands are given per seat. Unless said otherwise the last seat deals, so player_0 acts first.
Every mask looked at here is also checked against the slow reference
(``reference_five_hundred_rum``).
The seed's worked examples (seeds/000, the German 500 Rum page) are tests of their own,
marked "seed example".
"""

from __future__ import annotations

import numpy as np
import pytest
from reference_five_hundred_rum import reference_mask

from rummy_env import five_hundred_rum_v1
from rummy_env.core.cards import card_to_str, parse_cards
from rummy_env.encodings import five_hundred_rum as E
from rummy_env.render.text import meld_text
from rummy_env.testing import joker_deck

# three hands that meet nothing: no melds, nothing to lay off on each other's cards
LOOSE3 = ["2c 9d 5s Qc 3h 8c Js", "3d Tc 6s Kd 4h 9s Ac", "4s Jd 7c Ah 5h 2d Qs"]


def deal(hands, upcard, stock=(), dealer=None, **options):
    """A raw env dealt from a stacked deck: ``hands[q]`` is seat q's hand, then the upcard,
    then the stock (its first card is drawn first). The last seat deals by default.
    """
    env = five_hundred_rum_v1.raw_env(num_players=len(hands), **options)
    cfg = env.config
    dealer = len(hands) - 1 if dealer is None else dealer
    deck = joker_deck(hands, upcard, stock, num_decks=cfg.decks, jokers=cfg.jokers, dealer=dealer)
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
    """Step the named actions in order (raises on an illegal one)."""
    table = ids(env)
    for n in names:
        assert n in legal(env), f"{n} is not legal; legal: {sorted(legal(env))}"
        env.step(table[n])


def seat(env) -> int:
    return int(env.state_record["cur"])


def phase(env) -> str:
    return E.PHASE_NAMES[int(env.state_record["phase"])]


def hand(env, q) -> list[str]:
    counts = env.state_record["hands"][q]
    return sorted(card_to_str(c) for c in range(53) for _ in range(int(counts[c])))


def cards(text) -> list[str]:
    return sorted(card_to_str(c) for c in parse_cards(text))


def pile(env) -> list[str]:
    """The discard pile, bottom to top."""
    rec = env.state_record
    return [card_to_str(int(c)) for c in rec["pile"][: int(rec["pile_n"])]]


def melds(env) -> list[str]:
    rec = env.state_record
    return [meld_text(rec, m) for m in range(int(rec["n_melds"]))]


def melded(env) -> list[int]:
    return [int(x) for x in env.state_record["melded_pts"]]


def turn(env, discard, *placements, draw="DRAW_STOCK"):
    """The player to act draws, makes the placements, discards (None: no discard)."""
    play(env, draw, *placements)
    if discard is not None:
        play(env, f"DISCARD[{discard}]")


def offered(env) -> bool:
    return phase(env) == "rummy_call_offer"


def melds_legal(env) -> set[str]:
    return {n for n in legal(env) if n.startswith("MELD")}


def group_size(name: str) -> int:
    """Cards in a group template named like "MELD[group K: c d h + 1 JK]"."""
    body = name[name.index(":") + 1 : -1].split("+")
    return len(body[0].split()) + (int(body[1].split()[0]) if len(body) > 1 else 0)


def done(env) -> bool:
    return bool(env.state_record["done"])


def hand_points(env) -> list[int]:
    return [int(x) for x in env.state_record["hand_points"]]


# -- §2.1 players, cards, values ------------------------------------------------------------


@pytest.mark.parametrize(
    "options,deck_size,hand_size",
    [
        ({"num_players": 2}, 54, 13),
        ({"num_players": 3}, 54, 7),
        ({"num_players": 4}, 54, 7),
        ({"num_players": 5}, 108, 7),
        ({"num_players": 8}, 108, 7),
        ({"num_players": 4, "num_decks": 2}, 108, 7),
        ({"num_players": 2, "no_jokers": True}, 52, 13),
        ({"num_players": 6, "no_jokers": True}, 104, 7),
    ],
)
def test_cards_in_play_and_cards_dealt(options, deck_size, hand_size):
    config = five_hundred_rum_v1.raw_env(**options).config
    assert (config.deck_size, config.hand_size) == (deck_size, hand_size)
    assert config.jokers == (0 if options.get("no_jokers") else 2 * (deck_size // 52))


# (dealing itself is checked on table shapes the other tests compile anyway)
@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 2},
        {"num_players": 3},
        {"num_players": 8},
        {"num_players": 3, "no_jokers": True},
    ],
)
def test_each_player_is_dealt_a_hand_then_the_upcard_then_the_stock(options):
    env = five_hundred_rum_v1.raw_env(**options)
    env.reset(seed=3)
    rec = env.state_record
    cfg = env.config
    n_p = cfg.num_players
    assert [int(rec["hands"][q].sum()) for q in range(n_p)] == [cfg.hand_size] * n_p
    assert int(rec["pile_n"]) == 1  # the upcard
    assert cfg.deck_size - int(rec["deck_pos"]) == cfg.deck_size - n_p * cfg.hand_size - 1
    jokers = (
        sum(int(rec["hands"][q][52]) for q in range(n_p))
        + int((rec["deck"][int(rec["deck_pos"]) :] == 52).sum())
        + int(rec["pile"][0] == 52)
    )
    assert jokers == cfg.jokers


def test_values_melded_minus_held_low_ace_is_one():
    # player_0 melds A-2-3-4 of clubs (1+2+3+4) and three kings (30), then discards the last card
    env = deal(
        ["Ac 2c 3c Kd Kh Ks 9h", "As JK Kc 7d 2s 3s 4h", "5h 6d 8s Tc Jd Qh 9c"], "8c", ["4c"]
    )
    turn(env, "9h", "MELD[run c A..4]", "MELD[group K: d h s]")
    assert done(env) and env.state_record["outcome"] == E.OUT_WENT_OUT
    # A 15, joker 15, K 10, pips at face value
    assert hand_points(env) == [
        40,
        -(15 + 15 + 10 + 7 + 2 + 3 + 4),
        -(5 + 6 + 8 + 10 + 10 + 10 + 9),
    ]
    assert [env.rewards[a] for a in env.possible_agents] == [40.0, -56.0, -58.0]


def test_values_5_10_15():
    env = deal(
        ["Ac 2c 3c Kd Kh Ks 9h", "As JK Kc 7d 2s 3s 4h", "5h 6d 8s Tc Jd Qh 9c"],
        "8c",
        ["4c"],
        values_5_10_15=True,
    )
    turn(env, "9h", "MELD[run c A..4]", "MELD[group K: d h s]")
    # 2-9 worth 5, 10-K 10, aces and jokers 15, the low ace 5
    assert hand_points(env) == [5 * 4 + 30, -(15 + 15 + 10 + 5 * 4), -(5 * 4 + 10 * 3)]


def test_an_ace_high_or_in_a_group_is_worth_15():
    env = deal(["Qd Kd Ad Ac Ah As 9h", "2c 9c 4d Td 6h Js 7s", "3h 5s 8c Jc 2d Qs 7d"], "5c")
    play(env, "DRAW_STOCK", "MELD[run d Q..A]")
    assert melded(env) == [10 + 10 + 15, 0, 0]
    play(env, "MELD[group A: c h s]")
    assert melded(env) == [35 + 45, 0, 0]


def test_no_jokers_variant_plays_52_cards():
    hands = ["Ac 2c 3c Kd Kh Ks 9h", "5h 6d 8s Tc Jd Qh 9c", "As 2s 3s 4h 7d Kc 8d"]
    env = deal(hands, "8c", no_jokers=True)
    assert env.config.deck_size == 52
    rec = env.state_record
    assert 52 not in rec["deck"].tolist()


# -- §2.3 deal ------------------------------------------------------------------------------


def test_dealt_one_at_a_time_starting_left_of_the_dealer():
    deck = list(range(52)) + [52, 52]  # unshuffled: Ac 2c ... Ks JK JK
    env = five_hundred_rum_v1.raw_env(num_players=4)
    env.reset(options={"deck": deck, "dealer": 2})
    # seat 3 gets the 1st, 5th, ... card; seat 0 the 2nd, ...; the dealer (seat 2) the 4th, ...
    for q, first in ((3, 0), (0, 1), (1, 2), (2, 3)):
        assert hand(env, q) == sorted(card_to_str(c) for c in range(first, 28, 4))
    assert pile(env) == [card_to_str(28)]  # the next card is the upcard
    rec = env.state_record
    assert [int(c) for c in rec["deck"][int(rec["deck_pos"]) :]] == deck[29:]  # the stock
    assert env.agent_selection == "player_3"  # the player left of the dealer starts
    # joker_deck builds the same deck from the hands
    hands = [[card_to_str(c) for c in range(first, 28, 4)] for first in (1, 2, 3, 0)]
    assert joker_deck(hands, card_to_str(28), dealer=2) == deck


def test_rum_deck_refuses_a_card_dealt_twice():
    with pytest.raises(ValueError, match="more often"):
        joker_deck(["As 2c", "As 3c"], "4c")
    assert len(joker_deck(["As 2c", "As 3c"], "4c", num_decks=2)) == 108


def test_two_players_get_13_cards_and_the_non_dealer_starts():
    env = five_hundred_rum_v1.raw_env()
    env.reset(options={"deck": list(range(52)) + [52, 52], "dealer": 0})
    assert hand(env, 1) == sorted(card_to_str(c) for c in range(0, 26, 2))
    assert hand(env, 0) == sorted(card_to_str(c) for c in range(1, 26, 2))
    assert env.agent_selection == "player_1"


def test_the_dealer_rotates_left_each_hand():
    env = deal(
        ["Ac 2c 3c Kd Kh Ks 9h", "As JK Kc 7d 2s 3s 4h", "5h 6d 8s Tc Jd Qh 9c"],
        "8c",
        ["4c"],
        dealer=2,
        episode="game",
    )
    turn(env, "9h", "MELD[run c A..4]", "MELD[group K: d h s]")
    rec = env.state_record
    assert not done(env) and int(rec["hands_played"]) == 1
    assert int(rec["dealer"]) == 0 and env.agent_selection == "player_1"
    assert [int(x) for x in rec["scores"]] == [40, -56, -58]
    assert all(int(rec["hands"][q].sum()) == 7 for q in range(3)) and int(rec["n_melds"]) == 0


# -- §2.2 melds -----------------------------------------------------------------------------


def test_groups_need_different_suits_even_with_two_decks():
    env = deal(
        ["6h 6h 6c Kd 2s 9c Jd", "3c 5d Ts 8h Qs Ah 4d", "7s Jc 2h 9s Kc 5c Qd"],
        "4s",
        ["Td", "3s", "7h", "6d"],
        num_decks=2,
    )
    play(env, "DRAW_STOCK")  # Td
    assert melds_legal(env) == set()  # 6h 6h 6c is not a group
    play(env, "DISCARD[Td]")
    turn(env, "3s")
    turn(env, "7h")
    play(env, "DRAW_STOCK")  # 6d
    assert melds_legal(env) == {"MELD[group 6: c d h]"}
    play(env, "MELD[group 6: c d h]")
    assert hand(env, 0).count("6h") == 1
    assert "LAYOFF[6h, 0]" not in legal(env)  # the group already has a heart


def test_runs_ace_low_or_high_never_both_no_wrap():
    two = ["Ac 2c 3c Qc Kc 5d 9h Jh 4s 8s 7d Td 6h", "2d 3d 4h 5h 7c 8c Th Jd Qd Kd 9s Ts Js"]
    env = deal(two, "6d", ["Ks"])
    play(env, "DRAW_STOCK")
    runs = {n for n in melds_legal(env) if "run c" in n}
    assert runs == {"MELD[run c A..3]", "MELD[run c Q..A]"}  # never K-A-2
    play(env, "MELD[run c Q..A]")
    assert melded(env)[0] == 35  # the high ace is 15
    assert "MELD[run c A..3]" not in legal(env)  # the ace is used
    assert "LAYOFF[2c, 0]" not in legal(env)  # Q-K-A-2 wraps


def test_a_king_does_not_lay_off_on_ace_two_three():
    two = ["Ac 2c 3c Kc 5d 9h Jh 4s 8s 7d Td 6h Qs", "2d 3d 4h 5h 7c 8c Th Jd Qd Kd 9s Ts Js"]
    env = deal(two, "6d", ["Ks"])
    play(env, "DRAW_STOCK", "MELD[run c A..3]")
    assert melded(env)[0] == 1 + 2 + 3
    assert "LAYOFF[Kc, 0]" not in legal(env)


@pytest.mark.parametrize(
    "run,ace_at,points",
    [
        ("2c 3c 4c", "low", 1),
        ("Jc Qc Kc", "high", 15),
        ("2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc", "high", 15),
    ],
)
def test_an_ace_lays_off_low_or_high(run, ace_at, points):
    # player_0 melds the run; player_1 lays the ace of clubs off on it (on 2..K it goes high)
    cards0 = parse_cards(run)
    junk0 = [c for c in parse_cards("5d 9h Jh 4s 8s 7d Td 6h Qs 2h 3h 5s 6s") if c not in cards0]
    h0 = [card_to_str(c) for c in cards0 + junk0][:13]
    env = deal([h0, "Ac 2d 3d 4h 5h Th Jd Qd Kd 9s Ts Js 7s"], "6d", ["9d", "8d"])
    n = len(cards0)
    lo = card_to_str(cards0[0])[0]
    hi = card_to_str(cards0[-1])[0]
    discard = "Qs" if n < 12 else "9d"
    turn(env, discard, f"MELD[run c {lo}..{hi}]")
    play(env, "DRAW_STOCK")
    before = melded(env)[1]
    play(env, "LAYOFF[Ac, 0]")
    assert melded(env)[1] - before == points
    text = melds(env)[0]
    assert text.startswith("Ac") if ace_at == "low" else text.endswith("Ac")


def test_a_group_never_exceeds_four_cards_jokers_included():
    env = deal(["Kc Kd Kh Ks JK 2s 9d", "3c 5d Ts 8h Qs Ah 4d", "7s Jc 2h 9s 5c Qd 6c"], "4s")
    play(env, "DRAW_STOCK")
    kings = {n for n in melds_legal(env) if "group K" in n}
    # 3 or 4 cards of different suits; a joker only where a suit is missing (no 4 kings + joker)
    assert "MELD[group K: c d h s]" in kings and "MELD[group K: c d h + 1 JK]" in kings
    assert max(group_size(n) for n in kings) == 4
    play(env, "MELD[group K: c d h s]")
    assert not any(n.startswith("LAYOFF_JOKER") for n in legal(env))  # no fifth king


def test_a_group_of_three_with_a_joker_takes_one_more_card_only():
    env = deal(["Kc Kd JK Ks 2s 9d 7h", "3c 5d Ts 8h Qs Ah 4d", "7s Jc 2h 9s 5c Qd 6c"], "4s")
    play(env, "DRAW_STOCK", "MELD[group K: c d + 1 JK]")
    assert "LAYOFF[Ks, 0]" in legal(env)
    play(env, "LAYOFF[Ks, 0]")
    assert melds(env) == ["Kc Kd Ks JK"]
    assert not any(n.startswith("LAYOFF") for n in legal(env))


def test_a_joker_may_stand_for_a_card_already_melded():
    env = deal(["7c 7d 7h 5h 6h JK 2s", "3c 5d Ts 8h Qs Ah 4d", "Kc Jc 2h 9s 5c Qd 6c"], "4s")
    play(env, "DRAW_STOCK", "MELD[group 7: c d h]")
    play(env, "MELD[run h 5..7]")  # the joker is a second 7 of hearts
    assert melds(env) == ["7c 7d 7h", "5h 6h JK"]


# seed: "if you meld a 9 and two jokers you must say whether it is a group of nines or a
# sequence; if a sequence, whether it is 7-8-9, 8-9-10 or 9-10-J" - four templates
DECLARATIONS = {
    "MELD[group 9: h + 2 JK]": (1, {"LAYOFF[9c, 0]"}),
    "MELD[run h 7..9]": (2, {"LAYOFF[6h, 0]", "LAYOFF[Th, 0]"}),
    "MELD[run h 8..T]": (2, {"LAYOFF[7h, 0]", "LAYOFF[Jh, 0]"}),
    "MELD[run h 9..J]": (2, {"LAYOFF[8h, 0]", "LAYOFF[Qh, 0]"}),
}


@pytest.mark.parametrize("declared", sorted(DECLARATIONS))
def test_a_nine_and_two_jokers_are_declared_group_or_one_of_three_runs(declared):
    env = deal(
        ["9h JK JK 2s 5d Qc 4c", "9c 6h 7h 8h Th Jh Qh", "3d Tc 6s Kd 4s Jd 7c"],
        "8d",
        ["5c", "Ks"],
    )
    play(env, "DRAW_STOCK")
    assert set(DECLARATIONS) <= melds_legal(env)
    assert len({ids(env)[n] for n in DECLARATIONS}) == 4
    kind, fits = DECLARATIONS[declared]
    play(env, declared, "DISCARD[2s]")
    assert int(env.state_record["m_kind"][0]) == kind
    play(env, "DRAW_STOCK")  # player_1
    layoffs = {n for n in legal(env) if n.startswith("LAYOFF")}
    assert layoffs == fits


def test_a_joker_in_a_run_keeps_the_card_it_stands_for():
    # 6 7 JK melded as 6-7-8: later the 5 or the 9 lays off, never an 8 (the joker stays an 8)
    env = deal(
        ["6h 7h JK 2s 5d Qc 4c", "5h 8h 9h 3c Ts Js Ac", "3d Tc 6s Kd 4s Jd 7c"], "8d", ["5c", "Ks"]
    )
    play(env, "DRAW_STOCK", "MELD[run h 6..8]", "DISCARD[2s]")
    assert melds(env) == ["6h 7h JK"]
    play(env, "DRAW_STOCK")
    assert {n for n in legal(env) if n.startswith("LAYOFF")} == {"LAYOFF[5h, 0]", "LAYOFF[9h, 0]"}


def test_lay_offs_on_any_players_meld_score_for_the_player_laying_off():
    env = deal(
        ["6h 7h 8h 2s 5d Qc 4c", "5h 9h Kd 3c Ts Js Ac", "3d Tc 6s Ad 4s Jd 7c"], "8d", ["5c", "Ks"]
    )
    play(env, "DRAW_STOCK", "MELD[run h 6..8]", "DISCARD[2s]")
    play(env, "DRAW_STOCK", "LAYOFF[5h, 0]", "LAYOFF[9h, 0]")
    assert melded(env) == [21, 14, 0]
    assert int(env.state_record["m_owner"][0]) == 0  # still player_0's meld on the table


# -- seed example: the lay-off chain of 5-6-7 and 9-9-9 -----------------------------------------
# "A has melded 5-6-7 of hearts, B 9-9-9. B can lay off the 8 on A's run. C can now lay off
# the 9 and must say whether it goes to the run of hearts or to the set of nines. If C added
# it to the run, D can extend the run with the 10; if C declared it to the nines, laying off
# the 10 on the run (still 5-6-7-8) is not legal."

CHAIN_HANDS = [
    "5h 6h 7h 2c 3d Qs Kc",  # A
    "9c 9d 9s 8h 2d 4c Js",  # B
    "9h 2s 4d 6c Jc Kd Ac",  # C
    "Th 3c 5d 7s Qd Ad 8c",  # D
]


@pytest.mark.parametrize("nine_to", ["run", "group"])
def test_seed_example_lay_off_chain_the_nine_to_the_run_or_to_the_nines(nine_to):
    env = deal(CHAIN_HANDS, "3s", ["5s", "6s", "8s", "2h"])
    play(env, "DRAW_STOCK", "MELD[run h 5..7]", "DISCARD[Qs]")  # A
    play(env, "DRAW_STOCK", "MELD[group 9: c d s]", "LAYOFF[8h, 0]", "DISCARD[Js]")  # B
    assert melds(env) == ["5h 6h 7h 8h", "9c 9d 9s"] and melded(env)[:2] == [18, 27 + 8]
    play(env, "DRAW_STOCK")  # C: the 9 of hearts fits both melds
    assert {"LAYOFF[9h, 0]", "LAYOFF[9h, 1]"} <= legal(env)
    play(env, "LAYOFF[9h, 0]" if nine_to == "run" else "LAYOFF[9h, 1]", "DISCARD[Jc]")
    assert melded(env)[2] == 9
    play(env, "DRAW_STOCK")  # D
    assert ("LAYOFF[Th, 0]" in legal(env)) == (nine_to == "run")
    assert "LAYOFF[Th, 1]" not in legal(env)
    if nine_to == "group":
        assert melds(env) == ["5h 6h 7h 8h", "9c 9d 9h 9s"]  # it is never moved afterwards


def test_seed_example_a_ten_fits_the_run_7_8_9_or_the_group_of_tens():
    env = deal(
        ["7h 8h 9h Tc Td Ts 2c", "Th 3d Qs Kc 5c 2s Ad", "4h Jc 6s 3c Kd 5d Qh"], "8c", ["4s", "7s"]
    )
    play(env, "DRAW_STOCK", "MELD[run h 7..9]", "MELD[group T: c d s]", "DISCARD[2c]")
    play(env, "DRAW_STOCK")
    assert {"LAYOFF[Th, 0]", "LAYOFF[Th, 1]"} <= legal(env)
    play(env, "LAYOFF[Th, 1]")
    assert melds(env) == ["7h 8h 9h", "Tc Td Th Ts"]


# -- §2.4 turn: draw ------------------------------------------------------------------------


def test_the_top_discard_can_always_be_taken_but_not_discarded_again():
    env = deal(LOOSE3, "Kh")
    assert legal(env) == {"DRAW_STOCK", "TAKE_DISCARD[0]"}  # no PASS while there is a stock
    play(env, "TAKE_DISCARD[0]")  # the king of hearts is useless to player_0, but may be taken
    assert "Kh" in hand(env, 0)
    discards = {n for n in legal(env) if n.startswith("DISCARD")}
    assert discards == {f"DISCARD[{c}]" for c in cards("2c 9d 5s Qc 3h 8c Js")}


def test_with_two_decks_the_card_just_taken_may_go_if_a_second_copy_is_held():
    env = deal(
        ["Kh 9d 5s Qc 3h 8c Js", "3d Tc 6s Kd 4h 9s Ac", "4s Jd 7c Ah 5h 2d Qs"], "Kh", num_decks=2
    )
    play(env, "TAKE_DISCARD[0]")
    assert "DISCARD[Kh]" in legal(env)  # one of the two kings of hearts may be discarded


# seed example: the pile is 6 4 7 Q 4 A (bottom to top) and you hold 2 4 5 8 J K K. To take
# the two 4s you take every card from the deeper 4 up, leaving only the 6; you meld 4 4 4 and
# keep 2 5 7 8 J Q K K A; you discard (say) the 2 and the pile is 6 2. The 7 (not the deepest
# card) need not be melded.
DEEP_HANDS = ["4c 4h 3d Tc 6d Qc 9s", "7h As 2d 9c Jd 3s 6c", "2c 4s 5h 8d Jc Kh Ks"]


def _deep_pile():
    env = deal(DEEP_HANDS, "6s", ["8c", "5c", "Qd", "2s", "Ac"])
    play(env, "DRAW_STOCK", "DISCARD[4c]")
    play(env, "DRAW_STOCK", "DISCARD[7h]")
    play(env, "DRAW_STOCK", "DISCARD[Qd]")  # player_2 draws the queen and lets it go
    play(env, "DRAW_STOCK", "DISCARD[4h]")
    play(env, "DRAW_STOCK", "DISCARD[As]")
    assert pile(env) == ["6s", "4c", "7h", "Qd", "4h", "As"] and seat(env) == 2
    return env


def test_seed_example_taking_two_fours_with_every_card_above_them():
    env = _deep_pile()
    # only the top card, or down to a card that can be melded this turn: the deeper 4
    assert legal(env) == {"DRAW_STOCK", "TAKE_DISCARD[0]", "TAKE_DISCARD[4]"}
    play(env, "TAKE_DISCARD[4]")
    assert pile(env) == ["6s"]
    assert not any(n.startswith("DISCARD") for n in legal(env))  # the 4 must be melded first
    play(env, "MELD[group 4: c h s]")
    assert hand(env, 2) == cards("2c 5h 7h 8d Jc Qd Kh Ks As")
    discards = {n for n in legal(env) if n.startswith("DISCARD")}
    assert "DISCARD[7h]" in discards and "DISCARD[As]" in discards  # the old top card may go
    play(env, "DISCARD[2c]")
    assert pile(env) == ["6s", "2c"]


def test_a_deep_card_that_cannot_be_melded_cannot_be_taken():
    env = _deep_pile()
    lay = env.layout
    mask = env.observe(env.agent_selection)["action_mask"]
    for d in (1, 2, 3, 5):  # 4h alone (one 4 in hand), Qd, 7h, 6s: none can be melded now
        assert not mask[lay.take_base + d]
    with pytest.raises(ValueError, match="could not be melded"):
        env.step(lay.take_base + 5)


def _run_on_table_and_nine_of_hearts_deep(hero, **options):
    """player_1 melds 5-6-7 of hearts; the 9 of hearts lies at depth 1 when player_0 (hero)
    draws.
    """
    env = deal(
        [hero, "9h Kc 2d Qs 4d Jc 3s", "5h 6h 7h Tc 2s Ad 8d"],
        "Kd",
        ["6c", "3c", "4c", "Ts"],
        **options,
    )
    play(env, "DRAW_STOCK", "DISCARD[6c]")
    play(env, "DRAW_STOCK", "DISCARD[9h]")
    play(env, "DRAW_STOCK", "MELD[run h 5..7]", "DISCARD[4c]")
    assert pile(env) == ["Kd", "6c", "9h", "4c"] and seat(env) == 0
    return env


def test_a_deep_card_may_be_melded_by_a_chain_of_lay_offs():
    env = _run_on_table_and_nine_of_hearts_deep("8h 2c 5d Qc 3h 8s Js")
    assert "TAKE_DISCARD[1]" in legal(env)  # the 8 then the 9 extend 5-6-7
    play(env, "TAKE_DISCARD[1]")
    assert "LAYOFF[9h, 0]" not in legal(env)  # not before the 8
    assert not any(n.startswith("DISCARD") for n in legal(env))
    play(env, "LAYOFF[8h, 0]", "LAYOFF[9h, 0]")
    assert "DISCARD[4c]" in legal(env)
    assert melds(env) == ["5h 6h 7h 8h 9h"] and melded(env)[0] == 17


def test_a_joker_bridges_the_chain_to_a_deep_card():
    env = _run_on_table_and_nine_of_hearts_deep("JK 2c 5d Qc 3h 8s Js")
    play(env, "TAKE_DISCARD[1]")
    # the joker must go where it lets the 9 follow (as the 8), not at the low end
    assert "LAYOFF_JOKER[0, high]" in legal(env)
    assert "LAYOFF_JOKER[0, low]" not in legal(env)
    play(env, "LAYOFF_JOKER[0, high]", "LAYOFF[9h, 0]")
    assert melds(env) == ["5h 6h 7h JK 9h"]


def test_without_a_way_to_meld_it_the_deep_card_stays():
    env = _run_on_table_and_nine_of_hearts_deep("7c 2c 5d Qc 3h 8s Js")
    assert "TAKE_DISCARD[1]" not in legal(env)


def test_pass_only_when_the_stock_is_empty_and_it_ends_the_hand():
    env = deal(LOOSE3, "Kh", rummy_call="none")
    rec = env.state_record
    while env.config.deck_size - int(rec["deck_pos"]) > 0:
        assert "PASS" not in legal(env)
        drawn = card_to_str(int(rec["deck"][int(rec["deck_pos"])]))
        play(env, "DRAW_STOCK", f"DISCARD[{drawn}]")
    assert "DRAW_STOCK" not in legal(env) and "PASS" in legal(env)
    held = [sum(int(c) for c in rec["hands"][q]) for q in range(3)]
    assert held == [7, 7, 7]
    play(env, "PASS")
    assert done(env) and int(rec["outcome"]) == E.OUT_STOCK
    held_values = [
        2 + 9 + 5 + 10 + 3 + 8 + 10,
        3 + 10 + 6 + 10 + 4 + 9 + 15,
        4 + 10 + 7 + 15 + 5 + 2 + 10,
    ]
    assert hand_points(env) == [-v for v in held_values]


def test_once_the_stock_is_empty_every_player_gets_one_more_turn():
    env = deal(LOOSE3, "Kh", rummy_call="none")
    rec = env.state_record
    while env.config.deck_size - int(rec["deck_pos"]) > 0:
        last = seat(env)
        drawn = card_to_str(int(rec["deck"][int(rec["deck_pos"])]))
        play(env, "DRAW_STOCK", f"DISCARD[{drawn}]")
    turns = 0
    while not done(env):
        assert seat(env) == (last + 1 + turns) % 3
        top = pile(env)[-1]
        play(env, "TAKE_DISCARD[0]")
        other = next(n for n in sorted(legal(env)) if n.startswith("DISCARD") and top not in n)
        play(env, other)
        turns += 1
    assert turns == 3 and int(rec["outcome"]) == E.OUT_STOCK


# -- §2.5 calling "Rummy!" ------------------------------------------------------------------
# seed example 1: "if 7 8 9 is on the table and someone discards a 6 or a 10, any player other
# than the discarder can call Rummy!, take the card and meld it."

CALL_HANDS = [
    "7h 8h 9h 2c 3d Qs Kc",
    "6h Th 2d 4c Js 5s 9c",
    "2s 4d 6c Jc Kd Ac 3h",
    "3c 5d 7s Qd Ad 8c 4h",
]


def _seven_eight_nine_then(discard, **options):
    env = deal(CALL_HANDS, "Ks", ["2h", "5c", "8s", "Tc"], **options)
    play(env, "DRAW_STOCK", "MELD[run h 7..9]", "DISCARD[Qs]")
    assert phase(env) == "draw" and seat(env) == 1  # nothing to call yet
    play(env, "DRAW_STOCK", f"DISCARD[{discard}]")
    return env


@pytest.mark.parametrize("card", ["6h", "Th"])
def test_seed_example_a_discard_that_fits_the_table_can_be_called(card):
    env = _seven_eight_nine_then(card)
    # asked one at a time from the discarder's left
    assert offered(env) and seat(env) == 2
    assert legal(env) == {"TAKE_DISCARD[0]", "PASS"}
    play(env, "PASS")
    assert offered(env) and seat(env) == 3
    play(env, "TAKE_DISCARD[0]")
    assert phase(env) == "play" and seat(env) == 3
    assert not any(n.startswith("DISCARD") for n in legal(env))  # the card must be melded
    play(env, f"LAYOFF[{card}, 0]", "DISCARD[Qd]")
    assert melded(env)[3] == (6 if card == "6h" else 10)
    # play goes on from the caller's left: player_2, between discarder and caller, lost a turn
    assert phase(env) == "draw" and seat(env) == 0


def test_when_everyone_declines_the_call_the_next_player_draws():
    env = _seven_eight_nine_then("6h")
    play(env, "PASS", "PASS", "PASS")  # players 2, 3 and 0; never the discarder
    assert phase(env) == "draw" and seat(env) == 2
    assert "TAKE_DISCARD[0]" in legal(env)  # an ordinary draw now


def test_layoff_only_call_lays_the_card_off_and_play_goes_on_as_before():
    env = _seven_eight_nine_then("6h", rummy_call="layoff_only")
    play(env, "PASS")
    play(env, "TAKE_DISCARD[0]")  # player_3 calls
    assert phase(env) == "rummy_call_layoff" and legal(env) == {"LAYOFF[6h, 0]"}
    play(env, "LAYOFF[6h, 0]")
    assert melded(env)[3] == 6 and len(hand(env, 3)) == 7  # scored, and no discard follows
    assert phase(env) == "draw" and seat(env) == 2  # whose turn it was


def test_no_calls_with_rummy_call_none():
    env = _seven_eight_nine_then("6h", rummy_call="none")
    assert phase(env) == "draw" and seat(env) == 2


# seed example 2: "suppose the pile holds a K and a Q of one suit and a player discards the J
# of that suit without noticing: any other player can call Rummy! and take the pile from the K."

PILE_HANDS = [
    "Kh Jh 2c 5d 8s 4c 3s",
    "9d 2h 6c Tc 4s 7d As",
    "Qh 3c 5s 8c Jd 6d Ac",
]


def _jack_on_king_and_queen(**options):
    env = deal(PILE_HANDS, "7c", ["2s", "3d", "Ts", "4d"], **options)
    for discard in ("Kh", "9d", "Qh"):
        play(env, "DRAW_STOCK", f"DISCARD[{discard}]")
        assert phase(env) == "draw"
    play(env, "DRAW_STOCK", "DISCARD[Jh]")
    assert pile(env) == ["7c", "Kh", "9d", "Qh", "Jh"]
    return env


def test_seed_example_a_jack_discarded_on_the_king_and_queen_of_its_suit():
    env = _jack_on_king_and_queen()
    assert offered(env) and seat(env) == 1
    assert legal(env) == {"TAKE_DISCARD[3]", "PASS"}  # down to the king
    play(env, "TAKE_DISCARD[3]")
    assert pile(env) == ["7c"]
    assert not any(n.startswith("DISCARD") for n in legal(env))
    play(env, "MELD[run h J..K]", "DISCARD[9d]")
    assert seat(env) == 2 and phase(env) == "draw"


def test_layoff_only_never_calls_cards_in_the_pile():
    env = _jack_on_king_and_queen(rummy_call="layoff_only")
    assert phase(env) == "draw" and seat(env) == 1


# seed example 3: "with the same pile you hold a 5 and a 6, draw a 4 from the stock and meld
# 4-5-6: any other player can call Rummy! and take the top four cards to add the 3 to your
# meld. You cannot call it yourself right after your own turn - you would have to wait for
# the next player's turn, and could then call it if nobody else has taken the 3."

MELDER_HANDS = [
    "5d 6d 2c 9s Jh Kc 8h",
    "3d Tc 7s Qh As 2h 8c",
    "Jc 6s Kd 2s 9h 5h Ah",
    "3c 5c 7c 9d Qc Ks 4s",
]


def test_seed_example_melding_makes_a_buried_card_callable_but_not_for_the_melder():
    env = deal(MELDER_HANDS, "8s", ["Qs", "9c", "4h", "Td", "4d", "Jd"])
    play(env, "DRAW_STOCK", "DISCARD[Qs]")
    play(env, "DRAW_STOCK", "DISCARD[3d]")
    play(env, "DRAW_STOCK", "DISCARD[4h]")
    play(env, "DRAW_STOCK", "DISCARD[Td]")
    play(env, "DRAW_STOCK", "MELD[run d 4..6]", "DISCARD[2c]")  # player_0 draws the 4
    assert pile(env)[-4:] == ["3d", "4h", "Td", "2c"]
    for q in (1, 2, 3):  # every other player may take the top four cards
        assert offered(env) and seat(env) == q
        assert legal(env) == {"TAKE_DISCARD[3]", "PASS"}
        play(env, "PASS")
    assert phase(env) == "draw" and seat(env) == 1  # the melder was not asked
    play(env, "DRAW_STOCK", "DISCARD[Jd]")
    play(env, "PASS", "PASS")  # players 2 and 3
    assert offered(env) and seat(env) == 0  # now the melder may call
    assert legal(env) == {"TAKE_DISCARD[4]", "PASS"}
    play(env, "TAKE_DISCARD[4]", "LAYOFF[3d, 0]", "DISCARD[Jd]")
    assert melds(env) == ["3d 4d 5d 6d"]
    assert phase(env) == "draw" and seat(env) == 1  # players 2 and 3 lost their turns


def test_nobody_calls_after_the_hand_has_ended():
    hands = ["7h 8h 9h Kc Kd Kh Ks", "2c 9d 5s Qc 3h 8c Js", "3d Tc 6s 4d Jh 9s Ac"]
    env = deal(hands, "2d", ["6h"])
    play(env, "DRAW_STOCK", "MELD[run h 7..9]", "MELD[group K: c d h s]", "DISCARD[6h]")
    assert done(env) and int(env.state_record["outcome"]) == E.OUT_WENT_OUT  # 6h fits: no call
    assert hand_points(env)[0] == 24 + 40


# -- §2.5 Decision: what makes a pile card callable -------------------------------------------
# "a pile card is callable when it can be melded using only the table melds and the pile cards
# above it (which the caller takes along), in any order: new melds among those cards, lay-offs
# onto table melds, and lay-offs onto melds that those cards formed or extended first (a chain:
# with J-Q-K♠ on the table and the pile T♠, Q♥, J♦, 9♠ from the top, the 9♠ is callable
# because the T♠ is laid off first). Cards below it are never used."


def _spades_run_then(hands, stock, discards, **options):
    """player_0 melds J-Q-K of spades; then players 0, 1, 2, 0, ... draw from the stock and
    discard ``discards`` in turn (PASSing any call offered before the last discard).
    """
    env = deal(hands, "7c", stock, **options)
    play(env, "DRAW_STOCK", "MELD[run s J..K]", f"DISCARD[{discards[0]}]")
    for card in discards[1:]:
        while offered(env):
            play(env, "PASS")
        play(env, "DRAW_STOCK", f"DISCARD[{card}]")
    return env


RULES_EXAMPLE_HANDS = [
    "Js Qs Ks 9s Ts 2c 5d",
    "Jd 3c 6h 8d Tc 4s Ac",
    "Qh 2d 4c 6c 8h Th 3s",
]


@pytest.mark.parametrize("options", [{}, {"deepest_card_new_meld": True}])
def test_rules_example_the_nine_is_callable_through_the_ten_laid_off_first(options):
    env = _spades_run_then(
        RULES_EXAMPLE_HANDS, ["2h", "9c", "7d", "4d"], ["9s", "Jd", "Qh", "Ts"], **options
    )
    assert melds(env) == ["Js Qs Ks"] and pile(env) == ["7c", "9s", "Jd", "Qh", "Ts"]
    assert offered(env) and seat(env) == 1
    # the ten lays off; the nine, three cards down, once the ten is laid off before it
    assert legal(env) == {"TAKE_DISCARD[0]", "TAKE_DISCARD[3]", "PASS"}
    play(env, "TAKE_DISCARD[3]")
    assert pile(env) == ["7c"] and phase(env) == "play"
    assert not any(n.startswith("DISCARD") for n in legal(env))  # the nine must be melded
    assert "LAYOFF[9s, 0]" not in legal(env)  # not before the ten
    # a lay-off meets the call even with deepest_card_new_meld (that variant is about draws)
    play(env, "LAYOFF[Ts, 0]", "LAYOFF[9s, 0]", "DISCARD[Qh]")
    assert melds(env) == ["9s Ts Js Qs Ks"] and melded(env)[1] == 19
    assert phase(env) == "draw" and seat(env) == 2


def test_layoff_only_calls_only_the_top_card_even_with_a_chain_below():
    env = _spades_run_then(
        RULES_EXAMPLE_HANDS,
        ["2h", "9c", "7d", "4d"],
        ["9s", "Jd", "Qh", "Ts"],
        rummy_call="layoff_only",
    )
    assert offered(env) and legal(env) == {"TAKE_DISCARD[0]", "PASS"}


def test_a_card_that_needs_the_card_below_it_is_not_callable():
    # the T♠ went down first (offered, declined), then the 9♠ on top of it: the 9♠ alone is
    # not callable, the T♠ is, and whoever takes it down to the T♠ may lay off both
    hands = ["Js Qs Ks Ts 2c 5d 7h", "9s 3c 6h 8d Tc 4s Ac", "Qh 2d 4c 6c 8h Th 3s"]
    env = _spades_run_then(hands, ["2h", "9c", "7d"], ["Ts", "9s"])
    assert pile(env) == ["7c", "Ts", "9s"]
    assert offered(env) and seat(env) == 2
    assert legal(env) == {"TAKE_DISCARD[1]", "PASS"}
    play(env, "TAKE_DISCARD[1]", "LAYOFF[Ts, 0]", "LAYOFF[9s, 0]", "DISCARD[Qh]")
    assert melds(env) == ["9s Ts Js Qs Ks"]


def test_a_joker_in_the_pile_carries_the_chain():
    hands = ["Js Qs Ks 9s 2c 5d 7h", "Qh 3c 6h 8d Tc 4s Ac", "JK 2d 4c 6c 8h Th 3s"]
    env = _spades_run_then(hands, ["2h", "9c", "7d"], ["9s", "Qh", "JK"])
    assert pile(env) == ["7c", "9s", "Qh", "JK"]
    assert offered(env) and seat(env) == 0  # the owner of the run may call too
    # the joker lays off; the nine follows it when the joker stands for the ten
    assert legal(env) == {"TAKE_DISCARD[0]", "TAKE_DISCARD[2]", "PASS"}
    play(env, "TAKE_DISCARD[2]")
    assert "LAYOFF_JOKER[0, low]" in legal(env)
    assert "LAYOFF_JOKER[0, high]" not in legal(env)  # the nine could not follow
    play(env, "LAYOFF_JOKER[0, low]", "LAYOFF[9s, 0]", "DISCARD[Qh]")
    assert melds(env) == ["9s JK Js Qs Ks"] and melded(env)[0] == 30 + 15 + 9


def test_a_pile_card_lays_off_on_a_meld_the_cards_above_it_form():
    # from the top 6h 5h 7h Kc 8h, nothing on the table: the 8h joins the 5-6-7 the cards above
    # it form (and the 7h makes 5-6-7 itself); the Kc and the cards above the 7h do not meld
    hands = ["8h 5h 2c 4d 9s Js Kd", "Kc 6h 3c 8d Tc 4s Ac", "7h 2d 4c 6c Qh Th 3s"]
    env = deal(hands, "9c", ["2s", "3d", "Ks", "Jc", "Qd"])
    for card in ("8h", "Kc", "7h", "5h", "6h"):
        assert not offered(env)
        play(env, "DRAW_STOCK", f"DISCARD[{card}]")
    assert pile(env) == ["9c", "8h", "Kc", "7h", "5h", "6h"]
    assert offered(env) and seat(env) == 2
    assert legal(env) == {"TAKE_DISCARD[2]", "TAKE_DISCARD[4]", "PASS"}
    play(env, "TAKE_DISCARD[4]")
    assert "MELD[run h 5..7]" in legal(env)  # the 8h can still be laid off after it
    play(env, "MELD[run h 5..7]", "LAYOFF[8h, 0]", "DISCARD[Kc]")
    assert melds(env) == ["5h 6h 7h 8h"]


def test_with_two_decks_a_caller_who_melds_the_called_card_may_discard_its_twin():
    # player_3 holds the other 6h; player_1 discards a 6h onto 7-8-9 of hearts
    env = deal([*CALL_HANDS[:3], "3c 5d 7s Qd Ad 6h 4h"], "Ks", ["2h", "5c"], num_decks=2)
    play(env, "DRAW_STOCK", "MELD[run h 7..9]", "DISCARD[Qs]")
    play(env, "DRAW_STOCK", "DISCARD[6h]")
    play(env, "PASS")
    assert offered(env) and seat(env) == 3
    play(env, "TAKE_DISCARD[0]")
    assert not any(n.startswith("DISCARD") for n in legal(env))
    play(env, "LAYOFF[6h, 0]")
    assert "DISCARD[6h]" in legal(env)  # the copy still held is the caller's own
    play(env, "DISCARD[6h]")
    assert pile(env)[-1] == "6h" and hand(env, 3).count("6h") == 0


# -- §2.6 end of hand -----------------------------------------------------------------------

OUT_HANDS = ["2c 3c 4c 5c Kd Kh Ks", "3d Tc 6s Qd 4h 9s Ac", "4s Jd 7d Ah 5h 2d Qs"]


def test_melding_every_card_ends_the_hand():
    env = deal(OUT_HANDS, "8s", ["6c"])
    play(env, "DRAW_STOCK", "MELD[run c 2..6]", "MELD[group K: d h s]")
    assert done(env) and int(env.state_record["outcome"]) == E.OUT_WENT_OUT
    assert hand_points(env)[0] == 20 + 30
    assert all(not m for m in env.observe("player_0")["action_mask"])  # nobody melds after


def test_discard_required_forbids_melding_every_card():
    env = deal(OUT_HANDS, "8s", ["6c"], going_out="discard_required")
    play(env, "DRAW_STOCK", "MELD[run c 2..6]")
    assert "MELD[group K: d h s]" not in legal(env)  # it would leave nothing to discard
    env = deal(OUT_HANDS, "8s", ["6c"], going_out="discard_required")
    play(env, "DRAW_STOCK", "MELD[run c 2..5]", "MELD[group K: d h s]")
    assert "LAYOFF[6c, 0]" not in legal(env)
    play(env, "DISCARD[6c]")  # going out with a final discard
    assert done(env) and hand_points(env)[0] == 14 + 30 - 0


def _float_player_0(going_out, stock, **options):
    env = deal(OUT_HANDS, "8s", ["6c", *stock], going_out=going_out, rummy_call="none", **options)
    play(env, "DRAW_STOCK", "MELD[run c 2..6]", "MELD[group K: d h s]")
    rec = env.state_record
    assert not done(env) and list(rec["floating"]) == [1, 0, 0] and hand(env, 0) == []
    assert seat(env) == 1 and phase(env) == "draw"
    return env


@pytest.mark.parametrize("going_out", ["floating", "unplayable_discard"])
def test_floating_a_player_who_melds_every_card_floats_and_play_goes_on(going_out):
    env = _float_player_0(going_out, ["9d", "Jc", "Td"])
    play(env, "DRAW_STOCK", "DISCARD[9d]")
    play(env, "DRAW_STOCK", "DISCARD[Jc]")
    # the floater may not take a single top discard it cannot lay off (it could not discard it)
    assert legal(env) == {"DRAW_STOCK"}
    play(env, "DRAW_STOCK", "DISCARD[Td]")  # draws and discards: the hand ends
    assert done(env) and int(env.state_record["went_out"]) == 0


@pytest.mark.parametrize("going_out", ["floating", "unplayable_discard"])
def test_a_floater_may_take_a_top_discard_that_lays_off_and_float_again(going_out):
    env = _float_player_0(going_out, ["9d", "7c"])
    play(env, "DRAW_STOCK", "DISCARD[9d]")
    play(env, "DRAW_STOCK", "DISCARD[7c]")
    assert "TAKE_DISCARD[0]" in legal(env)
    play(env, "TAKE_DISCARD[0]")
    assert legal(env) == {"LAYOFF[7c, 0]"}  # taking the top discard and discarding it: never
    play(env, "LAYOFF[7c, 0]")
    assert not done(env) and seat(env) == 1 and int(env.state_record["floating"][0]) == 1


def test_floating_a_floater_may_discard_a_playable_card_drawn():
    env = _float_player_0("floating", ["9d", "Jc", "7c"])
    play(env, "DRAW_STOCK", "DISCARD[9d]")
    play(env, "DRAW_STOCK", "DISCARD[Jc]")
    play(env, "DRAW_STOCK")
    assert legal(env) == {"DISCARD[7c]", "LAYOFF[7c, 0]"}


def test_unplayable_discard_a_playable_last_card_must_be_melded():
    env = deal(OUT_HANDS, "8s", ["6c"], going_out="unplayable_discard", rummy_call="none")
    play(env, "DRAW_STOCK", "MELD[run c 2..5]", "MELD[group K: d h s]")
    assert legal(env) == {"LAYOFF[6c, 0]"}  # 6c could be laid off: it may not be discarded
    play(env, "LAYOFF[6c, 0]")
    assert not done(env) and int(env.state_record["floating"][0]) == 1


def test_unplayable_discard_a_floater_drawing_a_playable_card_must_meld_it():
    env = _float_player_0("unplayable_discard", ["9d", "Jc", "7c"])
    play(env, "DRAW_STOCK", "DISCARD[9d]")
    play(env, "DRAW_STOCK", "DISCARD[Jc]")
    play(env, "DRAW_STOCK")
    assert legal(env) == {"LAYOFF[7c, 0]"}


# -- §2.7 score and game end ----------------------------------------------------------------


def _hand_of_two_scores(p0, target, **options):
    """player_0 melds four kings and keeps ``p0``; player_1 goes out with 23 points."""
    env = deal(
        [f"Kc Kd Kh Ks {p0}", "2d 3d 4d 5d 2h 3h 4h", "7c 8s Td Jh Qc Ad 9h"],
        "8d",
        ["Qs", "Jc"],
        episode="game",
        target=target,
        **options,
    )
    play(env, "DRAW_STOCK", "MELD[group K: c d h s]", "DISCARD[Qs]")
    play(env, "DRAW_STOCK", "MELD[run d 2..5]", "MELD[run h 2..4]", "DISCARD[Jc]")
    return env


def test_scores_are_cumulative_and_a_single_leader_at_the_target_wins():
    env = _hand_of_two_scores("2s 3s 4c", 20)
    rec = env.state_record
    assert [int(x) for x in rec["scores"]] == [40 - 9, 23, -(7 + 8 + 10 + 10 + 10 + 15 + 9)]
    assert done(env) and int(rec["winner"]) == 0


def test_a_tie_for_the_lead_at_the_target_plays_another_hand():
    env = _hand_of_two_scores("9c 6s 2s", 20)
    rec = env.state_record
    assert [int(x) for x in rec["scores"]][:2] == [23, 23]
    assert not done(env) and int(rec["hands_played"]) == 1 and int(rec["winner"]) == -1


def test_below_the_target_the_game_goes_on():
    env = _hand_of_two_scores("2s 3s 4c", 40)
    assert not done(env) and int(env.state_record["hands_played"]) == 1


def test_must_go_out_to_win_the_player_who_went_out_wins_without_the_highest_total():
    # seed: "if A goes out with 505 while B has 520, A has won"
    env = _hand_of_two_scores("2s 3s 4c", 20, must_go_out_to_win=True)
    rec = env.state_record
    assert [int(x) for x in rec["scores"]][:2] == [31, 23]
    assert done(env) and int(rec["winner"]) == 1


def test_must_go_out_to_win_below_the_target_another_hand_is_dealt():
    env = _hand_of_two_scores("2s 3s 4c", 25, must_go_out_to_win=True)
    assert not done(env)  # player_0 has 31 but did not go out; player_1 went out with 23
    env = _hand_of_two_scores("2s 3s 4c", 25)
    assert done(env) and int(env.state_record["winner"]) == 0


# -- §2.8 variants --------------------------------------------------------------------------


def test_must_meld_discard_even_the_top_discard_must_be_melded():
    env = deal(LOOSE3, "Kh", must_meld_discard=True)
    assert legal(env) == {"DRAW_STOCK"}  # player_0 could not meld the king
    env = deal(["9c 9d 5s Qc 3h 8c Js", *LOOSE3[1:]], "9h", must_meld_discard=True)
    play(env, "TAKE_DISCARD[0]")
    assert not any(n.startswith("DISCARD") for n in legal(env))
    play(env, "MELD[group 9: c d h]")
    assert "DISCARD[5s]" in legal(env)


def _deep_eight(hero, **options):
    """player_2 melds 5-6-7 of hearts; the 8 of hearts lies at depth 1 when player_0 draws."""
    env = deal(
        [hero, "8h Kc 2d Qs 4d Jc 3s", "5h 6h 7h Tc 2s Ad 8d"],
        "Kd",
        ["6c", "3c", "4c", "Ts"],
        rummy_call="none",
        **options,
    )
    play(env, "DRAW_STOCK", "DISCARD[6c]")
    play(env, "DRAW_STOCK", "DISCARD[8h]")
    play(env, "DRAW_STOCK", "MELD[run h 5..7]", "DISCARD[4c]")
    assert pile(env) == ["Kd", "6c", "8h", "4c"] and seat(env) == 0
    return env


def test_deepest_card_new_meld_a_lay_off_does_not_suffice():
    env = _deep_eight("2c 5d Qc 3h 8s Js 9c")
    assert "TAKE_DISCARD[1]" in legal(env)  # by default the 8 may be laid off
    env = _deep_eight("2c 5d Qc 3h 8s Js 9c", deepest_card_new_meld=True)
    assert "TAKE_DISCARD[1]" not in legal(env)
    env = _deep_eight("2c 5d Qc 3h 8s Js 8c", deepest_card_new_meld=True)
    play(env, "TAKE_DISCARD[1]")
    assert "LAYOFF[8h, 0]" not in legal(env)  # it must go into a new meld
    play(env, "MELD[group 8: c h s]")
    assert "DISCARD[4c]" in legal(env)


def test_deepest_card_new_meld_taking_only_the_top_card_needs_no_meld():
    env = deal(LOOSE3, "Kh", deepest_card_new_meld=True)
    assert "TAKE_DISCARD[0]" in legal(env)


# -- the card just taken, with two decks ------------------------------------------------------
# RULES §2.4: a player who took only the top discard may not discard "that same card". With two
# decks two copies are interchangeable: once one copy of the type taken has been melded, the
# player has melded the card taken (with must_meld_discard he must), and the copy still held
# is his own, so it may be discarded.

NINES = ["9c 9d 9h 2s 3s 4s 5s", "3d Tc 6s Kd 4h Ac Qd", "9h Jd 7c Ah 5h 2d Qs"]


def _second_nine_of_hearts_on_top(**options):
    """player_0 keeps 9c 9d 9h; player_2 discards the other 9h; player_0 to draw."""
    env = deal(NINES, "8c", ["Kc", "Js", "Td"], num_decks=2, **options)
    play(env, "DRAW_STOCK", "MELD[run s 2..5]", "DISCARD[Kc]")
    play(env, "DRAW_STOCK", "DISCARD[Js]")
    play(env, "DRAW_STOCK", "DISCARD[9h]")
    assert hand(env, 0) == cards("9c 9d 9h") and pile(env)[-1] == "9h" and seat(env) == 0
    return env


def test_must_meld_discard_after_melding_the_card_taken_its_twin_may_be_discarded():
    env = _second_nine_of_hearts_on_top(must_meld_discard=True)
    play(env, "TAKE_DISCARD[0]")
    assert legal(env) == {"MELD[group 9: c d h]"}  # the 9h taken must be melded first
    play(env, "MELD[group 9: c d h]")
    assert legal(env) == {"DISCARD[9h]"}  # the player's own 9h: going out
    play(env, "DISCARD[9h]")
    assert done(env)


def test_with_two_decks_a_melded_copy_counts_as_the_card_taken():
    env = _second_nine_of_hearts_on_top()
    play(env, "TAKE_DISCARD[0]")
    assert "DISCARD[9h]" in legal(env)  # two copies held: one may go
    play(env, "MELD[group 9: c d h]")
    assert legal(env) == {"DISCARD[9h]"}


# -- §4 every episode terminates --------------------------------------------------------------


def test_a_hand_ends_even_if_nobody_draws_from_the_stock():
    # players keep taking the top discard (and discarding another card): after max_pile_draws
    # pile draws only the stock is left, the stock runs out, and the hand ends
    env = deal(LOOSE3, "Kh", max_pile_draws=30)
    lay = env.layout
    pile_draws = 0
    for _ in range(500):
        if done(env):
            break
        if int(env.state_record["phase"]) == E.PH_CALL:
            env.step(lay.pass_action)  # Rummy! calls meld a card each time: not capped
            continue
        top = int(env.state_record["pile"][int(env.state_record["pile_n"]) - 1])
        mask = env.observe(env.agent_selection)["action_mask"]
        if mask[lay.take_base]:
            env.step(lay.take_base)
            pile_draws += 1
        else:
            assert pile_draws >= 30 and not mask[lay.take_base : lay.meld_base].any()
            env.step(lay.draw_stock if mask[lay.draw_stock] else lay.pass_action)
        if done(env):
            break
        mask = env.observe(env.agent_selection)["action_mask"]
        discards = np.flatnonzero(mask[lay.discard_base : lay.pass_action]) + lay.discard_base
        env.step(int(next(a for a in discards if a != lay.discard_base + top)))
    assert done(env)
    assert pile_draws == 30
