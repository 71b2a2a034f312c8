"""Arguments are checked in full before anything changes, with errors that name them; valid
inputs (either joker id included) are accepted."""

from __future__ import annotations

import numpy as np
import pytest

import rummy_env
from rummy_env import five_hundred_rum_v1, gin_rummy_v0, rummy51_v1
from rummy_env.core.cards import cards_to_counts, validate_deck
from rummy_env.core.validate import MAX_GAMES, ArgumentTypeError

MODULES = [gin_rummy_v0, five_hundred_rum_v1, rummy51_v1]
NAMES = ["gin_rummy", "five_hundred_rum", "rummy51"]


def _state(env):
    return env.game.states.tobytes(), env.game.masks.tobytes(), env.agent_selection


def test_argument_type_error_is_both_type_and_value_error():
    assert issubclass(ArgumentTypeError, TypeError) and issubclass(ArgumentTypeError, ValueError)


@pytest.mark.parametrize("mod", MODULES)
def test_a_refused_reset_changes_nothing_not_even_the_random_stream(mod):
    env = mod.raw_env()
    env.reset(seed=5)
    twin = mod.raw_env()
    twin.reset(seed=5)
    before = _state(env)
    full = [int(c) for c in env.game.deck]
    for bad in [
        {"seed": 3, "options": {"dealer": 99}},
        {"seed": 3, "options": {"dealer": True}},
        {"seed": 3, "options": {"deck": full[:-1] + [full[0]]}},
        {"seed": 3, "options": {"deck": 7}},
        {"seed": -1},
        {"seed": 3.0},
        {"seed": 3, "options": ["deck"]},
    ]:
        with pytest.raises((ValueError, TypeError)):
            env.reset(**bad)
        assert _state(env) == before, bad
    env.reset()  # continues the stream exactly as if the refused calls never happened
    twin.reset()
    assert env.game.states.tobytes() == twin.game.states.tobytes()


@pytest.mark.parametrize("name", NAMES)
def test_vector_decks_are_all_checked_before_any_is_applied(name):
    venv = rummy_env.make_vec(name, 4, seed=0)
    venv.reset()
    full = [int(c) for c in venv.game.deck]
    before = venv.game.states.tobytes()
    bad = full[:-1] + [full[0]]
    with pytest.raises(ValueError, match=r"decks\[1\] is not a full deck"):
        venv.reset(seed=1, options={"decks": [full, bad, None, None]})
    assert venv.game.states.tobytes() == before
    with pytest.raises(ValueError, match=r"decks must have one entry per game \(4\), got 3"):
        venv.reset(options={"decks": [full, None, None]})
    with pytest.raises(ValueError, match=r"dealers must have one entry per game \(4\), got 5"):
        venv.reset(options={"dealers": [0] * 5})
    with pytest.raises(ValueError, match=r"seed must have one entry per game \(4\), got 2"):
        venv.reset(seed=[1, 2])
    with pytest.raises(TypeError, match=r"dealers\[2\] must be an integer"):
        venv.reset(options={"dealers": [0, 1, "1", None]})
    assert venv.game.states.tobytes() == before
    venv.reset(seed=[1, 2, 3, 4], options={"decks": [full, None, full, None]})


@pytest.mark.parametrize("name", NAMES)
def test_vector_step_refuses_bad_actions_before_any_game_moves(name):
    venv = rummy_env.make_vec(name, 3, seed=0)
    venv.reset()
    legal = venv.action_masks().argmax(1)
    before = venv.game.states.tobytes()
    for bad, err in [
        (legal.astype(float), TypeError),
        (legal.astype(bool), TypeError),
        (legal[:2], ValueError),
        ([[0], [1, 2], [3]], ValueError),
        (np.array([legal[0], legal[1], 10**6]), ValueError),
        ("abc", ValueError),
    ]:
        with pytest.raises(err, match="actions"):
            venv.step(bad)
        assert venv.game.states.tobytes() == before
    venv.step(legal.astype(np.uint8))


@pytest.mark.parametrize("mod", MODULES)
def test_strict_integers_and_agent_names(mod):
    env = mod.raw_env()
    for call in (lambda: env.step(0), lambda: env.observe("player_0")):
        with pytest.raises(RuntimeError, match="reset"):
            call()
        with pytest.raises(ValueError, match="reset"):  # ResetNeeded is both
            call()
    env.reset(seed=0)
    legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    for bad in [float(legal), str(legal), np.float32(legal), None, [legal], True]:
        with pytest.raises(TypeError, match="action must be an integer"):
            env.step(bad)
    for method in (env.observe, env.action_space, env.observation_space):
        with pytest.raises(ValueError, match="unknown agent 'player_9'"):
            method("player_9")
        with pytest.raises(TypeError, match="agent must be an agent name"):
            method(0)
    with pytest.raises(TypeError, match="n must be an integer"):
        env.sample_worlds("player_0", "2")
    with pytest.raises(ValueError, match="n must be an integer in 1"):
        env.sample_worlds("player_0", 0)
    with pytest.raises(TypeError, match="seed must be None"):
        env.sample_worlds("player_0", 2, seed=1.5)
    with pytest.raises(TypeError, match="options must be a dict"):
        env.reset(options="deck")
    env.step(np.int64(legal))  # numpy integers are integers


