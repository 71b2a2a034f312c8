"""The compiled Gin Rummy rule agents against their Python reference.

``act`` and ``act_batch`` of ``GinRummyNoviceAgent``, ``GinRummySimpleAgent`` (both take rules)
and ``GinRummyPlannerAgent`` run the kernels of ``rummy_agents.gin_rules_kernels``;
``act_reference`` / ``act_batch_reference`` are the Python rules. On the decisions of real games
(``rummy_env.make_vec``, the agents' moves mixed with random legal ones so that odd positions
appear) three agents with the same seed decide every row: one by ``act_batch`` (on random
chunks of the rows, so that both of its paths run), one by ``act`` row by row, one by the
reference; every action and the generators' states afterwards must be equal. Hypothesis draws
the rule options (Oklahoma, the eleven-card deal, manual melds, match episodes, knock limits,
3 and 4 players ...) and the agents' options and seeds. Malformed input, which the compiled
code leaves to the reference, must give the same action or the same error.

Sizes: ``RUMMY_GIN_RULES_DIFF_SCALE`` multiplies the rows per config family and the hypothesis
examples (default 1: the CI run, some 30 s on two cores with warm numba caches, 20 s more to
compile the kernels; 63 compares 100,800 rows per agent and family, about 25 min). The decisions
compared are printed at the end with ``-s``.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_agents.base import SeatView
from rummy_agents.gin_rules_kernels import melds_with, outlook_mean
from rummy_agents.gin_rummy_rules import (
    GinRummyNoviceAgent,
    GinRummyPlannerAgent,
    GinRummySimpleAgent,
    _draw_outlook,
    _GinRuleAgent,
    completes_meld,
)
from rummy_env import gin_rummy_v0
from rummy_env.core.melds import GROUP_NOPT, GROUP_OPTS, SPREAD, SUIT_DEADWOOD
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy.config import NEXT_DEALER

SCALE = float(os.environ.get("RUMMY_GIN_RULES_DIFF_SCALE", "1"))
ROWS_PER_FAMILY = 1600
"""Rows per config family at scale 1 (every agent spec decides each row)."""
COMPARED: Counter[str] = Counter()
"""Decisions compared per (agent, family), and those with 2+ legal actions ('... choice')."""

Make = Callable[[int], _GinRuleAgent]
AGENTS: dict[str, Make] = {
    "novice": lambda s: GinRummyNoviceAgent(seed=s),
    "simple": lambda s: GinRummySimpleAgent(seed=s),
    "simple_best": lambda s: GinRummySimpleAgent(seed=s, take_rule="best_meld"),
    "planner": lambda s: GinRummyPlannerAgent(seed=s),
    "planner_opts": lambda s: GinRummyPlannerAgent(
        seed=s, risk_weight=2.0, now_weight=0.5, take_margin=1.0
    ),
}
FAMILIES: dict[str, dict[str, Any]] = {
    "standard": {},
    "oklahoma": {"oklahoma": True, "oklahoma_ace_gin_only": True},
    "eleven_card_deal": {"eleven_card_deal": True, "allow_discard_of_drawn_upcard": True},
    "fiftieth_card": {"fiftieth_card_action": True, "knock_limit": 5, "max_pile_draws": 3},
    "manual_melds": {"auto_meld": False},
    "match": {"episode": "match", "target": 60, "knock_limit": 25, "auto_meld": False},
}


E_SIZES = (E.observation_size(True), E.observation_size(False))


def scaled(n: int) -> int:
    return max(1, int(round(n * SCALE)))


class _View:
    """What the agents read of a ``SeatView``: ``config.auto_meld``."""

    def __init__(self, auto_meld: bool) -> None:
        self.config = type("Cfg", (), {"auto_meld": auto_meld})()


def same_state(a: _GinRuleAgent, b: _GinRuleAgent) -> bool:
    return a.rng.bit_generator.state == b.rng.bit_generator.state


def chunked_batch(agent: _GinRuleAgent, o: np.ndarray, m: np.ndarray, auto: bool, rng) -> Any:
    """``agent.act_batch`` over consecutive chunks of random sizes (1 to 200 rows)."""
    out, i = [], 0
    while i < len(o):
        k = int(rng.choice([1, 2, 3, 5, 17, 200]))
        out.append(agent.act_batch(o[i : i + k], m[i : i + k], auto))
        i += k
    return np.concatenate(out)


def compare_games(
    options: dict[str, Any],
    makers: dict[str, Make],
    seed: int,
    n_envs: int,
    rows: int,
    random_frac: float,
    family: str,
) -> None:
    """Play ``n_envs`` games of ``rummy_env.make_vec`` until ``rows`` rows were decided. At
    every round each agent spec decides every row three times, with one seed: compiled
    ``act_batch`` (random chunks), compiled ``act`` row by row and ``act_batch_reference``; the
    actions and the generators' states must be equal. The games then play one spec's action
    per row (in turn), or with probability ``random_frac`` a random legal action.
    """
    venv = rummy_env.make_vec("gin_rummy", n_envs, seed=seed, **options)
    auto = venv.config.auto_meld
    view = _View(auto)
    rng = np.random.default_rng(seed)
    trio = {k: (make(seed), make(seed), make(seed)) for k, make in makers.items()}
    obs, _ = venv.reset()
    done = 0
    step = 0
    while done < rows:
        o, m = obs["observation"], obs["action_mask"]
        choice = int(((m == 1).sum(1) > 1).sum())
        chosen = []
        for name, (batch, single, ref) in trio.items():
            want = ref.act_batch_reference(o, m, auto)
            got = chunked_batch(batch, o, m, auto, rng)
            # without a view the agents infer auto_meld from the 2-player observation length
            v = None if step % 2 and o.shape[1] in E_SIZES else view
            one = [single.act({"observation": o[i], "action_mask": m[i]}, v) for i in range(n_envs)]
            bad = np.flatnonzero(got != want)
            assert not bad.size, (name, family, options, step, bad, got[bad], want[bad])
            assert one == want.tolist(), (name, family, options, step)
            assert same_state(batch, ref) and same_state(single, ref), (name, options, step)
            assert all(type(a) is int for a in one)
            COMPARED[f"{name} {family}"] += n_envs
            COMPARED[f"{name} {family} choice"] += choice
            chosen.append(want)
        acts = np.stack(chosen)[(np.arange(n_envs) + step) % len(chosen), np.arange(n_envs)]
        assert np.all(m[np.arange(n_envs), acts] == 1)
        rand = (rng.random(m.shape) * (m == 1)).argmax(1)
        acts = np.where(rng.random(n_envs) < random_frac, rand, acts)
        obs, *_ = venv.step(acts)
        done += n_envs
        step += 1


@pytest.mark.parametrize("family", list(FAMILIES))
def test_compiled_equals_reference_in_games(family: str) -> None:
    for k, frac in enumerate((0.0, 0.3)):
        compare_games(
            FAMILIES[family],
            AGENTS,
            seed=1000 * k + len(family),
            n_envs=32,
            rows=scaled(ROWS_PER_FAMILY) // 2,
            random_frac=frac,
            family=family,
        )


@st.composite
def rule_options(draw: st.DrawFn) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    if draw(st.booleans()):
        opts["oklahoma"] = True
        opts["oklahoma_ace_gin_only"] = draw(st.booleans())
        opts["oklahoma_extra_boxes"] = draw(st.booleans())
    elif draw(st.booleans()):
        opts["eleven_card_deal"] = True
    opts["knock_limit"] = draw(st.sampled_from([0, 1, 5, 10, 20, 100]))
    opts["fiftieth_card_action"] = draw(st.booleans())
    opts["allow_discard_of_drawn_upcard"] = draw(st.booleans())
    opts["auto_meld"] = draw(st.booleans())
    opts["max_pile_draws"] = draw(st.sampled_from([0, 2, 50]))
    opts["num_players"] = draw(st.sampled_from([2, 2, 2, 3, 4]))
    if draw(st.booleans()):
        opts["episode"] = "match"
        opts["target"] = draw(st.sampled_from([10, 60, 100]))
    if opts["num_players"] == 2:
        opts["next_dealer"] = draw(st.sampled_from(NEXT_DEALER))
    return opts


weights = st.floats(-5.0, 10.0, allow_nan=False) | st.sampled_from([0.0, 1.0])
margins = st.floats(-5.0, 30.0, allow_nan=False) | st.just(math.inf) | st.just(-math.inf)


@st.composite
def agent_makers(draw: st.DrawFn) -> dict[str, Make]:
    kinds = draw(st.sets(st.sampled_from(["novice", "simple", "planner"]), min_size=1))
    out: dict[str, Make] = {}
    if "novice" in kinds:
        out["novice"] = lambda s: GinRummyNoviceAgent(seed=s)
    if "simple" in kinds:
        rule = draw(st.sampled_from(["any_meld", "best_meld"]))
        name = "simple" if rule == "any_meld" else "simple_best"
        out[name] = lambda s: GinRummySimpleAgent(seed=s, take_rule=rule)
    if "planner" in kinds:
        kw = {"risk_weight": draw(weights), "now_weight": draw(weights)}
        kw["take_margin"] = draw(margins)
        out["planner_opts"] = lambda s: GinRummyPlannerAgent(seed=s, **kw)
    return out


@settings(
    max_examples=scaled(20),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    options=rule_options(),
    makers=agent_makers(),
    seed=st.integers(0, 2**32 - 1),
    random_frac=st.sampled_from([0.0, 0.2, 0.6]),
)
def test_compiled_equals_reference_hypothesis(options, makers, seed, random_frac) -> None:
    n = options["num_players"]
    family = "hypothesis" if n == 2 else f"hypothesis_{n}p"
    compare_games(options, makers, seed, n_envs=12, rows=200, random_frac=random_frac,
                  family=family)  # fmt: skip


def test_act_equals_reference_in_aec_games() -> None:
    """``act`` with a real ``SeatView`` (the arena's and the Gymnasium env's path)."""
    for cfg_name, options in (("standard", {}), ("manual", {"auto_meld": False, "oklahoma": True})):
        env = gin_rummy_v0.raw_env(**options)
        for ep in range(scaled(4)):
            env.reset(seed=ep)
            views = {a: SeatView(env, a) for a in env.possible_agents}
            makers = list(AGENTS.values())
            seats = {
                "player_0": (makers[ep % 5](ep), makers[ep % 5](ep)),
                "player_1": (makers[(ep + 2) % 5](ep + 9), makers[(ep + 2) % 5](ep + 9)),
            }
            while not all(env.terminations.values()):
                name = env.agent_selection
                obs = env.observe(name)
                comp, ref = seats[name]
                a = comp.act(obs, views[name])
                assert a == ref.act_reference(obs, views[name]), (cfg_name, ep)
                assert same_state(comp, ref)
                env.step(a)


# ---------------------------------------------------------------------------------------------
# The kernels' building blocks


def test_integers_of_one_draws_nothing() -> None:
    """The compiled code draws no tie-break for a lone candidate: numpy's ``integers(1)`` (the
    reference's draw there) returns 0 and leaves the generator as it was.
    """
    rng = np.random.default_rng(7)
    before = rng.bit_generator.state
    assert all(rng.integers(1) == 0 for _ in range(5))
    assert rng.bit_generator.state == before


hands = st.sets(st.integers(0, 51), max_size=11).map(lambda cs: sum(1 << c for c in cs))


@settings(max_examples=scaled(300), deadline=None)
@given(hand=hands, unseen=st.integers(0, (1 << 52) - 1), card=st.integers(0, 51))
def test_outlook_mean_and_melds_with(hand: int, unseen: int, card: int) -> None:
    unseen &= ~hand
    assert bool(melds_with(card, np.uint64(hand))) == completes_meld(card, hand)
    tables = (SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD)
    want, _ = _draw_outlook(np.uint64(hand), np.uint64(unseen), 10, *tables)
    assert outlook_mean(np.uint64(hand), np.uint64(unseen)) == want  # the same float


# ---------------------------------------------------------------------------------------------
# Malformed input and errors: the same action or the same error as the reference


def outcome(fn: Callable[[], Any]) -> tuple:
    try:
        return ("ok", np.asarray(fn()).tolist())
    except Exception as e:  # noqa: BLE001 - the errors themselves are compared
        return ("raise", type(e), str(e))


def game_rows(options: dict[str, Any], n: int = 64, steps: int = 25, seed: int = 3) -> tuple:
    """Rows of real positions (observations, masks) after ``steps`` rounds of simple play."""
    venv = rummy_env.make_vec("gin_rummy", n, seed=seed, **options)
    obs, _ = venv.reset()
    agent = GinRummySimpleAgent(seed=seed)
    o_all, m_all = [], []
    for _ in range(steps):
        o, m = obs["observation"], obs["action_mask"]
        o_all.append(o)
        m_all.append(m)
        obs, *_ = venv.step(agent.act_batch(o, m, venv.config.auto_meld))
    return np.concatenate(o_all), np.concatenate(m_all)


def check_same(make: Make, rows: list[tuple[Any, Any]], view: Any, auto: Any) -> None:
    """``act`` per row, then ``act_batch`` of all rows: outcomes and generators as the
    reference's.
    """
    comp, ref = make(5), make(5)
    for o, m in rows:
        row = {"observation": o, "action_mask": m}
        got = outcome(lambda row=row: comp.act(row, view))
        want = outcome(lambda row=row: ref.act_reference(row, view))
        assert got == want
        assert same_state(comp, ref)
    obs = [o for o, _ in rows]
    masks = [m for _, m in rows]
    got = outcome(lambda: comp.act_batch(np.asarray(obs), masks, auto))
    want = outcome(lambda: ref.act_batch_reference(np.asarray(obs), masks, auto))
    assert got == want
    assert same_state(comp, ref)


@pytest.mark.parametrize("agent", list(AGENTS))
@pytest.mark.parametrize("auto", [True, False])
def test_malformed_input_same_as_reference(agent: str, auto: bool) -> None:
    o_all, m_all = game_rows({"auto_meld": auto, "fiftieth_card_action": True})
    rng = np.random.default_rng(11)
    idx = rng.choice(len(o_all), 40, replace=False)
    rows: list[tuple[Any, Any]] = []
    for i in idx:
        o, m = o_all[i].copy(), m_all[i].copy()
        legal = np.flatnonzero(m == 1)
        kind = len(rows) % 10
        if kind == 0:
            m[legal[0]] = 2  # truthy but not legal
        elif kind == 1:
            m = m.astype(np.float64) * 0.5 + (m == 1) * 0.5
            m[rng.integers(len(m))] = 0.5
        elif kind == 2:
            m = m.astype(bool)
        elif kind == 3:
            o[E.piece_offsets(True)["knock_limit"]] = np.nan
        elif kind == 4:
            o[E.piece_offsets(True)["opponent_hand_size"]] = np.inf
        elif kind == 5:
            m[E.DISCARD_BASE : E.KNOCK_BASE + 52] = 0  # no discard, no knock
            m[E.PASS] = 1
            m[E.DRAW_STOCK] = 1
        elif kind == 6:
            m = m[: E.MELD_BASE - 10]  # too short a mask
        elif kind == 7:
            m[:] = 0  # no legal action
        elif kind == 8:
            o = o.astype(np.float64) + 1e-9  # another dtype: cast like the reference
        else:
            o[E.piece_offsets(True)["phase"] + rng.integers(8)] = 2.0  # any phase
        rows.append((o, m))
    view = _View(auto)
    make = AGENTS[agent]
    for o, m in rows:
        check_same(make, [(o, m)], view, auto)
    # rows of one batch: real ones, then each malformed one in turn (rows before it played)
    for o, m in rows:
        if np.shape(m) == m_all[0].shape:
            block = [(o_all[j], m_all[j]) for j in idx[:7]] + [(o, m.astype(np.int8))]
            check_same(make, block + [(o_all[idx[8]], m_all[idx[8]])], view, auto)


@pytest.mark.parametrize("agent", list(AGENTS))
def test_errors_as_before(agent: str) -> None:
    make = AGENTS[agent]
    o_all, m_all = game_rows({})
    empty = np.zeros_like(m_all[0])
    for fn in ("act", "act_reference"):
        with pytest.raises(ValueError, match="no legal action"):
            getattr(make(0), fn)({"observation": o_all[0], "action_mask": empty})
    for fn in ("act_batch", "act_batch_reference"):
        with pytest.raises(ValueError, match="no legal action"):
            getattr(make(0), fn)(o_all[:9], np.concatenate([m_all[:8], empty[None]]))
        with pytest.raises(ValueError, match="not a Gin Rummy observation: length 10"):
            getattr(make(0), fn)(o_all[:3, :10], m_all[:3])
    # a wrong observation length is an error only where there is a choice (no view given)
    legal = np.flatnonzero(m_all[0] == 1)
    one = np.zeros_like(m_all[0])
    one[legal[-1]] = 1
    assert make(0).act({"observation": o_all[0][:10], "action_mask": one}) == legal[-1]
    with pytest.raises(ValueError, match="not a Gin Rummy observation"):
        make(0).act({"observation": o_all[0][:10], "action_mask": m_all[0]})
    # rows and masks of different lengths: zip(strict=True) after the common rows, as before
    a, b = make(4), make(4)
    for fn in (a.act_batch, b.act_batch_reference):
        with pytest.raises(ValueError, match="zip"):
            fn(o_all[:40], m_all[:39])
    assert same_state(a, b)


def test_subclass_overriding_a_rule_plays_python() -> None:
    class LowestCard(GinRummySimpleAgent):
        def _pick(self, cands: list[int]) -> int:
            return min(cands)

    o_all, m_all = game_rows({})
    sub, ref = LowestCard(seed=1), LowestCard(seed=1)
    got = sub.act_batch(o_all, m_all)
    assert got.tolist() == ref.act_batch_reference(o_all, m_all).tolist()
    plain = GinRummySimpleAgent(seed=1).act_batch(o_all, m_all)
    assert (got != plain).any()  # the override took effect


def test_compared_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """Last in the module: print what was compared (``pytest -s``)."""
    with capsys.disabled():
        for key in sorted(COMPARED):
            print(f"{key:60s} {COMPARED[key]:>10,d}")
