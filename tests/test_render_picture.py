"""Pictures of the table (``render_mode="rgb_array"``, SVG): shape and type for every game and
player count, what each view shows (hidden cards never in a seat's view), golden images, and
video recording through Gymnasium's and PettingZoo's tools.

Golden images are stored at a quarter of the size (320 x 180) and compared after the same
reduction, so fonts that render a pixel differently do not fail them. To redraw them after a
deliberate change of the picture: ``RUMMY_UPDATE_GOLDEN=1 python -m pytest
tests/test_render_picture.py``.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from rummy_env import five_hundred_rum_v1, gin_rummy_v0, rummy51_v1
from rummy_env.render.picture import HEIGHT, WIDTH, layout, to_svg
from rummy_env.render.table import HIDDEN, JOKER, card_text, describe

GOLDEN = Path(__file__).parent / "data" / "golden"
MODULES = {
    "gin_rummy": gin_rummy_v0,
    "five_hundred_rum": five_hundred_rum_v1,
    "rummy51": rummy51_v1,
}
PLAYERS = {"gin_rummy": (2, 3, 4), "five_hundred_rum": tuple(range(2, 9)), "rummy51": (2, 3, 6)}
CASES = [(g, n) for g, ns in PLAYERS.items() for n in ns]


def played(game: str, n: int, seed: int, steps: int, **kw: Any):
    """A raw env of ``game`` with ``n`` players after ``steps`` random legal actions."""
    env = MODULES[game].raw_env(num_players=n, **kw)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if all(env.terminations.values()) or all(env.truncations.values()):
            break
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env


def reduce(img: np.ndarray) -> np.ndarray:
    """A picture at a quarter of its size (each 4 x 4 block averaged)."""
    return np.asarray(Image.fromarray(img).reduce(4), dtype=np.int16)


# -- rgb_array ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "n"), CASES)
def test_rgb_array_for_every_game_and_player_count(game, n):
    env = played(game, n, seed=n, steps=25, render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"] and env.metadata["render_fps"] > 0
    img = env.render()
    assert isinstance(img, np.ndarray) and img.shape == (HEIGHT, WIDTH, 3)
    assert img.dtype == np.uint8
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50  # a drawing, not a blank
    for view in env.possible_agents:
        seat = env.render_picture(view)
        assert seat.shape == img.shape and seat.dtype == np.uint8
    doc = env.render_picture(fmt="svg")
    root = ET.fromstring(doc)
    assert root.tag.endswith("svg") and root.get("width") == str(WIDTH)


RENDER_TEST_CASES = [("gin_rummy", 2), ("gin_rummy", 3), ("five_hundred_rum", 5), ("rummy51", 4)]


@pytest.mark.parametrize(("game", "n"), RENDER_TEST_CASES)
def test_pettingzoo_render_test(game, n, capsys):
    """PettingZoo's own render check, for every render mode of the metadata."""
    from pettingzoo.test import render_test

    render_test(lambda render_mode: MODULES[game].env(render_mode=render_mode, num_players=n))
    capsys.readouterr()  # "human" printed the tables


def test_views_differ_and_the_referee_sees_everything():
    env = played("gin_rummy", 2, seed=1, steps=6, render_mode="rgb_array")
    referee = env.table_view()
    seat = env.table_view("player_0")
    assert all(c.face != HIDDEN for s in referee.seats for g in s.groups for c in g)
    assert all(c.face != HIDDEN for g in seat.seats[0].groups for c in g)
    assert any(c.face == HIDDEN for g in seat.seats[1].groups for c in g)
    assert not np.array_equal(env.render_picture(), env.render_picture("player_0"))
    assert seat.viewer == "player_0" and referee.viewer == ""


def test_render_view_option_and_bad_values():
    env = gin_rummy_v0.env(render_mode="rgb_array", render_view="player_1")
    env.reset(seed=3)
    assert env.unwrapped.render_view == "player_1"
    assert np.array_equal(env.render(), env.unwrapped.render_picture("player_1"))
    with pytest.raises(ValueError, match="render_view.*player_0"):
        gin_rummy_v0.raw_env(render_mode="rgb_array", render_view="player_7")
    with pytest.raises(ValueError, match="render_mode.*rgb_array"):
        gin_rummy_v0.raw_env(render_mode="rgb")
    raw = gin_rummy_v0.raw_env(render_mode="rgb_array")
    with pytest.raises(ValueError, match="reset"):
        raw.render()
    raw.reset(seed=0)
    with pytest.raises(ValueError, match="fmt"):
        raw.render_picture(fmt="png")
    with pytest.raises(ValueError, match="view"):
        raw.table_view("nobody")


