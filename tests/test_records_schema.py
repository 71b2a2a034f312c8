"""A game record's schema is checked in one place before anything uses it: a malformed record
(a field of another JSON type, out of range, a huge number, ``NaN``/``Infinity``, deep nesting,
a huge string, a missing or an unknown field) raises ``ValueError`` naming the line and the
field (``ArgumentTypeError``, a ``TypeError`` and a ``ValueError``, for a wrong type), never
anything else, whether read from a file, from lines, or passed to ``replay`` as a
``GameRecord``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_env.core.cards import card_to_str
from rummy_env.core.validate import ArgumentTypeError
from rummy_env.game_records import (
    HEADER_KEYS,
    MAX_TEXT,
    STEP_KEYS,
    GameRecord,
    GameRecorder,
    RecordGame,
    check_record,
    read_record,
    replay,
)

RAW = "@@raw@@"  # a string value json.dumps writes as "@@raw@@", replaced by raw JSON text


def _play(env: Any, rec: GameRecorder, rng: np.random.Generator, limit: int | None) -> None:
    """Random legal moves, recorded, until the game ends or ``limit`` decisions."""
    n = 0
    while not all(env.terminations[a] or env.truncations[a] for a in env.possible_agents):
        if limit is not None and n >= limit:
            return
        a = int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
        rec.add(env.agent_selection, a)
        env.step(a)
        rec.rewards(env.rewards)
        n += 1


def _make(game: str, options: dict, reset: dict | None, limit: int | None) -> list[dict]:
    env = rummy_env.ENV_MODULES[game].raw_env(**options)
    rec = GameRecorder(env, labels={"player_0": "rnd", "player_1": "me"})
    env.reset(seed=rec.start(11, reset), options=reset)
    rec.dealt()
    _play(env, rec, np.random.default_rng(3), limit)
    record = rec.finish(stopped=limit is not None)
    return [json.loads(x) for x in record.lines()]


@pytest.fixture(scope="module")
def records() -> dict[str, list[dict]]:
    """Valid records (as parsed lines) of several shapes: a stacked deck and dealer, a list of
    two decks and a pair of dealers (4-player Gin), a finished game.
    """
    deck = np.random.default_rng(1).permutation(52)
    decks = [np.random.default_rng(2).permutation(52), np.random.default_rng(3).permutation(52)]
    return {
        "gin2_stacked": _make("gin_rummy", {}, {"deck": deck, "dealer": 1}, 6),
        "gin4_decks": _make("gin_rummy", {"num_players": 4}, {"deck": decks, "dealer": [1, 2]}, 6),
        "rummy51_full": _make("rummy51", {}, None, None),
    }


def _text(lines: list[Any], raw: str | None = None) -> list[str]:
    """The record's lines as JSON text (``NaN``/``Infinity`` written as such), with the value
    ``RAW`` replaced by ``raw``.
    """
    out = [json.dumps(x, allow_nan=True) for x in lines]
    if raw is not None:
        out = [t.replace(json.dumps(RAW), raw) for t in out]
    return out


def _refused(lines: list[str], *words: str, wrong_type: bool | None = None) -> str:
    """The message of the error reading or replaying ``lines`` raises; it must hold ``words``."""
    with pytest.raises(ValueError) as info:
        replay(read_record(lines))
    msg = str(info.value)
    for w in words:
        assert w in msg, msg
    if wrong_type is not None:
        assert isinstance(info.value, TypeError) == wrong_type, (type(info.value), msg)
    return msg


# -- the review's cases and their classes -----------------------------------------------------


def _set(path: tuple, value: Any):
    def edit(ls: list[dict]) -> None:
        node = ls
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value

    return edit


CASES = [
    # (path, value, words the message must hold, a wrong type?)
    ((0, "game"), ["gin_rummy"], ["line 1", "game must be one of", "['gin_rummy']"], True),
    ((0, "game"), {"a": 1}, ["line 1", "game must be one of"], True),
    ((0, "game"), "poker", ["line 1", "unknown game 'poker'"], None),
    ((0, "reset_options", "deck"), {"a": 1}, ["line 1", "reset_options.deck must be"], True),
    ((0, "reset_options", "deck"), [1e30] * 52, ["line 1", "reset_options.deck[0]", "1e+30"], True),
    ((0, "reset_options", "deck"), [2**70] * 52, ["line 1", "reset_options.deck[0]"], False),
    ((0, "reset_options", "deck"), [], ["line 1", "reset_options.deck must be"], False),
    ((0, "reset_options", "deck"), "As 2s", ["line 1", "reset_options.deck must be"], True),
    ((0, "reset_options", "deck"), [[[1]]], ["line 1", "reset_options.deck[0][0]"], True),
    ((0, "reset_options", "deck"), list(range(50)) + [0, 1], ["reset_options", "not a full deck"],
     False),
    ((0, "reset_options", "dealer"), 7, ["line 1", "reset_options.dealer must be"], False),
    ((0, "reset_options", "dealer"), "0", ["line 1", "reset_options.dealer must be"], True),
    ((0, "reset_options", "shuffle"), 1, ["line 1", "unknown key", "shuffle"], None),
    ((0, "reset_options"), [1], ["line 1", "reset_options must be"], True),
    ((-1, "result", "returns", "player_0"), None, ["result.returns.player_0", "finite"], True),
    ((-1, "result", "returns", "player_0"), [1], ["result.returns.player_0"], True),
    ((-1, "result", "returns", "player_0"), "3", ["result.returns.player_0"], True),
    ((-1, "result", "returns", "player_0"), True, ["result.returns.player_0"], True),
    ((-1, "result", "returns", "player_0"), 10**400, ["result.returns.player_0"], False),
    ((-1, "result", "returns", "player_0"), math.inf, ["line", "not JSON", "Infinity"], None),
    ((-1, "result", "returns", "player_0"), math.nan, ["line", "not JSON", "NaN"], None),
    ((-1, "result", "returns", "nobody"), 1.0, ["result.returns", "'nobody'"], None),
    ((-1, "result", "outcome"), 5, ["result.outcome must be"], True),
    ((-1, "result", "hands_played"), -1, ["result.hands_played must be"], False),
    ((-1, "result", "steps"), 10**6, ["result.steps must be"], False),
    ((-1, "result", "terminated"), "yes", ["result.terminated must be true or false"], True),
    ((0, "options", "knock_limit"), "abc", ["line 1", "options", "knock_limit", "'abc'"], True),
    ((0, "options", "knock_limit"), 1e30, ["line 1", "options", "knock_limit"], True),
    ((0, "options", "knock_limit"), [3], ["line 1", "options.knock_limit"], True),
    ((0, "options", "knock_limit"), 10**30, ["line 1", "knock_limit"], False),
    ((0, "options", "shutout"), "x" * 5000, ["line 1", "options.shutout must be text"], False),
    ((0, "options", "no_such_rule"), 1, ["line 1", "options", "no_such_rule"], None),
    ((0, "options", "num_players"), 3, ["line 1", "agents must be"], False),
    ((0, "options"), "standard", ["line 1", "options must be"], True),
    ((0, "seed"), "12", ["line 1", "seed must be an integer"], True),
    ((0, "seed"), 2**64, ["line 1", "seed must be an integer"], False),
    ((0, "seed"), 1.0, ["line 1", "seed must be an integer"], True),
    ((0, "agents"), "player_0", ["line 1", "agents must be"], True),
    ((0, "agents"), ["player_1", "player_0"], ["line 1", "agents must be"], False),
    ((0, "labels"), ["x"], ["line 1", "labels must be"], True),
    ((0, "labels", "player_0"), 5, ["line 1", "labels.player_0 must be"], True),
    ((0, "labels", "player_0"), "x" * (MAX_TEXT + 1), ["line 1", "labels.player_0"], False),
    ((0, "labels", "player_0"), "\x1b[31mred", ["line 1", "labels.player_0"], False),
    ((0, "labels", "player_0"), "\ud800", ["line 1", "labels.player_0", "surrogate"], False),
    ((0, "labels", "player_9"), "x", ["line 1", "labels", "'player_9'"], None),
    ((0, "dealer"), 9, ["line 1", "dealer must be"], False),
    ((0, "dealer"), None, ["line 1", "dealer must be"], True),
    ((0, "env"), 0, ["line 1", "env must be"], True),
    ((0, "rummy_env"), {}, ["line 1", "rummy_env must be"], True),
    ((0, "version"), "1", ["line 1", "record version '1'"], None),
    ((0, "format"), ["rummy_env.game_record"], ["line 1", "not a game record"], None),
    ((1, "action"), "abc", ["line 2", "step 0", "action must be an integer id", "'abc'"], True),
    ((1, "action"), 2**40, ["line 2", "step 0", "action must be an integer id"], False),
    ((1, "action"), -1, ["line 2", "step 0", "action must be"], False),
    ((1, "action"), 5000, ["step 0", "is not an action of gin_rummy_v0"], None),
    ((1, "agent"), ["player_0"], ["line 2", "step 0", "agent ['player_0'] is not one of"], None),
    ((1, "name"), 3, ["line 2", "step 0", "name must be"], True),
    ((1, "step"), "0", ["line 2", "expected decision 0"], None),
    ((1, "step"), True, ["line 2", "expected decision 0"], None),
    ((1, "extra"), 1, ["line 2", "unknown key", "extra"], None),
]  # fmt: skip


@pytest.mark.parametrize(("path", "value", "words", "wrong_type"), CASES, ids=repr)
def test_a_bad_field_is_refused_naming_line_and_field(records, path, value, words, wrong_type):
    lines = copy.deepcopy(records["gin2_stacked"])
    _set(path, value)(lines)
    _refused(_text(lines), *words, wrong_type=wrong_type)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("NaN", ["not JSON", "NaN"]),
        ("-Infinity", ["not JSON", "-Infinity"]),
        ("1e400", ["not JSON", "too large"]),
        ("[" * 100_000 + "]" * 100_000, ["not JSON", "nested"]),
        ("1" * 5000, []),  # over Python's 4300 digits: not JSON; else out of range
    ],
    ids=["nan", "-inf", "1e400", "deep", "5000 digits"],
)
@pytest.mark.parametrize("path", [(0, "seed"), (0, "labels", "player_0"), (1, "action")])
def test_json_a_float_cannot_hold_is_refused(records, raw, words, path):
    lines = copy.deepcopy(records["gin2_stacked"])
    _set(path, RAW)(lines)
    msg = _refused(_text(lines, raw), *words)
    assert f"line {1 if path[0] == 0 else 2}" in msg


def test_missing_and_duplicate_fields_are_refused(records):
    for key in ("format", "version", "game", "options", "seed", "agents"):
        lines = copy.deepcopy(records["gin2_stacked"])
        del lines[0][key]
        _refused(_text(lines), "line 1", key)
    for key in ("step", "agent", "action"):
        lines = copy.deepcopy(records["gin2_stacked"])
        del lines[1][key]
        _refused(_text(lines), "line 2", key)
    lines = copy.deepcopy(records["gin2_stacked"])
    del lines[-1]["result"]["returns"]
    _refused(_text(lines), "the result needs a returns object")
    text = _text(records["gin2_stacked"])
    text[0] = text[0][:-1] + ', "seed": 5}'
    _refused(text, "line 1", "'seed' appears twice")


def test_optional_fields_may_be_left_out(records):
    lines = copy.deepcopy(records["rummy51_full"])
    for key in ("env", "rummy_env", "reset_options", "labels", "dealer"):
        lines[0].pop(key, None)
    for step in lines[1:-1]:
        del step["name"]
    lines[-1]["result"] = {"returns": lines[-1]["result"]["returns"]}
    assert replay(read_record(_text(lines))).matches


@pytest.mark.parametrize("name", ["gin2_stacked", "gin4_decks", "rummy51_full"])
def test_the_valid_records_replay(records, name):
    rec = read_record(_text(records[name]))
    assert replay(rec).matches
    assert replay(check_record(rec)).matches


def test_a_four_player_record_keeps_its_decks_and_dealers(records):
    rec = read_record(_text(records["gin4_decks"]))
    assert rec.reset_options["dealer"] == [1, 2]
    assert [len(d) for d in rec.reset_options["deck"]] == [52, 52]
    lines = copy.deepcopy(records["gin4_decks"])
    lines[0]["reset_options"]["dealer"] = [1, 1]
    _refused(_text(lines), "reset_options", "options['dealer'][1]")
    lines[0]["reset_options"]["deck"] = [list(range(52))] * 5
    _refused(_text(lines), "line 1", "reset_options.deck must be", wrong_type=False)


def test_a_json_line_and_a_line_break_inside_a_string(records, tmp_path):
    """JSON Lines ends a line at "\\n" only: U+2028 or U+0085 in a label stays in the label."""
    lines = copy.deepcopy(records["gin2_stacked"])
    lines[0]["labels"]["player_1"] = "a\u2028b\u0085c"
    text = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines)
    path = tmp_path / "g.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="labels.player_1"):  # U+0085 is a control character
        read_record(path)
    lines[0]["labels"]["player_1"] = "a\u2028b"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), "utf-8")
    assert read_record(path).labels["player_1"] == "a\u2028b"


# -- fuzzing: any one change to a valid record ---------------------------------------------------

SPECIAL = [
    2**63, -(2**63) - 1, 10**100, -(10**300), 1e308, -1e308, 5e-324, 0.5, -0.0, "", " ",
    "player_0", "gin_rummy", "\u2028", "<!--", "\x00", [], {}, [[[[[[[[[[1]]]]]]]]]],
]  # fmt: skip
RAWS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e999", "[" * 5000 + "]" * 5000, "9" * 4400]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(SPECIAL),
    st.integers(MAX_TEXT, 100_000).map(lambda n: "x" * n),  # huge strings
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=10,
)  # fmt: skip


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a line's JSON value (a deck's cards: the first three)."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for k, v in enumerate(node[:3]):
            out += _paths(v, (*prefix, k))
    return out


KNOWN_KEYS = {*HEADER_KEYS, *STEP_KEYS, "result"}
FIELD_WORDS = ("not a game record", "not JSON", "expected decision", "unknown key", "lacks",
               "the result needs a returns object", "record version")  # fmt: skip


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzz_one_change_is_replayed_or_refused_naming_the_field(records, data):
    """Read and replay either succeed or raise ``ValueError``/``TypeError``; a record the
    reader refuses is refused naming the changed line and the field (or what the line lacks).
    """
    name = data.draw(st.sampled_from(sorted(records)), label="record")
    lines = copy.deepcopy(records[name])
    k = data.draw(st.sampled_from([0, 1, 2, len(lines) - 1]), label="line")
    op = data.draw(st.sampled_from(["set", "set", "set", "raw", "delete", "extra", "line"]))
    raw = None
    paths = _paths(lines[k])
    path: tuple = ()
    if op == "line":
        lines[k] = data.draw(json_values, label="line value")
    elif op == "extra":
        parents = [()] + [p for p in paths if isinstance(_get(lines[k], p), dict)]
        path = data.draw(st.sampled_from(parents), label="object")
        key = data.draw(st.text(min_size=1, max_size=8), label="key")
        assume(key not in _get(lines[k], path))
        _get(lines[k], path)[key] = data.draw(json_values, label="value")
        path = (*path, key)
    else:
        path = data.draw(st.sampled_from(paths), label="path")
        parent = _get(lines[k], path[:-1])
        if op == "delete":
            del parent[path[-1]]
        elif op == "raw":
            parent[path[-1]] = RAW
            raw = data.draw(st.sampled_from(RAWS), label="raw")
        else:
            parent[path[-1]] = data.draw(json_values, label="value")
    event(f"{op} {path[0] if path and path[0] in KNOWN_KEYS else '(other)'}")
    text = _text(lines, raw)
    try:
        rec = read_record(text)
    except (TypeError, ValueError) as e:
        msg = str(e)
        assert len(msg) < 1000, msg  # short: a huge value is cut in the message
        event("refused by read_record")
        if op == "line":  # the line may read as another kind of line: a later one fails
            assert "line " in msg, msg
            return
        assert f"line {k + 1}:" in msg, msg
        words = [str(p) for p in path if isinstance(p, str)]
        assert any(w in msg for w in words + list(FIELD_WORDS)), (path, msg)
        return
    try:
        replay(rec)
        event("replays")
    except (TypeError, ValueError) as e:
        assert str(e), "an empty message"
        event("refused by replay")


def _get(node: Any, path: tuple) -> Any:
    for p in path:
        node = node[p]
    return node


# -- records built in Python -------------------------------------------------------------------

python_values = st.one_of(
    json_values,
    st.sampled_from([set(), (1, 2), object(), b"x", np.int64(3), np.float32(1.5), math.nan,
                     np.array([1, 2]), 1j, Path("x")]),
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from([f.name for f in dataclasses.fields(GameRecord)]), data=st.data())
def test_fuzz_a_game_record_object_is_checked_as_a_file_is(records, field, data):
    rec = read_record(_text(records["gin2_stacked"]))
    value = data.draw(python_values, label="value")
    if field == "steps" and data.draw(st.booleans(), label="one step"):
        value = [*rec.steps[:1], value]
    setattr(rec, field, value)
    try:
        replay(rec)
    except (TypeError, ValueError) as e:
        assert "record" in str(e) or "step" in str(e), str(e)


def test_check_record_names_a_malformed_step_and_refuses_other_objects(records):
    rec = read_record(_text(records["gin2_stacked"]))
    rec.steps[1] = ("player_0", 1)
    with pytest.raises(ArgumentTypeError, match=r"record.steps\[1\] must be \(agent, action, name"):
        check_record(rec)
    with pytest.raises(TypeError, match="record must be a GameRecord, got dict"):
        check_record({})
    with pytest.raises(TypeError, match="source must be a path or a list of lines, got int"):
        read_record(5)
    with pytest.raises(TypeError, match=r"source\[1\] must be a line of text"):
        read_record(["{}", 5])
    with pytest.raises(TypeError, match="on_step must be a function or None, got 5"):
        replay(read_record(_text(records["gin2_stacked"])), on_step=5)


# -- the recorder writes only what the reader reads --------------------------------------------


def test_the_recorder_refuses_labels_a_record_cannot_hold():
    env = rummy_env.gin_rummy_v0.raw_env()
    with pytest.raises(ValueError, match="labels: 'me' is not one of the agents"):
        GameRecorder(env, labels={"me": "x"})
    with pytest.raises(ValueError, match=r"labels\['player_0'\] must be text"):
        GameRecorder(env, labels={"player_0": "a\nb"})
    with pytest.raises(ValueError, match=r"labels\['player_0'\] must be valid Unicode"):
        GameRecorder(env, labels={"player_0": "\udc80"})
    with pytest.raises(TypeError, match="labels must be a mapping"):
        GameRecorder(env, labels=["player_0"])


def test_the_recorder_keeps_card_ids_and_only_the_options_the_env_uses(tmp_path):
    env = RecordGame(rummy_env.gin_rummy_v0.env(), tmp_path)
    deck = np.random.default_rng(4).permutation(52)
    text = " ".join(card_to_str(int(c)) for c in deck)
    with pytest.warns(UserWarning, match="ignoring unknown reset option"):
        env.reset(seed=3, options={"deck": text, "dealer": np.int64(0), "speed": 2})
    env.close()
    rec = read_record(env.paths[0])
    assert rec.reset_options == {"deck": deck.tolist(), "dealer": 0}
    assert replay(rec).matches
