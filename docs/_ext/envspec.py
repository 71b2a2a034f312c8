"""Sphinx extension: put an env module's docstring (the game's specification) into a page.

Each env module's docstring (``rummy_env/envs/gin_rummy.py`` ...) is the single source of the
observation, action and reward specification, written in Markdown. A MyST page pulls it in
with one comment line (a MyST comment, so the page still reads fine without the extension)::

    % envspec: rummy_env.envs.gin_rummy heading-offset=1

Before the page is parsed the line is replaced by the module's ``__doc__``, with every Markdown
heading moved ``heading-offset`` levels down (so the docstring's ``## Arguments`` sits under the
page's own ``##`` heading). The page is rebuilt whenever the module's source changes.

Importing the module runs no game kernel: numba compiles a kernel only when it is first called.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

MARKER = re.compile(r"^% envspec: (?P<module>[\w.]+)(?: heading-offset=(?P<offset>\d+))?\s*$", re.M)
HEADING = re.compile(r"^(#{1,6}) ", re.M)


def docstring_markdown(module_name: str, offset: int = 0) -> tuple[str, str]:
    """The module's docstring with its headings moved ``offset`` levels down, and the path of
    its source file.

    Raises:
        ValueError: when the module has no docstring.
    """
    module = importlib.import_module(module_name)
    doc = inspect.getdoc(module)
    if not doc:
        raise ValueError(f"envspec: module {module_name} has no docstring")
    if offset:
        doc = HEADING.sub(lambda m: "#" * (len(m.group(1)) + offset) + " ", doc)
    return doc, inspect.getsourcefile(module) or ""


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    text = source[0]
    if "% envspec:" not in text:
        return

    def _expand(m: re.Match) -> str:
        doc, path = docstring_markdown(m.group("module"), int(m.group("offset") or 0))
        if path:
            app.env.note_dependency(path)
        return doc

    source[0] = MARKER.sub(_expand, text)


def setup(app: Any) -> dict[str, Any]:
    """Register the ``source-read`` hook."""
    app.connect("source-read", _source_read)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
