"""The opponent-model measurements: experiments/belief_fit.py and experiments/search_oracle.py."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from rummy_agents.ismcts.gin import gin_rollout_actions
from rummy_env import gin_rummy_v0
from rummy_env.encodings import gin_rummy as E
from rummy_env.envs.view import SeatView
from rummy_env.rules.gin_rummy import kernels as K

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _cards(hand) -> set[int]:
    return {c for c in range(52) if int(hand) >> c & 1}


def _rule_move(env) -> int:
    """Gin's rule policy (the filter's model of the opponent) in the env's game."""
    game = env.unwrapped.game
    out = np.zeros(game.num_games, dtype=np.int64)
    gin_rollout_actions(game.states, game.masks, K.TABLES, game.num_actions, 0.0, out)
    return int(out[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rule_filter_particles_agree_with_everything_public(seed):
    """Against the rule policy, at each of the seat's decisions every live particle is a
    10-card opponent hand holding the cards the opponent took from the pile (still held) and
    none of the seat's hand, the pile or the cards the seat drew."""
    mod = _script("belief_fit")
    env = gin_rummy_v0.raw_env()
    env.reset(seed=seed)
    me = env.possible_agents[seed % 2]
    mine = env.possible_agents.index(me)
    filt = mod.RuleFilter(512, 0.05, np.random.default_rng(seed))
    filt.reset(env.unwrapped.state_record, mine)
    probe = SeatView(env, me).sample_worlds(1, 0)
    taken: set[int] = set()
    checked = 0
    for name in env.agent_iter():
        _obs, _r, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = _rule_move(env)
        rec = env.unwrapped.state_record.copy()
        if name != me:
            filt.opponent_acts(type(probe), probe.config, rec, a)
            if a == E.TAKE_DISCARD:
                taken.add(int(rec["pile"][int(rec["pile_n"]) - 1]))
            elif E.DISCARD_BASE <= a < E.MELD_BASE:
                taken.discard((a - E.DISCARD_BASE) % 52)
            env.step(a)
            continue
        if not filt.lost and int(rec["phase"]) in (E.PH_DRAW, E.PH_UPCARD):
            seen = _cards(rec["hands"][mine]) | {int(c) for c in rec["pile"][: rec["pile_n"]]}
            live = filt.hands[np.isfinite(filt.logw)]
            for h in live:
                cards = _cards(h)
                assert len(cards) == 10
                assert taken <= cards
                assert not cards & seen
            assert _cards(rec["hands"][1 - mine]) & set().union(*map(_cards, live))
            checked += 1
        before = int(rec["hands"][mine])
        env.step(a)
        if a == E.DRAW_STOCK:
            new = int(env.unwrapped.state_record["hands"][mine]) & ~before
            filt.seat_draws(new.bit_length() - 1)
            live = filt.hands[np.isfinite(filt.logw)]
            assert not (live & np.uint64(new)).any(), "a particle holds the card the seat drew"
    assert checked, "no decision of the seat was checked"


def test_belief_fit_scores_the_variants(tmp_path):
    mod = _script("belief_fit")
    out = tmp_path / "fit.json"
    old = sys.argv
    sys.argv = ["belief_fit.py", "--hands", "2", "--worlds", "16", "--out", str(out),
                "--variants", "default", "uniform", "strong:evidence=4,oversample=8",
                "filter:n=256,eps=0.1"]  # fmt: skip
    try:
        mod.main()
    finally:
        sys.argv = old
    got = json.loads(out.read_text())
    assert got["decisions"] > 0
    assert set(got["variants"]) == {"default", "uniform", "strong", "filter:n=256,eps=0.1"}
    for row in got["variants"].values():
        assert row["logloss"] > 0 and 0 < row["hits"] <= 10
    with pytest.raises(ValueError, match="field must be one of .*'evidence'.*got 'nope'"):
        mod.parse_variant("bad:nope=1")


def test_search_oracle_worlds_hold_the_true_opponent_hand(tmp_path):
    mod = _script("search_oracle")
    env = gin_rummy_v0.raw_env()
    env.reset(seed=3)
    for _ in range(4):
        obs = env.observe(env.agent_selection)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    view = SeatView(env, env.agent_selection)
    rec = env.unwrapped.state_record
    worlds = mod.oracle_worlds(view, 8, np.random.default_rng(0))
    assert (worlds.states["hands"] == rec["hands"]).all()
    pos = int(rec["deck_pos"])
    stock = sorted(rec["deck"][pos:])
    assert all(sorted(d[pos:]) == stock for d in worlds.states["deck"])
    assert len({tuple(d[pos:]) for d in worlds.states["deck"]}) > 1, "stocks reshuffled"
    assert mod.main(["--game", "gin_rummy", "--episode", "hand", "--deals", "1", "--no-plot",
                     "--agents", "ppo_search_oracle@worlds=4,simple", "--workers", "2",
                     "--out", str(tmp_path / "arena")]) == 0  # fmt: skip
    assert (tmp_path / "arena" / "games.csv").read_text().count("ppo_search_oracle") == 2
