"""The browser app (``rummy-env serve``, rummy_agents.web) through its HTTP API, with Starlette's
TestClient: whole hands against ``random``, every kind of bad request (a 4xx JSON error naming
it, never a 500), sessions that cannot see each other's games, a seat view that hides the other
hands, and replay frames that are the frames of ``rummy_env.game_records.replay``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web app needs starlette: pip install '.[web]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

with warnings.catch_warnings():  # newer Starlettes prefer another HTTP client for the TestClient
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from error_helpers import expect_error

from rummy_agents.arena.play import make_env, play_game  # noqa: E402
from rummy_agents.arena.registry import make_agent  # noqa: E402
from rummy_agents.cli import main  # noqa: E402
from rummy_agents.web import app as web  # noqa: E402
from rummy_env.game_records import read_record, replay  # noqa: E402
from rummy_env.render.table import HIDDEN  # noqa: E402

REL = "gin_rummy/novice_vs_random/deal0_leg0.jsonl"


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> Path:
    """A records folder as ``rummy-env arena --record`` writes it, with one Gin hand: 39
    decisions, ending in player_0's knock.
    """
    root = tmp_path_factory.mktemp("records")
    env = make_env("gin_rummy", {})
    agents = [make_agent("novice", 1, "gin_rummy"), make_agent("random", 2, "gin_rummy")]
    labels = ["novice", "random"]
    play_game(env, agents, seed=3, max_decisions=10_000, record=root / REL, labels=labels)
    (root / "notes.txt").write_text("not a record")
    return root


@pytest.fixture(scope="module")
def app(records):
    return web.create_app(records)


def client(app) -> TestClient:
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture
def api(app) -> TestClient:
    return client(app)


def server_game(app, gid: str) -> web.PlayGame:
    """The server's side of a game (to compare what the page got with the real table)."""
    for session in app.state.sessions.items.values():
        if gid in session.games:
            return session.games[gid]
    raise KeyError(gid)


def play_out(api: TestClient, state: dict, check=None, limit: int = 2000) -> tuple[dict, list]:
    """Play the first legal move until the game is over; every state goes through ``check``."""
    events = list(state["events"])
    for _ in range(limit):
        if check is not None:
            check(state)
        if state["over"]:
            return state, events
        assert state["my_turn"] and state["legal"], state
        r = api.post(f"/api/play/{state['id']}/move", json={"action": state["legal"][0]["id"]})
        assert r.status_code == 200, r.text
        state = r.json()
        events += state["events"]
    raise AssertionError("the game did not end")


def check_record(api: TestClient, state: dict, labels: dict) -> None:
    r = api.get(f"/api/play/{state['id']}/record")
    assert r.status_code == 200
    assert "attachment" in r.headers["content-disposition"]
    record = read_record(r.text.splitlines())
    assert record.labels == labels and record.seed == state["seed"]
    res = replay(record)
    assert res.matches and res.finished
    assert {a: round(v, 6) for a, v in res.returns.items()} == state["result"]["returns"]


def as_json(view) -> dict:
    return json.loads(json.dumps(dataclasses.asdict(view)))


def all_cards(table: dict) -> list[dict]:
    out = [c for s in table["seats"] for grp in s["groups"] for c in grp]
    out += [c for b in table["boards"] for c in b["pile"]]
    return out + [c for m in table["melds"] for c in m["cards"]]


# ---------------------------------------------------------------------------------------------
# Whole hands


def test_page_and_catalog(api):
    r = api.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "/static/app.js" in r.text and "http" not in r.text
    assert "script-src 'self'" in r.headers["content-security-policy"]
    for name in ("app.js", "style.css"):
        r = api.get(f"/static/{name}")
        assert r.status_code == 200 and "http:" not in r.text and "https:" not in r.text
    cat = api.get("/api/catalog").json()
    assert cat["games"]["gin_rummy"]["players"] == [2, 3, 4]
    assert cat["games"]["five_hundred_rum"]["players"] == list(range(2, 9))
    names = {a["name"] for a in cat["games"]["gin_rummy"]["agents"]}
    assert {"random", "simple", "ppo"} <= names and "greedy" not in names
    assert {"random", "greedy"} <= {a["name"] for a in cat["games"]["rummy51"]["agents"]}
    assert "knock_limit" in {o["name"] for o in cat["games"]["gin_rummy"]["options"]}
    assert cat["records"] is True


