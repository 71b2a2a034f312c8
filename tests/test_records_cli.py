"""``rummy-env replay``: every failure, of the record file, of its content or of the ``--html``
page's file, is one line ``rummy-env: error: ...`` and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import os
import pathlib
from pathlib import Path

import numpy as np
import pytest
from error_helpers import one_error_line
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_agents.cli import main
from rummy_env.game_records import RecordGame


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short valid record (a game stopped after 4 decisions)."""
    folder = tmp_path_factory.mktemp("rec")
    env = RecordGame(rummy_env.gin_rummy_v0.env(), folder, {"player_0": "me"})
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(4):
        obs = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    env.close()
    return env.paths[0]


def test_a_good_record_replays(record, tmp_path, capsys):
    assert main(["replay", "--quiet", str(record)]) == 0
    assert "4 decisions, unfinished" in capsys.readouterr().out
    out = tmp_path / "page.html"
    assert main(["replay", str(record), "--html", str(out)]) == 0
    assert "5 pictures" in capsys.readouterr().out and out.read_text().startswith("<!DOCTYPE")


def _denied(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """``Path.<method>`` fails as without permission (root reads any file: chmod can't)."""

    def fail(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(pathlib.Path, method, fail)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda d: d / "none.jsonl", ["none.jsonl", "cannot read the record", "No such file"]),
        (lambda d: d, ["cannot read the record", "Is a directory"]),
        (lambda d: d / ("x" * 5000 + ".jsonl"), ["cannot read the record", "too long", "..."]),
        (lambda d: f"{d}/a\x00b.jsonl", ["cannot read the record", "null"]),
        (lambda d: _bytes(d, b'{"format": "\xff\xfe"}\n'), ["not UTF-8 text"]),
        (lambda d: _bytes(d, b""), ["empty record"]),
        (lambda d: _bytes(d, b"\x00\x01"), ["line 1", "not JSON"]),
        (lambda d: _bytes(d, b'{"format": "rummy_env.game_record", "version": 1}'),
         ["line 1", "the header lacks game, options, seed, agents"]),
        (lambda d: _bytes(d, b'{"format": "rummy_env.game_record", "version": 1, "game": '
                             b'["gin_rummy"], "options": {}, "seed": 1, "agents": []}'),
         ["line 1", "game must be one of"]),
    ],
    ids=["missing", "a folder", "too long", "NUL", "not UTF-8", "empty", "binary", "lacks",
         "bad game"],
)  # fmt: skip
def test_a_record_that_cannot_be_read_is_one_error_line(tmp_path, capsys, make, words):
    path = make(tmp_path)
    assert main(["replay", str(path)]) == 2
    line = one_error_line(capsys)
    for w in words:
        assert w in line, line
    assert len(line) < 500, line


def test_a_record_without_permission_is_one_error_line(record, capsys, monkeypatch):
    _denied(monkeypatch, "read_text")
    assert main(["replay", str(record)]) == 2
    assert "cannot read the record: Permission denied" in one_error_line(capsys)


def _bytes(folder: Path, data: bytes) -> Path:
    path = folder / "r.jsonl"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("out", "words"),
    [
        (lambda d: d, ["--html:", "is a folder"]),
        (lambda d: d / "no" / "x.html", ["--html: folder", "does not exist"]),
        (lambda d: d / ("x" * 5000 + ".html"), ["--html: cannot write", "too long", "..."]),
        # a folder name over the system's limit: refused as too long or as no folder
        (lambda d: d / ("x" * 300) / "p.html", ["--html:", "x" * 40, "..."]),
        (lambda d: f"{d}/a\x00b.html", ["--html: cannot write", "null"]),
    ],
    ids=["a folder", "no folder", "too long", "too long folder", "NUL"],
)
def test_an_html_file_that_cannot_be_written_is_one_error_line(record, tmp_path, capsys, out,
                                                               words):  # fmt: skip
    target = out(tmp_path)
    before = sorted(os.listdir(tmp_path))
    assert main(["replay", str(record), "--html", str(target)]) == 2
    line = one_error_line(capsys)
    for w in words:
        assert w in line, line
    assert sorted(os.listdir(tmp_path)) == before  # nothing written
    assert len(line) < 500, line


def test_an_html_file_without_permission_is_one_error_line(record, tmp_path, capsys, monkeypatch):
    _denied(monkeypatch, "write_text")
    assert main(["replay", str(record), "--html", str(tmp_path / "p.html")]) == 2
    assert "--html: cannot write" in (line := one_error_line(capsys))
    assert "Permission denied" in line


def test_a_malformed_record_with_html_is_one_error_line(record, tmp_path, capsys):
    lines = [json.loads(x) for x in record.read_text().splitlines()]
    lines[0]["reset_options"] = {"deck": [1e30] * 52}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(x) for x in lines))
    out = tmp_path / "p.html"
    assert main(["replay", str(bad), "--html", str(out)]) == 2
    assert "reset_options.deck[0] must be an integer" in one_error_line(capsys)
    assert not out.exists()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.one_of(
        st.binary(max_size=200),
        st.lists(st.sampled_from([b"{", b"}", b"[", b"]", b'"', b":", b",", b"\n", b"1e999",
                                  b"NaN", b'"format"', b'"rummy_env.game_record"', b'"version"',
                                  b"1", b'"game"', b'"gin_rummy"', b"\xff", b"\\ud800"]),
                 max_size=40).map(b"".join),
    )
)  # fmt: skip
def test_fuzz_any_bytes_as_a_record_is_one_error_line(tmp_path, capsys, data):
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    assert main(["replay", "--quiet", str(path)]) == 2
    one_error_line(capsys)
