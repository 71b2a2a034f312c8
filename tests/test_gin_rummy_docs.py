"""The env docstring is the spec: its tables must match the constants and the config."""

from __future__ import annotations

import dataclasses

from rummy_env import gin_rummy_v0
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.testing.spec import spec_sections, spec_table

DOC = gin_rummy_v0.__doc__


def _table(section: str) -> list[list[str]]:
    return spec_table(DOC, section)


def test_docstring_sections_in_pettingzoo_order():
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


def test_observation_table_matches_pieces():
    rows = _table("Observation")
    pieces = E.observation_pieces(auto_meld=False)
    assert [r[0] for r in rows] == [p.name for p in pieces]
    for r, p in zip(rows, pieces, strict=True):
        assert (int(r[1]), int(r[2])) == (p.offset, p.size), p.name
    assert f"({E.observation_size(True)},)" in DOC and f"({E.observation_size(False)},)" in DOC


def test_action_table_matches_constants():
    rows = _table("Actions")
    assert [r[0] for r in rows] == [name for name, *_ in E.ACTION_RANGES]
    for r, (name, first, count, _manual) in zip(rows, E.ACTION_RANGES, strict=True):
        ids = r[1]
        want = str(first) if count == 1 else f"{first}..{first + count - 1}"
        assert ids == want, name
    assert f"Discrete({E.NUM_ACTIONS_AUTO})" in DOC and f"Discrete({E.NUM_ACTIONS_MANUAL})" in DOC


def test_arguments_table_matches_config_fields_and_defaults():
    rows = _table("Arguments")
    fields = {f.name: f.default for f in dataclasses.fields(GinRummyConfig)}
    assert [r[0] for r in rows] == list(fields)
    for name, default, _ in rows:
        assert default == str(fields[name]), name


def test_three_and_four_player_observation_tables_match_pieces():
    for index, players in ((1, 3), (2, 4)):
        rows = spec_table(DOC, "Observation", index)
        two = len(E.observation_pieces(True))
        extra = E.observation_pieces(True, players)[two:]
        manual = E.observation_pieces(False, players)[two + 1 :]
        names = [p.name for p in manual]
        assert [r[0] for r in rows] == names, players
        for r in rows:
            auto = {p.name: p for p in extra}.get(r[0])
            man = {p.name: p for p in manual}[r[0]]
            if auto is not None:
                assert (int(r[1]), int(r[2])) == (auto.offset, auto.size), r[0]
            else:  # manual melds only: the offset is given without the melds piece
                assert (int(r[1]) + 312, int(r[2])) == (man.offset, man.size), r[0]
        for auto_meld in (True, False):
            assert f"({E.observation_size(auto_meld, players)},)" in DOC
