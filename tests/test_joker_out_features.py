"""``joker_cards_out`` and ``joker_cards_plan``: can a Rummy 51 (or 500 Rum) hand go out this
turn, how many cards must it keep, and which melds does its free arrangement hold?

The searches (:func:`rummy_agents.features.fewest_left`, :func:`free_arrangement`) are
shown on stacked hands first, then checked against the rule-based agent's plans on played
positions.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_agents.features import (
    add_features,
    best_melds,
    card_layout,
    feature_size,
    fewest_left,
    free_arrangement,
    make_out_work,
    meld_planes,
)
from rummy_agents.heuristic import HeuristicAgent
from rummy_agents.rummy51_greedy import Rummy51GreedyAgent, _counts, table_melds
from rummy_env.core.cards import parse_cards
from rummy_env.core.jmelds import template_str
from rummy_env.encodings import five_hundred_rum as E500
from rummy_env.encodings import rummy51 as E
from rummy_env.rules.rummy51.kernels import card_penalty


def _left(hand: str, *, need: int = 0, taken: str = "", runs=(), groups=()) -> int:
    """Fewest cards ``hand`` holds before its discard. ``runs``: (suit, low, high) with
    positions 0 = low ace, 1..12 = 2..K, 13 = high ace; ``groups``: (rank, suit mask, size).
    """
    h = np.zeros(53, np.int64)
    for c in parse_cards(hand):
        h[c] += 1
    before = h.copy()
    r = np.zeros((8, 3), np.int64)
    g = np.zeros((8, 3), np.int64)
    for k, row in enumerate(runs):
        r[k] = row
    for k, row in enumerate(groups):
        g[k] = row
    t = parse_cards(taken)[0] if taken else -1
    n = fewest_left(h, need, t, r, len(runs), g, len(groups), *make_out_work())
    np.testing.assert_array_equal(h, before)  # the hand is restored
    return int(n)


CLUBS, DIAMONDS, HEARTS, SPADES = range(4)


def test_a_hand_that_melds_all_but_one_card_goes_out() -> None:
    assert _left("7h 8h 9h 5c") == 1
    assert _left("7h 8h 9h Kc Kd Ks 2c") == 1
    assert _left("7h 8h 9h 5c 6d") == 2  # two loose cards: one stays after the discard


def test_three_cards_of_one_meld_cannot_go_out_without_a_discard() -> None:
    # laying the three leaves nothing to discard, so one of them is kept (and the meld is not)
    assert _left("8c 8d 8s") == 3
    assert _left("8c 8d 8s 8h") == 1  # a group of three is laid, the fourth discarded


def test_jokers_fill_new_melds() -> None:
    assert _left("7h JK 9h 5c") == 1
    assert _left("7h JK 5c 2d") == 4  # two cards are no meld
    assert _left("7h JK JK 5c 2d") == 2


def test_lay_offs_extend_table_runs_card_by_card_and_over_a_joker() -> None:
    run = (HEARTS, 4, 6)  # 5h 6h 7h on the table
    assert _left("8h 9h 2c", runs=[run]) == 1
    assert _left("9h 2c", runs=[run]) == 2  # 8h missing: 9h does not fit
    assert _left("JK 9h 2c", runs=[run]) == 1  # the joker stands for 8h, then 9h
    assert _left("3h 4h Qc", runs=[run]) == 1  # downwards, 4h then 3h
    assert _left("Ah 2c", runs=[(HEARTS, 9, 12)]) == 1  # T-K: the ace goes high
    assert _left("Ah 2c", runs=[(HEARTS, 0, 2)]) == 2  # the ace is already low


def test_lay_offs_fill_groups_to_four() -> None:
    assert _left("9s 2c", groups=[(8, 0b0111, 3)]) == 1
    assert _left("9s 2c", groups=[(8, 0b0011, 4)]) == 2  # full with a joker
    assert _left("JK 2c", groups=[(8, 0b0011, 3)]) == 1


def test_an_opening_must_reach_its_points_before_anything_is_laid() -> None:
    # 30 points of melds: short of 51, so nothing may be laid and every card stays
    assert _left("Kh Qh Jh 5c", need=51) == 4
    assert _left("Kh Qh Jh 5c", need=30) == 1
    assert _left("Kh Kd Ks Qh Qd Qs Tc Td Ts 2c", need=51) == 1
    # before the opening, no lay-off either
    assert _left("8h 9h 2c", need=51, runs=[(HEARTS, 4, 6)]) == 3


def test_the_card_taken_from_the_pile_is_not_the_discard() -> None:
    assert _left("7h 8h 9h 5c", taken="5c") == 4  # melding would leave only the taken card
    assert _left("7h 8h 9h 5c", taken="7h") == 1
    assert _left("7h 8h 9h 5c 8s", taken="5c", groups=[(7, 0b0011, 3)]) == 2


def test_feature_layout_and_errors() -> None:
    assert feature_size("joker_cards_out") == feature_size("joker_cards") + 3
    width = E.Layout(2).obs_size
    assert card_layout("rummy51", "joker_cards_out", width) == card_layout(
        "rummy51", "joker_cards", width
    )
    venv = rummy_env.make_vec("five_hundred_rum", 2, seed=0)
    obs, _ = venv.reset()
    assert add_features("joker_cards_out", obs["observation"]).shape[1] == (
        obs["observation"].shape[1] + feature_size("joker_cards_out")
    )
    for name in ("joker_cards_plan", "joker_cards_melds"):
        x = add_features(name, obs["observation"])
        assert x.shape[1] == obs["observation"].shape[1] + feature_size(name)
    w500 = obs["observation"].shape[1]
    meld_offset = w500 + feature_size("joker_cards_plan")
    assert meld_planes("five_hundred_rum", "joker_cards_melds", w500) == [
        (E500.Layout(2, 54).meld_base, meld_offset, 685)
    ]


def test_500_rum_goes_out_by_melding_every_card() -> None:
    # Rummy 51 must keep a card to discard; 500 Rum may meld them all (need=-1)
    assert _left("7h 8h 9h Kc Kd Ks") == 3  # one meld laid, the other kept to discard from
    assert _left("7h 8h 9h Kc Kd Ks", need=-1) == 1
    assert _left("7h 8h 9h Kc Kd Ks 2c", need=-1) == 1
    assert _left("7h 8h 9h Kc Kd 2c", need=-1) == 3
    assert _left("7h 8h 9h 5c", need=-1, taken="5c") == 4


def test_500_rum_going_out_agrees_with_greedys_plans() -> None:
    """In 500 Rum's play phase the flag says what ``greedy``'s planner finds: its best plan
    (most points melded) leaves at most one card. That plan may miss a way out that melds fewer
    points (rare), and greedy's lay-off pass may find one the search does not try (rarer).
    """
    from rummy_agents.five_hundred_rum_greedy import FiveHundredRumGreedyAgent, MeldPlanner
    from rummy_agents.five_hundred_rum_greedy import table_melds as greedy_table_melds
    from rummy_env.encodings import five_hundred_rum as E500

    lay = E500.Layout(2, 54)
    planner = MeldPlanner()
    venv = rummy_env.make_vec("five_hundred_rum", 32, seed=4)
    obs, _ = venv.reset()
    agent = HeuristicAgent(seed=0)
    rng = np.random.default_rng(4)
    agree = total = outs = 0
    for _ in range(150):
        x = add_features("joker_cards_out", obs["observation"])
        f = x[:, -3:]
        for i in range(32):
            parts = lay.split(obs["observation"][i])
            if int(np.argmax(parts["phase"])) != E500.PH_PLAY or parts["obligation"].any():
                continue
            assert f[i, 0] == float(round(f[i, 1] * 14) == 1) and f[i, 1] == f[i, 2]
            hand = [int(v) for v in np.rint(parts["hand"] * 2)]
            plan = planner.best(hand, greedy_table_melds(parts))
            out = plan is not None and sum(plan.left) <= 1
            agree += out == (f[i, 0] > 0.5)
            outs += out
            total += 1
        a = agent.act_game(venv.game)
        for i in np.flatnonzero(rng.random(32) < 0.2):
            a[i] = rng.choice(np.flatnonzero(obs["action_mask"][i]))
        obs, *_ = venv.step(a)
    assert FiveHundredRumGreedyAgent  # the planner is greedy's
    assert total > 1000 and outs > 50, (total, outs)
    assert agree / total > 0.98, (agree, total)


def _positions(n: int, steps: int, seed: int):
    venv = rummy_env.make_vec("rummy51", n, seed=seed)
    obs, _ = venv.reset()
    agent = HeuristicAgent(seed=0)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield obs
        a = agent.act_game(venv.game)
        mask = obs["action_mask"]
        for i in np.flatnonzero(rng.random(n) < 0.2):
            a[i] = rng.choice(np.flatnonzero(mask[i]))
        obs, *_ = venv.step(a)


def test_going_out_agrees_with_the_rule_agents_plans() -> None:
    """In the play phase of opened players, the flag says what ``greedy``'s planner finds:
    its best plan leaves at most one card. The planner maximises the penalty removed, so it
    may miss a way out that lays fewer points (rare); never the other way round by much.
    """
    lay = E.Layout(2)
    agent = Rummy51GreedyAgent(seed=0)
    agent._threshold = 51
    agree = total = outs = 0
    for obs in _positions(32, 150, seed=1):
        x = add_features("joker_cards_out", obs["observation"])
        f = x[:, -3:]
        for i in range(32):
            parts = lay.split(obs["observation"][i])
            phase = int(np.argmax(parts["phase"]))
            if phase == E.PH_PLAY:
                assert f[i, 0] == float(round(f[i, 1] * 14) == 1) and f[i, 1] == f[i, 2]
            if phase != E.PH_PLAY or parts["opened"][0] < 0.5:
                continue
            agent._parts, agent._opened = parts, True
            taken = int(np.argmax(parts["taken_single"])) if parts["taken_single"].any() else -1
            plan = agent._plan(_counts(parts["hand"]), table_melds(parts), taken)
            out = plan is not None and sum(plan.left) <= 1
            agree += out == (f[i, 0] > 0.5)
            outs += out
            total += 1
    assert total > 1000 and outs > 50, (total, outs)
    assert agree / total > 0.99, (agree, total)


def test_draw_phase_reads_the_top_discard() -> None:
    lay = E.Layout(2)
    seen = 0
    for obs in _positions(16, 100, seed=2):
        x = add_features("joker_cards_out", obs["observation"])
        for i in range(16):
            parts = lay.split(obs["observation"][i])
            if int(np.argmax(parts["phase"])) != E.PH_DRAW:
                continue
            f = x[i, -3:]
            top = int(round(float(parts["pile_sequence"][0]) * 53)) - 1
            if top < 0:
                assert f[1] == f[2] and f[0] == 0.0
                continue
            assert f[0] == float(round(f[1] * 14) == 1)
            seen += 1
    assert seen > 200


def _free(hand: str, taken: str = "") -> tuple[int, str]:
    """Penalty the free arrangement of ``hand`` leaves, and the cards it leaves."""
    from rummy_env.core.cards import cards_to_str, counts_to_cards

    h = np.zeros(53, np.int64)
    for c in parse_cards(hand):
        h[c] += 1
    left = np.zeros(53, np.int64)
    t = parse_cards(taken)[0] if taken else -1
    v = free_arrangement(h, t, *make_out_work(), left)
    return int(v), cards_to_str(counts_to_cards(left))


def test_free_arrangement_melds_the_most_penalty_and_keeps_a_discard() -> None:
    assert _free("Kh Kd Ks 5c 6c 7c 2d") == (2, "2d")
    assert _free("Kh Kd Ks") == (30, "Kd Kh Ks")  # melding all three leaves no discard
    assert _free("Kh Kd Ks Kc")[0] == 10  # three of them, the fourth kept
    assert _free("7h JK 9h 2c") == (2, "2c")
    # a group of nines and T-J-Q of spades, rather than the run 9-Q that strands two nines
    assert _free("9s Ts Js Qs 9h 9d 3c") == (3, "3c")
    # melding the run would leave only the card taken from the pile, which may not be thrown
    assert _free("7h 8h 9h 5c", taken="5c") == (29, "5c 7h 8h 9h")
    assert _free("7h 8h 9h 5c", taken="7h") == (5, "5c")


def test_free_arrangement_agrees_with_greedys() -> None:
    """The same arrangement as ``greedy``'s planner (or one leaving less penalty: the planner
    stops after 3,000 nodes)."""
    lay = E.Layout(2)
    agent = Rummy51GreedyAgent(seed=0)
    left = np.zeros(53, np.int64)
    ws = make_out_work()
    same = total = 0
    for obs in _positions(16, 120, seed=4):
        for i in range(16):
            parts = lay.split(obs["observation"][i])
            hand = _counts(parts["hand"])
            taken = int(np.argmax(parts["taken_single"])) if parts["taken_single"].any() else -1
            plan = agent._free(hand, taken)
            v = free_arrangement(np.array(hand, np.int64), taken, *ws, left)
            if plan is None:
                assert v >= 1 << 30
                continue
            planned = sum(n * card_penalty(c) for c, n in enumerate(plan.left))
            assert v <= planned
            same += v == planned
            total += 1
    assert total > 1500 and same / total > 0.99, (same, total)


def test_plan_planes_hold_penalties_and_the_free_arrangement() -> None:
    width = E.Layout(2).obs_size
    planes = card_layout("rummy51", "joker_cards_plan", width)[0]
    off = width + feature_size("joker_cards_out")
    assert planes[-2:] == [off, off + 52]
    assert feature_size("joker_cards_plan") == feature_size("joker_cards_out") + 104
    lay = E.Layout(2)
    ws = make_out_work()
    left = np.zeros(53, np.int64)
    for obs in _positions(8, 40, seed=5):
        x = add_features("joker_cards_plan", obs["observation"])
        y = add_features("joker_cards_out", obs["observation"])
        np.testing.assert_array_equal(x[:, : y.shape[1]], y)
        for i in range(8):
            parts = lay.split(obs["observation"][i])
            hand = np.array(_counts(parts["hand"]), np.int64)
            taken = int(np.argmax(parts["taken_single"])) if parts["taken_single"].any() else -1
            free_arrangement(hand, taken, *ws, left)
            pen = [card_penalty(c) / 25 if hand[c] else 0.0 for c in range(52)]
            np.testing.assert_allclose(x[i, y.shape[1] : y.shape[1] + 52], pen, rtol=1e-6)
            np.testing.assert_array_equal(x[i, y.shape[1] + 52 :], (hand - left)[:52] / 2)


def _melds_out(hand: str, need: int = 0) -> list[str]:
    """The new melds of the arrangement leaving the fewest cards, as text."""
    h = np.zeros(53, np.int64)
    for c in parse_cards(hand):
        h[c] += 1
    work = make_out_work()
    none = np.zeros((0, 3), np.int64)
    fewest_left(h, need, -1, none, 0, none, 0, *work)
    return sorted(template_str(t) for t in best_melds(work))


def test_the_going_out_melds_are_those_of_the_arrangement_leaving_fewest_cards() -> None:
    assert _melds_out("7h 8h 9h Kc Kd Ks 2c") == ["group K: c d s", "run h 7..9"]
    # a joker fills the run's gap; the 5c is the discard
    assert _melds_out("7h JK 9h 10h 5c") == ["run h 7..T"]
    # opening: 7-8-9 (24 points) is short of 51, so nothing is laid
    assert _melds_out("7h 8h 9h 2c 5d", need=51) == []
    # with the kings and the queens it reaches 24 + 30 + 30 = 84 and goes out
    assert len(_melds_out("7h 8h 9h Kc Kd Ks Qc Qd Qs 4d", need=51)) == 3


def test_meld_plane_marks_legal_melds_of_the_turn() -> None:
    """``joker_cards_melds`` extends ``joker_cards_plan`` by one entry per MELD[t]: in the play
    phase the melds of the fewest-cards arrangement, each of them a legal meld now; zeros in
    the draw phase. :func:`meld_planes` aligns the plane with the MELD actions."""
    lay = E.Layout(2)
    width = lay.obs_size
    base = width + feature_size("joker_cards_plan")
    assert meld_planes("rummy51", "joker_cards_melds", width) == [(lay.meld_base, base, 685)]
    assert meld_planes("rummy51", "joker_cards_plan", width) == []
    assert card_layout("rummy51", "joker_cards_melds", width) == card_layout(
        "rummy51", "joker_cards_plan", width
    )
    marked = rows = 0
    for obs in _positions(16, 60, seed=9):
        x = add_features("joker_cards_melds", obs["observation"])
        y = add_features("joker_cards_plan", obs["observation"])
        np.testing.assert_array_equal(x[:, :base], y)
        plane = x[:, base:]
        assert set(np.unique(plane)) <= {0.0, 1.0}
        for i in range(16):
            phase = lay.split(obs["observation"][i])["phase"]
            on = np.flatnonzero(plane[i])
            if phase[1] < 0.5:
                assert on.size == 0
                continue
            rows += 1
            marked += on.size > 0
            assert obs["action_mask"][i, lay.meld_base + on].all(), [template_str(t) for t in on]
    assert rows > 100 and marked > 10, (rows, marked)


def test_500_rum_plan_and_meld_planes() -> None:
    """In 500 Rum the plan planes hold each card's value / 15 (A 15, 2-9 face, 10-K 10) and the
    free arrangement by those values; every meld of the meld plane is a legal MELD now (in the
    play phase, with no taken card owed to a meld)."""
    from rummy_agents.features import FIVE_HUNDRED_RUM_VALUES, free_arrangement_by
    from rummy_env.encodings import five_hundred_rum as E500

    assert [int(FIVE_HUNDRED_RUM_VALUES[c]) for c in parse_cards("Ac 2c 9c Tc Kc")] == [
        15,
        2,
        9,
        10,
        10,
    ]
    assert int(FIVE_HUNDRED_RUM_VALUES[52]) == 15
    lay = E500.Layout(2, 54)
    width = lay.obs_size
    out = width + feature_size("joker_cards_out")
    base = width + feature_size("joker_cards_plan")
    venv = rummy_env.make_vec("five_hundred_rum", 16, seed=9)
    obs, _ = venv.reset()
    agent = HeuristicAgent(seed=0)
    rng = np.random.default_rng(9)
    work = make_out_work()
    left = np.zeros(53, np.int64)
    rows = marked = 0
    for _ in range(80):
        x = add_features("joker_cards_melds", obs["observation"])
        for i in range(16):
            parts = lay.split(obs["observation"][i])
            h = np.rint(parts["hand"] * 2).astype(np.int64)
            held = h[:52] > 0
            np.testing.assert_allclose(
                x[i, out : out + 52][held], FIVE_HUNDRED_RUM_VALUES[:52][held] / 15
            )
            assert not x[i, out : out + 52][~held].any()
            taken = int(np.argmax(parts["taken_single"])) if parts["taken_single"].any() else -1
            free_arrangement_by(h, taken, FIVE_HUNDRED_RUM_VALUES, *work, left)
            np.testing.assert_allclose(x[i, out + 52 : out + 104], (h[:52] - left[:52]) / 2)
            on = np.flatnonzero(x[i, base:])
            if int(np.argmax(parts["phase"])) != E500.PH_PLAY:
                assert on.size == 0
                continue
            if parts["obligation"].any():
                continue
            rows += 1
            marked += on.size > 0
            assert obs["action_mask"][i, lay.meld_base + on].all(), [template_str(t) for t in on]
        a = agent.act_game(venv.game)
        for i in np.flatnonzero(rng.random(16) < 0.2):
            a[i] = rng.choice(np.flatnonzero(obs["action_mask"][i]))
        obs, *_ = venv.step(a)
    assert rows > 100 and marked > 10, (rows, marked)


def test_take_plane_scores_each_pile_depth_as_greedy_does() -> None:
    """``joker_cards_takes`` (500 Rum): what taking the pile to each depth adds to the free
    arrangement, less the points of the taken cards left in hand; -1 where the deepest card
    taken melds with nothing."""
    from rummy_env import five_hundred_rum_v1
    from rummy_env.encodings import five_hundred_rum as E500
    from rummy_env.testing import joker_deck

    hero = "Kd Kh 4c 7c 9d 5h Jh 3s 6s 8s Ts Qc Qd"
    loose = "Ac 3c 5c 9c Jc 2d 6d 8d Td 4h 2s 7s 9s"
    env = five_hundred_rum_v1.raw_env(num_players=2)
    env.reset(
        options={"deck": joker_deck([hero, loose], "Kc", ["2c", "3h"], dealer=1), "dealer": 1}
    )
    lay = env.layout
    names = {lay.action_name(a): a for a in range(lay.num_actions)}
    for n in ("DRAW_STOCK", "DISCARD[4c]", "DRAW_STOCK", "DISCARD[2d]"):
        env.step(names[n])
    obs = env.observe(env.agent_selection)["observation"]  # pile, top first: 2d 4c Kc
    x = add_features("joker_cards_takes", obs)
    plane = x[obs.shape[0] + feature_size("joker_cards_melds") :]
    assert plane.shape == (108,)
    # depth 0: the 2d melds nothing and is kept (-2); depth 1: the 4c melds nothing (-1);
    # depth 2: K-K-K melds 30 points, the 4c and 2d stay in hand (-6)
    np.testing.assert_allclose(plane[:3], [-0.02, -1.0, 0.24], atol=1e-6)
    assert not plane[3:].any()
    # the depth plane is aligned with TAKE_DISCARD[d] for the policy's gated head
    assert meld_planes("five_hundred_rum", "joker_cards_takes", obs.shape[0])[1] == (
        lay.take_base,
        obs.shape[0] + feature_size("joker_cards_melds"),
        54,
    )
    assert E500.PHASE_NAMES[int(env.state_record["phase"])] == "draw"
    # the play phase has no take plane; Rummy 51 has no deep takes
    env.step(names["TAKE_DISCARD[2]"])
    obs = env.observe(env.agent_selection)["observation"]
    assert not add_features("joker_cards_takes", obs)[-108:].any()
    r51 = rummy_env.make_vec("rummy51", 2, seed=0).reset()[0]["observation"]
    with pytest.raises(ValueError, match="500 Rum"):
        add_features("joker_cards_takes", r51)


def _score(hand: str, c: str, *, nxt: str = "", pile: str = "", fits: bool = False) -> int:
    """``greedy``'s discard score of card ``c`` from ``hand`` (500 Rum default values)."""
    from rummy_agents.features import FIVE_HUNDRED_RUM_VALUES
    from rummy_agents.joker_rollouts import greedy_discard_score

    def counts(text: str) -> np.ndarray:
        h = np.zeros(53, np.int64)
        for x in parse_cards(text):
            h[x] += 1
        return h

    card = parse_cards(c)[0]
    return int(greedy_discard_score(counts(hand), counts(nxt), counts(pile), fits, card,
                                    FIVE_HUNDRED_RUM_VALUES))  # fmt: skip


