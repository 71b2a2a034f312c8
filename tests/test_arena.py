"""Arena: statistics on synthetic data, reproducibility, duplicate deals, CLI smoke run."""

import json
import math

import numpy as np
import pytest

from rummy_agents.arena import ArenaSpec, run_arena
from rummy_agents.arena.play import make_env, play_deal
from rummy_agents.arena.registry import make_agent, parse_spec
from rummy_agents.arena.report import notes, pairs_markdown, ratings_markdown
from rummy_agents.arena.runner import agent_seed, deal_seed
from rummy_agents.arena.stats import (
    bradley_terry,
    bt_ratings,
    mean_interval,
    t_quantile,
    wilson_interval,
)
from rummy_agents.base import SeatView
from rummy_agents.cli import main

# ---------------------------------------------------------------------------------------------
# statistics


@pytest.mark.parametrize(
    "k, n, lo, hi",
    [
        (8, 10, 0.4902, 0.9433),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (1, 1, 0.2065, 1.0),
    ],
)
def test_wilson_known_values(k, n, lo, hi):
    a, b = wilson_interval(k, n)
    assert a == pytest.approx(lo, abs=1e-4)
    assert b == pytest.approx(hi, abs=1e-4)


def test_wilson_empty_and_coverage():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    rng = np.random.default_rng(0)
    for p, n in [(0.3, 100), (0.95, 200), (0.5, 40)]:
        ks = rng.binomial(n, p, size=4000)
        cover = np.mean([lo <= p <= hi for lo, hi in (wilson_interval(k, n) for k in ks)])
        assert 0.92 <= cover <= 0.98, (p, n, cover)


