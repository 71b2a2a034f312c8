"""The 500 Rum docstring is the spec: its tables must match the layout and the config."""

from __future__ import annotations

import dataclasses

from rummy_env import five_hundred_rum_v1
from rummy_env.encodings.five_hundred_rum import Layout
from rummy_env.rules.five_hundred_rum.config import FiveHundredRumConfig
from rummy_env.testing.spec import spec_sections, spec_table

DOC = five_hundred_rum_v1.__doc__


def _table(section: str) -> list[list[str]]:
    return spec_table(DOC, section)


def test_sections_in_pettingzoo_order():
    heads = spec_sections(DOC)
    assert heads == [
        "Arguments",
        "Observation",
        "Actions",
        "Rewards",
        "Episode end",
        "Infos",
        "Departures from the printed rules",
        "Version history",
    ]


def test_observation_table_matches_the_layout_for_several_sizes():
    rows = _table("Observation")
    for players, deck in ((2, 54), (4, 54), (8, 108), (3, 52)):
        lay = Layout(players, deck)
        assert [r[0] for r in rows] == [p.name for p in lay.pieces]
        env = {"P": players, "D": deck, "M": deck // 3}
        for r, p in zip(rows, lay.pieces, strict=True):
            size = eval(r[1], {}, env)  # sizes are written as formulas of P, D and M
            assert size == p.size, p.name


def test_action_table_matches_the_layout():
    rows = _table("Actions")
    lay = Layout(2, 54)
    assert [r[0] for r in rows] == [name for name, _, _ in lay.action_ranges()]
    assert "1766 for 2-4 players" in DOC and lay.num_actions == 1766


def test_arguments_table_matches_config_fields_and_defaults():
    rows = _table("Arguments")
    fields = {f.name: f.default for f in dataclasses.fields(FiveHundredRumConfig)}
    assert [r[0] for r in rows] == list(fields)
    for name, default, _ in rows:
        assert default == str(fields[name]), name
