"""What the repository tracks: no new trained weights (every clone pays for them)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The published agents live in the package (rummy_agents/published/*.npz), nowhere else.
GRANDFATHERED: set[str] = set()
PUBLISHED_MAX_BYTES = 2_000_000


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return out.split()


def test_no_new_weights_tracked():
    weights = {f for f in _tracked() if f.endswith((".pt", ".pth", ".ckpt", ".safetensors"))}
    assert weights <= GRANDFATHERED, f"trained weights added to git: {weights - GRANDFATHERED}"


def test_gitignore_keeps_weights_out():
    assert "*.pt" in (ROOT / ".gitignore").read_text().split()


def test_published_agents_only_in_the_package_and_small():
    npz = [f for f in _tracked() if f.endswith(".npz")]
    assert npz and all(f.startswith("agents/published/") for f in npz), npz
    for f in npz:
        assert (ROOT / f).stat().st_size <= PUBLISHED_MAX_BYTES, f
