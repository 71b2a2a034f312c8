"""PettingZoo conformance (api_test, seed_test) and our env contract on several configs."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest

from rummy_env import gin_rummy_v0
from rummy_env.encodings import gin_rummy as E
from rummy_env.testing import check_aec_env, gin_deck

CONFIGS = [
    {},
    {"oklahoma": True},
    {"oklahoma": True, "oklahoma_ace_gin_only": True, "oklahoma_extra_boxes": True},
    {"episode": "match", "target": 50},
    {"auto_meld": False},
    {"eleven_card_deal": True},
    {"fiftieth_card_action": True},
    {"reward": "normalized", "allow_discard_of_drawn_upcard": True},
    {"max_steps": 40},
]


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(o) or "default")
def test_pettingzoo_api_seed_and_contract(options):
    check_aec_env(lambda: gin_rummy_v0.env(**options))


def test_registered_in_pettingzoo_registry():
    import rummy_env  # noqa: F401

    env = pettingzoo.make("aec", "rummy/gin_rummy-v0", knock_limit=7, render_mode="ansi")
    env.reset(seed=1)
    assert env.unwrapped.config.knock_limit == 7
    assert "knock limit 7" in env.render()


def test_same_seed_same_game_and_reset_continues_the_stream():
    a, b = gin_rummy_v0.raw_env(), gin_rummy_v0.raw_env()
    a.reset(seed=5)
    b.reset(seed=5)
    assert np.array_equal(a.state_record["deck"], b.state_record["deck"])
    a.reset()
    b.reset()
    assert np.array_equal(a.state_record["deck"], b.state_record["deck"])
    c = gin_rummy_v0.raw_env()
    c.reset(seed=5)
    assert not np.array_equal(a.state_record["deck"], c.state_record["deck"])


def test_observation_pieces_show_what_the_player_sees():
    knocker = "Ac 2c 3c 5d 6d 7d 9h 9s 9c Kd"
    env = gin_rummy_v0.raw_env()
    env.reset(
        options={"deck": gin_deck(knocker, "4h 5h Qs Js 2d 8c Tc Th 3s 6s", "Ks"), "dealer": 1}
    )
    env.step(E.TAKE_DISCARD)  # player_0 takes K♠
    env.step(E.action_id("DISCARD[Kd]"))
    v0 = E.split_observation(env.observe("player_0")["observation"], True)
    v1 = E.split_observation(env.observe("player_1")["observation"], True)
    hand0 = {c for c in range(52) if v0["hand"][c]}
    assert hand0 == {0, 1, 2, 8, 17, 18, 19, 34, 47, 51}  # K♦ out, K♠ in
    assert v1["discard_top"][25] == 1 and v1["discard_top"].sum() == 1  # K♦ on top
    assert v1["opponent_known"][51] == 1 and v1["opponent_known"].sum() == 1  # player_0 holds K♠
    assert v0["opponent_known"].sum() == 0
    assert v0["stock_size"][0] == 1.0 and v0["opponent_hand_size"][0] == 10 / 11
    assert v1["is_dealer"][0] == 1 and v0["is_dealer"][0] == 0
    assert v1["phase"][E.PH_DRAW] == 1
    assert v0["knock_limit"][0] == 1.0


def test_ansi_render_shows_the_table():
    env = gin_rummy_v0.env(render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    assert "player_0" in text and "stock 31 cards" in text and "upcard_offer" in text


def test_observation_stays_in_its_space_with_a_high_knock_limit():
    env = gin_rummy_v0.raw_env(knock_limit=25)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert env.observation_space(env.agent_selection).contains(obs)
