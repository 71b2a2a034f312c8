"""The browser app and the terminal game are split by job (issue 55 part 6): every module says
its one job in a docstring, and the names the command line, the docs and the tests import stay
where they were (``rummy_agents.web.app``, ``rummy_agents.terminal``), the very same objects.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

pytest.importorskip("starlette")
pytest.importorskip("rich")

WEB = ["app", "catalog", "deadline", "errors", "games", "guard", "limits", "memory", "replays",
       "seat", "sessions"]  # fmt: skip
TERMINAL = ["terminal", "terminal_game", "terminal_input", "terminal_paint", "terminal_setup",
            "terminal_table"]  # fmt: skip
MODULES = [f"rummy_agents.web.{m}" for m in WEB] + [f"rummy_agents.{m}" for m in TERMINAL]


@pytest.mark.parametrize("name", MODULES)
def test_every_module_says_its_job(name):
    module = importlib.import_module(name)
    doc = inspect.getdoc(module)
    assert doc and len(doc.split()) >= 10, name


@pytest.mark.parametrize("name", ["rummy_agents.web.app", "rummy_agents.terminal"])
def test_the_facades_re_export_the_objects_themselves(name):
    facade = importlib.import_module(name)
    for attr in facade.__all__:
        value = getattr(facade, attr)
        home = getattr(value, "__module__", None)
        if home is None or not home.startswith("rummy_agents") or home == name:
            continue
        # a class or function re-exported from the module that defines it: the same object
        assert getattr(importlib.import_module(home), value.__name__) is value, (name, attr)


def test_the_names_the_tests_patch_are_looked_up_where_they_are_patched():
    from rummy_agents.web import app, games, replays

    # the route reads parse_record from app, new_game reads probe_agent from games
    assert "parse_record" in app.create_app.__code__.co_names or any(
        "parse_record" in getattr(c, "co_names", ())
        for c in app.create_app.__code__.co_consts
        if inspect.iscode(c)
    )
    assert "probe_agent" in games.new_game.__code__.co_names
    assert app.parse_record is replays.parse_record and app.new_game is games.new_game
    assert app.probe_agent is games.probe_agent


def test_the_terminal_hint_is_the_move_words():
    import rummy_agents.terminal_game as tg

    # one implementation of move descriptions: the terminal reads them, it decodes no action
    assert "describe_moves" in inspect.getsource(tg.TerminalGame._hint)
    assert "describe_moves" in inspect.getsource(tg.TerminalGame.show_moves)