def test_gin_hand_against_random(app, api):
    r = api.post("/api/play", json={"game": "gin_rummy", "opponents": "random", "seed": 3})
    assert r.status_code == 201, r.text
    state = r.json()
    assert state["seed"] is None and state["labels"] == {"player_0": "human", "player_1": "random"}
    assert api.get(f"/api/play/{state['id']}/record").status_code == 409  # the seed deals all
    g = server_game(app, state["id"])

    def hidden_from_me(st: dict) -> None:
        if st["over"]:
            assert st["view"] == "referee"  # every card face up once the game is over
            return
        assert st["view"] == "player_0"
        assert st["svg"] == g.env.render_picture("player_0", fmt="svg")
        rec = g.env.state_record
        hidden = int(rec["hands"][1]) & ~int(rec["known"][1])
        secret = {c for c in range(52) if hidden >> c & 1}
        faces = {c["face"] for c in all_cards(st["table"])}
        assert not secret & faces
        opp = [c["face"] for grp in st["table"]["seats"][1]["groups"] for c in grp]
        assert opp.count(HIDDEN) == len(secret)
        mine = int(rec["hands"][0])
        assert {c for c in range(52) if mine >> c & 1} <= faces

    state, events = play_out(api, state, hidden_from_me)
    assert state["result"]["verdict"] in ("win", "loss", "draw")
    assert state["hands"] and state["hands"][0]["infos"]["player_0"]["hands_played"] == 1
    assert state["seed"] == 3 and not state["legal"] and state["record_ready"]
    assert [e["step"] for e in events] == list(range(state["steps"]))
    mine = [e for e in events if e["you"]]
    assert mine and all(e["label"] == "human" for e in mine)
    assert any("svg" in e for e in events)  # the moves carry the picture after them
    check_record(api, state, {"player_0": "human", "player_1": "random"})
    assert api.post(f"/api/play/{state['id']}/move", json={"action": 0}).status_code == 409
    log = api.get(f"/api/play/{state['id']}").json()["log"]
    assert [e["name"] for e in log] == [e["name"] for e in events]


def test_500_rum_hand_against_random(app, api):
    body = {"game": "five_hundred_rum", "players": 3, "seat": 1, "opponents": ["random", "random"]}
    r = api.post("/api/play", json={**body, "seed": 8})
    assert r.status_code == 201, r.text
    state = r.json()
    assert state["me"] == "player_1"
    g = server_game(app, state["id"])

    def seat_view(st: dict) -> None:
        if not st["over"]:
            assert st["svg"] == g.env.render_picture("player_1", fmt="svg")
            assert st["table"] == as_json(g.env.table_view("player_1"))
            for s in (0, 2):
                cards = [c["face"] for grp in st["table"]["seats"][s]["groups"] for c in grp]
                assert HIDDEN in cards or not cards

    state, events = play_out(api, state, seat_view)
    assert state["over"] and state["result"]["outcome"]
    assert {e["agent"] for e in events} == {"player_0", "player_1", "player_2"}
    check_record(api, state, {"player_0": "random", "player_1": "human", "player_2": "random"})


def test_opponents_moves_use_public_names(app, api):
    # a Gin knock's discard is face down: the person reads KNOCK, the record has KNOCK[card]
    state = api.post("/api/play", json={"opponents": "simple", "seed": 5}).json()
    g = server_game(app, state["id"])
    state, events = play_out(api, state)
    record = read_record(api.get(f"/api/play/{state['id']}/record").text.splitlines())
    for e, (agent, action, name) in zip(events, record.steps, strict=True):
        assert e["agent"] == agent
        assert e["name"] == (name if e["you"] else g.env.public_action_name(action))


def test_four_player_gin_hides_the_other_table(app, api):
    body = {"game": "gin_rummy", "players": 4, "opponents": "random", "seed": 2}
    state = api.post("/api/play", json=body).json()
    assert state["players"] == 4
    g = server_game(app, state["id"])

    def seat_view(st: dict) -> None:
        if not st["over"]:
            assert st["svg"] == g.env.render_picture("player_0", fmt="svg")

    state, events = play_out(api, state, seat_view)
    other = [e for e in events if e["name"].endswith("(at the other table)")]
    assert other and all("[" not in e["name"] for e in other)


