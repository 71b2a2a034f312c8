"""``experiments/hands_to_matches.py``: Gin matches predicted from single hands, paired gains."""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ("deal_id", "leg", "margin", "outcome", "hands")


@pytest.fixture(scope="module")
def h2m():
    spec = importlib.util.spec_from_file_location(
        "hands_to_matches", ROOT / "experiments" / "hands_to_matches.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hands_to_matches"] = mod
    spec.loader.exec_module(mod)
    return mod


def _games(path: Path, margins: list[float], outcome: str = "knock", hands: int = 1) -> Path:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for k, m in enumerate(margins):
            out = "dead_hand" if m == 0 else outcome
            w.writerow({"deal_id": f"d{k // 2}", "leg": k % 2, "margin": m, "outcome": out,
                        "hands": hands})  # fmt: skip
    return path


def test_certain_and_even_matches(h2m):
    assert h2m.match_win_rate(np.array([10.0, 0.0])) == 1.0
    assert h2m.match_win_rate(np.array([-3.0])) == 0.0
    even = h2m.match_win_rate(np.array([25.0, -25.0]), matches=40000)
    assert abs(even - 0.5) < 0.02  # 4 hands of 25 each: symmetric
    # one hand of 100 decides: the share of matches is the share of hands won
    rate = h2m.match_win_rate(np.array([100.0] * 7 + [-100.0] * 3), matches=40000)
    assert abs(rate - 0.7) < 0.02
    with pytest.raises(ValueError, match="every hand was dead"):
        h2m.match_win_rate(np.zeros(3))


def test_a_larger_edge_wins_more_matches(h2m):
    base = np.array([12.0, 30.0, -10.0, -25.0, 8.0, -6.0])
    rates = [
        h2m.match_win_rate(h2m.reweighted(base, s, 50000), matches=20000) for s in (0.4, 0.5, 0.6)
    ]
    assert rates[0] < rates[1] < rates[2]
    sim = h2m.reweighted(base, 0.75, 40000)
    assert abs(np.mean(sim > 0) - 0.75) < 0.01
    assert set(np.unique(sim)) <= set(base)
    with pytest.raises(ValueError, match="share must be in"):
        h2m.reweighted(base, 1.5, 10)


def test_paired_gain_by_deal(h2m, tmp_path):
    run = h2m.read_hands(_games(tmp_path / "a.csv", [5, -1, 4, 2, 0, 6]))
    base = h2m.read_hands(_games(tmp_path / "b.csv", [3, -1, 4, 0, -2, 6]))
    mean, lo, hi, deals = h2m.paired_gain(run, base)
    # per deal (legs averaged): d0 (2 + 0)/2 = 1, d1 (0 + 2)/2 = 1, d2 (2 + 0)/2 = 1
    assert (mean, deals) == (1.0, 3)
    assert lo == hi == 1.0
    with pytest.raises(ValueError, match="share 1 deal"):
        h2m.paired_gain({("x", "0"): 1.0}, {("x", "0"): 0.0, ("y", "0"): 1.0})


def test_refuses_what_is_not_single_gin_hands(h2m, tmp_path):
    with pytest.raises(ValueError, match="no such games file"):
        h2m.read_hands(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="single Gin Rummy hands"):
        h2m.read_hands(_games(tmp_path / "m.csv", [40, -20], hands=5))
    with pytest.raises(ValueError, match="single Gin Rummy hands"):
        h2m.read_hands(_games(tmp_path / "r.csv", [40, -20], outcome="went_out"))


def test_main_prints_the_prediction_and_the_gain(h2m, tmp_path, capsys):
    a = _games(tmp_path / "a.csv", [20, -10, 15, 5, -8, 30])
    b = _games(tmp_path / "b.csv", [10, -10, 15, -5, -8, 30])
    h2m.main([str(a), "--base", str(b), "--shares", "0.6", "--matches", "2000"])
    out = capsys.readouterr().out
    assert "6 hands, A won 66.7% of the decided" in out
    assert "hands won 60.0%" in out
    assert "gain over" in out and "3 deals" in out
    with pytest.raises(ValueError, match="--target and --matches must be >= 1"):
        h2m.main([str(a), "--target", "0"])
