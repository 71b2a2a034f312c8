"""The arena's batches (rummy_agents.arena.batch) give exactly the game-by-game records."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_agents.arena import ArenaSpec, run_arena
from rummy_agents.arena import batch as B
from rummy_agents.arena.play import make_env, play_deal
from rummy_agents.arena.registry import make_agent
from rummy_agents.arena.runner import agent_seed, deal_seed
from rummy_agents.pcg64 import STATE_SIZE, seed_state
from rummy_agents.random_agent import RandomAgent
from rummy_env.core.validate import ArgumentTypeError


def _seeds(env, deals, seed=0, pair=0):
    slots = len(env.possible_agents) + 1
    resets = [deal_seed(seed, k) for k in range(deals)]
    agents = [
        [[agent_seed(seed, pair, k, leg, s) for s in range(slots)] for leg in (0, 1)]
        for k in range(deals)
    ]
    return resets, agents


def _both_ways(game, names, deals, options=None, max_decisions=100_000, seed=0):
    env = make_env(game, options or {})
    make = functools.partial(make_agent, game=game)
    resets, agents = _seeds(env, deals, seed)
    batched = B.play_deals(env, make, names, resets, agents, max_decisions)
    one_by_one = [
        play_deal(env, make, names, resets[k], agents[k], max_decisions) for k in range(deals)
    ]
    return batched, one_by_one


CASES = [
    ("gin_rummy", ("random", "simple"), {}, 40),
    ("gin_rummy", ("novice", "planner"), {}, 30),
    ("gin_rummy", ("simple", "ppo"), {}, 30),
    ("gin_rummy", ("random", "novice"), {"episode": "match", "target": 60}, 10),
    ("gin_rummy", ("random", "simple"), {"auto_meld": False, "knock_limit": 7}, 15),
    ("five_hundred_rum", ("random", "greedy"), {}, 20),
    ("five_hundred_rum", ("greedy", "greedy@hold_melds=2"), {"num_players": 3}, 10),
    ("five_hundred_rum", ("ppo", "greedy"), {}, 10),
    ("rummy51", ("random", "greedy"), {}, 20),
    ("rummy51", ("greedy_plus", "greedy@hold_open=2"), {"num_players": 4}, 8),
    ("rummy51", ("ppo", "random"), {"episode": "match", "max_steps": 3000}, 4),
]


@pytest.mark.parametrize(("game", "names", "options", "deals"), CASES)
def test_batch_makes_the_game_by_game_records(game, names, options, deals):
    batched, one_by_one = _both_ways(game, names, deals, options)
    assert batched is not None, "these agents play as a batch"
    assert len(batched) == deals
    for k, (got, want) in enumerate(zip(batched, one_by_one, strict=True)):
        assert got == want, f"deal {k}"
    # the records are real games: decisions were made and someone scored
    assert all(r["decisions"] > 0 for recs in batched for r in recs)
    assert any(r["result"] != 0 for recs in batched for r in recs)


def test_games_at_the_decision_cap_are_replayed_game_by_game():
    batched, one_by_one = _both_ways("gin_rummy", ("random", "simple"), 6, max_decisions=9)
    assert batched == one_by_one
    assert all(r["truncated"] and r["decisions"] == 9 for recs in batched for r in recs)


def test_decisions_left_to_the_reference_are_replayed_game_by_game(monkeypatch):
    """A game whose compiled decision returns FALLBACK (or NOT_LEGAL) is replayed by play_game."""
    real = B.batch_agent

    class Refusing:
        def __init__(self, inner, code):
            self.inner, self.code, self.calls = inner, code, 0

        def decide(self, b, rows):
            acts = self.inner.decide(b, rows)
            self.calls += 1
            if self.calls % 3 == 0:
                acts[::2] = self.code  # every other game of every third round
            return acts

    codes = iter([B.FALLBACK, B.NOT_LEGAL])
    monkeypatch.setattr(B, "batch_agent", lambda a, g: Refusing(real(a, g), next(codes)))
    batched, one_by_one = _both_ways("five_hundred_rum", ("random", "greedy"), 8)
    assert batched == one_by_one


def test_what_cannot_play_as_a_batch_plays_game_by_game():
    env = make_env("gin_rummy", {"num_players": 3})
    make = functools.partial(make_agent, game="gin_rummy")
    resets, agents = _seeds(env, 2)
    assert B.play_deals(env, make, ("random", "simple"), resets, agents, 1000) is None
    env = make_env("gin_rummy", {})
    resets, agents = _seeds(env, 2)
    for names in (("random", "ismcts@iterations=4"), ("ppo@deterministic=false", "simple")):
        assert B.play_deals(env, make, names, resets, agents, 1000) is None
    assert B.play_deals(env, make, ("random", "simple"), [], [], 1000) == []


@pytest.mark.parametrize(
    ("game", "options", "names"),
    [
        ("gin_rummy", {}, ("random", "ismcts@iterations=4")),
        ("gin_rummy", {"num_players": 3}, ("random", "simple")),
        ("rummy51", {}, ("greedy", "ppo")),
    ],
)
def test_the_arena_gives_the_same_results_either_way(game, options, names):
    def run(batch):
        spec = ArenaSpec(game, names, deals=3, seed=5, options=options, bootstrap=0, batch=batch)
        return run_arena(spec, progress=False)

    a, b = run(True), run(False)
    assert a.records == b.records
    assert repr(a.pairs) == repr(b.pairs)  # NaN rates compare as text


def test_batch_must_be_a_bool():
    with pytest.raises(ArgumentTypeError, match="batch must be True or False, got 1"):
        ArenaSpec("gin_rummy", ("random", "simple"), deals=1, batch=1)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.lists(st.lists(st.booleans(), min_size=12, max_size=12), min_size=1, max_size=12),
)
def test_the_compiled_random_agent_draws_as_random_agent(seed, rows):
    masks = np.array(rows, np.int8)
    masks[masks.sum(1) == 0, 0] = 1
    n = masks.shape[0]
    gens = np.zeros((n, 1, STATE_SIZE), np.uint64)
    for i in range(n):
        seed_state(seed, gens[i, 0])
    want = [RandomAgent(seed).act({"action_mask": m}) for m in masks]
    # one game drawing row after row from one generator, as an agent acting on each row
    one = np.zeros((1, 1, STATE_SIZE), np.uint64)
    seed_state(seed, one[0, 0])
    agent = RandomAgent(seed)
    for m in masks:
        acts = np.empty(1, np.int64)
        B.decide_rows((), np.zeros((1, 1), np.float32), m[None], 12, np.zeros(1, np.int64),
                      np.zeros(1, np.int64), one, acts)  # fmt: skip
        assert acts[0] == agent.act({"action_mask": m})
    acts = np.empty(n, np.int64)
    obs = np.zeros((n, 1), np.float32)
    B.decide_rows((), obs, masks, 12, np.arange(n), np.zeros(n, np.int64), gens, acts)
    assert acts.tolist() == want


@pytest.mark.parametrize("game", ["gin_rummy", "five_hundred_rum", "rummy51"])
def test_batched_ppo_moves_are_the_one_row_moves(game, monkeypatch):
    """Over many real positions, one forward pass for all rows picks each row's act() move,
    whether or not rows are re-decided alone (TIE_TOLERANCE)."""
    env = make_env(game, {})
    agent = make_agent("ppo", 0, game)
    rng = np.random.default_rng(1)
    obs, masks = [], []
    for s in range(6):
        env.reset(seed=s)
        while not any(env.terminations.values()) and len(obs) < 60 * (s + 1):
            o = env.observe(env.agent_selection)
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    want = [
        agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)
    ]

    class Rows:
        def __init__(self):
            self.obs = np.array(obs)
            self.na = len(masks[0])
            self.game = type("G", (), {"masks": np.array(masks)})()

    rows = np.arange(len(obs))
    for tolerance in (B.TIE_TOLERANCE, 0.0, 1e9):
        monkeypatch.setattr(B, "TIE_TOLERANCE", tolerance)
        assert B._Learned(agent).decide(Rows(), rows).tolist() == want


def test_workers_compile_different_parts_first():
    from rummy_agents.arena.runner import _compile_tasks

    spec = ArenaSpec("rummy51", ("random", "greedy", "ppo"), deals=1, workers=2)
    parts = [p for _, p in _compile_tasks(spec)]
    assert parts == ["agent:greedy", "agent:ppo", "agent:random", "game"]
    for quiet in ({"workers": 1}, {"batch": False}, {"record": "somewhere"}):
        args = {"workers": 2, **quiet}
        assert _compile_tasks(ArenaSpec("gin_rummy", ("random", "simple"), deals=1, **args)) == []
    env = make_env("rummy51", {})
    make = functools.partial(make_agent, game="rummy51")
    for part in parts + ["agent:ismcts@iterations=4"]:
        B.compile_part(env, make, part)  # compiles or loads; plays nothing
