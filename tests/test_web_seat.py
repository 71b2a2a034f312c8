"""The person's side of the table in the game state (``seat_table``: hand, pile, melds, moves
in words, hints) names only cards the seat sees, and every legal move has its words."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette", reason="the web app needs starlette: pip install '.[web]'")

from starlette.testclient import TestClient  # noqa: E402

from rummy_agents.web.app import create_app  # noqa: E402
from rummy_env.render.table import HIDDEN  # noqa: E402

ORIGIN = {"Origin": "http://testserver"}


def faces(table: dict) -> set[int]:
    out = {c["face"] for s in table["seats"] for g in s["groups"] for c in g}
    out |= {c["face"] for b in table["boards"] for c in b["pile"]}
    return (out | {c["face"] for m in table["melds"] for c in m["cards"]}) - {HIDDEN}


def seat_cards(seat: dict) -> set[int]:
    out = {c["id"] for key in ("hand", "pile") for c in seat[key]}
    out |= {c["id"] for m in seat["melds"] for c in m["cards"]}
    out |= {c["id"] for m in seat["hints"]["melds"] for c in m}
    out |= {c["id"] for c in seat["hints"]["unmelded"]}
    return out | {c for m in seat["moves"] for c in m["cards"]}


@pytest.mark.parametrize(
    ("body", "steps"),
    [
        ({"game": "gin_rummy", "players": 4, "seed": 2}, 60),
        ({"game": "five_hundred_rum", "players": 3, "seat": 1, "seed": 8}, 80),
        ({"game": "rummy51", "players": 2, "seed": 4}, 80),
    ],
)
def test_the_seat_table_names_only_what_the_seat_sees(body, steps):
    app = create_app()
    api = TestClient(app, headers=ORIGIN)
    r = api.post("/api/play", json={**body, "opponents": "random"})
    assert r.status_code == 201, r.text
    state = r.json()
    g = next(s.games[state["id"]] for s in app.state.sessions.items.values())
    for _ in range(steps):
        if state["over"]:
            break
        seat = state["seat_table"]
        seen = faces(state["table"]) | {52}
        assert seat_cards(seat) - {52} <= seen, seat_cards(seat) - seen
        mine = [c for grp in state["table"]["seats"][state["seat"]]["groups"] for c in grp]
        assert (
            sorted(c["id"] for c in seat["hand"])
            == sorted(c["face"] for c in mine if c["face"] != HIDDEN)
            or body["game"] == "gin_rummy"
        )  # a Gin seat's groups also hold its laid-out melds
        # every legal move has distinct words, and the legal list carries them
        texts = [m["text"] for m in seat["moves"]]
        assert len(set(texts)) == len(texts) == len(state["legal"])
        assert [m["text"] for m in state["legal"]] == texts
        assert not any(re.search(r"[A-Z]_|\[", t) for t in texts)
        assert g.env.agent_selection == state["me"]
        r = api.post(f"/api/play/{state['id']}/move", json={"action": state["legal"][-1]["id"]})
        assert r.status_code == 200, r.text
        state = r.json()
        for e in state["events"]:  # the person's moves in words, the others' by public name
            assert e["text"] == e["name"] or e["you"]
