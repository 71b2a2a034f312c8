"""The layers import one way: core -> rules -> encodings -> envs / vector / wrappers -> agents ->
experiments and the command line.

The environment package never imports the agents package or the experiments, and no code
imports the agents package under its folder name ``agents`` (it installs as ``rummy_agents``:
a top-level ``agents`` clashes with other packages, openai-agents among them).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) of every import statement in a file, nested ones included."""
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


def _py_files(*folders: str) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py"))


def _top(module: str) -> str:
    return module.split(".")[0]


def test_env_package_imports_no_agents_or_experiments():
    bad = [
        f"{p.relative_to(ROOT)}:{line} imports {m}"
        for p in _py_files("rummy_env")
        for line, m in _imports(p)
        if _top(m) in ("rummy_agents", "agents", "experiments", "tests")
    ]
    assert not bad, "the environment package must not import upper layers:\n" + "\n".join(bad)


def test_agents_import_no_experiments():
    bad = [
        f"{p.relative_to(ROOT)}:{line} imports {m}"
        for p in _py_files("agents")
        for line, m in _imports(p)
        if _top(m) in ("experiments", "tests")
    ]
    assert not bad, "\n".join(bad)


def test_nothing_imports_the_agents_folder_name():
    bad = [
        f"{p.relative_to(ROOT)}:{line} imports {m}"
        for p in _py_files("rummy_env", "agents", "experiments", "tests")
        for line, m in _imports(p)
        if _top(m) == "agents"
    ]
    assert not bad, "import the agents package as rummy_agents:\n" + "\n".join(bad)


@pytest.mark.parametrize("layer", ["core", "rules", "encodings"])
def test_lower_layers_import_no_upper_layers(layer):
    upper = {
        "core": ("rules", "encodings", "envs", "vector", "wrappers", "render", "testing"),
        "rules": ("envs", "vector", "wrappers", "render", "testing"),
        "encodings": ("envs", "vector", "wrappers", "render", "testing"),
    }[layer]
    bad = []
    for p in _py_files(f"rummy_env/{layer}"):
        for line, m in _imports(p):
            parts = m.split(".")
            if parts[0] == "rummy_env" and len(parts) > 1 and parts[1] in upper:
                bad.append(f"{p.relative_to(ROOT)}:{line} imports {m}")
            if m == "rummy_env" and layer != "core":
                bad.append(f"{p.relative_to(ROOT)}:{line} imports the package root")
    assert not bad, "\n".join(bad)


def test_no_private_names_imported_across_packages():
    """``from pkg.mod import _name`` only inside the package that defines it."""
    bad = []
    for p in _py_files("rummy_env", "agents", "experiments"):
        home = "rummy_env" if p.is_relative_to(ROOT / "rummy_env") else "rummy_agents"
        if p.is_relative_to(ROOT / "experiments"):
            home = "experiments"
        tree = ast.parse(p.read_text(), str(p))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if _top(node.module) == home:
                    continue
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        bad.append(f"{p.relative_to(ROOT)}:{node.lineno} {node.module}.{a.name}")
    assert not bad, "private names imported from another package:\n" + "\n".join(bad)


def test_no_sys_path_tricks():
    bad = [
        str(p.relative_to(ROOT))
        for p in _py_files("rummy_env", "agents", "experiments")
        if "sys.path" in p.read_text()
    ]
    assert not bad, bad


def test_package_list_names_every_package_folder():
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    dirs = {v: k for k, v in cfg["package-dir"].items()}
    found = set()
    for init in list((ROOT / "rummy_env").rglob("__init__.py")) + list(
        (ROOT / "agents").rglob("__init__.py")
    ):
        rel = init.parent.relative_to(ROOT).parts
        top = dirs.get(rel[0], rel[0])
        found.add(".".join((top, *rel[1:])))
    assert found == listed


def test_old_module_spelling_of_agent_classes_still_builds():
    from rummy_agents.arena.registry import make_agent

    agent = make_agent("agents.random_agent:RandomAgent", seed=0)
    assert type(agent).__module__ == "rummy_agents.random_agent"


def test_agent_names_mean_one_class_per_game():
    from rummy_agents.arena.registry import AGENTS, GAME_AGENTS, make_agent

    for game, table in GAME_AGENTS.items():
        assert not set(table) & set(AGENTS), game
    with pytest.raises(ValueError, match="plays gin_rummy, not rummy51"):
        make_agent("simple", 0, game="rummy51")
    # every name in use when the registry went per game still builds for its game
    for game, name in [
        ("gin_rummy", "random"),
        ("gin_rummy", "simple"),
        ("gin_rummy", "simple_best"),
        ("gin_rummy", "novice"),
        ("gin_rummy", "planner"),
        ("gin_rummy", "heuristic"),
        ("gin_rummy", "ismcts"),
        ("five_hundred_rum", "greedy@hold_melds=3"),
        ("rummy51", "greedy@hold_open=3"),
        ("rummy51", "greedy_plus"),
    ]:
        assert make_agent(name, 0, game=game) is not None