def test_stop_and_delete(api):
    state = api.post("/api/play", json={"opponents": "random"}).json()
    r = api.post(f"/api/play/{state['id']}/stop", json={})
    assert r.status_code == 200 and r.json()["result"]["verdict"] == "stopped"
    record = read_record(api.get(f"/api/play/{state['id']}/record").text.splitlines())
    assert record.result["truncated"] and not record.result["terminated"]
    r = api.request("DELETE", f"/api/play/{state['id']}", json={})
    assert r.json() == {"deleted": state["id"]}
    assert api.get(f"/api/play/{state['id']}").status_code == 404


# ---------------------------------------------------------------------------------------------
# Bad requests: a clear 4xx JSON error, never a 500


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"game": "poker"}, 422, ["unknown game 'poker'", "gin_rummy"]),
        ({"game": 3}, 422, ["unknown game"]),
        ({"opponents": "nobody"}, 422, ["unknown agent 'nobody'", "random"]),
        ({"opponents": "greedy"}, 422, ["greedy", "five_hundred_rum"]),
        ({"opponents": "random@depth=3"}, 422, ["depth"]),
        ({"opponents": "simple@take_rule=nearest"}, 422, ["take_rule"]),
        ({"opponents": "os:system"}, 422, ["registry's agents", "random"]),
        ({"opponents": "ppo@checkpoint=/etc/passwd"}, 422, ["reads no file"]),
        ({"opponents": "@"}, 422, ["no agent name"]),
        ({"opponents": 7}, 400, ["opponents"]),
        ({"opponents": ["random", "random"]}, 422, ["one opponent for every other seat"]),
        ({"options": "foo=1"}, 422, ["unknown Gin Rummy option", "foo"]),
        ({"options": "knock_limit"}, 422, ["expected key=value"]),
        ({"options": "knock_limit=-4"}, 422, ["knock_limit"]),
        ({"options": {"oklahoma": [1]}}, 400, ["oklahoma"]),
        ({"options": 5}, 400, ["options"]),
        ({"players": 9}, 422, ["num_players"]),
        ({"players": "two"}, 400, ["players must be an integer"]),
        ({"players": 2, "options": "num_players=3"}, 422, ["disagree"]),
        ({"seat": 2}, 422, ["seat must be 0..1"]),
        ({"seat": "me"}, 400, ["seat must be an integer"]),
        ({"seed": -1}, 422, ["seed"]),
        ({"seed": "x"}, 400, ["seed"]),
    ],
)
def test_bad_game_requests(api, body, status, words):
    expect_error(api.post("/api/play", json=body), status, *words)


def test_bad_bodies(api):
    headers = {"content-type": "application/json"}
    expect_error(api.post("/api/play", content=b"{not json", headers=headers), 400, "not JSON")
    expect_error(api.post("/api/play", json=[1, 2]), 400, "JSON object")
    big = b'{"text": "' + b"x" * (web.MAX_BODY_BYTES + 10) + b'"}'
    expect_error(api.post("/api/replays", content=big, headers=headers), 413, "bytes")
    expect_error(api.get("/api/nowhere"), 404, "no such page")
    expect_error(api.delete("/api/catalog"), 405, "DELETE")
    expect_error(api.get("/static/secret.py"), 404, "no file")


def test_bad_moves(api):
    state = api.post("/api/play", json={"opponents": "random", "seed": 4}).json()
    gid = state["id"]
    move = f"/api/play/{gid}/move"
    n = int(make_env("gin_rummy", {}).action_space("player_0").n)
    legal = {m["id"] for m in state["legal"]}
    bad = next(a for a in range(n) if a not in legal)
    expect_error(api.post(move, json={"action": bad}), 422, f"illegal move {bad}", "illegal in")
    expect_error(api.post(move, json={"action": n}), 422, "out of range", f"0..{n - 1}")
    expect_error(api.post(move, json={"action": -1}), 422, "out of range")
    expect_error(api.post(move, json={"action": "DRAW"}), 400, "integer")
    expect_error(api.post(move, json={"action": True}), 400, "integer")
    expect_error(api.post(move, json={}), 400, "action")
    expect_error(api.post("/api/play/nope/move", json={"action": 0}), 404, "no game 'nope'")
    expect_error(api.get("/api/play/nope"), 404, "no game")
    expect_error(api.get(f"/api/play/{gid}/record"), 409, "once the game is over")
    assert api.get(f"/api/play/{gid}").json()["steps"] == state["steps"]  # nothing changed