def test_t_interval_known_values():
    assert t_quantile(4) == pytest.approx(2.776445, abs=1e-5)
    assert t_quantile(1e9) == pytest.approx(1.959964, abs=1e-5)
    m, lo, hi, se = mean_interval(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert m == 3.0
    assert se == pytest.approx(math.sqrt(2.5 / 5))
    assert hi - m == pytest.approx(2.776445 * math.sqrt(0.5), abs=1e-5)
    assert m - lo == pytest.approx(hi - m)


def test_bradley_terry_two_agents_exact():
    # P(0 beats 1) = 3/4 -> strength ratio 3, log-strength gap ln 3
    ls = bradley_terry(np.array([[0, 75], [25, 0]]), prior=0)
    assert ls[0] - ls[1] == pytest.approx(math.log(3), abs=1e-8)
    assert ls.sum() == pytest.approx(0.0, abs=1e-12)
    r = bt_ratings(np.array([[0, 75], [25, 0]]), anchor=1, prior=0)
    assert r[1] == 0.0 and r[0] == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_bradley_terry_recovers_known_strengths():
    rng = np.random.default_rng(1)
    true = np.array([0.0, 0.5, 1.5, -1.0])
    k = true.size
    wins = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            p = 1 / (1 + math.exp(true[j] - true[i]))
            w = rng.binomial(4000, p)
            wins[i, j] += w
            wins[j, i] += 4000 - w
    est = bradley_terry(wins)
    assert np.allclose(est - est.mean(), true - true.mean(), atol=0.08)


def test_bradley_terry_unbeaten_agent_stays_finite():
    ls = bradley_terry(np.array([[0, 10, 10], [0, 0, 5], [0, 5, 0]]))
    assert np.all(np.isfinite(ls)) and ls[0] > ls[1]


# ---------------------------------------------------------------------------------------------
# duplicate deals and reproducibility


def _hands(env):
    rec = env.unwrapped.state_record
    return [int(h) for h in rec["hands"]], [int(c) for c in rec["deck"]], int(rec["dealer"])


def test_same_seed_deals_the_same_cards():
    env = make_env("gin_rummy", {})
    for k in range(5):
        s = deal_seed(0, k)
        env.reset(seed=s)
        first = _hands(env)
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        env.reset(seed=s)
        assert _hands(env) == first


def test_duplicate_deal_replays_the_same_cards_with_seats_exchanged():
    env = make_env("gin_rummy", {})
    spies = []

    class Spy:
        """Plays like the wrapped agent and records the hand seen at its first decision (always
        the dealt hand: no seat draws before its first decision)."""

        name = "spy"

        def __init__(self, inner, seed):
            self.inner = make_agent(inner, seed)
            self.first = None
            spies.append(self)

        def act(self, obs, view: SeatView):
            if self.first is None:
                self.first = (view.seat, set(np.flatnonzero(obs["observation"][:52]).tolist()))
            return self.inner.act(obs, view)

    def make(name, seed):
        return Spy(name.removeprefix("spy_"), seed)

    for k in range(4):
        spies.clear()
        seed = deal_seed(3, k)
        recs = play_deal(env, make, ("spy_simple", "spy_random"), seed, [[1, 2], [3, 4]], 10_000)
        assert recs[0]["deal_id"] == recs[1]["deal_id"] != ""
        assert recs[0]["dealer"] == recs[1]["dealer"]
        assert [r["a_seat"] for r in recs] == [0, 1]
        env.reset(seed=seed)
        dealt = [set(c for c in range(52) if h >> c & 1) for h in _hands(env)[0]]
        a0, b0, b1, a1 = (s.first for s in spies)  # created seat by seat
        assert a0 == (0, dealt[0]) and b0 == (1, dealt[1])
        assert a1 == (1, dealt[1]) and b1 == (0, dealt[0])


def test_match_episodes_deal_later_hands_from_the_same_decks():
    """Both legs of a match deal: hand h is dealt from the same deck order in both games."""
    env = make_env("gin_rummy", {"episode": "match", "target": 60})
    decks = []
    for leg in (0, 1):
        agents = [make_agent("simple", 1), make_agent("novice", 2)]
        if leg:
            agents.reverse()
        env.reset(seed=deal_seed(5, 0))
        views = [SeatView(env, a) for a in env.possible_agents]
        seen = [tuple(env.unwrapped.state_record["deck"])]
        hands = 0
        while not all(env.terminations.values()):
            s = env.possible_agents.index(env.agent_selection)
            env.step(agents[s].act(env.observe(env.agent_selection), views[s]))
            h = int(env.unwrapped.state_record["hands_played"])
            if h > hands and not all(env.terminations.values()):
                seen.append(tuple(env.unwrapped.state_record["deck"]))
            hands = h
        decks.append(seen)
    n = min(len(decks[0]), len(decks[1]))
    assert n >= 2
    assert decks[0][:n] == decks[1][:n]


def _table(result):
    return pairs_markdown(result) + "\n" + ratings_markdown(result)


def test_seeded_arena_is_reproducible_for_any_worker_count():
    spec = dict(game="gin_rummy", agents=("random", "novice", "simple"), deals=6, seed=7)
    r1 = run_arena(ArenaSpec(**spec, workers=1, bootstrap=30), progress=False)
    r2 = run_arena(ArenaSpec(**spec, workers=2, bootstrap=30, chunk=2), progress=False)
    assert _table(r1) == _table(r2)
    assert r1.records == r2.records
    assert len(r1.records) == 3 * 2 * 6
    # common deals: deal k has the same cards in every pair and both legs
    by_deal = {}
    for r in r1.records:
        by_deal.setdefault(r["deal"], set()).add(r["deal_id"])
    assert all(len(v) == 1 for v in by_deal.values())
    # agent seeds differ between legs and seats
    assert len({agent_seed(7, 0, 0, leg, s) for leg in (0, 1) for s in (0, 1)}) == 4


def test_agent_specs():
    assert parse_spec("ismcts@iterations=200@c=1.5") == ("ismcts", {"iterations": 200, "c": 1.5})
    assert make_agent("simple@take_rule=best_meld", 0).take_rule == "best_meld"
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("nobody", 0)
    with pytest.raises(ValueError, match="seed"):
        parse_spec("simple@seed=3")
    with pytest.raises(ValueError, match="distinct"):
        ArenaSpec("gin_rummy", ("simple", "simple"), deals=1)


# ---------------------------------------------------------------------------------------------
# CLI


def test_cli_arena_smoke(tmp_path, capsys):
    out = tmp_path / "arena"
    rc = main(
        [
            "arena", "--agents", "random,simple", "--deals", "4", "--seed", "0",
            "--out", str(out), "--no-progress", "--bootstrap", "10",
        ]
    )  # fmt: skip
    assert rc == 0
    text = capsys.readouterr().out
    # each pair from the stronger agent's side, as the README says it: simple beats random
    assert "| simple | random | 8 |" in text
    for name in ("games.csv", "pairs.csv", "ratings.csv", "summary.json", "table.md"):
        assert (out / name).stat().st_size > 0
    assert (out / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games"] == 8 and summary["pairs"][0]["games"] == 8
    assert len((out / "games.csv").read_text().strip().splitlines()) == 9


def test_cli_arena_without_matplotlib_skips_only_the_heatmap(tmp_path, monkeypatch, capsys):
    """A plain install (no plot extra) runs the README's arena command: every file but the PNG."""
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    out = tmp_path / "arena"
    args = ["arena", "--agents", "random,simple", "--deals", "2", "--seed", "0"]
    rc = main([*args, "--out", str(out), "--no-progress", "--bootstrap", "10"])
    assert rc == 0
    cap = capsys.readouterr()
    assert "| simple | random | 4 |" in cap.out
    # the CLI says it in one line (write_outputs itself warns: a UserWarning)
    assert cap.err.splitlines() == [
        "rummy-env: note: heatmap.png skipped: matplotlib is not installed (pip install "
        "'rummy_env[plot]'; in a checkout: pip install -c constraints.txt -e '.[plot]')"
    ]
    for name in ("games.csv", "pairs.csv", "ratings.csv", "summary.json", "table.md"):
        assert (out / name).stat().st_size > 0
    assert not (out / "heatmap.png").exists()


def test_cli_arena_errors(capsys):
    assert main(["arena", "--agents", "random,nobody", "--deals", "1", "--out", "none"]) == 2
    assert "unknown agent" in capsys.readouterr().err
    assert main(["arena", "--agents", "random,simple", "--option", "bogus=1"]) == 2
    assert "bogus" in capsys.readouterr().err


def test_duplicate_deal_with_three_players_gives_every_hand_to_both_agents():
    """Three seats: A, B, A in leg 0 and B, A, B in leg 1, each seat its own agent; every
    dealt hand is played once by A and once by B, and the records carry A's seats' results."""
    env = make_env("rummy51", {"num_players": 3})
    seen = []

    class Spy:
        def __init__(self, name, seed):
            self.name = name
            self.inner = make_agent(name.removeprefix("spy_"), seed, game="rummy51")
            self.first = None
            seen.append(self)

        def act(self, obs, view: SeatView):
            if self.first is None:  # the dealt hand: a seat's first decision is its first draw
                self.first = (view.seat, tuple(obs["observation"][:53].tolist()))
            return self.inner.act(obs, view)

    seed = deal_seed(11, 0)
    seeds = [[agent_seed(11, 0, 0, leg, s) for s in range(4)] for leg in (0, 1)]
    recs = play_deal(env, Spy, ("spy_greedy", "spy_random"), seed, seeds, 100_000)
    assert [r["players"] for r in recs] == [3, 3]
    assert [r["a_seat"] for r in recs] == [0, 1]
    assert [r["a_seats"] for r in recs] == ["0 2", "1"]
    assert recs[0]["deal_id"] == recs[1]["deal_id"] != ""
    legs = [seen[:3], seen[3:]]
    assert [[s.name for s in leg] for leg in legs] == [
        ["spy_greedy", "spy_random", "spy_greedy"],
        ["spy_random", "spy_greedy", "spy_random"],
    ]
    for seat in range(3):
        assert legs[0][seat].first == legs[1][seat].first
        assert legs[0][seat].first[0] == seat
    # each seat of one agent is a separate instance with its own seed
    assert len({id(s) for s in seen}) == 6
    assert len(set(seeds[0][:4])) == 4


def test_arena_runs_three_player_games(tmp_path):
    spec = ArenaSpec(
        game="five_hundred_rum",
        agents=("random", "greedy"),
        deals=3,
        seed=1,
        options={"num_players": 3},
        bootstrap=0,
    )
    r = run_arena(spec, progress=False)
    assert len(r.records) == 6
    p = r.pairs[0]
    assert p.wins_a + p.wins_b + p.draws + p.truncated == 6
    assert p.wins_b > p.wins_a  # greedy beats random
    assert "3 players, seats alternating" in "\n".join(notes(r))


def test_report_wording_follows_the_game_and_the_table_size():
    from rummy_agents.arena.report import _draws_and_margin

    draws, margin = _draws_and_margin("gin_rummy", 2)
    assert "dead hands" in draws and "A's points - B's points" in margin
    draws, margin = _draws_and_margin("five_hundred_rum", 4)
    assert "tie for the best score" in draws and "mean points" in margin
    assert "Gin" not in "".join(_draws_and_margin("five_hundred_rum", 2))
    draws, margin = _draws_and_margin("rummy51", 2)
    assert "stock ran out" in draws and "B's penalty - A's penalty" in margin
    assert "mean penalty" in _draws_and_margin("rummy51", 3)[1]


@pytest.mark.parametrize("players", [3, 4])
def test_gin_rummy_for_three_and_four_players_with_duplicate_deals(players):
    """3 and 4 players: both legs deal the same cards to the same seats (one deck per table
    with 4 players), A's seats alternate (4 players: teams A+A against B+B, then exchanged),
    and the 2-player agents play the hands they sit in."""
    env = make_env("gin_rummy", {"num_players": players})
    seen = []

    class Spy:
        def __init__(self, name, seed):
            self.name = name
            self.inner = make_agent(name.removeprefix("spy_"), seed, game="gin_rummy")
            seen.append(self)

        def act(self, obs, view: SeatView):
            # a 2-player agent sees the 2-player observation and its table's view
            assert obs["observation"].shape == (225,)
            assert view.config.num_players == 2 and view.seat in (0, 1)
            return self.inner.act(obs, view)

    seed = deal_seed(5, 0)
    seeds = [[agent_seed(5, 0, 0, leg, s) for s in range(4)] for leg in (0, 1)]
    recs = play_deal(env, Spy, ("spy_simple", "spy_random"), seed, seeds, 100_000)
    assert recs[0]["deal_id"] == recs[1]["deal_id"] != ""
    want = ["0 2", "1 3"] if players == 4 else ["0 2", "1"]
    assert [r["a_seats"] for r in recs] == want
    for r in recs:  # zero-sum over the seats
        n_a = len(r["a_seats"].split())
        assert n_a * r["return_a"] + (players - n_a) * r["return_b"] == pytest.approx(0.0)


@pytest.mark.parametrize("players", [3, 4])
def test_every_gin_baseline_plays_three_and_four_players(players):
    agents = (
        "random",
        "novice",
        "simple",
        "planner",
        "openspiel",
        "ismcts@iterations=8",
        "ppo",
    )  # fmt: skip  (the published agent)
    spec = ArenaSpec(game="gin_rummy", agents=agents, deals=1, seed=2,
                     options={"num_players": players}, bootstrap=0)  # fmt: skip
    r = run_arena(spec, progress=False)
    assert len(r.records) == 2 * len(r.pairs) == 2 * 21
    text = "\n".join(notes(r))
    assert "2-player hands" in text
    if players == 4:
        assert "teams (A, A) against (B, B)" in text


def test_workers_start_with_one_thread_each(monkeypatch):
    """Worker processes get one BLAS and one numba thread each unless the user set the
    variables; the parent's environment is left as it was."""
    import multiprocessing as mp
    import os

    import numba

    from rummy_agents.arena.runner import WORKER_THREAD_VARIABLES, one_thread_each

    for v in WORKER_THREAD_VARIABLES:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    with one_thread_each():
        pool = mp.get_context("spawn").Pool(1)
    with pool:
        seen = pool.map(os.getenv, WORKER_THREAD_VARIABLES)
        threads = pool.apply(numba.get_num_threads)
    assert seen == ["1", "1", "3", "1"]
    assert threads == 1
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        assert v not in os.environ
    assert os.environ["MKL_NUM_THREADS"] == "3"
