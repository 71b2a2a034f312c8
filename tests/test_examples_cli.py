"""The training examples' command line and evaluation counts (examples/sb3_maskable_ppo.py,
examples/tianshou_dqn_masked.py, examples/rllib_ppo_masked.py), without training.

- ``--help`` answers in under 3 s: each example imports only the standard library before it
  parses its arguments (torch, Ray, Tianshou, sb3-contrib, numpy and the games come after).
- ``parse_args``: defaults, ``--smoke``, ``--option KEY=VALUE``, bad values refused by name.
- ``evaluate_counts``: every episode is counted once, as a win, a loss, a draw or truncated, and
  the outcome agrees with the zero-sum reward's sign where the game has one.

None of this needs a framework installed; the training runs are in tests/test_frameworks.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = {
    "sb3": ROOT / "examples" / "sb3_maskable_ppo.py",
    "tianshou": ROOT / "examples" / "tianshou_dqn_masked.py",
    "rllib": ROOT / "examples" / "rllib_ppo_masked.py",
}
HEAVY = (
    "numpy",
    "torch",
    "stable_baselines3",
    "sb3_contrib",
    "tianshou",
    "ray",
    "gymnasium",
    "rummy_env",
    "rummy_agents",
)
"""Modules an example must not import before its arguments are parsed."""

EVAL_LINE = re.compile(
    r"^evaluation (?P<label>.+?): (?P<episodes>\d+) episodes of (?P<setting>.+?) against "
    r"(?P<opponent>\S+): (?P<wins>\d+) wins, (?P<losses>\d+) losses, (?P<draws>\d+) draws"
    r"(?:, (?P<truncated>\d+) truncated)? \(win rate (?P<rate>\d+\.\d)%, "
    r"mean return (?P<mean>-?\d+\.\d+)\)$",
    re.M,
)
"""One evaluation line of an example (tests/test_frameworks.py parses the same)."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _load(name: str) -> ModuleType:
    """The example ``name`` as a module (its ``main`` is not run)."""
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES[name])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", params=sorted(EXAMPLES))
def example(request: pytest.FixtureRequest) -> ModuleType:
    return _load(request.param)


# -- --help and the import order -------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_help_is_fast_and_prints_usage(name: str) -> None:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES[name]), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=_env(),
    )
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage:"), proc.stdout
    for flag in ("--smoke", "--option", "--eval-episodes", "--seed"):
        assert flag in proc.stdout, flag
    assert elapsed < 3.0, f"{name} --help took {elapsed:.1f}s"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_module_import_and_parsing_load_nothing_heavy(name: str) -> None:
    code = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('ex', {str(EXAMPLES[name])!r})\n"
        "m = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(m)\n"
        "m.parse_args(['--smoke', '--option', 'knock_limit=20'])\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted({n.split('.')[0] for n in sys.modules} & set(heavy))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [], proc.stdout


# -- parse_args ------------------------------------------------------------------------------


def test_defaults_are_the_documented_setting(example: ModuleType) -> None:
    args = example.parse_args([])
    assert args.game == "gin_rummy"
    assert args.options == {"knock_limit": 30, "reward": "normalized"}
    assert args.eval_episodes == 200
    assert getattr(args, "opponent", "random") == "random"


def test_smoke_is_small(example: ModuleType) -> None:
    args = example.parse_args(["--smoke"])
    assert args.eval_episodes == 20 and args.hidden == [32, 32]
    steps = getattr(args, "timesteps", None) or args.iterations * args.batch_size
    assert steps <= 512


def test_options_override_the_defaults(example: ModuleType) -> None:
    args = example.parse_args(
        ["--option", "knock_limit=10", "--option", "oklahoma=true", "--option", "episode=match"]
    )
    assert args.options == {
        "knock_limit": 10,
        "reward": "normalized",
        "oklahoma": True,
        "episode": "match",
    }
    # another game gets none of Gin Rummy's defaults
    assert example.parse_args(["--game", "rummy51"]).options == {}


@given(
    key=st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
    value=st.one_of(
        st.integers(-(10**6), 10**6),
        st.booleans(),
        st.none(),
        st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True).filter(
            lambda s: s not in ("true", "false", "null")
        ),
    ),
)
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_parse_option_reads_json_or_text(example: ModuleType, key: str, value: object) -> None:
    text = value if isinstance(value, str) else json.dumps(value)
    assert example.parse_option(f"{key}={text}") == (key, value)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--option", "knock_limit"], "--option needs KEY=VALUE"),
        (["--option", "=3"], "--option needs KEY=VALUE"),
        (["--eval-episodes", "0"], "--eval-episodes: expected an integer >= 1, got 0"),
        (["--eval-episodes", "many"], "--eval-episodes: expected an integer >= 1, got 'many'"),
        (["--hidden", "64", "-1"], "--hidden: expected an integer >= 1, got -1"),
        (["--game", "poker"], "--game: invalid choice: 'poker'"),
    ],
)
def test_bad_arguments_are_refused_by_name(
    example: ModuleType, argv: list[str], fragment: str, capsys: pytest.CaptureFixture
) -> None:
    with pytest.raises(SystemExit) as exc:
        example.parse_args(argv)
    assert exc.value.code == 2
    assert fragment in capsys.readouterr().err


