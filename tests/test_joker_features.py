"""The ``joker_cards`` observation features hold, for the player to act, exactly what the
compiled helpers compute from the full game state - though they read only the observation."""

from __future__ import annotations

import numpy as np
import pytest

import rummy_env
from rummy_agents.features import (
    add_features,
    card_layout,
    default_features,
    feature_size,
    joker_layout,
)
from rummy_agents.heuristic import HeuristicAgent
from rummy_agents.joker_rollouts import closeness, melds_with_hand
from rummy_env.core.table import can_lay_off
from rummy_env.rules.rummy51.kernels import can_retrieve_with


def _positions(game: str, n: int, steps: int, **options):
    """Positions of games played by the heuristic with a quarter of random moves."""
    venv = rummy_env.make_vec(game, n, seed=0, **options)
    obs, _ = venv.reset()
    agent = HeuristicAgent(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        yield venv, obs
        a = agent.act_game(venv.game)
        mask = obs["action_mask"]
        for i in np.flatnonzero(rng.random(n) < 0.25):
            a[i] = rng.choice(np.flatnonzero(mask[i]))
        obs, *_ = venv.step(a)


@pytest.mark.parametrize(
    ("game", "options"),
    [
        ("rummy51", {}),
        ("five_hundred_rum", {}),
        ("rummy51", {"num_players": 3}),
        ("five_hundred_rum", {"num_players": 4}),
    ],  # fmt: skip
)
def test_planes_match_the_state(game: str, options: dict) -> None:
    r51 = game == "rummy51"
    checked = {"melds": 0, "fits": 0, "top": 0}
    for venv, obs in _positions(game, 16, 120, **options):
        x = add_features("joker_cards", obs["observation"])
        f = x[:, obs["observation"].shape[1] :].reshape(-1, 6, 52)
        players = venv.num_players
        for i in range(16):
            rec = venv.game.states[i]
            hand = rec["hands"][rec["cur"]].astype(np.int64)
            nxt = rec["known"][(rec["cur"] + 1) % players].astype(np.int64)
            for c in range(52):
                h = hand.copy()
                h[c] -= 1
                melds = hand[c] > 0 and melds_with_hand(h, c)
                assert f[i, 0, c] == float(melds), (i, c)
                assert f[i, 1, c] == closeness(hand, c) / 16.0
                assert f[i, 2, c] == closeness(nxt, c) / 16.0
                fits = can_lay_off(rec, c) or (r51 and can_retrieve_with(rec, c))
                assert f[i, 3, c] == float(fits), (i, c)
                checked["melds"] += melds
                checked["fits"] += fits
            n = rec["pile_n"]
            top = int(rec["pile"][n - 1]) if n > 0 else -1
            expect = np.zeros(52)
            if 0 <= top < 52:
                expect[top] = 1.0
                assert f[i, 5, top] == float(melds_with_hand(hand, top))
                checked["top"] += 1
            np.testing.assert_array_equal(f[i, 4], expect)
            assert f[i, 5].sum() <= f[i, 4].sum()
    assert min(checked.values()) > 100, checked  # the positions reach tables and melds


def test_layouts_and_errors() -> None:
    assert default_features("rummy51") == "joker_cards"
    assert default_features("five_hundred_rum") == "joker_cards"
    venv = rummy_env.make_vec("rummy51", 2, seed=0)
    width = venv.game.layout.obs_size
    assert joker_layout(width)[0] == "rummy51"
    planes, blocks, select = card_layout("rummy51", "joker_cards", width)
    assert blocks == [venv.game.layout.discard_base] and select == [(1, width + 208)]
    assert len(planes) == 9 and planes[-1] == width + feature_size("joker_cards") - 52
    with pytest.raises(ValueError, match="no layout is 10 wide"):
        add_features("joker_cards", np.zeros((1, 10)))
    with pytest.raises(ValueError, match="cannot tell apart"):
        joker_layout(1760)  # 500 Rum: 3 players and 54 cards, or 4 players and 52
