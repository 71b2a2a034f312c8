import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from rummy_agents.cli import (
    SIMULATORS,
    VARIANTS,
    main,
    parse_options,
    parse_value,
    register_simulator,
    run_variant,
)
from rummy_env.games import GAMES

GIN_VARIANTS = [
    "standard",
    "oklahoma",
    "match",
    "eleven_card_deal",
    "fiftieth_card_action",
    "manual_melds",
    "3_players",
    "4_players",
    "3_players_match",
    "4_players_match",
]
OUTCOME_COLS = ["knock%", "gin%", "undercut%", "dead_hand%"]


def parse_table(text: str) -> list[dict[str, str]]:
    """Rows of the plain fixed-width table (header, dashes, rows) as dicts; the dash line gives
    the column spans.
    """
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("game "))
    spans = [m.span() for m in re.finditer(r"-+", lines[start + 1])]
    assert set(lines[start + 1].replace(" ", "")) == {"-"}

    def cells(ln: str) -> list[str]:
        return [ln[a:b].strip() for a, b in spans]

    header = cells(lines[start])
    rows = []
    for ln in lines[start + 2 :]:
        if not ln.strip() or ln.startswith("seed "):  # the notes follow the table
            break
        rows.append(dict(zip(header, cells(ln), strict=True)))
    return rows


def num(s: str) -> float:
    return float(s.replace(",", ""))


def check_rows(rows, games: int, variants=GIN_VARIANTS):
    assert [r["variant"] for r in rows] == variants
    for r in rows:
        assert r["game"] == "gin_rummy"
        assert num(r["games"]) == games
        assert num(r["games/s"]) > 0
        assert sum(num(r[c]) for c in OUTCOME_COLS) == pytest.approx(100.0, abs=0.05)
        p0, p1, win = num(r["p0 pts"]), num(r["p1 pts"]), num(r["winner pts"])
        if "players" in r["variant"]:
            # 3, 4 players: the settlement, zero-sum; a 4-player hand is a round of two tables
            n = int(r["variant"][0])
            assert sum(num(r[f"p{q} pts"]) for q in range(n)) == pytest.approx(0.0, abs=0.05)
            assert win > 0
            if "match" in r["variant"]:
                assert num(r["hands"]) > n - 1 and num(r["decisions"]) > 200
            else:
                assert num(r["hands"]) == (1 if n == 3 else 2)
            continue
        assert p0 >= 0 and p1 >= 0 and win >= max(p0, p1)
        if r["variant"] == "match":
            assert num(r["hands"]) > 1
            assert num(r["decisions"]) > 200
            assert num(r["dead_hand%"]) == 0  # a match ends on a won hand
            assert num(r["winner pts"]) >= 100  # at least the target
        else:
            assert num(r["hands"]) == 1
            assert 30 < num(r["decisions"]) < 300
            assert num(r["dead_hand%"]) > 50  # random play rarely knocks


def test_simulate_in_process(capsys):
    assert (
        main(["simulate", "--game", "gin_rummy", "--games", "200", "--seed", "3", "--no-progress"])
        == 0
    )
    out = capsys.readouterr().out
    rows = parse_table(out)
    check_rows(rows, 200)
    assert "seed 3" in out


def test_simulate_progress_bar_and_markdown(capsys):
    rc = main(
        [
            "simulate",
            "--game",
            "gin_rummy",
            "--games",
            "300",
            "--seed",
            "0",
            "--variants",
            "standard,oklahoma",
        ]
        + ["--format", "markdown"]
    )
    assert rc == 0
    cap = capsys.readouterr()
    assert "600/600" in cap.err  # tqdm bar on stderr (2 variants x 300 games)
    lines = [ln for ln in cap.out.splitlines() if ln.startswith("|")]
    assert len(lines) == 4  # header, rule, two variants
    assert re.fullmatch(r"\|[ :|-]+\|", lines[1])
    assert "| standard " in lines[2] and "| oklahoma " in lines[3]


