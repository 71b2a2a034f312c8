"""Smoke test of experiments/benchmark.py: it runs end to end and writes its report.

No timing assertions: only that the report exists and has its sections and figure rows.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "experiments" / "benchmark.py"


def test_benchmark_quick_writes_report(tmp_path: Path) -> None:
    out = tmp_path / "B.md"
    res = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--quick",
            "--repeats",
            "1",
            "--no-peers",
            "--output",
            str(out),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        # a fresh clone compiles every layout measured here (numba cold cache): minutes on 2 cores
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert out.exists()
    text = out.read_text()
    for header in (
        "# Benchmarks",
        "## Machine",
        "## Targets",
        "## Results: rummy_env",
        "## Results: training throughput",
        "## Results: peers",
        "## Ratios",
        "## Start-up: import to first step",
        "## Memory per game (bytes)",
        "## Build checks",
    ):
        assert header in text, header
    for row in (
        "| CPU |",
        "| numba |",
        "(a) vector env `venv.step`",
        "(b) kernel `play_random_parallel`",
        "(b) same, decisions",
        "(c) AEC env, PettingZoo wrappers",
        "(d) `deadwood`, 10-card hands",
        "(e) `ppo_selfplay.py` training",
        "(d) `deadwood_after_discard`",
        "AEC env, Gin Rummy, numba cache warm",
        "AEC env, 500 Rum, numba cache warm",
        "AEC env, Rummy 51, numba cache warm",
        "AEC env, Rummy 51, cold numba cache, compiled",
        "vector env, Gin Rummy, batch 64, numba cache warm",
        "game state record (`GIN_STATE_DTYPE.itemsize`)",
        "(a) vector env steps/s >= 1,000,000",
        "## Results: Gin Rummy with 3 and 4 players",
        "Gin Rummy vector env `venv.step`, 3 players",
        "Gin Rummy vector env `venv.step`, 4 players",
        "(b) random hands/s >= 10,000",
        "(c) AEC `env()` steps/s >= 100,000",
        "## Doors: where users meet the engine",
        "Gin Rummy: PettingZoo `env()`",
        "500 Rum: `raw_env()` (no wrappers)",
        "Rummy 51: `gymnasium.make`, default opponent",
        "Rummy 51: `gymnasium.make_vec`, 256 envs",
        "Gin Rummy `gymnasium.make` id, default opponent >= 50,000",
        "500 Rum `gymnasium.make_vec` id, 256 envs >= 200,000",
        "Rummy 51: first `gymnasium.make` step",
        "Gin Rummy first AEC step, empty cache <= 15 s",
        "the install's prebuild (`python -m rummy_agents.prebuild`, its manifest)",
        "empty numba cache, the install's prebuilt kernels",
        "README main job <= 60 s (warm cache)",
        "README main job, all games (10 deals, numba cache warm, whole process)",
        "Rummy 51 `ppo` vs `greedy` arena <= 60 s (warm)",
        "500 Rum `ppo` vs `greedy` arena (10 deals, numba cache warm, whole process)",
        "`gymnasium.make` Rummy 51, numba cache warm",
        "state <= 4 KB per game",
        "skipped (--no-peers)",
    ):
        assert row in text, row
    # every figure of our engine was measured (a number, not n/a) in the results table
    ours = text.split("## Results: rummy_env")[1].split("## Results: Gin Rummy with 3")[0]
    figure_rows = [line for line in ours.splitlines() if line.startswith("| (")]
    assert len(figure_rows) == 12
    for line in figure_rows:
        assert "n/a" not in line, line
    # every door was measured
    doors = text.split("## Doors: where users meet the engine")[1].split("## Results: rummy_env")[0]
    door_rows = [ln for ln in doors.splitlines() if ln.startswith("| ") and ": " in ln]
    assert len(door_rows) == 12 + 6, door_rows  # 4 doors x 3 games, 6 first runs
    for line in door_rows[:12]:
        assert [c.strip() for c in line.split("|")][2] != "n/a", line


def test_benchmark_random_legal_draws_every_legal_action_uniformly() -> None:
    """The loops' random learner: only legal actions, each row's uniformly, int8 or bool masks."""
    import importlib.util

    import numpy as np

    spec = importlib.util.spec_from_file_location("benchmark_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up
    try:
        spec.loader.exec_module(bench)
    finally:
        del sys.modules[spec.name]
    rng = np.random.default_rng(0)
    masks = (rng.random((64, 40)) < 0.2).astype(np.int8)
    masks[:, 39] = 1  # every row has a legal action; row 0 has exactly one
    masks[0] = 0
    masks[0, 39] = 1
    counts = np.zeros(masks.shape)
    for dtype in (np.int8, np.bool_):
        m = masks.astype(dtype)
        for _ in range(2000):
            a = bench.random_legal(m, rng)
            assert a.shape == (64,)
            assert (masks[np.arange(64), a] == 1).all()
            counts[np.arange(64), a] += 1
    # 4,000 draws per row, spread evenly over its legal actions (within 6 standard deviations)
    legal = masks.sum(1, keepdims=True)
    expected = 4000 / legal
    sd = np.sqrt(4000 * (1 / legal) * (1 - 1 / legal))
    assert (np.abs(counts - expected) <= 6 * sd + 1e-9)[masks == 1].all()
    assert counts[masks == 0].sum() == 0