def test_greedy_discard_score_reads_like_its_rule() -> None:
    """Value, less what the card gives the table (50), the pile (30), the next player (12 / 6
    per near card, capped at 36) and what it breaks in the hand (8 / 6 / 3, capped at 16)."""
    hand = "Kc 9h Jd Js 4s 5s 2d Ac 2c"
    assert _score(hand, "Kc") == 10 - 6  # a loose king, but one rank from the Ac
    assert _score(hand, "9h", pile="9c 9d") == 9 - 30  # 9c 9d 9h: a "Rummy!" call
    assert _score(hand, "9h", pile="9c Ts") == 9  # one 9 and another suit's ten: no meld
    assert _score(hand, "Jd") == 10 - 8  # breaks the pair of jacks
    assert _score(hand, "4s") == 4 - 6  # next to the 5s
    assert _score(hand, "2d", fits=True) == 2 - 50 - 8  # lays off on a table meld; pairs the 2c
    assert _score(hand, "Ac") == 15 - 6 - 6  # the ace sits next to both the Kc and the 2c
    assert _score(hand, "Kc", nxt="Qc Kh Ks Kd") == 10 - 36 - 6  # danger caps at 36
    assert _score(hand + " JK", "JK") == 15 - 100  # a joker is never thrown
    # two copies of a card (two decks) are not near each other
    assert _score("7h 7h", "7h") == 7


