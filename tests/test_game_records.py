"""Game records (``rummy_env.game_records``): written while playing, read back, replayed by the
env with every decision and the result checked; bad records are refused naming the line or step.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_agents.cli import main
from rummy_env.game_records import (
    FORMAT,
    GameRecorder,
    RecordGame,
    read_record,
    replay,
)

CONFIGS = [
    ("gin_rummy", {}),
    ("gin_rummy", {"num_players": 3}),
    ("gin_rummy", {"num_players": 4}),
    ("five_hundred_rum", {"num_players": 3}),
    ("rummy51", {}),
]


def _play_random(env, rng, max_steps=None):
    """Random legal moves until every agent is done (or ``max_steps`` decisions)."""
    n = 0
    for _ in env.agent_iter():
        obs, _r, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if max_steps is not None and n >= max_steps:
            return
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        n += 1


def _recorded(tmp_path, game, options, seed=None, reset_options=None, games=1):
    env = RecordGame(rummy_env.ENV_MODULES[game].env(**options), tmp_path, {"player_0": "rnd"})
    rng = np.random.default_rng(0)
    for _ in range(games):
        env.reset(seed=seed, options=reset_options)
        _play_random(env, rng)
    return env.paths


@pytest.mark.parametrize("game,options", CONFIGS, ids=lambda x: str(x))
def test_a_recorded_random_game_replays_to_its_result(tmp_path, game, options):
    paths = _recorded(tmp_path, game, options, games=2)
    assert len(paths) == 2
    for path in paths:
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        head = lines[0]
        assert head["format"] == FORMAT and head["version"] == 1
        assert head["game"] == game and head["env"].startswith(game)
        assert head["options"]["num_players"] == options.get("num_players", 2)
        assert head["labels"] == {"player_0": "rnd"}
        assert isinstance(head["seed"], int)  # reset(seed=None) still replays
        steps = lines[1:-1]
        assert [s["step"] for s in steps] == list(range(len(steps)))
        assert all(s["name"] and isinstance(s["action"], int) for s in steps)
        result = lines[-1]["result"]
        assert result["steps"] == len(steps) and result["terminated"]
        res = replay(path)
        assert res.matches and res.finished
        assert res.returns == pytest.approx(result["returns"])
        assert res.outcome == result["outcome"]


def test_a_stacked_deck_and_dealer_are_recorded_and_replayed(tmp_path):
    deck = np.random.default_rng(5).permutation(52)
    stacked = {"deck": deck, "dealer": 1}
    (path,) = _recorded(tmp_path, "gin_rummy", {}, seed=9, reset_options=stacked)
    rec = read_record(path)
    assert rec.reset_options == {"deck": deck.tolist(), "dealer": 1}
    assert rec.seed == 9 and rec.dealer == 1
    seen = {}

    def first(env, i, agent, action):
        if i == 0:
            seen["deck"] = env.state_record["deck"].tolist()

    assert replay(rec, on_step=first).matches
    assert seen["deck"] == deck.tolist()


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), game=st.sampled_from(sorted(rummy_env.ENV_MODULES)))
def test_any_seed_replays(tmp_path_factory, seed, game):
    folder = tmp_path_factory.mktemp("rec")
    env = rummy_env.ENV_MODULES[game].raw_env()
    rec = GameRecorder(env)
    env.reset(seed=rec.start(seed))
    rng = np.random.default_rng(seed % 1000)
    while not all(env.terminations[a] or env.truncations[a] for a in env.possible_agents):
        a = int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
        rec.add(env.agent_selection, a)
        env.step(a)
        rec.rewards(env.rewards)
    path = rec.finish().write(folder / "g.jsonl")
    assert replay(path).matches


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


@pytest.fixture
def gin_record(tmp_path):
    (path,) = _recorded(tmp_path / "src", "gin_rummy", {}, seed=4)
    return path


def _illegal(ls):
    ls[3]["action"] = 106 if ls[3]["action"] != 106 else 105
    ls[3]["name"] = ""


def _other_agent(ls):
    ls[1]["agent"] = "player_1" if ls[1]["agent"] == "player_0" else "player_0"


def _cut(ls):
    del ls[-2]
    ls[-1]["result"]["steps"] -= 1


@pytest.mark.parametrize(
    "edit,message",
    [
        (_illegal, r"step 2: player_\d's action 10[56] is illegal"),
        (_other_agent, "step 0: player_. is to act, the record has player_."),
        (lambda ls: ls[1].update(name="KNOCK[As]"), "step 0: action .* in the record"),
        (lambda ls: ls[0].update(env="gin_rummy_v9"), "played on gin_rummy_v9"),
        (_cut, "still running"),
    ],
    ids=["illegal", "wrong agent", "wrong name", "env version", "cut"],
)
def test_a_tampered_record_is_refused_on_replay_naming_the_step(
    gin_record, tmp_path, edit, message
):
    lines = _lines(gin_record)
    edit(lines)
    with pytest.raises(ValueError, match=message):
        replay(_write(tmp_path / "bad.jsonl", lines))


def test_another_result_is_refused(gin_record, tmp_path):
    lines = _lines(gin_record)
    lines[-1]["result"]["returns"]["player_0"] += 1
    with pytest.raises(ValueError, match="player_0's return is .* on replay"):
        replay(_write(tmp_path / "bad.jsonl", lines))
    assert not replay(_write(tmp_path / "ok.jsonl", lines), check_result=False).matches


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda ls: ls[0].update(format="x"), "line 1: not a game record"),
        (lambda ls: ls[0].update(version=2), "line 1: record version 2"),
        (lambda ls: ls[0].update(game="poker"), "line 1: unknown game 'poker'"),
        (lambda ls: ls[0].update(seed=-1), "line 1: seed must be an integer"),
        (lambda ls: ls[0].update(options=None), "line 1: options must be an object"),
        (lambda ls: ls[2].update(step=7), "line 3: expected decision 1"),
        (lambda ls: ls[2].update(agent="bob"), "line 3: step 1: agent 'bob' is not one of"),
        (lambda ls: ls[2].update(action="1"), "line 3: step 1: action must be an integer id"),
        (lambda ls: ls.append({"step": 99}), "nothing may follow the result"),
        (lambda ls: ls[-1].update(result=[]), "the result needs a returns object"),
    ],
)
def test_malformed_records_are_refused_naming_the_line(gin_record, tmp_path, edit, message):
    lines = _lines(gin_record)
    edit(lines)
    with pytest.raises(ValueError, match=message):
        read_record(_write(tmp_path / "bad.jsonl", lines))


def test_unreadable_records_are_refused(tmp_path):
    with pytest.raises(ValueError, match="line 2: not JSON"):
        read_record(["{}", "{oops"])
    with pytest.raises(ValueError, match="empty record"):
        read_record(["", "  "])
    with pytest.raises(ValueError, match="cannot read the record"):
        read_record(tmp_path / "missing.jsonl")


def test_an_abandoned_game_is_written_as_stopped(tmp_path):
    env = RecordGame(rummy_env.gin_rummy_v0.env(), tmp_path)
    env.reset(seed=1)
    _play_random(env, np.random.default_rng(1), max_steps=5)
    env.close()
    (path,) = env.paths
    rec = read_record(path)
    assert len(rec.steps) == 5
    assert rec.result["truncated"] and not rec.result["terminated"]
    res = replay(path)
    assert res.matches and not res.finished


def test_action_names_are_validated():
    env = rummy_env.rummy51_v1.raw_env()
    assert env.action_name(0) == "DRAW_STOCK"
    with pytest.raises(ValueError, match="action must be an integer in 0..3187, got 3188"):
        env.action_name(3188)
    with pytest.raises(TypeError, match="action must be an integer"):
        env.action_name("0")


def test_arena_records_replay_to_their_results(tmp_path, capsys):
    folder = tmp_path / "records"
    argv = ["arena", "--game", "all", "--deals", "2", "--seed", "1", "--out", "none"]
    assert main([*argv, "--record", str(folder), "--no-progress"]) == 0
    paths = sorted(folder.rglob("*.jsonl"))
    # 2 deals x 2 legs per pair: Gin's 3 baselines make 3 pairs, the joker games' 2 make 1
    assert len(paths) == 4 * (3 + 1 + 1)
    assert {p.parts[-3] for p in paths} == {"gin_rummy", "five_hundred_rum", "rummy51"}
    for path in paths:
        rec = read_record(path)
        assert set(rec.labels.values()) <= {"random", "novice", "simple", "greedy"}
        assert replay(rec).matches
    capsys.readouterr()
    assert main(["replay", str(paths[0])]) == 0
    out = capsys.readouterr().out
    assert "-- step 0:" in out and "the replay matches the record's result" in out


def test_replay_errors_are_one_line(gin_record, tmp_path, capsys):
    lines = _lines(gin_record)
    lines[-1]["result"]["returns"]["player_1"] = 1e9
    bad = _write(tmp_path / "bad.jsonl", lines)
    assert main(["replay", "--quiet", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "player_1's return is" in err[0] and str(bad) in err[0]
    assert main(["replay", str(tmp_path / "none.jsonl")]) == 2
    assert "cannot read the record" in capsys.readouterr().err
    assert main(["arena", "--record", str(gin_record), "--deals", "1"]) == 2
    assert "--record" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [5, "", b"dir", ["a"]])
def test_arena_spec_refuses_a_record_that_is_not_a_folder_path(bad):
    from rummy_agents.arena import ArenaSpec

    with pytest.raises(TypeError, match="record must be a folder path or None"):
        ArenaSpec(game="gin_rummy", agents=("random", "simple"), deals=1, record=bad)