# -- evaluate_counts and the printed line ----------------------------------------------------


def _random_policy(seed: int):
    rng = np.random.default_rng(seed)

    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return policy


def _last_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[-1])


@pytest.fixture(scope="module")
def sb3_example() -> ModuleType:
    return _load("sb3")


@given(
    case=st.sampled_from(
        [
            ("gin_rummy", {"reward": "normalized"}),
            ("gin_rummy", {"reward": "normalized", "knock_limit": 30}),
            ("gin_rummy", {"reward": "normalized", "knock_limit": 10, "max_steps": 40}),
            ("rummy51", {"reward": "normalized"}),
            ("five_hundred_rum", {}),
            ("five_hundred_rum", {"num_players": 3}),
        ]
    ),
    episodes=st.integers(1, 6),
    seed=st.integers(0, 10_000),
    last=st.booleans(),
)
@settings(max_examples=25, deadline=None)
def test_every_episode_is_counted_once(sb3_example, case, episodes, seed, last) -> None:
    game, options = case
    policy = _last_legal if last else _random_policy(seed)
    r = sb3_example.evaluate_counts(policy, game, None, episodes, seed, **options)
    assert r["episodes"] == episodes
    assert r["wins"] + r["losses"] + r["draws"] + r["truncated"] == episodes
    assert min(r["wins"], r["losses"], r["draws"], r["truncated"]) >= 0
    if "max_steps" not in options:
        assert r["truncated"] == 0
    again = sb3_example.evaluate_counts(
        _last_legal if last else _random_policy(seed), game, None, episodes, seed, **options
    )
    assert again == r  # seeded


@pytest.mark.parametrize("game", ["gin_rummy", "rummy51"])
@pytest.mark.parametrize("seed", range(3))
def test_outcome_agrees_with_the_zero_sum_return(sb3_example, game, seed) -> None:
    """Gin Rummy and 2-player Rummy 51 with ``reward="normalized"`` are zero-sum: a win is a
    positive return, a loss a negative one, a draw zero.
    """
    from rummy_env.wrappers import RummySingleAgentEnv

    options = {"reward": "normalized", **({"knock_limit": 30} if game == "gin_rummy" else {})}
    env = RummySingleAgentEnv(game, **options)
    policy = _random_policy(seed)
    seen = set()
    for k in range(25):
        env.reset(seed=1000 * seed + k)
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, _ = env.step(policy(None, env.action_masks()))
            total += reward
            done = terminated or truncated
        outcome = sb3_example.episode_outcome(env)
        assert outcome == ("win" if total > 0 else "loss" if total < 0 else "draw"), total
        seen.add(outcome)
    assert {"win", "loss"} <= seen  # both happen in 25 episodes


def test_truncated_episodes_are_counted_apart(sb3_example) -> None:
    r = sb3_example.evaluate_counts(_last_legal, "gin_rummy", None, 5, 0, max_steps=4)
    assert r == {
        "episodes": 5,
        "wins": 0,
        "losses": 0,
        "draws": 0,
        "truncated": 5,
        "mean_return": 0.0,
    }


def test_the_standard_gin_rules_are_mostly_draws_against_random(sb3_example) -> None:
    """Why the examples default to knock_limit=30: with the standard limit uniformly random
    play almost never knocks, and a dead hand is a draw.
    """
    standard = sb3_example.evaluate_counts(
        _random_policy(0), "gin_rummy", None, 40, 0, reward="normalized"
    )
    wide = sb3_example.evaluate_counts(
        _random_policy(0), "gin_rummy", None, 40, 0, reward="normalized", knock_limit=30
    )
    assert standard["draws"] >= 35
    assert wide["draws"] <= 25 and wide["wins"] >= 5 and wide["losses"] >= 5


@given(
    counts=st.lists(st.integers(0, 500), min_size=4, max_size=4),
    mean=st.floats(-1, 1, allow_nan=False),
    label=st.sampled_from(["before training", "after training", "shared after training"]),
)
def test_the_evaluation_line_parses_back(example: ModuleType, counts, mean, label) -> None:
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
    line = example.describe(label, r, "gin_rummy knock_limit=30", "random")
    m = EVAL_LINE.fullmatch(line)
    assert m, line
    assert m["label"] == label and m["opponent"] == "random"
    assert int(m["episodes"]) == episodes
    assert (int(m["wins"]), int(m["losses"]), int(m["draws"])) == (wins, losses, draws)
    assert int(m["truncated"] or 0) == truncated
    assert (m["truncated"] is None) == (truncated == 0)  # shown only when there are some
    assert float(m["rate"]) == pytest.approx(100 * wins / max(episodes, 1), abs=0.051)
    assert float(m["mean"]) == pytest.approx(mean, abs=5e-4)
