"""The Rummy 51 docstring is the spec: its tables must match the layout and the config."""

from __future__ import annotations

import dataclasses

from rummy_env import rummy51_v1
from rummy_env.encodings.rummy51 import Layout
from rummy_env.rules.rummy51.config import Rummy51Config
from rummy_env.testing.spec import spec_sections, spec_table

DOC = rummy51_v1.__doc__


def test_sections_in_pettingzoo_order():
    assert spec_sections(DOC) == [
        "Arguments",
        "Observation",
        "Actions",
        "Rewards",
        "Episode end",
        "Infos",
        "Departures from the printed rules",
        "Version history",
    ]


def test_observation_table_matches_the_layout_for_every_player_count():
    rows = spec_table(DOC, "Observation")
    for players in range(2, 7):
        lay = Layout(players)
        assert [r[0] for r in rows] == [p.name for p in lay.pieces]
        env = {"P": players, "M": lay.max_melds}
        for r, p in zip(rows, lay.pieces, strict=True):
            assert eval(r[1], {}, env) == p.size, p.name  # sizes are formulas of P and M


def test_action_table_matches_the_layout():
    rows = spec_table(DOC, "Actions")
    lay = Layout(2)
    assert [r[0] for r in rows] == [name for name, _, _ in lay.action_ranges()]
    assert f"Discrete({lay.num_actions})" in DOC and lay.max_melds == 36
    assert rows[2][1] == f"{lay.meld_base} .. {lay.layoff_base - 1}"


def test_arguments_table_matches_config_fields_and_defaults():
    rows = spec_table(DOC, "Arguments")
    fields = {f.name: f.default for f in dataclasses.fields(Rummy51Config)}
    assert [r[0] for r in rows] == list(fields)
    for name, default, _ in rows:
        assert default == str(fields[name]), name