def test_too_many_games(app):
    c = client(app)
    ids = []
    for _ in range(web.MAX_GAMES):
        r = c.post("/api/play", json={"opponents": "random"})
        assert r.status_code == 201
        ids.append(r.json()["id"])
    expect_error(c.post("/api/play", json={"opponents": "random"}), 429, str(web.MAX_GAMES))
    c.post(f"/api/play/{ids[3]}/stop", json={})
    assert c.post("/api/play", json={"opponents": "random"}).status_code == 201
    assert c.get(f"/api/play/{ids[3]}").status_code == 404  # the finished game made room
    assert len(c.get("/api/play").json()["games"]) == web.MAX_GAMES


def test_host_header_checked():
    local = client(web.create_app(allowed_hosts=["127.0.0.1", "localhost"]))
    expect_error(local.get("/api/catalog", headers={"host": "evil.example:8000"}), 400, "Host")
    assert local.get("/api/catalog", headers={"host": "127.0.0.1:8000"}).status_code == 200
    assert local.get("/api/catalog", headers={"host": "localhost"}).status_code == 200


# ---------------------------------------------------------------------------------------------
# Sessions


def test_sessions_are_isolated(app):
    a, b = client(app), client(app)
    r = a.post("/api/play", json={"opponents": "random", "seed": 1})
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    gid, legal = r.json()["id"], r.json()["legal"][0]["id"]
    rid = a.post("/api/replays", json={"path": REL}).json()["id"]
    for method, path, body in [
        ("GET", f"/api/play/{gid}", None),
        ("POST", f"/api/play/{gid}/move", {"action": legal}),
        ("POST", f"/api/play/{gid}/stop", {}),
        ("GET", f"/api/play/{gid}/record", None),
        ("DELETE", f"/api/play/{gid}", {}),
        ("GET", f"/api/replays/{rid}", None),
        ("GET", f"/api/replays/{rid}/frame?step=1", None),
        ("DELETE", f"/api/replays/{rid}", {}),
    ]:
        r = b.request(method, path, json=body)
        assert r.status_code == 404, (method, path, r.text)
        assert "svg" not in r.text
    assert b.get("/api/play").json()["games"] == []
    # a cookie the server did not make is not adopted: a new session with a new id
    forged = client(app)
    forged.cookies.set(web.COOKIE, "forged")
    r = forged.get(f"/api/play/{gid}")
    assert r.status_code == 404 and "forged" not in r.headers.get("set-cookie", "")
    # the owner plays on
    r = a.post(f"/api/play/{gid}/move", json={"action": legal})
    assert r.status_code == 200 and r.json()["steps"] >= 1
    assert a.get(f"/api/replays/{rid}").status_code == 200


# ---------------------------------------------------------------------------------------------
# Replays


def expected_frames(record, view: str | None) -> list[str]:
    """Each frame of ``replay()`` (before each decision, then after the last) in ``view``."""
    frames: list[str] = []
    replay(record, on_step=lambda env, *_: frames.append(env.render_picture(view, "svg")))
    return frames