def test_other_render_modes_unchanged():
    env = gin_rummy_v0.raw_env(render_mode="ansi")
    env.reset(seed=2)
    assert env.render() == env.render_text()


# -- what a seat's view shows -------------------------------------------------------------------


def _gin_public(board: np.void, j: int) -> list[int]:
    """Public cards of local seat ``j`` at a Gin board: known, laid out, laid off."""
    mask = int(board["known"][j]) & int(board["hands"][j])
    for m in board["melds"][j][: int(board["n_melds"][j])]:
        mask |= int(m)
    mask |= int(board["laid_off"]) if int(board["knocker"]) not in (-1, j) else 0
    return [c for c in range(52) if mask >> c & 1]


def _seat_public(game: str, env, q: int) -> list[int]:
    rec = env.state_record
    if game != "gin_rummy":
        counts = np.minimum(rec["known"][q], rec["hands"][q])
        return [c for c in range(len(counts)) for _ in range(int(counts[c]))]
    if env.config.num_players == 2:
        return _gin_public(rec, q)
    for t in range(rec["boards"].shape[0]):
        sp = [int(s) for s in rec["seat"][t]]
        if q in sp:
            return _gin_public(rec["boards"][t], sp.index(q))
    return []


def _hidden_count(game: str, env, q: int) -> int:
    """How many cards of seat ``q``'s hand the other seats cannot see."""
    rec = env.state_record
    if game != "gin_rummy":
        return int((rec["hands"][q] - np.minimum(rec["known"][q], rec["hands"][q])).sum())
    boards = [(rec, [0, 1])] if env.config.num_players == 2 else [
        (rec["boards"][t], [int(s) for s in rec["seat"][t]]) for t in range(rec["boards"].shape[0])
    ]  # fmt: skip
    for board, sp in boards:
        if q in sp:
            j = sp.index(q)
            return bin(int(board["hands"][j]) & ~int(board["known"][j])).count("1")
    return 0


def _table(env, q: int) -> int:
    return int(env.state_record["board_of"][q])


@pytest.mark.parametrize(("game", "n"), CASES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**20), steps=st.integers(0, 120))
def test_a_seat_sees_only_what_it_may(game, n, seed, steps):
    """In every seat's view, the other seats' face-up cards are public ones (known from the
    pile, laid out, laid off), exactly their hidden cards are face down, the seat's own hand
    is face up, and the pile is the real pile.
    """
    env = played(game, n, seed, steps)
    rec = env.state_record
    for v, viewer in enumerate(env.possible_agents):
        view = env.table_view(viewer)
        for q, seat in enumerate(view.seats):
            faces = [c.face for g in seat.groups for c in g]
            if q == v:
                assert HIDDEN not in faces
                continue
            if game == "gin_rummy" and n == 4 and _table(env, q) != _table(env, v):
                assert faces == []  # nothing of the other table's cards (RULES 1.10)
                continue
            left = _seat_public(game, env, q)
            for f in faces:  # a multiset inclusion
                if f != HIDDEN:
                    assert f in left, (viewer, q, card_text(f), describe(view))
                    left.remove(f)
            assert faces.count(HIDDEN) == _hidden_count(game, env, q)
        if game != "gin_rummy":
            pile = [int(c) for c in rec["pile"][: int(rec["pile_n"])]]
            assert [c.face for c in view.boards[0].pile] == pile


def test_a_knocks_discard_stays_face_down_for_the_other_seat():
    """The knock's discard is face down: the other seat's view names the knock, not the card."""
    from rummy_env.encodings import gin_rummy as E

    for seed in range(200):
        env = played("gin_rummy", 2, seed, 0)
        rng = np.random.default_rng(seed)
        for _ in range(200):
            if all(env.terminations.values()):
                break
            mask = env.observe(env.agent_selection)["action_mask"]
            knocks = [a for a in np.flatnonzero(mask) if E.KNOCK_BASE <= a < E.MELD_BASE]
            a = int(knocks[0]) if knocks else int(rng.choice(np.flatnonzero(mask)))
            knocker = env.agent_selection
            env.step(a)
            if knocks:
                other = "player_1" if knocker == "player_0" else "player_0"
                assert env.public_action_name(a) == "KNOCK"
                assert env.table_view(other).last_action == f"{knocker}: KNOCK"
                assert env.table_view(knocker).last_action == f"{knocker}: {env.action_name(a)}"
                assert env.table_view().last_action.endswith(env.action_name(a))
                board = env.table_view(other).boards[0]
                assert "face down" in board.note or env.state_record["phase"] == E.PH_OVER
                return
    pytest.fail("no knock in 200 random games")


