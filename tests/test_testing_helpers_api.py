"""The other shipped helpers of ``rummy_env.testing``: ``check_aec_env`` and the spec readers.

Valid arguments work (the checker passes a conforming env and catches a broken one; the readers
return the sections and table rows written); invalid ones raise ``TypeError``/``ValueError``
naming the argument, before anything runs.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy_env import gin_rummy_v0
from rummy_env.testing import check_aec_env
from rummy_env.testing.spec import spec_sections, spec_table

SETTINGS = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
NOT_INTS = st.one_of(
    st.booleans(),
    st.booleans().map(np.bool_),
    st.floats(allow_nan=True),
    st.integers(0, 5).map(float),
    st.none(),
    st.text(max_size=3),
    st.lists(st.integers(0, 3), max_size=2),
)
"""Never an integer: bool is not, a float is not even when whole."""


def named(msg: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", msg) is not None


# -- check_aec_env -------------------------------------------------------------------------------
class NeverCalled:
    """An env factory that records whether it was called."""

    calls = 0

    def __call__(self) -> Any:
        NeverCalled.calls += 1
        raise AssertionError("env_fn called before the arguments were checked")


@SETTINGS
@given(
    arg=st.sampled_from(["num_cycles", "episodes", "seed"]),
    bad=NOT_INTS,
    data=st.data(),
)
def test_check_aec_env_refuses_counts_and_seeds_before_calling_env_fn(arg, bad, data) -> None:
    fn = NeverCalled()
    with pytest.raises(TypeError) as info:
        check_aec_env(fn, **{arg: bad})
    assert named(str(info.value), arg)
    low = 1 if arg == "num_cycles" else 0
    out = data.draw(st.integers(-(10**6), low - 1))
    with pytest.raises(ValueError) as info:
        check_aec_env(fn, **{arg: out})
    assert named(str(info.value), arg)
    assert NeverCalled.calls == 0


@pytest.mark.parametrize(
    "env_fn", [None, 3, "gin_rummy_v0", gin_rummy_v0.env(), [gin_rummy_v0.env]]
)
def test_check_aec_env_refuses_an_env_fn_that_is_not_callable(env_fn) -> None:
    with pytest.raises(TypeError, match="env_fn"):
        check_aec_env(env_fn)


def test_check_aec_env_passes_a_conforming_env_with_numpy_counts() -> None:
    check_aec_env(gin_rummy_v0.env, num_cycles=np.int64(20), episodes=np.int32(1), seed=np.uint8(4))
    check_aec_env(lambda: gin_rummy_v0.env(num_players=4), num_cycles=20, episodes=0)


def test_check_aec_env_catches_an_env_that_accepts_an_unmasked_action() -> None:
    """An env whose raw game plays any action is refused (the contract, not the API)."""

    def lenient() -> Any:
        env = gin_rummy_v0.env()
        raw = env.unwrapped
        strict = raw.step

        def step(action: Any) -> None:
            try:
                strict(action)
            except ValueError:
                pass  # accepts what it should reject

        raw.step = step
        return env

    with pytest.raises(AssertionError, match="unmasked action"):
        check_aec_env(lenient, num_cycles=10, episodes=1)


# -- spec_sections / spec_table ------------------------------------------------------------------
TITLE = st.text(alphabet="abcdefghij XYZ", min_size=1, max_size=12).map(str.strip).filter(bool)
CELL = st.text(alphabet="abc019_.", min_size=1, max_size=6)


@st.composite
def spec_doc(draw: st.DrawFn) -> tuple[str, dict[str, list[list[list[str]]]]]:
    """A docstring of ``## `` sections holding markdown tables, and what it holds."""
    titles = draw(st.lists(TITLE, min_size=1, max_size=4, unique=True))
    titles = [t for t in titles if not any(o != t and o.startswith(t) for o in titles)]
    parts, content = ["Intro line."], {}
    for t in titles:
        tables = []
        parts += ["", f"## {t}", "", "Some text."]
        for _ in range(draw(st.integers(0, 3))):
            width = draw(st.integers(1, 4))
            rows = draw(st.lists(st.lists(CELL, min_size=width, max_size=width), max_size=4))
            head = [f"h{i}" for i in range(width)]
            parts += ["", "| " + " | ".join(head) + " |", "|" + "---|" * width]
            parts += ["| " + " | ".join(r) + " |" for r in rows]
            parts += ["", "Between tables."]
            tables.append(rows)
        content[t] = tables
    return "\n".join(parts) + "\n", content


@SETTINGS
@given(doc=spec_doc())
def test_spec_readers_return_the_sections_and_rows_written(doc) -> None:
    text, content = doc
    assert spec_sections(text) == list(content)
    for title, tables in content.items():
        for i, rows in enumerate(tables):
            assert spec_table(text, title, np.int64(i)) == rows
        with pytest.raises(ValueError) as info:
            spec_table(text, title, len(tables))
        assert named(str(info.value), "index")


@SETTINGS
@given(doc=spec_doc(), bad=NOT_INTS | st.integers(-(10**6), -1), data=st.data())
def test_spec_table_refuses_a_bad_index_or_section(doc, bad, data) -> None:
    text, content = doc
    title = data.draw(st.sampled_from(list(content)))
    exc = ValueError if isinstance(bad, int) and not isinstance(bad, bool) else TypeError
    with pytest.raises(exc) as info:
        spec_table(text, title, bad)
    assert named(str(info.value), "index")
    missing = data.draw(TITLE.filter(lambda t: f"## {t}" not in text))
    with pytest.raises(ValueError) as info:
        spec_table(text, missing)
    assert named(str(info.value), "section")
    section = data.draw(NOT_INTS.filter(lambda v: not isinstance(v, str)) | st.integers())
    with pytest.raises(TypeError) as info:
        spec_table(text, section)
    assert named(str(info.value), "section")


@pytest.mark.parametrize("doc", [None, 3, b"## A", ["## A"], 1.5])
def test_spec_readers_refuse_a_doc_that_is_not_text(doc) -> None:
    for call in (lambda: spec_sections(doc), lambda: spec_table(doc, "A")):
        with pytest.raises(TypeError) as info:
            call()
        assert named(str(info.value), "doc")