def _score_reference(hand, nxt, pile_meld: bool, fits: bool, c: int, vals) -> int:
    """The discard score straight from its rule, over every card (the slow reading)."""
    score = int(vals[c])
    if c == 52:
        return score - 100
    score -= 50 if fits else 0
    score -= 30 if pile_meld else 0
    s, r = divmod(c, 13)
    danger = keep = 0
    for x in range(52):
        h = int(hand[x]) - (x == c)
        xs, xr = divmod(x, 13)
        if xr == r and xs != s:
            danger, keep = danger + 12 * int(nxt[x]), keep + 8 * h
        elif xs == s:
            gap = abs(xr - r)
            if 0 in (xr, r):
                gap = min(gap, 13 - gap)
            if gap in (1, 2):
                danger += (12 if gap == 1 else 6) * int(nxt[x])
                keep += (6 if gap == 1 else 3) * h
    return score - min(danger, 36) - min(keep, 16)


@settings(max_examples=300, deadline=None)
@given(
    hand=st.lists(st.integers(0, 2), min_size=53, max_size=53),
    nxt=st.lists(st.integers(0, 2), min_size=53, max_size=53),
    c=st.integers(0, 52),
    fits=st.booleans(),
)
def test_greedy_discard_score_is_its_rule(hand, nxt, c, fits) -> None:
    """Against the rule read over every card, for any hand and known cards (two decks)."""
    from rummy_agents.features import FIVE_HUNDRED_RUM_VALUES as vals
    from rummy_agents.joker_rollouts import greedy_discard_score, melds_with_pile

    h, n, pile = np.array(hand, np.int64), np.array(nxt, np.int64), np.zeros(53, np.int64)
    got = int(greedy_discard_score(h, n, pile, fits, c, vals))
    assert got == _score_reference(h, n, bool(melds_with_pile(pile, c)), fits, c, vals)