def test_four_player_gin_hides_the_other_table():
    env = played("gin_rummy", 4, 12, 0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        actor = env.agent_selection
        legal = np.flatnonzero(env.observe(actor)["action_mask"])
        env.step(int(rng.choice(legal)))
        for viewer in env.possible_agents:
            view = env.table_view(viewer)
            mine = _table(env, int(viewer[-1]))
            for t, board in enumerate(view.boards):
                assert board.visible == (t == mine)
                if not board.visible:
                    assert board.pile == [] and "not seen" in board.note
            seen = view.last_action
            if viewer == actor:
                assert seen.endswith(env.action_name(int(legal[0])).split("[")[0]) or ":" in seen
            elif env._last_table != mine:
                assert seen == f"{actor}: a move at the other table"
            else:
                assert seen == f"{actor}: {env.public_action_name(env.last_action[1])}"


def test_jokers_show_what_they_stand_for():
    for seed in range(60):
        env = played("rummy51", 2, seed, 80)
        view = env.table_view()
        jokers = [c for m in view.melds for c in m.cards if c.face == JOKER]
        if jokers:
            assert all(c.stand_in for c in jokers)
            return
    pytest.fail("no joker laid down in 60 random Rummy 51 hands")


# -- golden images ------------------------------------------------------------------------------

GOLDEN_CASES = {
    "gin_rummy_2p": ("gin_rummy", 2, 11, 30, None),
    "gin_rummy_4p_seat": ("gin_rummy", 4, 12, 40, "player_1"),
    "five_hundred_rum_4p": ("five_hundred_rum", 4, 13, 70, None),
    "rummy51_3p_seat": ("rummy51", 3, 14, 90, "player_2"),
}


@pytest.mark.parametrize("name", list(GOLDEN_CASES))
def test_golden_image(name):
    game, n, seed, steps, view = GOLDEN_CASES[name]
    env = played(game, n, seed, steps)
    small = reduce(env.render_picture(view))
    path = GOLDEN / f"{name}.png"
    if os.environ.get("RUMMY_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(small.astype(np.uint8)).save(path, optimize=True)
    gold = np.asarray(Image.open(path).convert("RGB"), dtype=np.int16)
    diff = np.abs(small - gold)
    # tolerant to text drawn a pixel differently; a moved card or a wrong colour fails
    assert diff.mean() < 2.0, diff.mean()
    assert np.quantile(diff.max(axis=2), 0.99) < 60


# -- video --------------------------------------------------------------------------------------


def test_pettingzoo_frames_save_as_video(tmp_path):
    """An AEC loop collecting ``render()`` frames, saved with Gymnasium's ``save_video``
    (PettingZoo's recipe for recording classic envs).
    """
    pytest.importorskip("moviepy", reason="saving videos needs moviepy (the test extra)")
    from gymnasium.utils.save_video import save_video

    env = five_hundred_rum_v1.env(render_mode="rgb_array", num_players=3)
    env.reset(seed=4)
    frames = [env.render()]
    for _agent in env.agent_iter(max_iter=30):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        frames.append(env.render())
    save_video(frames, str(tmp_path), fps=env.metadata["render_fps"], name_prefix="rum")
    videos = list(tmp_path.glob("*.mp4"))
    assert videos and videos[0].stat().st_size > 1000


def test_gymnasium_record_video(tmp_path):
    pytest.importorskip("moviepy", reason="RecordVideo needs moviepy (the test extra)")
    import gymnasium as gym

    import rummy_env  # noqa: F401  (registers the ids)

    env = gym.make("rummy/GinRummy-v0", render_mode="rgb_array")
    env = gym.wrappers.RecordVideo(env, str(tmp_path / "v"), episode_trigger=lambda e: True)
    obs, info = env.reset(seed=0)
    for _ in range(200):
        legal = np.flatnonzero(env.unwrapped.action_masks())
        obs, r, term, trunc, info = env.step(int(legal[0]))
        if term or trunc:
            break
    env.close()
    assert list((tmp_path / "v").glob("*.mp4"))


def test_gymnasium_render_collection():
    import gymnasium as gym

    import rummy_env  # noqa: F401

    env = gym.wrappers.RenderCollection(
        gym.make("rummy/Rummy51-v1", render_mode="rgb_array", render_view="learner")
    )
    env.reset(seed=1)
    legal = np.flatnonzero(env.unwrapped.action_masks())
    env.step(int(legal[0]))
    frames = env.render()
    assert len(frames) == 2 and frames[0].shape == (HEIGHT, WIDTH, 3)
    learner = env.unwrapped.learner
    assert env.unwrapped.aec.table_view(learner).viewer == learner


def test_svg_and_pixels_come_from_the_same_shapes():
    env = played("five_hundred_rum", 3, 5, 40)
    canvas = layout(env.table_view())
    doc = to_svg(canvas)
    texts = [s.text for s in canvas.shapes if s.kind == "text"]
    for t in texts:
        assert t.replace("&", "&amp;").replace("<", "&lt;") in doc
    assert doc.count("<use ") == sum(s.kind == "suit" for s in canvas.shapes)


# -- replay --html ------------------------------------------------------------------------------


def _record(game: str, n: int, seed: int, tmp_path: Path, prefer=range(0)) -> Path:
    """Record a game of random moves (but any legal move in ``prefer`` is played)."""
    from rummy_env.game_records import RecordGame

    env = RecordGame(MODULES[game].env(num_players=n), tmp_path, labels={"player_0": "random"})
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _agent in env.agent_iter(max_iter=3000):
        obs, _, term, trunc, _ = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        good = [a for a in legal if a in prefer]
        env.step(None if term or trunc else int(good[0] if good else rng.choice(legal)))
    env.close()
    (path,) = tmp_path.glob("*.jsonl")
    return path


def _page_parts(page: str) -> tuple[list[str], list[str]]:
    import json

    frames = page.split("const FRAMES = ", 1)[1].split(";\nconst CAPTIONS = ", 1)
    captions = frames[1].split(";\n", 1)[0]
    return json.loads(frames[0].replace("<\\/", "</")), json.loads(captions.replace("<\\/", "</"))


@pytest.mark.parametrize(("game", "n"), [("gin_rummy", 2), ("five_hundred_rum", 3), ("rummy51", 2)])
def test_replay_html_page(game, n, tmp_path):
    from rummy_agents.cli import main
    from rummy_env.game_records import read_record

    path = _record(game, n, 7, tmp_path)
    record = read_record(path)
    out = tmp_path / "page.html"
    assert main(["replay", str(path), "--html", str(out)]) == 0
    page = out.read_text()
    assert "http" not in page.replace("http://www.w3.org/2000/svg", "")  # loads nothing
    frames, captions = _page_parts(page)
    assert len(frames) == len(captions) == len(record.steps) + 1
    for k, (agent, _action, name) in enumerate(record.steps):
        assert captions[k].endswith(f"plays {name}") and agent in captions[k]
    assert "outcome" in captions[-1]
    for doc in frames[:: max(1, len(frames) // 5)]:
        assert ET.fromstring(doc).tag.endswith("svg")


def test_replay_html_seat_view_hides_the_knock_card(tmp_path):
    """In a seat's page the other seat's knock is named without its face-down card."""
    from rummy_env.encodings import gin_rummy as E
    from rummy_env.game_records import read_record
    from rummy_env.render.html import record_page

    for seed in range(40):
        path = _record("gin_rummy", 2, seed, tmp_path, range(E.KNOCK_BASE, E.MELD_BASE))
        record = read_record(path)
        knocks = [(i, a) for i, (a, act, _) in enumerate(record.steps) if act >= E.KNOCK_BASE
                  and act < E.MELD_BASE]  # fmt: skip
        if knocks:
            i, knocker = knocks[0]
            other = "player_1" if knocker == "player_0" else "player_0"
            _, captions = _page_parts(record_page(record, other)[0])
            assert captions[i].endswith("plays KNOCK")
            _, captions = _page_parts(record_page(record, knocker)[0])
            assert captions[i].endswith(record.steps[i][2])
            return
        path.unlink()
    pytest.fail("no knock in 40 random games")


def test_replay_html_errors(tmp_path, capsys):
    from rummy_agents.cli import main
    from rummy_env.game_records import read_record
    from rummy_env.render.html import frames_page, record_page

    path = _record("gin_rummy", 2, 1, tmp_path)
    assert main(["replay", str(path), "--html", str(tmp_path / "no" / "x.html")]) == 2
    assert "--html: folder" in capsys.readouterr().err
    assert main(["replay", str(path), "--html", str(tmp_path / "x.html"), "--view", "bob"]) == 2
    assert "--view must be one of player_0, player_1" in capsys.readouterr().err
    with pytest.raises(ValueError, match="view must be one of"):
        record_page(read_record(path), "player_9")
    with pytest.raises(ValueError, match="captions"):
        frames_page("t", "m", ["<svg/>"], [])
