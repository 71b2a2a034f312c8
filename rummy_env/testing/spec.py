"""Reading the docstring-as-spec of an env: its sections and its markdown tables."""

from __future__ import annotations

import re

from rummy_env.core.validate import ArgumentTypeError, _show, check_int


def _check_doc(doc: object) -> str:
    if not isinstance(doc, str):
        raise ArgumentTypeError(f"doc must be a docstring (a str), got {_show(doc)}")
    return doc


def spec_sections(doc: str) -> list[str]:
    """The ``## `` section titles of a docstring, in order.

    Raises:
        TypeError: (``ArgumentTypeError``) if ``doc`` is not a ``str``.
    """
    return re.findall(r"^## (.+)$", _check_doc(doc), re.MULTILINE)


def spec_table(doc: str, section: str, index: int = 0) -> list[list[str]]:
    """The body rows (cells stripped) of markdown table ``index`` (0: the first) in a
    ``## section``.

    Raises:
        TypeError: (``ArgumentTypeError``) if ``doc`` or ``section`` is not a ``str`` or
            ``index`` not an integer.
        ValueError: if ``doc`` has no ``## section`` or the section fewer than ``index + 1``
            tables.
    """
    doc = _check_doc(doc)
    if not isinstance(section, str):
        raise ArgumentTypeError(f"section must be a section title (a str), got {_show(section)}")
    index = check_int("index", index, 0)
    if f"## {section}" not in doc:
        raise ValueError(
            f"section must be a '## ' section of doc, one of {spec_sections(doc)}, got {section!r}"
        )
    body = doc.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    tables: list[list[str]] = [[]]
    for ln in body.splitlines():
        if ln.startswith("|"):
            tables[-1].append(ln)
        elif tables[-1]:
            tables.append([])
    tables = [t for t in tables if t]
    if index >= len(tables):
        raise ValueError(
            f"index must be a table of section {section!r}, which has {len(tables)} "
            f"(0..{len(tables) - 1}), got {index}"
        )
    rows = [ln for ln in tables[index] if not set(ln) <= set("|- ")]
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows[1:]]
