"""``rummy-env`` user errors: one line ``rummy-env: error: ...``, exit status 2, no game played;
the arena's default out folder; the main job without matplotlib.

The error cases stub the arena's runner (nothing is played: a case that passed the checks would
raise :class:`Played`) and run in an empty current folder, so "no game played" is checked twice:
the runner was not called and no out folder was made.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from error_helpers import one_error_line
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import rummy_agents.arena as arena
from rummy_agents.arena import ArenaSpec
from rummy_agents.arena.registry import AGENTS, GAME_AGENTS, agent_spec, check_agent, make_agent
from rummy_agents.cli import BASELINES, PROG, RUNS_DIR, main

ROOT = Path(__file__).resolve().parent.parent
GAMES = list(GAME_AGENTS)


class Played(Exception):
    """Raised by the stubbed runner: the CLI got as far as playing."""


@pytest.fixture
def no_play(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Any]:
    """Stub ``run_arena`` (records its specs, then raises :class:`Played`); run in ``tmp_path``."""
    calls: list[Any] = []

    def run_arena(spec: Any, progress: bool = True) -> Any:
        calls.append(spec)
        raise Played(spec.game)

    monkeypatch.setattr(arena, "run_arena", run_arena)
    monkeypatch.chdir(tmp_path)
    return calls


ARENA = ["arena", "--deals", "1", "--no-progress"]

CASES = [
    # agents of another game, for one game or for --game all (Gin is valid, 500 Rum is not)
    (["--game", "rummy51", "--agents", "simple,greedy"],
     "agent 'simple' plays gin_rummy, not rummy51"),
    (["--game", "all", "--agents", "simple,random"], "plays gin_rummy, not five_hundred_rum"),
    (["--game", "all", "--agents", "random,greedy"],
     "plays five_hundred_rum, rummy51, not gin_rummy"),
    (["--game", "rummy51", "--agents", "rummy_agents.gin_rummy_rules:GinRummySimpleAgent,random"],
     "plays gin_rummy, not rummy51"),
    # unknown agents: the game's names are listed
    (["--agents", "nobody,random"],
     "unknown agent 'nobody' for gin_rummy; agents of gin_rummy: random, ismcts, ppo"),
    (["--game", "rummy51", "--agents", "random,nobody"],
     "agents of rummy51: random, ismcts, ppo, heuristic, greedy, greedy_plus,"),
    (["--agents", "no_such_module_xyz:Agent,random"], "cannot import"),
    (["--agents", "rummy_agents.cli:main,random"], "not a class"),
    # parameters: unknown names list the allowed ones, values say what is allowed
    (["--agents", "simple@foo=1,random"],
     "agent 'simple' has no parameter 'foo'; its parameters: take_rule"),
    (["--agents", "random@foo=1,simple"], "agent 'random' takes no parameters"),
    (["--agents", "simple@take_rule=x,random"],
     "take_rule must be one of ('any_meld', 'best_meld'), got 'x'"),
    (["--game", "rummy51", "--agents", "greedy@hold_melds=true,random"],
     "hold_melds must be none or an integer, got 'true'"),
    (["--game", "rummy51", "--agents", "greedy@hold_melds=-1,random"],
     "hold_melds must be None or a count >= 0"),
    (["--agents", "ismcts@batch_size=1.5,random"], "batch_size must be an integer, got '1.5'"),
    (["--agents", "simple@seed=3,random"], "seeds every agent itself"),
    (["--agents", "simple@x,random"], "expected key=value"),
    (["--agents", "simple@a=1@a=2,random"], "given twice"),
    (["--agents", "ppo@checkpoint=nope.pt,random"], "checkpoint 'nope.pt' is not a file"),
    (["--agents", "random"], "need at least two agents"),
    (["--agents", "random,random"], "agent names must be distinct"),
    (["--agents", ""], "need at least two agents"),
    # numbers, games, options, folders
    (["--deals", "0"], "--deals must be an integer >= 1, got 0"),
    (["--seed", "-1"], "--seed must be an integer >= 0, got -1"),
    (["--workers", "0"], "--workers must be an integer >= 1, got 0"),
    (["--max-decisions", "0"], "--max-decisions must be an integer >= 1, got 0"),
    (["--bootstrap", "-1"], "--bootstrap must be an integer >= 0, got -1"),
    (["--deals", "x"], "argument --deals: invalid int value: 'x'"),
    (["--game", "poker"],
     "unknown game 'poker'; available: gin_rummy, five_hundred_rum, rummy51, all"),
    (["--option", "bogus=1"], "bogus"),
    (["--option", "knock_limit"], "expected key=value"),
    (["--game", "all", "--option", "num_players=3"], "--game all plays the default rules"),
    (["--game", "all", "--episode", "match"], "--game all plays the default rules"),
    (["--episode", "forever"], "argument --episode: invalid choice"),
    (["--out", "a_file.txt"], "--out 'a_file.txt' is a file, not a folder"),
    (["--out", "a_file.txt/sub"], "'a_file.txt' is a file, not a folder"),
    (["--game", "all", "--out", "a_file.txt"], "is a file, not a folder"),
]  # fmt: skip


@pytest.mark.parametrize("argv, fragment", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_arena_user_error_is_one_line_before_any_game(no_play, capsys, argv, fragment):
    Path("a_file.txt").write_text("not a folder\n")
    assert main([*ARENA, *argv]) == 2
    assert fragment in one_error_line(capsys)
    assert no_play == []
    assert not Path(RUNS_DIR).exists()


@pytest.mark.parametrize(
    "argv, fragment",
    [
        ([], "the following arguments are required: COMMAND"),
        (["nope"], "invalid choice: 'nope'"),
        (["simulate", "--games", "x"], "argument --games: invalid int value: 'x'"),
        (["simulate", "--games", "0"], "--games must be an integer >= 1, got 0"),
        (["simulate", "--seed", "-1"], "--seed must be an integer >= 0, got -1"),
    ],
)
def test_other_user_errors_are_one_line(capsys, argv, fragment):
    assert main(argv) == 2
    assert fragment in one_error_line(capsys)


def test_checkpoint_of_another_game_is_refused(no_play, capsys, tmp_path):
    """A PPO checkpoint trained on Gin Rummy does not play Rummy 51 (a tiny untrained net)."""
    torch = pytest.importorskip("torch")
    from rummy_agents.ppo_agent import MaskedActorCritic, build_checkpoint

    meta = {"game": "gin_rummy", "options": {}, "features": "none", "obs_size": 4,
            "num_actions": 3, "hidden": 8, "layers": 1}  # fmt: skip
    torch.save(build_checkpoint(MaskedActorCritic(4, 3, 8, 1), meta), tmp_path / "gin.pt")
    kwargs = check_agent("ppo@checkpoint=gin.pt", "gin_rummy").kwargs
    assert kwargs == {"checkpoint": "gin.pt", "game": "gin_rummy"}  # ppo is told its game
    rc = main([*ARENA, "--game", "rummy51", "--agents", "ppo@checkpoint=gin.pt,random"])
    assert rc == 2
    line = one_error_line(capsys)
    assert "agent 'ppo@checkpoint=gin.pt': checkpoint 'gin.pt' was trained on gin_rummy" in line
    assert "not rummy51" in line
    assert no_play == []


def test_python_api_gives_the_same_messages():
    """``agent_spec``, ``make_agent``, ``check_agent`` and ``ArenaSpec`` raise what the CLI prints
    (ValueError; ArgumentTypeError, a TypeError too, for a value of the wrong type)."""
    with pytest.raises(ValueError, match="plays gin_rummy, not rummy51"):
        agent_spec("simple", "rummy51")
    with pytest.raises(ValueError, match="has no parameter 'foo'; its parameters: take_rule"):
        make_agent("simple@foo=1", 0, game="gin_rummy")
    with pytest.raises(TypeError, match="hold_melds must be none or an integer, got 'true'"):
        check_agent("greedy@hold_melds=true", "rummy51")
    with pytest.raises(ValueError, match="checkpoint 'nope.pt' is not a file"):
        ArenaSpec("gin_rummy", ("ppo@checkpoint=nope.pt", "random"), deals=1)
    with pytest.raises(ValueError, match="deals must be an integer >= 1, got 0"):
        ArenaSpec("gin_rummy", ("simple", "random"), deals=0)
    with pytest.raises(TypeError, match="agents must be a sequence of agent specs"):
        ArenaSpec("gin_rummy", "simple,random", deals=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="game must be one of gin_rummy"):
        ArenaSpec("chess", ("simple", "random"), deals=1)
    # typed parameters: the class's annotations read the text
    assert agent_spec("planner@risk_weight=1", "gin_rummy").kwargs == {"risk_weight": 1.0}
    assert agent_spec("greedy@hold_melds=none", "rummy51").kwargs == {"hold_melds": None}
    assert agent_spec("ismcts@iterations=auto@anchor=greedy", "rummy51").kwargs == {
        "iterations": "auto",
        "anchor": "greedy",
    }


# ---------------------------------------------------------------------------------------------
# where the files go


def test_default_out_folder_is_a_runs_folder_in_the_current_folder(tmp_path, monkeypatch, capsys):
    """A real (tiny) run: the files land in ./rummy_env_runs/arena_gin_rummy, not in results/."""
    assert Path(RUNS_DIR).parts[0] != "results"
    monkeypatch.chdir(tmp_path)
    args = ["arena", "--agents", "random,simple", "--deals", "1", "--seed", "0"]
    assert main([*args, "--bootstrap", "0", "--no-progress", "--no-plot"]) == 0
    out = tmp_path / RUNS_DIR / "arena_gin_rummy"
    for name in ("games.csv", "pairs.csv", "ratings.csv", "summary.json", "table.md"):
        assert (out / name).stat().st_size > 0
    assert f"wrote {Path(RUNS_DIR, 'arena_gin_rummy', 'games.csv')}" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == [RUNS_DIR]


@pytest.mark.parametrize(
    "flags, expected",
    [
        ([], [f"{RUNS_DIR}/arena_{g}_baselines" for g in BASELINES]),
        (["--out", "results"], [f"results/arena_{g}_baselines" for g in BASELINES]),
        (["--out", "mine", "--agents", "random,heuristic"], [f"mine/arena_{g}" for g in BASELINES]),
        (["--out", "none"], []),
    ],
)
def test_game_all_writes_one_folder_per_game(tmp_path, monkeypatch, capsys, flags, expected):
    """``--game all``: every game's round robin into DIR/arena_<game>_baselines (DIR/arena_<game>
    with --agents); by default DIR is ./rummy_env_runs (stubbed: nothing played)."""
    written: list[str] = []
    played: list[str] = []

    def run_arena(spec: Any, progress: bool = True) -> Any:
        played.append(spec.game)
        return spec

    def write_outputs(result: Any, out_dir: Any, png: bool = True) -> list[Path]:
        written.append(Path(out_dir).as_posix())
        return []

    monkeypatch.setattr(arena, "run_arena", run_arena)
    monkeypatch.setattr(arena, "markdown", lambda result: f"table of {result.game}")
    monkeypatch.setattr(arena, "write_outputs", write_outputs)
    monkeypatch.chdir(tmp_path)
    argv = ["arena", "--game", "all", "--deals", "1", "--no-progress"]
    assert main(argv + flags) == 0
    assert played == list(BASELINES)
    assert written == expected
    assert "## rummy51" in capsys.readouterr().out


NO_EXTRAS = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = {"matplotlib", "torch", "stable_baselines3", "sb3_contrib", "pyspiel", "tyro"}


class NotInstalled(MetaPathFinder):
    # a plain install (pip install rummy_env): no plot, train or test extras
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, NotInstalled())
from rummy_agents.cli import main

sys.exit(main(sys.argv[1:]))
"""


