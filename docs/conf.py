"""Sphinx configuration of the rummy_env documentation (furo theme, MyST Markdown pages).

Build: ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (the ``docs`` extra).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# The work tree first: autodoc documents this checkout, not whatever copy is installed
# (``rummy_agents`` is the folder ``agents/``; a checkout has the symlink ``rummy_agents``,
# see .gitignore, and an editable install maps the name otherwise).
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

project = "rummy_env"
author = "the rummy_env authors"
copyright = "2026, the rummy_env authors"  # noqa: A001 - Sphinx's name
try:
    import rummy_env

    release = rummy_env.__version__
except ImportError:  # pragma: no cover - the build needs the package; say so clearly
    raise SystemExit(
        "the docs build imports rummy_env: pip install -c constraints.txt -e '.[docs]'"
    ) from None
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "envspec",  # docs/_ext/envspec.py: an env module's docstring as a page section
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

# -- MyST --------------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # [text](page.md#a-heading) links, as on GitHub

# -- autodoc / napoleon: the Google-style docstrings of the package --------------------------
autodoc_default_options = {"show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
# the package is installed for the build; only optional heavy peers are mocked
autodoc_mock_imports = ["pyspiel", "rlcard"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

# The env modules' docstrings are Markdown (the specification): the game pages show them
# (docs/_ext/envspec.py); autodoc, which reads reStructuredText, shows a pointer instead.
ENV_SPEC_PAGES = {
    "rummy_env.envs.gin_rummy": "games/gin_rummy",
    "rummy_env.envs.five_hundred_rum": "games/five_hundred_rum",
    "rummy_env.envs.rummy51": "games/rummy51",
}


def _env_module_docstring(app, what, name, obj, options, lines):  # noqa: ANN001
    if what == "module" and name in ENV_SPEC_PAGES:
        lines[:] = [
            f"The specification (arguments, observation, actions, rewards, infos) is the "
            f"module docstring, shown on :doc:`/{ENV_SPEC_PAGES[name]}`.",
        ]


def setup(app):  # noqa: ANN001, ANN201
    """Connect the docstring hook."""
    app.connect("autodoc-process-docstring", _env_module_docstring)


# -- HTML ------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"rummy_env {release}"
html_static_path: list[str] = []
nitpicky = False
