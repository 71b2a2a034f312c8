"""The README is a front page that works: short, its examples run, its links resolve.

README.md stays within 200 lines and keeps the two commands CI and users run; every Python
block of README.md and of the pages under docs/ runs (in order, one namespace per file), and
every relative link of those files points to an existing file (and, for a Markdown target with
``#anchor``, to an existing heading).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

INSTALL_AND_RUN = (
    "pip install -c constraints.txt -e . && "
    "rummy-env arena --game all --deals 2000 --workers 2 --seed 0"
)
TEST_COMMAND = (
    'python -m pip install -q -c constraints.txt -e ".[test,train,docs,rllib,tianshou]" '
    "&& python -m pytest"
)

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def code_blocks(text: str, lang: str) -> list[str]:
    """The fenced blocks of ``text`` in language ``lang``, in order."""
    return [m.group(2) for m in FENCE.finditer(text) if m.group(1) == lang]


def prose(text: str) -> str:
    """``text`` without fenced blocks and inline code (links there are not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = INLINE_CODE.sub(lambda m: m.group(0).strip("`"), heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file's headings (repeats get ``-1``, ``-2``, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def test_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines (at most 200)"


def test_readme_keeps_the_two_commands():
    """CI (.ci/run) and users run these exact lines: the setup + main job, and the tests."""
    bash = code_blocks(README.read_text(encoding="utf-8"), "bash")
    lines = [ln.strip() for block in bash for ln in block.splitlines()]
    assert INSTALL_AND_RUN in lines
    assert TEST_COMMAND in lines
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_relative_links_resolve(page):
    text = prose(page.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor})")
    assert not broken, f"{_rel(page)}: broken links: {broken}"


def test_readme_has_the_aec_and_vector_examples():
    blocks = code_blocks(README.read_text(encoding="utf-8"), "python")
    assert any("agent_iter()" in b for b in blocks)
    assert any("make_vec(" in b for b in blocks)


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if code_blocks(p.read_text(encoding="utf-8"), "python")],
    ids=_rel,
)
def test_python_examples_run(page, capsys):
    namespace: dict[str, object] = {"__name__": "__example__"}
    for k, block in enumerate(code_blocks(page.read_text(encoding="utf-8"), "python")):
        exec(compile(block, f"{_rel(page)} python block {k}", "exec"), namespace)
