"""What the package ships and promises: one version string, licence, changelog, type markers,
the published agents as package data, and lower bounds that CI checks (.ci/min-versions)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import rummy_agents
import rummy_env

# tomllib is Python 3.11+; the package supports 3.10, where these checks skip
tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower()


def test_one_version_string():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    dynamic = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "rummy_env.__version__"}
    assert rummy_agents.__version__ == rummy_env.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", rummy_env.__version__)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{rummy_env.__version__}]" in changelog or "## [Unreleased]" in changelog


def test_licence_classifiers_and_type_markers():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    # PEP 639: an SPDX expression, no licence classifier (setuptools deprecates both old forms)
    assert PYPROJECT["project"]["license"] == "MIT"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    assert "setuptools>=77" in PYPROJECT["build-system"]["requires"]
    classifiers = PYPROJECT["project"]["classifiers"]
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert "Typing :: Typed" in classifiers
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    for package, folder in (("rummy_env", "rummy_env"), ("rummy_agents", "agents")):
        assert "py.typed" in data[package] and (ROOT / folder / "py.typed").is_file()
    assert "published/*.npz" in data["rummy_agents"]
    assert "rummy_agents.published" in PYPROJECT["tool"]["setuptools"]["packages"]


def test_min_versions_file_matches_lower_bounds():
    pins = {}
    for line in (ROOT / ".ci" / "min-versions.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.strip().lower()] = version.strip()
    bounds = {}
    for req in PYPROJECT["project"]["dependencies"]:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", req.replace(" ", ""))
        assert m, f"core dependency {req!r} needs a plain lower bound"
        bounds[m.group(1).lower()] = m.group(2)
    assert pins == bounds


def test_extras():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"tensorboard"} <= {_name(r) for r in extras["train"]}
    assert {"sphinx", "furo", "myst-parser"} <= {_name(r) for r in extras["docs"]}
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert not core & {"torch", "ray", "tianshou", "matplotlib", "sphinx"}
