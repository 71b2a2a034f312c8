"""Reading the docstring-as-spec of an env: its sections and its markdown tables."""

from __future__ import annotations

import re


def spec_sections(doc: str) -> list[str]:
    """The ``## `` section titles of a docstring, in order."""
    return re.findall(r"^## (.+)$", doc, re.MULTILINE)


def spec_table(doc: str, section: str, index: int = 0) -> list[list[str]]:
    """The body rows (cells stripped) of markdown table ``index`` (0: the first) in a
    ``## section``.
    """
    body = doc.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    tables: list[list[str]] = [[]]
    for ln in body.splitlines():
        if ln.startswith("|"):
            tables[-1].append(ln)
        elif tables[-1]:
            tables.append([])
    tables = [t for t in tables if t]
    rows = [ln for ln in tables[index] if not set(ln) <= set("|- ")]
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows[1:]]
