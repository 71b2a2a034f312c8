"""The training examples' command line and evaluation counts (examples/sb3_maskable_ppo.py,
examples/tianshou_dqn_masked.py, examples/rllib_ppo_masked.py), without training.

- ``--help`` answers in under 3 s: each example imports only the standard library before it
  parses its arguments (torch, Ray, Tianshou, sb3-contrib, numpy and the games come after).
- ``parse_args``: defaults, ``--smoke``, ``--option KEY=VALUE``, bad values refused by name.
- one implementation: the argument helpers are examples/_common.py's (standard library only),
  the evaluation is ``rummy_agents.integrations.evaluate`` and ``evaluation_line``
  (tests/test_integrations_evaluate.py tests those).

None of this needs a framework installed; the training runs are in tests/test_frameworks.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "examples"
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


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _load(name: str) -> ModuleType:
    """The example ``name`` as a module (its ``main`` is not run).

    Its folder goes first on ``sys.path`` while it loads, as ``python examples/NAME.py`` puts
    it there: the examples import their shared helpers, examples/_common.py, as ``_common``.
    """
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES[name])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(EXAMPLES_DIR))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(EXAMPLES_DIR))
    return module


def _common_of(example: ModuleType) -> ModuleType:
    """The shared helpers the example imported (examples/_common.py)."""
    return sys.modules[example.at_least.__module__]


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
        f"sys.path.insert(0, {str(EXAMPLES_DIR)!r})\n"
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
    assert _common_of(example).parse_option(f"{key}={text}") == (key, value)


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


# -- one implementation: the shared helpers -----------------------------------------------------


def test_examples_share_one_implementation(example: ModuleType) -> None:
    """The argument helpers come from examples/_common.py, the evaluation from
    rummy_agents.integrations (imported in ``main``, after parsing): no example keeps a copy.
    """
    common = _common_of(example)
    assert common.__file__ == str(EXAMPLES_DIR / "_common.py")
    assert example.at_least is common.at_least
    assert example.game_options is common.game_options
    assert example.add_game_arguments is common.add_game_arguments
    for copy in ("_at_least", "parse_option", "episode_outcome", "evaluate_counts", "describe"):
        assert not hasattr(example, copy), copy
    source = Path(example.__file__).read_text()
    assert "from rummy_agents.integrations import evaluate, evaluation_line" in source
    assert "def evaluate" not in source and "def parse_option" not in source


def test_the_setting_words_are_what_the_smoke_tests_parse(example: ModuleType) -> None:
    common = _common_of(example)
    args = example.parse_args(["--smoke"])
    assert common.describe_setting(args.game, args.options) == (
        "gin_rummy knock_limit=30 reward=normalized"
    )
    assert common.describe_setting("rummy51", {}) == "rummy51"