def test_discard_planes_mark_greedys_discards_on_played_positions() -> None:
    """``joker_cards_discards`` (500 Rum): in the play phase the natural ``greedy`` throws has
    the first plane's top value 1, and the one ``greedy@hold_melds=3`` throws while it keeps
    its melds in hand (opponent above 3 cards) has the second plane's (the best of the cards
    the free arrangement leaves), bar the few its own planner arranges otherwise; held cards
    lie in [0, 1], other cards and phases are 0; both planes are card planes of the policy,
    aligned with the DISCARD actions of naturals."""
    from rummy_agents.base import SeatView
    from rummy_agents.five_hundred_rum_greedy import FiveHundredRumGreedyAgent
    from rummy_env import five_hundred_rum_v1

    plain = held = held_top = 0
    for seed in range(20):
        env = five_hundred_rum_v1.raw_env(num_players=2)
        env.reset(seed=seed)
        lay = env.layout
        hold = seed % 2 == 1
        agent = FiveHundredRumGreedyAgent(seed=seed, hold_melds=3 if hold else None)
        for name in env.agent_iter(400):
            ob, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            x = ob["observation"]
            x2 = add_features("joker_cards_discards", x)
            first, second = x2[-104:-52], x2[-52:]
            hand = x[lay.offset("hand") : lay.offset("hand") + 52] > 0
            for plane in (first, second):
                assert (plane[~hand] == 0).all() and (plane >= 0).all() and plane.max() <= 1
            kept = second > 0  # measured from the leftovers' best, never above the hand's
            assert (second[kept] >= first[kept]).all()
            phase = E500.PHASE_NAMES[int(env.state_record["phase"])]
            if phase != "play":
                assert not first.any() and not second.any(), phase
            a = agent.act(ob, SeatView(env, name))
            k = a - lay.discard_base
            if 0 <= k < 52 and ob["action_mask"].sum() > 1:
                if not hold:
                    assert first[k] == 1.0, lay.action_name(a)
                    plain += 1
                elif x[lay.offset("hand_sizes") + 1] * 13 > 3.5:
                    held += 1
                    held_top += second[k] == 1.0
            env.step(a)
    assert plain > 80 and held > 80, (plain, held)
    assert held_top >= 0.97 * held, (held_top, held)
    width = lay.obs_size
    at = width + feature_size("joker_cards_takes")
    assert feature_size("joker_cards_discards") == feature_size("joker_cards_takes") + 104
    assert meld_planes("five_hundred_rum", "joker_cards_discards", width)[-2:] == [
        (lay.discard_base, at, 52),
        (lay.discard_base, at + 52, 52),
    ]
    assert card_layout("five_hundred_rum", "joker_cards_discards", width)[0][-2:] == [at, at + 52]


