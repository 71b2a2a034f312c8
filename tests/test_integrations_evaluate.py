"""The framework-free evaluation of a policy (rummy_agents.integrations): ``evaluate``,
``episode_outcome``, ``outcome_from_infos``, ``seat_results`` and ``evaluation_line``, which
the training examples in examples/ print.

- Over the games and table sizes (Gin Rummy, 500 Rum, Rummy 51 with 2-4 players, single hands
  and whole matches / games) and seeds, with random policies: every episode is counted once
  (wins + losses + draws + truncated == episodes), each outcome agrees with a slow reference
  read from the final infos (points, match totals, settlements, penalty points, winner), and
  ``evaluate`` counts exactly what a hand-written loop sees.
- Zero-sum rewards: in 2-player Gin Rummy (and 2-player Rummy 51 with ``reward="zero_sum"``)
  the outcome is the sign of the return; in every zero-sum Gin table a win has a positive
  return. Non-zero-sum rewards (the reason for the change): 500 Rum random play is no longer
  nearly all "wins", and a Rummy 51 player who went out (return 0) wins.
- Bad input is refused by name; the printed line parses back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from eval_line import EVAL_LINE
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_agents.integrations import (
    OUTCOMES,
    episode_outcome,
    evaluate,
    evaluation_line,
    outcome_from_infos,
    seat_results,
)
from rummy_env.wrappers import RummySingleAgentEnv

CASES = [
    ("gin_rummy", {"knock_limit": 30}),
    ("gin_rummy", {"reward": "normalized"}),  # the standard knock limit: mostly dead hands
    ("gin_rummy", {"knock_limit": 30, "episode": "match", "target": 60}),
    ("gin_rummy", {"num_players": 3, "knock_limit": 30}),
    ("gin_rummy", {"num_players": 3, "knock_limit": 30, "episode": "match", "target": 60}),
    ("gin_rummy", {"num_players": 4, "knock_limit": 30}),
    ("gin_rummy", {"num_players": 4, "knock_limit": 30, "episode": "match", "target": 60}),
    ("five_hundred_rum", {}),
    ("five_hundred_rum", {"num_players": 3}),
    ("five_hundred_rum", {"num_players": 4}),
    ("five_hundred_rum", {"episode": "game", "target": 250}),
    ("five_hundred_rum", {"num_players": 3, "episode": "game", "target": 250}),
    ("five_hundred_rum", {"episode": "game", "target": 250, "must_go_out_to_win": True}),
    ("rummy51", {}),
    ("rummy51", {"num_players": 3, "reward": "zero_sum"}),
    ("rummy51", {"num_players": 4}),
    ("rummy51", {"episode": "match", "elimination": 60}),
    ("rummy51", {"num_players": 3, "episode": "match", "elimination": 60}),
    ("gin_rummy", {"knock_limit": 30, "max_steps": 30}),  # some episodes cut, some not
    ("rummy51", {"num_players": 3, "max_steps": 60}),
]
"""(game, options): every game at 2-4 players, single hands and whole matches / games (small
targets keep them short), and a ``max_steps`` cut."""


def _random_policy(seed: int):
    rng = np.random.default_rng(seed)

    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return policy


def _last_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[-1])


def reference_outcome(game: str, infos: dict[str, dict[str, Any]], learner: str) -> str:
    """The learner's outcome, slowly and on its own, from the final infos (RULES.md).

    A declared ``winner`` decides; otherwise each seat's result is ranked (Gin Rummy: the
    settlement with 3-4 players, the match totals, else the points; 500 Rum: points; Rummy 51:
    fewer penalty points), in 4-player Gin by team (the partners must have the same result),
    and the learner wins when its side alone holds the best result, draws when it shares it.
    """
    names = [f"player_{k}" for k in range(len(infos))]
    assert sorted(infos) == sorted(names)
    me = names.index(learner)
    winners = {info.get("winner") for info in infos.values()}
    assert len(winners) == 1  # every seat is told the same winner, or none is
    (winner,) = winners
    if winner is not None and winner >= 0:
        return "win" if winner == me else "loss"

    def result(info: dict[str, Any]) -> int:
        if game == "rummy51":
            return -info["penalty_total"]
        if game == "gin_rummy" and len(infos) > 2:
            return info["settlement"]
        if game == "gin_rummy" and "totals" in info:
            return info["totals"]
        return info["score"]

    sides: dict[int, list[int]] = {}
    for k, name in enumerate(names):
        side = k % 2 if game == "gin_rummy" and len(names) == 4 else k
        sides.setdefault(side, []).append(result(infos[name]))
    for values in sides.values():
        assert len(set(values)) == 1  # partners share their team's result
    mine = me % 2 if game == "gin_rummy" and len(names) == 4 else me
    ranking = sorted(((values[0], side) for side, values in sides.items()), reverse=True)
    best = ranking[0][0]
    top = [side for value, side in ranking if value == best]
    if mine not in top:
        return "loss"
    return "win" if len(top) == 1 else "draw"


def _play(env: RummySingleAgentEnv, policy, seed: int) -> tuple[float, bool]:
    """One episode of ``policy`` from ``reset(seed)``; (return, truncated)."""
    obs, _ = env.reset(seed=seed)
    total, terminated, truncated = 0.0, False, False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, _ = env.step(int(policy(obs, env.action_masks())))
        total += float(reward)
    return total, truncated


# -- the counts against a reference ----------------------------------------------------------


@given(
    case=st.sampled_from(CASES),
    episodes=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    last=st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_counts_agree_with_the_reference_outcomes(case, episodes, seed, last) -> None:
    game, options = case
    make_policy = (lambda: _last_legal) if last else (lambda: _random_policy(seed))
    result = evaluate(make_policy(), game, None, episodes=episodes, seed=seed, **options)

    # the same episodes by hand: each outcome is the reference's, and evaluate counts them
    env = RummySingleAgentEnv(game, illegal_action="raise", **options)
    policy, tally, total = make_policy(), dict.fromkeys(OUTCOMES, 0), 0.0
    for k in range(episodes):
        ret, truncated = _play(env, policy, seed + k)
        total += ret
        outcome = episode_outcome(env)
        if truncated:
            assert outcome == "truncated"
        else:
            assert outcome == reference_outcome(game, env.aec.infos, env.learner), env.aec.infos
        tally[outcome] += 1

    assert result["episodes"] == episodes
    assert (result["wins"], result["losses"], result["draws"], result["truncated"]) == (
        tally["win"],
        tally["loss"],
        tally["draw"],
        tally["truncated"],
    )
    assert result["wins"] + result["losses"] + result["draws"] + result["truncated"] == episodes
    assert result["win_rate"] == result["wins"] / episodes
    assert result["loss_rate"] == result["losses"] / episodes
    assert result["mean_return"] == pytest.approx(total / episodes)
    if "max_steps" not in options:
        assert result["truncated"] == 0
    again = evaluate(make_policy(), game, None, episodes=episodes, seed=seed, **options)
    assert again == result  # seeded


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(2))
def test_zero_sum_gin_agrees_with_the_return(num_players: int, seed: int) -> None:
    """Gin Rummy's rewards are zero-sum at every table size: with 2 players a win is a positive
    return, a loss a negative one, a draw zero; with 3 and 4 a win is always a positive return
    (the best of a zero-sum payoff), and a 4-player team's outcome is its return's sign.
    """
    env = RummySingleAgentEnv("gin_rummy", num_players=num_players, knock_limit=30)
    policy = _random_policy(seed)
    seen = set()
    for k in range(25):
        ret, _ = _play(env, policy, 1000 * seed + k)
        outcome = episode_outcome(env)
        sign = "win" if ret > 0 else "loss" if ret < 0 else "draw"
        if num_players in (2, 4):
            assert outcome == sign, (ret, env.aec.infos)
        elif outcome == "win":
            assert ret > 0, (ret, env.aec.infos)
        seen.add(outcome)
    assert {"win", "loss"} <= seen  # both happen in 25 episodes


@pytest.mark.parametrize("seed", range(3))
def test_two_player_rummy51_zero_sum_agrees_with_the_return(seed: int) -> None:
    env = RummySingleAgentEnv("rummy51", reward="zero_sum")
    policy = _random_policy(seed)
    for k in range(10):
        ret, _ = _play(env, policy, 1000 * seed + k)
        sign = "win" if ret > 0 else "loss" if ret < 0 else "draw"
        assert episode_outcome(env) == sign, (ret, env.aec.infos)


def test_a_rummy51_player_who_went_out_wins() -> None:
    """With the default ``reward="penalty"`` the player who goes out gets 0, the others less:
    the sign of the return read that as a draw.
    """
    env = RummySingleAgentEnv("rummy51", num_players=3)
    policy, went_out = _random_policy(0), 0
    for k in range(30):
        ret, _ = _play(env, policy, k)
        info = env.aec.infos[env.learner]
        if info["hand_winner"] == env.learner_seat:
            went_out += 1
            assert ret == 0 and episode_outcome(env) == "win"
        elif info["hand_winner"] >= 0:
            assert ret < 0 and episode_outcome(env) == "loss"
    assert went_out >= 3


def test_500_rum_random_play_is_not_nearly_all_wins() -> None:
    """500 Rum's raw rewards are each player's points, mostly positive: the sign of the return
    read about 98% of random-vs-random hands as wins. Against each other the two halves of
    random play win about as often.
    """
    r = evaluate(_random_policy(0), "five_hundred_rum", None, episodes=40, seed=0)
    assert r["mean_return"] > 0  # the old reading's trap
    assert 8 <= r["wins"] <= 32 and 8 <= r["losses"] <= 32, r


def test_the_standard_gin_rules_are_mostly_draws_against_random() -> None:
    """Why the examples default to knock_limit=30: with the standard limit uniformly random
    play almost never knocks, and a dead hand is a draw.
    """
    standard = evaluate(_random_policy(0), "gin_rummy", None, 40, 0, reward="normalized")
    wide = evaluate(
        _random_policy(0), "gin_rummy", None, 40, 0, reward="normalized", knock_limit=30
    )
    assert standard["draws"] >= 35
    assert wide["draws"] <= 25 and wide["wins"] >= 5 and wide["losses"] >= 5


def test_truncated_episodes_are_counted_apart() -> None:
    r = evaluate(_last_legal, "gin_rummy", None, 5, 0, max_steps=4)
    assert r == {
        "episodes": 5,
        "wins": 0,
        "losses": 0,
        "draws": 0,
        "truncated": 5,
        "win_rate": 0.0,
        "loss_rate": 0.0,
        "mean_return": 0.0,
    }


def test_no_episodes_and_a_fixed_seat() -> None:
    r = evaluate(_last_legal, "rummy51", None, episodes=0)
    assert r["episodes"] == 0 and r["win_rate"] == r["loss_rate"] == r["mean_return"] == 0
    seats = []

    def policy(observation, mask):
        seats.append(True)
        return _last_legal(observation, mask)

    fixed = evaluate(policy, "gin_rummy", None, episodes=3, seed=1, learner_seat=1, knock_limit=30)
    assert seats and fixed["episodes"] == 3


# -- outcome_from_infos over made-up results -------------------------------------------------


@given(
    values=st.lists(st.integers(-3, 3), min_size=2, max_size=6),
    game=st.sampled_from(["gin_rummy", "five_hundred_rum", "rummy51"]),
)
def test_outcomes_over_made_up_results(values: list[int], game: str) -> None:
    """At most one side wins, and then every rival loses; with no winner the best is shared (a
    draw for those sharing it); the outcome is the reference's.
    """
    if game == "gin_rummy" and len(values) == 4:
        values = [values[0], values[1], values[0], values[1]]  # partners share a result
    key = {"gin_rummy": "score", "five_hundred_rum": "score", "rummy51": "penalty_total"}[game]
    infos = {f"player_{k}": {key: v} for k, v in enumerate(values)}
    if game == "gin_rummy" and len(values) > 2:
        infos = {s: {"score": 0, "settlement": i["score"]} for s, i in infos.items()}
    outcomes = {s: outcome_from_infos(game, infos, s) for s in infos}
    for seat, outcome in outcomes.items():
        assert outcome == reference_outcome(game, infos, seat)
    wins = [s for s, o in outcomes.items() if o == "win"]
    draws = [s for s, o in outcomes.items() if o == "draw"]
    if wins:
        assert not draws
        assert len(wins) == (2 if game == "gin_rummy" and len(values) == 4 else 1)
    else:
        assert len(draws) >= 2


@given(
    n=st.integers(2, 4), winner=st.integers(0, 3), pens=st.lists(st.integers(0, 200), min_size=4)
)
def test_a_declared_winner_decides(n: int, winner: int, pens: list[int]) -> None:
    """A Rummy 51 match's winner wins even with more penalty points than an earlier eliminated
    player; a 500 Rum game's winner even without the best score (``must_go_out_to_win``).
    """
    winner %= n
    for game, key in (("rummy51", "penalty_total"), ("five_hundred_rum", "score")):
        infos = {f"player_{k}": {key: pens[k], "winner": winner} for k in range(n)}
        assert seat_results(game, infos) == {f"player_{k}": int(k == winner) for k in range(n)}
        for k in range(n):
            expected = "win" if k == winner else "loss"
            assert outcome_from_infos(game, infos, f"player_{k}") == expected


def test_seat_results_read_the_right_key() -> None:
    two = {"player_0": {"score": 30, "totals": 10}, "player_1": {"score": 0, "totals": 50}}
    assert seat_results("gin_rummy", two) == {"player_0": 10, "player_1": 50}  # match totals
    assert seat_results("five_hundred_rum", two) == {"player_0": 30, "player_1": 0}
    pen = {"player_0": {"penalty_total": 12}, "player_1": {"penalty_total": 0}}
    assert seat_results("rummy51", pen) == {"player_0": -12, "player_1": 0}
    assert outcome_from_infos("rummy51", pen, "player_1") == "win"
    no_winner = {s: {"penalty_total": 5, "winner": -1} for s in ("player_0", "player_1")}
    assert outcome_from_infos("rummy51", no_winner, "player_0") == "draw"


# -- bad input -------------------------------------------------------------------------------


def test_bad_input_is_refused_by_name() -> None:
    infos = {"player_0": {"score": 1}, "player_1": {"score": 0}}
    with pytest.raises(ValueError, match="game must be one of .* got 'poker'"):
        outcome_from_infos("poker", infos, "player_0")
    with pytest.raises(ValueError, match="learner must be one of the seats .* got 'player_7'"):
        outcome_from_infos("gin_rummy", infos, "player_7")
    with pytest.raises(ValueError, match="has no 'penalty_total': the episode is not over"):
        outcome_from_infos("rummy51", infos, "player_0")
    with pytest.raises(ValueError, match="infos must hold every seat's info"):
        seat_results("gin_rummy", {})
    with pytest.raises(TypeError, match="env must be a RummySingleAgentEnv, got dict"):
        episode_outcome({})
    env = RummySingleAgentEnv("gin_rummy")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="episode is not over"):
        episode_outcome(env)
    with pytest.raises(TypeError, match="policy must be callable .* got int"):
        evaluate(3)
    with pytest.raises(ValueError, match="episodes must be an integer >= 0, got -1"):
        evaluate(_last_legal, episodes=-1)
    with pytest.raises(TypeError, match="episodes must be an integer >= 0, got 1.5"):
        evaluate(_last_legal, episodes=1.5)
    with pytest.raises(TypeError, match="seed must be an integer"):
        evaluate(_last_legal, seed="0")
    with pytest.raises(ValueError, match="game must be one of"):
        evaluate(_last_legal, "poker")


def test_an_illegal_action_raises() -> None:
    def first_illegal(observation, mask):
        return int(np.flatnonzero(~np.asarray(mask, bool))[0])

    with pytest.raises(ValueError):
        evaluate(first_illegal, "gin_rummy", episodes=1)


# -- the printed line ------------------------------------------------------------------------


@given(
    counts=st.lists(st.integers(0, 500), min_size=4, max_size=4),
    mean=st.floats(-1, 1, allow_nan=False),
    label=st.sampled_from(["before training", "after training", "shared after training"]),
)
def test_the_evaluation_line_parses_back(counts, mean, label) -> None:
    wins, losses, draws, truncated = counts
    episodes = sum(counts)
    r = {
        "episodes": episodes,
        "wins": wins,
        "losses": losses,
        "draws": draws,
        "truncated": truncated,
        "mean_return": mean,
    }
    line = evaluation_line(label, r, "gin_rummy knock_limit=30", "random")
    m = EVAL_LINE.fullmatch(line)
    assert m, line
    assert m["label"] == label and m["opponent"] == "random"
    assert m["setting"] == "gin_rummy knock_limit=30"
    assert int(m["episodes"]) == episodes
    assert (int(m["wins"]), int(m["losses"]), int(m["draws"])) == (wins, losses, draws)
    assert int(m["truncated"] or 0) == truncated
    assert (m["truncated"] is None) == (truncated == 0)  # shown only when there are some
    assert float(m["rate"]) == pytest.approx(100 * wins / max(episodes, 1), abs=0.051)
    assert float(m["mean"]) == pytest.approx(mean, abs=5e-4)


def test_an_evaluation_prints_as_the_examples_print() -> None:
    r = evaluate(_last_legal, "gin_rummy", None, 6, 0, knock_limit=30, max_steps=60)
    m = EVAL_LINE.fullmatch(evaluation_line("before training", r, "gin_rummy", "random"))
    assert m and int(m["episodes"]) == 6
    counted = [int(m[k] or 0) for k in ("wins", "losses", "draws", "truncated")]
    assert counted == [r["wins"], r["losses"], r["draws"], r["truncated"]]