def test_main_job_runs_without_matplotlib(tmp_path):
    """The README's main command (tiny: one deal per pair) in a fresh process where matplotlib
    (and torch) cannot be imported: every game's tables and files, no heatmap, one note."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        # an empty numba cache adds the compile notices' lines (tests/test_compile_notice.py)
        "RUMMY_ENV_COMPILE_NOTICE": "off",
    }
    argv = ["arena", "--game", "all", "--deals", "1", "--seed", "0", "--bootstrap", "0"]
    proc = subprocess.run(
        [sys.executable, "-c", NO_EXTRAS, *argv, "--no-progress"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"{PROG}: note: heatmap.png skipped: matplotlib is not installed "
        "(pip install 'rummy_env[plot]'; in a checkout: "
        "pip install -c constraints.txt -e '.[plot]')"
    ]
    for game in BASELINES:
        assert f"## {game}" in proc.stdout
        out = tmp_path / RUNS_DIR / f"arena_{game}_baselines"
        assert sorted(p.name for p in out.iterdir()) == [
            "games.csv", "pairs.csv", "ratings.csv", "summary.json", "table.md",
        ]  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == [RUNS_DIR]


# ---------------------------------------------------------------------------------------------
# fuzzing: any spec is a valid agent or one clean line


def _param_names() -> list[str]:
    import inspect

    names = {"foo", "seed", "checkpoint", "", " x "}
    for entry in [*AGENTS.values(), *(e for t in GAME_AGENTS.values() for e in t.values())]:
        try:
            names |= set(inspect.signature(entry.agent_class()).parameters)
        except ValueError:  # an optional dependency missing: its parameters are not fuzzed
            pass
    # threads=N sets torch's thread count for the whole test process
    return sorted(names - {"threads", "self"})


TEXT = st.text(st.characters(blacklist_characters=":", blacklist_categories=("Cs",)), max_size=8)
"""Free text; no ':' (a 'module:Class' name imports the module: only known ones are tried)."""
NAMES = sorted({*AGENTS, *(n for t in GAME_AGENTS.values() for n in t)}) + [
    "rummy_agents.random_agent:RandomAgent",
    "rummy_agents.gin_rummy_rules:GinRummySimpleAgent",
    "rummy_agents.rummy51_greedy:Rummy51GreedyAgent",
    "rummy_agents.cli:main",
    "rummy_agents.no_such:Agent",
    "x:",
]
VALUES = ["1", "0", "-1", "3", "1.5", "true", "false", "none", "auto", "abc", "any_meld",
          "best_meld", "penalty", "paired", "greedy", "nope.pt", ""]  # fmt: skip


@st.composite
def specs(draw: st.DrawFn) -> str:
    """An agent spec: a known or random name with known or random parameters, sometimes
    malformed (no '=', empty keys, stray '@' and ',')."""
    if draw(st.integers(0, 9)) == 0:
        return draw(TEXT)
    name = draw(st.sampled_from(NAMES) | TEXT)
    keys = st.sampled_from(_param_names()) | TEXT
    params = draw(
        st.lists(st.tuples(keys, st.sampled_from(VALUES) | TEXT, st.booleans()), max_size=3)
    )
    return name + "".join(f"@{k}={v}" if eq else f"@{k}" for k, v, eq in params)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=specs(), game=st.sampled_from(GAMES))
@example(spec="novice@0\n0=1", game="gin_rummy")  # a key's newline once reached the message
def test_fuzz_agent_specs(no_play, capsys, spec, game):
    """``check_agent`` gives an agent or a one-line ValueError/TypeError; the CLI plays (the
    stub) or prints one error line with status 2, and agrees with ``check_agent``."""
    try:
        check_agent(spec, game)
        valid = True
    except (ValueError, TypeError) as e:
        assert str(e) and "\n" not in str(e), repr(str(e))
        valid = False
    del no_play[:]
    try:
        rc = main(["arena", "--game", game, f"--agents={spec},random", "--deals", "1",
                   "--out", "none", "--no-progress"])  # fmt: skip
    except Played:
        rc = 0
    if rc == 2:
        one_error_line(capsys)
        assert no_play == []
    else:
        assert rc == 0 and len(no_play) == 1
    given_agents = [a.strip() for a in f"{spec},random".split(",") if a.strip()]
    if len(set(given_agents)) == len(given_agents) == 2 and given_agents[0] == spec.strip():
        assert (rc == 0) == valid, (spec, game)
    event("valid agent" if valid else "refused")