def test_simulate_subprocess():
    exe = shutil.which("rummy-env")
    cmd = [exe] if exe else [sys.executable, "-m", "rummy_agents.cli"]
    proc = subprocess.run(
        [*cmd, "simulate", "--game", "gin_rummy", "--games", "100", "--seed", "1"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    check_rows(parse_table(proc.stdout), 100)


def test_module_entry_point():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rummy_agents.cli",
            "simulate",
            "--game",
            "gin_rummy",
            "--games",
            "50",
            "--seed",
            "1",
        ]
        + ["--variants", "standard", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    check_rows(parse_table(proc.stdout), 50, ["standard"])


def test_same_seed_same_table(capsys):
    args = [
        "simulate",
        "--game",
        "gin_rummy",
        "--games",
        "150",
        "--seed",
        "5",
        "--no-progress",
        "--variants",
        "standard",
    ]
    main(args)
    a = parse_table(capsys.readouterr().out)
    main(args)
    b = parse_table(capsys.readouterr().out)
    for r in (a[0], b[0]):
        r.pop("games/s")
    assert a == b


def test_results_do_not_depend_on_chunking(monkeypatch):
    import rummy_agents.cli as cli

    a = run_variant("gin_rummy", "standard", {}, 700, seed=9)
    monkeypatch.setattr(cli, "CHUNK_SECONDS", 0.0)  # smallest chunks
    b = run_variant("gin_rummy", "standard", {}, 700, seed=9)
    assert a.outcome_pct == b.outcome_pct
    assert a.points == b.points and a.decisions == b.decisions


def test_custom_option_variant(capsys):
    rc = main(
        ["simulate", "--game", "gin_rummy", "--games", "200", "--seed", "2", "--no-progress"]
        + ["--option", "knock_limit=0", "--option", "gin_bonus=25"]
    )
    assert rc == 0
    rows = parse_table(capsys.readouterr().out)
    assert [r["variant"] for r in rows] == ["custom"]
    assert num(rows[0]["knock%"]) == 0  # knock limit 0: only gin ends a hand early
    assert num(rows[0]["undercut%"]) == 0


def test_option_overlays_named_variants(capsys):
    rc = main(
        ["simulate", "--game", "gin_rummy", "--games", "100", "--seed", "2", "--no-progress"]
        + ["--option", "knock_limit=5", "--variants", "standard,manual_melds"]
    )
    assert rc == 0
    rows = parse_table(capsys.readouterr().out)
    assert [r["variant"] for r in rows] == ["standard", "manual_melds"]


@pytest.mark.parametrize(
    "option, fragment",
    [
        ("knock_limit=abc", "knock_limit"),
        ("no_such_rule=1", "no_such_rule"),
        ("knock_limit=-3", "knock_limit"),
        ("episode=forever", "episode"),
        ("oklahoma=maybe", "oklahoma"),
        ("knock_limit", "knock_limit"),
    ],
)
def test_bad_option_exit_2(capsys, option, fragment):
    rc = main(["simulate", "--game", "gin_rummy", "--games", "10", "--option", option])
    assert rc == 2
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert len(err.splitlines()) == 1
    assert "error" in err and fragment in err
    assert "Traceback" not in err
    assert cap.out == ""


def test_bad_option_combination_names_variant(capsys):
    rc = main(
        [
            "simulate",
            "--game",
            "gin_rummy",
            "--games",
            "10",
            "--option",
            "oklahoma=true",
            "--variants",
            "all",
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "eleven_card_deal" in err and "oklahoma" in err


def test_bad_option_subprocess():
    exe = shutil.which("rummy-env")
    cmd = [exe] if exe else [sys.executable, "-m", "rummy_agents.cli"]
    proc = subprocess.run(
        [*cmd, "simulate", "--option", "knock_limit=abc"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "knock_limit" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_usage_errors(capsys):
    # argparse's own errors are one line too (no usage dump), status 2 (tests/test_cli_errors.py)
    assert main(["simulate", "--games", "x"]) == 2
    assert main(["simulate", "--games", "0"]) == 2
    assert main(["simulate", "--game", "poker"]) == 2
    assert "poker" in capsys.readouterr().err
    assert main(["simulate", "--variants", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main([]) == 2
    with pytest.raises(SystemExit) as e:  # --help still prints the help and exits 0
        main(["arena", "--help"])
    assert e.value.code == 0
    assert "rummy_env_runs/arena_<game>" in " ".join(capsys.readouterr().out.split())


def test_parse_options():
    assert parse_value("12") == 12
    assert parse_value("True") is True and parse_value("false") is False
    assert parse_value("none") is None
    assert parse_value("match") == "match"
    assert parse_options(["episode=match", "knock_limit=7", "auto_meld=false"]) == {
        "episode": "match",
        "knock_limit": 7,
        "auto_meld": False,
    }


def test_every_game_has_simulator_and_variants():
    assert set(SIMULATORS) <= set(GAMES)
    assert "gin_rummy" in SIMULATORS
    assert list(VARIANTS["gin_rummy"]) == GIN_VARIANTS


def test_register_simulator_plugs_in(monkeypatch, capsys):
    """A game registers its own random-play function; simulate then uses it."""
    import rummy_agents.cli as cli

    calls = []

    def fake(config, n_games, seed):
        calls.append((n_games, seed))
        i = np.arange(seed, seed + n_games)
        return {
            "outcome": 1 + i % 2,
            "decisions": np.full(n_games, 10),
            "hands": np.ones(n_games, np.int64),
            "points": np.stack([i % 2 * 10, (1 - i % 2) * 10], axis=1),
        }

    monkeypatch.setattr(cli, "SIMULATORS", dict(cli.SIMULATORS))
    monkeypatch.setattr(cli, "VARIANTS", dict(cli.VARIANTS))
    register_simulator("gin_rummy", fake, ("none", "a", "b"), {"only": {}})
    assert (
        main(["simulate", "--game", "gin_rummy", "--games", "10", "--seed", "0", "--no-progress"])
        == 0
    )
    rows = parse_table(capsys.readouterr().out)
    assert [r["variant"] for r in rows] == ["only"]
    assert rows[0]["a%"] == "50.00" and rows[0]["b%"] == "50.00"
    assert rows[0]["decisions"] == "10.00"
    assert sum(n for n, _ in calls) == 11  # warm-up game + 10


def test_simulate_five_hundred_rum(capsys):
    rc = main(
        ["simulate", "--game", "five_hundred_rum", "--games", "40", "--seed", "0", "--no-progress",
         "--variants", "standard,4_players,floating"]
    )  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("five_hundred_rum")]
    assert [r[1] for r in rows] == ["standard", "4_players", "floating"]
    assert all(r[2] == "40" for r in rows)  # games
    assert "went_out%" in out and "p3 pts" in out


def test_simulate_rummy51(capsys):
    rc = main(
        ["simulate", "--game", "rummy51", "--games", "30", "--seed", "0", "--no-progress",
         "--variants", "standard,6_players,match_to_101"]
    )  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("rummy51")]
    assert [r[1] for r in rows] == ["standard", "6_players", "match_to_101"]
    assert all(r[2] == "30" for r in rows)
    assert "went_out%" in out and "draw%" in out and "p5 pts" in out
    # points are minus the penalties: never positive
    assert all(float(x) <= 0 for x in rows[0][8:10])


def test_arena_all_games_plays_each_games_baselines(capsys):
    rc = main(["arena", "--game", "all", "--deals", "3", "--seed", "0", "--out", "none",
               "--no-progress"])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    for game in ("## gin_rummy", "## five_hundred_rum", "## rummy51"):
        assert game in out
    assert "| simple | random |" in out and out.count("| greedy | random |") == 2


def test_arena_all_refuses_rule_options():
    assert main(["arena", "--game", "all", "--option", "num_players=3", "--no-progress"]) == 2
