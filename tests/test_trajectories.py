"""Recorded trajectories replay identically: restructuring changed no behaviour.

The digests in ``tests/data/trajectories.json`` were recorded before the structure change of
issue 26 (see ``tests/trajectories.py``); every case is played again and compared step by step.
"""

from __future__ import annotations

import json

import pytest
import trajectories as T

RECORDED = json.loads(T.DATA.read_text())


def _first_difference(got: list[str], want: list[str]) -> str:
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return f"step {i}: got {g}, recorded {w}"
    return f"length {len(got)}, recorded {len(want)}"


@pytest.mark.parametrize("name", sorted(T.AEC_CASES))
def test_aec_trajectories_replay(name):
    if name.endswith("_ppo"):
        pytest.importorskip("torch", reason="the published PPO agents need the train extra")
    game, options, specs, seeds = T.AEC_CASES[name]
    assert sorted(RECORDED["aec"][name]) == sorted(str(s) for s in seeds)
    for s in seeds:
        got = T.play_aec(game, options, specs, s)
        want = RECORDED["aec"][name][str(s)]
        assert got == want, f"{name} seed {s}: {_first_difference(got, want)}"


@pytest.mark.parametrize("name", sorted(T.VECTOR_CASES))
def test_vector_trajectories_replay(name):
    got = T.play_vector(*T.VECTOR_CASES[name])
    want = RECORDED["vector"][name]
    assert got == want, f"{name}: {_first_difference(got, want)}"


@pytest.mark.parametrize("name", sorted(T.GYM_CASES))
def test_gymnasium_trajectories_replay(name):
    got = T.play_gym(*T.GYM_CASES[name])
    want = RECORDED["gym"][name]
    assert got == want, f"{name}: {_first_difference(got, want)}"


def test_feature_sets_replay():
    got = T.feature_digests()
    want = RECORDED["features"]
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key] == want[key], f"{key}: {_first_difference(got[key], want[key])}"


def test_recording_is_substantial():
    assert sum(len(v) for c in RECORDED["aec"].values() for v in c.values()) > 1000
    assert all(len(v) > 100 for v in RECORDED["vector"].values())
    assert all(len(v) > 100 for v in RECORDED["gym"].values())
