"""The replay page (``rummy-env replay --html``) embeds its frames and captions as JSON in a
``<script>``: whatever text a record's labels hold, the script holds no ``<!--``,
``<script`` or ``</script`` (no ``<``, ``>``, ``&``, U+2028, U+2029 at all), the HTML parser
sees the one script the page has, and the JSON reads back to the same data.
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_env.game_records import GameRecord, GameRecorder, read_record
from rummy_env.render.html import frames_page, record_page, script_json

FORBIDDEN = ("<!--", "<script", "</script", "<", ">", "&", "\u2028", "\u2029")

# any text: every code point, lone surrogates included
any_text = st.text(st.characters(blacklist_categories=()), max_size=40)
json_data = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)
tricky = st.sampled_from(["</script>", "<!--", "-->", "<script>", "</SCRIPT ", "<!-- <script>",
                          "\u2028", "\u2029", "&lt;", "]]>", "__FRAMES__", "__CAPTIONS__",
                          "__TITLE__", "__META__", "`${x}`", "\\u003c", '"', "'"])  # fmt: skip
labels = st.lists(st.one_of(any_text, tricky), max_size=4).map("".join)


class _Scripts(HTMLParser):
    """The page as an HTML parser reads it: the scripts' texts and the start tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []
        self.tags: list[str] = []
        self._in = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        if tag == "script":
            self._in = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in = False

    def handle_data(self, data: str) -> None:
        if self._in:
            self.scripts[-1] += data


def _check_page(page: str) -> tuple[list, list]:
    """The page's one script: safe for its context; returns its frames and captions."""
    parser = _Scripts()
    parser.feed(page)
    parser.close()
    assert parser.tags.count("script") == 1, parser.tags
    (script,) = parser.scripts
    assert script == page.split("<script>", 1)[1].split("</script>", 1)[0]
    m = re.fullmatch(r"\nconst FRAMES = (.*);\nconst CAPTIONS = (.*?);\n.*", script, re.S)
    assert m, script[:200]
    for part in m.groups():
        for bad in FORBIDDEN:
            assert bad not in part.lower(), bad
    return json.loads(m.group(1)), json.loads(m.group(2))


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(json_data, labels))
def test_script_json_is_safe_in_a_script_and_reads_back(value):
    text = script_json(value)
    for bad in FORBIDDEN:
        assert bad not in text.lower()
    assert text.isascii()
    assert json.loads(text) == value


@settings(max_examples=150, deadline=None)
@given(title=labels, meta=labels, frames=st.lists(labels, min_size=1, max_size=3), data=st.data())
def test_a_frames_page_keeps_any_text_in_its_place(title, meta, frames, data):
    captions = data.draw(st.lists(labels, min_size=len(frames), max_size=len(frames)))
    page = frames_page(title, meta, frames, captions)
    assert _check_page(page) == (frames, captions)
    esc = html.escape(title)
    assert f"<title>{esc}</title>" in page and f"<h1>{esc}</h1>" in page
    assert f'<div id="meta">{html.escape(meta)}</div>' in page


def test_frames_page_refuses_what_is_not_text():
    with pytest.raises(TypeError, match="frames must be a list of strings"):
        frames_page("t", "m", [b"<svg/>"], ["c"])
    with pytest.raises(TypeError, match="title must be a string"):
        frames_page(None, "m", ["<svg/>"], ["c"])
    with pytest.raises(ValueError, match="as many captions as frames"):
        frames_page("t", "m", ["<svg/>"], [])


@pytest.fixture(scope="module")
def short_record() -> list[dict]:
    env = rummy_env.gin_rummy_v0.raw_env()
    rec = GameRecorder(env)
    env.reset(seed=rec.start(8))
    rng = np.random.default_rng(8)
    for _ in range(3):
        a = int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
        rec.add(env.agent_selection, a)
        env.step(a)
        rec.rewards(env.rewards)
    return [json.loads(x) for x in rec.finish(stopped=True).lines()]


# what a record's label may hold: printable text (no control characters, no lone surrogates)
label_text = labels.map(lambda s: re.sub(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]", "", s))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(l0=label_text, l1=label_text)
def test_a_record_page_with_any_labels_is_well_formed(short_record, l0, l1):
    lines = [dict(x) for x in short_record]
    lines[0] = {**lines[0], "labels": {"player_0": l0, "player_1": l1}}
    record = read_record([json.dumps(x) for x in lines])
    page, result = record_page(record, "player_1")
    frames, captions = _check_page(page)
    assert len(frames) == len(captions) == 4 and result.steps == 3
    for k, (agent, _, _) in enumerate(record.steps):
        label = record.labels[agent]
        assert captions[k].startswith(
            f"decision {k + 1}: {agent}" + (f" ({label})" if label else "")
        )
    assert "view" in page and page.count("<title>") == 1


def test_record_page_checks_the_record_first(short_record):
    bad = GameRecord("gin_rummy", "", {}, 1, None, agents="player_0")  # built in Python
    with pytest.raises(TypeError, match="record: line 1: agents must be"):
        record_page(bad)
    with pytest.raises(ValueError, match="view must be one of"):
        record_page(read_record([json.dumps(x) for x in short_record]), ["player_0"])