def test_planner_plane_marks_greedys_melds_of_most_points() -> None:
    """``joker_cards_planner`` (500 Rum): in the play phase, the new melds of ``greedy``'s plan
    (most points melded, lay-offs counted) - where the going-out plane may mark other melds
    that leave as few cards - and in every phase a one-hot of the fewest cards an opponent
    holds. The plane is gated onto the MELD actions."""
    from rummy_env import five_hundred_rum_v1
    from rummy_env.core.jmelds import TPL_KIND
    from rummy_env.testing import joker_deck

    # one joker, two places for it: Ad JK 3d 4d (23 points) or 7s JK 9s + Ts (41 points)
    hero = "Ad 3d 4d 7s 9s Ts JK 2c 6c 9c Qc 5h Kh"
    other = "3c 4c 7c Jc 2d 5d 6d 8d Td 2h 4h 6h 8h"
    env = five_hundred_rum_v1.raw_env(num_players=2)
    env.reset(options={"deck": joker_deck([hero, other], "Kc", ["Jd"], dealer=1), "dealer": 1})
    lay = env.layout
    names = {lay.action_name(a): a for a in range(lay.num_actions)}
    w = lay.obs_size
    obs = env.observe(env.agent_selection)["observation"]
    x = add_features("joker_cards_planner", obs)
    tail = x[w + feature_size("joker_cards_discards") :]
    assert tail.shape == (685 + 12,)
    assert not tail[:685].any()  # the draw phase plans no melds
    assert np.flatnonzero(tail[685:]).tolist() == [11]  # the opponent holds 13 cards (11+)
    env.step(names["DRAW_STOCK"])
    ob = env.observe(env.agent_selection)
    x = add_features("joker_cards_planner", ob["observation"])
    planned = np.flatnonzero(x[w + feature_size("joker_cards_discards") :][:685])
    fewest = np.flatnonzero(x[w + feature_size("joker_cards_plan") :][:685])
    assert [template_str(t) for t in planned] == ["run s 7..9"]  # the joker stands for the 8s
    assert [template_str(t) for t in fewest] == ["run d A..4"]  # also leaves 10 cards
    assert ob["action_mask"][lay.meld_base + planned].all()
    assert all(TPL_KIND[t] == 2 for t in planned)
    assert meld_planes("five_hundred_rum", "joker_cards_planner", w)[-1] == (
        lay.meld_base,
        w + feature_size("joker_cards_discards"),
        685,
    )
    assert feature_size("joker_cards_planner") == feature_size("joker_cards_discards") + 697