def test_replay_steps_forwards_and_backwards(api, records):
    listed = api.get("/api/records").json()
    assert listed == {"enabled": True, "records": [REL], "truncated": False}
    r = api.post("/api/replays", json={"path": REL})
    assert r.status_code == 201, r.text
    meta = r.json()
    record = read_record(records / REL)
    assert meta["frames"] == len(record.steps) + 1 and meta["labels"] == record.labels
    assert [s["name"] for s in meta["steps"]] == [n for _, _, n in record.steps]
    assert meta["views"] == ["referee", "player_0", "player_1"] and meta["result"]["matches"]
    rid = meta["id"]

    def frame(step: int, view: str = "referee") -> dict:
        r = api.get(f"/api/replays/{rid}/frame", params={"step": step, "view": view})
        assert r.status_code == 200, r.text
        return r.json()

    want = expected_frames(record, None)
    n = len(want) - 1
    for i in [*range(n + 1), *range(n, -1, -1), 0, n, n // 2, 3, n - 1]:
        f = frame(i)
        assert f["step"] == i and f["svg"] == want[i], i
        if i < n:
            agent, _, name = record.steps[i]
            assert f["next"] == {"agent": agent, "label": record.labels[agent], "name": name}
            assert f["result"] is None
        else:
            assert f["next"] is None and f["result"]["matches"]
    # a seat's view: its own moves by name, the others' as the table saw them
    seat = expected_frames(record, "player_1")
    assert record.steps[-1][2].startswith("KNOCK[")  # the knock's discard is face down
    env = make_env("gin_rummy", {})
    for i in (n, 0, 5, 4, n - 1, n // 2):
        f = frame(i, "player_1")
        assert f["svg"] == seat[i]
        if i < n:
            agent, action, name = record.steps[i]
            shown = name if agent == "player_1" else env.public_action_name(action)
            assert f["next"]["name"] == shown
    assert frame(n - 1, "player_1")["next"]["name"] == "KNOCK"
    assert frame(n - 1, "player_0")["next"]["name"] == record.steps[-1][2]


def test_replay_upload_and_bad_records(api, records):
    text = (records / REL).read_text()
    r = api.post("/api/replays", json={"text": text, "name": "mine.jsonl"})
    assert r.status_code == 201 and r.json()["source"] == "mine.jsonl"
    rid = r.json()["id"]
    lines = text.splitlines()
    step = json.loads(lines[3])
    step["action"] = 10_000
    tampered = "\n".join([*lines[:3], json.dumps(step), *lines[4:]])
    cases = [
        ({"text": "{oops\n"}, 422, ["record", "line 1", "not JSON"]),
        ({"text": "", "name": "empty.jsonl"}, 422, ["empty.jsonl", "empty record"]),
        ({"text": '{"format": "x"}', "name": "x.jsonl"}, 422, ["line 1", "not a game record"]),
        ({"text": tampered, "name": "t.jsonl"}, 422, ["t.jsonl", "step 2"]),
        ({"text": 5}, 400, ["text must be"]),
        ({}, 400, ["path", "text"]),
        ({"text": "x" * (web.MAX_RECORD_BYTES + 1)}, 413, ["bytes"]),
        ({"path": "../secret.jsonl"}, 400, [".."]),
        ({"path": "gin_rummy/../../x.jsonl"}, 400, [".."]),
        ({"path": "/etc/passwd"}, 400, ["relative"]),
        ({"path": "C:\\x.jsonl"}, 400, ["relative"]),
        ({"path": "notes.txt"}, 400, [".jsonl"]),
        ({"path": "none.jsonl"}, 404, ["no record"]),
        ({"path": 3}, 400, ["path"]),
    ]
    for body, status, words in cases:
        expect_error(api.post("/api/replays", json=body), status, *words)
    frame = f"/api/replays/{rid}/frame"
    expect_error(api.get(frame, params={"view": "player_9"}), 400, "unknown view", "referee")
    expect_error(api.get(frame, params={"step": 10_000}), 400, "step must be 0..")
    expect_error(api.get(frame, params={"step": "first"}), 400, "step must be an integer")
    expect_error(api.get("/api/replays/nope/frame"), 404, "no replay 'nope'")


def test_records_folder_is_a_fence(tmp_path, records):
    outside = tmp_path / "outside.jsonl"
    outside.write_text((records / REL).read_text())
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.jsonl").symlink_to(outside)
    c = client(web.create_app(root))
    assert c.get("/api/records").json()["records"] == []
    expect_error(c.post("/api/replays", json={"path": "link.jsonl"}), 400, "outside")
    no_dir = client(web.create_app())
    assert no_dir.get("/api/records").json()["enabled"] is False
    expect_error(no_dir.post("/api/replays", json={"path": "a.jsonl"}), 404, "no records folder")


# ---------------------------------------------------------------------------------------------
# The command


def test_serve_command(monkeypatch, tmp_path, capsys):
    import rummy_agents.web as command

    calls = []
    monkeypatch.setattr(command, "serve", lambda app, host, port: calls.append((app, host, port)))
    assert main(["serve", "--port", "8123", "--records", str(tmp_path)]) == 0
    app, host, port = calls[0]
    assert host == "127.0.0.1" and port == 8123
    c = client(app)
    assert c.get("/api/catalog", headers={"host": "evil.example"}).status_code == 400
    assert c.get("/api/catalog", headers={"host": "127.0.0.1:8123"}).json()["records"] is True
    assert "http://127.0.0.1:8123/" in capsys.readouterr().out

    assert main(["serve", "--records", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rummy-env: error: --records") and "not a folder" in err
    assert len(err.splitlines()) == 1


def test_serve_without_the_web_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn raises ImportError
    assert main(["serve"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and 'pip install "rummy_env[web]"' in err
