"""Run the code of the documentation's tutorials (and the other pages' executed examples).

A code block of a page in ``docs/`` is executed when it is a MyST ``{code-block} python``
directive with a ``:name: tutorial-...`` option. The blocks of one page run in order in one
namespace, in a temporary working directory, so a page reads as one script.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"

BLOCK = re.compile(
    r"^(?P<fence>`{3,})\{code-block\} python[ \t]*\n"  # the opening fence
    r"(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)"  # :name: and other options
    r"(?P<code>.*?)"
    r"^(?P=fence)[ \t]*$",
    re.M | re.S,
)
NAME = re.compile(r":name:\s*(tutorial-[\w-]+)")

# pages whose code needs an optional package: skipped with the reason when it is missing
NEEDS = {
    "tutorials/sb3_maskable_ppo.md": ("sb3_contrib", "torch"),
    "tutorials/selfplay.md": ("torch", "tyro"),
    "pictures.md": ("moviepy",),
}


def tutorial_blocks(text: str) -> list[tuple[str, str]]:
    """``(name, code)`` of every executed block of a page, in order."""
    out = []
    for m in BLOCK.finditer(text):
        name = NAME.search(m.group("options"))
        if name:
            out.append((name.group(1), m.group("code")))
    return out


def _pages() -> list[Path]:
    pages = DOCS.rglob("*.md")
    return sorted(p for p in pages if "_build" not in p.parts and tutorial_blocks(p.read_text()))


def test_blocks_are_found() -> None:
    pages = {p.relative_to(DOCS).as_posix() for p in _pages()}
    for page in ("quickstart.md", "vector.md", "tutorials/stacked_decks.md",
                 "tutorials/sample_worlds.md", "tutorials/sb3_maskable_ppo.md",
                 "tutorials/selfplay.md", "game_records.md"):  # fmt: skip
        assert page in pages, page
    names = [n for p in _pages() for n, _ in tutorial_blocks(p.read_text())]
    assert len(names) == len(set(names)), "block names must be unique (they are Sphinx labels)"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_tutorial_page_runs(page: Path, tmp_path, monkeypatch) -> None:
    rel = page.relative_to(DOCS).as_posix()
    for module in NEEDS.get(rel, ()):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{rel} needs {module} (pip install -c constraints.txt -e '.[train]')")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs_tutorial__"}
    for name, code in tutorial_blocks(page.read_text()):
        exec(compile(code, f"{rel}:{name}", "exec"), namespace)  # noqa: S102 - our own docs