def test_planner_plane_melds_are_legal_on_played_positions() -> None:
    """On played positions the planner plane marks only legal MELD actions once no taken card
    is owed (and a legal one while it is), only in the play phases; the one-hot follows the
    opponent's hand size."""
    lay = E500.Layout(2, 54)
    w = lay.obs_size
    at = w + feature_size("joker_cards_discards")
    venv = rummy_env.make_vec("five_hundred_rum", 16, seed=12)
    obs, _ = venv.reset()
    agent = HeuristicAgent(seed=0)
    rng = np.random.default_rng(12)
    rows = marked = 0
    for _ in range(60):
        x = add_features("joker_cards_planner", obs["observation"])
        for i in range(16):
            parts = lay.split(obs["observation"][i])
            phase = E500.PHASE_NAMES[int(np.argmax(parts["phase"]))]
            on = np.flatnonzero(x[i, at : at + 685])
            short = np.flatnonzero(x[i, at + 685 :])
            if phase == "hand_over":
                assert on.size == 0 and short.size == 0
                continue
            assert short.tolist() == [min(int(round(parts["hand_sizes"][1] * 13)), 11)]
            if phase not in ("play", "rummy_call_layoff"):
                assert on.size == 0, phase
                continue
            rows += 1
            marked += on.size > 0
            legal = obs["action_mask"][i, lay.meld_base + on]
            if on.size:
                assert legal.all() if not parts["obligation"].any() else legal.any()
        a = agent.act_game(venv.game)
        for i in np.flatnonzero(rng.random(16) < 0.2):
            a[i] = rng.choice(np.flatnonzero(obs["action_mask"][i]))
        obs, *_ = venv.step(a)
    assert rows > 100 and marked > 20, (rows, marked)