@pytest.mark.parametrize(
    "mod,option",
    [
        (mod, option)
        for mod, last in zip(MODULES, ["target", "target", "elimination"], strict=True)
        for option in ["num_players", "max_steps", "max_pile_draws", last]
    ],
)
@pytest.mark.parametrize("value", ["2", 2.0, True, np.float64(2)])
def test_numeric_options_refuse_other_types(mod, option, value):
    with pytest.raises(TypeError, match=option):
        mod.raw_env(**{option: value})


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"num_envs": 4.5}, "num_envs"),
        ({"num_envs": True}, "num_envs"),
        ({"num_envs": "4"}, "num_envs"),
        ({"num_envs": -1}, "num_envs"),
        ({"num_envs": None}, "num_envs"),
        ({"num_envs": MAX_GAMES + 1}, "num_envs"),
        ({"num_envs": 2, "seed": 1.5}, "seed"),
        ({"num_envs": 2, "seed": [1, 2, 3]}, "seed"),
        ({"num_envs": 2, "seed": [1, -2]}, r"seed\[1\]"),
    ],
)
def test_make_vec_checks_its_arguments(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        rummy_env.make_vec("gin_rummy", **kwargs)


def test_make_vec_name_must_be_a_game_name():
    with pytest.raises(TypeError, match="name must be a game name"):
        rummy_env.make_vec(["gin_rummy"], 2)


@pytest.mark.parametrize("mod,jokers", [(five_hundred_rum_v1, 2), (rummy51_v1, 4)])
def test_either_joker_id_stacks_the_same_deal(mod, jokers):
    env = mod.raw_env()
    full = [int(c) for c in env.game.deck]
    with_53 = [53 if c == 52 else c for c in full]
    mixed = list(full)
    mixed[mixed.index(52)] = 53
    env.reset(seed=0, options={"deck": full, "dealer": 0})
    ref = env.game.states.tobytes()
    as_text = ["JK" if c >= 52 else c for c in full]
    for deck in (with_53, mixed, as_text, np.array(with_53)):
        env.reset(seed=0, options={"deck": deck, "dealer": 0})
        assert env.game.states.tobytes() == ref
    with pytest.raises(ValueError, match=rf"{jokers} joker\(s\) \(id 52 or 53"):
        env.reset(options={"deck": full[:-1] + [0]})


def test_deck_errors_say_what_was_expected():
    expected = rummy51_v1.raw_env().game.deck
    with pytest.raises(ValueError, match="108 cards: each of the 52 natural cards twice and 4"):
        validate_deck(list(range(52)), expected)
    with pytest.raises(TypeError, match=r"deck\[3\] must be a card id"):
        validate_deck([0, 1, 2, 0.5], expected)
    # unreadable text names the argument and the entry (found by the fuzz test: deck "1")
    with pytest.raises(ValueError, match=r"deck\[0\]: cannot read card '1'"):
        validate_deck("1", expected)
    env = rummy51_v1.raw_env()
    with pytest.raises(ValueError, match=r"options\['deck'\]\[1\]: cannot read card 'Zz'"):
        env.reset(options={"deck": ["As", "Zz"]})


def test_joker_card_types_fold_both_ids():
    counts = cards_to_counts([52, 53, 0], num_types=53)
    assert counts[52] == 2 and counts[0] == 1


def test_single_agent_env_checks_reset_and_step_before_changing_anything():
    from rummy_env.wrappers.single_agent import RummySingleAgentEnv

    env = RummySingleAgentEnv("gin_rummy")
    env.reset(seed=0)
    before = (env.aec.game.states.tobytes(), env.np_random.bit_generator.state, env.learner_seat)
    for bad in [
        {"seed": 1.5},
        {"options": "deck"},
        {"options": {"learner_seat": 1.0}},
        {"options": {"learner_seat": 2}},
        {"options": {"dealer": "0"}},
        {"options": {"deck": list(range(51))}},
    ]:
        with pytest.raises((TypeError, ValueError)):
            env.reset(**bad)
        after = (env.aec.game.states.tobytes(), env.np_random.bit_generator.state, env.learner_seat)
        assert after == before, bad
    for bad in [1.7, "1", True, None]:
        with pytest.raises(TypeError, match="action must be an integer"):
            env.step(bad)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
