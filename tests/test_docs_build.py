"""The documentation site builds with warnings as errors (the CI command, into a temp dir)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MISSING = [m for m in ("sphinx", "furo", "myst_parser") if importlib.util.find_spec(m) is None]


@pytest.mark.skipif(
    bool(MISSING),
    reason=f"the docs toolchain is not installed ({', '.join(MISSING)} missing): "
    "pip install -c constraints.txt -e '.[docs]'",
)
def test_docs_build_without_warnings(tmp_path) -> None:
    out = tmp_path / "html"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
           "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(out)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    # the env docstrings made it onto the game pages, and autodoc documented the package
    gin = (out / "games" / "gin_rummy.html").read_text()
    assert "KNOCK[c]" in gin and "Departures from the printed rules" in gin
    for page in ("five_hundred_rum", "rummy51"):
        assert "Version history" in (out / "games" / f"{page}.html").read_text(), page
    api = (out / "api.html").read_text()
    for name in ("make_vec", "RummySingleAgentEnv", "gin_deck", "make_agent", "run_arena"):
        assert name in api, name
