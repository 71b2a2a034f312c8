"""Every public entry point, fed values of every type: an error that names the argument, or a
valid result; never another exception, never a change on rejection, always usable afterwards.

Entry points (for each game): ``raw_env(**options)``, ``reset(seed, options)``, ``step``,
``observe``, ``action_space``, ``observation_space``, ``sample_worlds(agent, n, seed)``,
``make_vec(name, num_envs, seed, **options)``, ``venv.reset(seed, options)`` and
``venv.step(actions)``. Each is tried on ``MAX_EXAMPLES`` hypothesis cases per game; the count of
cases accepted and refused per entry point is printed at the end of the module (``pytest -s``).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as npst

import rummy_env
from rummy_env import five_hundred_rum_v1, gin_rummy_v0, rummy51_v1
from rummy_env.core.cards import card_to_str
from rummy_env.core.validate import is_int
from rummy_env.encodings import gin_rummy as gin_enc

MODULES = {
    "gin_rummy": gin_rummy_v0,
    "gin_rummy_3p": gin_rummy_v0,
    "gin_rummy_4p": gin_rummy_v0,
    "five_hundred_rum": five_hundred_rum_v1,
    "rummy51": rummy51_v1,
}
BASE_OPTIONS: dict[str, dict[str, Any]] = {
    "gin_rummy_3p": {"num_players": 3},
    "gin_rummy_4p": {"num_players": 4},
}
"""Cases that are one game with other options: Gin Rummy for 3 and 4 players."""
GAMES = list(MODULES)
MAX_EXAMPLES = 100  # per entry point and case: 10 entry points x 5 cases x 100 = 5,000 cases
SMALL = 64  # largest valid batch the fuzzing builds (bigger valid sizes only cost memory)
FUZZ = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
COUNTS: Counter[tuple[str, str]] = Counter()

# -- values of every type ------------------------------------------------------------------
_int_dtypes = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
INTS = st.integers(-3, 120) | st.integers(-(2**70), 2**70)
NP_INTS = st.builds(lambda t, v: t(v), st.sampled_from(_int_dtypes), st.integers(0, 127)) | (
    st.integers(-200, 200).map(np.int64)
)
BOOLS = st.booleans() | st.booleans().map(np.bool_)
FLOATS = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(0, 60).map(float)  # integral floats: 3.0 is still not an int
    | st.floats(-5, 120, width=32).map(np.float32)
    | st.floats(-5, 120).map(np.float64)
)
STRINGS = st.text(max_size=6) | st.sampled_from(["1", "0", "As", "JK", "player_0", "gin_rummy"])
SCALARS = INTS | NP_INTS | BOOLS | FLOATS | STRINGS | st.none()
LISTS = (
    st.lists(st.integers(-2, 60), max_size=6)
    | st.lists(st.lists(st.integers(0, 60), max_size=3), max_size=4)
    | st.lists(SCALARS, max_size=5)
)
DICTS = st.dictionaries(st.text(max_size=5), st.integers(-2, 60), max_size=3)
ARRAYS = npst.arrays(
    dtype=st.sampled_from([np.int64, np.int8, np.uint8, np.float64, np.float32, np.bool_]),
    shape=npst.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
)
# wrapped in a tuple so that ``valid | JUNK`` has two branches, not one per kind of junk:
# valid values then come up about half the time
JUNK = st.tuples(SCALARS | LISTS | DICTS | ARRAYS).map(lambda t: t[0])


# -- helpers --------------------------------------------------------------------------------
_ENVS: dict[tuple[str, str], Any] = {}


def name_of(game: str) -> str:
    """The game's name in ``rummy_env`` (a case of Gin Rummy with options is Gin Rummy)."""
    return "gin_rummy" if game.startswith("gin_rummy") else game


def aec(game: str, key: str = "", **options: Any) -> Any:
    """One raw env per (game, key), reset once, reused across the cases of an entry point."""
    if (game, key) not in _ENVS:
        env = MODULES[game].raw_env(**BASE_OPTIONS.get(game, {}), **options)
        env.reset(seed=0)
        _ENVS[game, key] = env
    return _ENVS[game, key]


def vec(game: str) -> Any:
    """One reset vector env of 3 games per game."""
    if (game, "vec") not in _ENVS:
        venv = rummy_env.make_vec(name_of(game), 3, seed=0, **BASE_OPTIONS.get(game, {}))
        venv.reset()
        _ENVS[game, "vec"] = venv
    return _ENVS[game, "vec"]


def aec_snapshot(env: Any) -> tuple[Any, ...]:
    """Everything a call could change: records (random streams included), masks, bookkeeping."""
    return (
        env.game.states.tobytes(),
        env.game.masks.tobytes(),
        repr(env.agents),
        repr(env.rewards),
        repr(env._cumulative_rewards),
        repr(env.terminations),
        repr(env.truncations),
        repr(env.infos),
        getattr(env, "agent_selection", None),
    )


def vec_snapshot(venv: Any) -> tuple[Any, ...]:
    return venv.game.states.tobytes(), venv.game.masks.tobytes(), venv._needs_reset


def legal_step(env: Any) -> None:
    """A legal step (a dead step for a finished agent; a reset once every agent has left)."""
    agent = env.agent_selection
    if agent not in env.terminations:
        env.reset(seed=0)
        agent = env.agent_selection
    if env.terminations[agent] or env.truncations[agent]:
        env.step(None)
        return
    mask = env.observe(agent)["action_mask"]
    env.step(int(np.flatnonzero(mask)[0]))


def position(env: Any, data: st.DataObject) -> None:
    """Put ``env`` in a position drawn by hypothesis (a seed and a number of legal steps), so
    each case starts from the same state when replayed.
    """
    env.reset(seed=data.draw(st.integers(0, 30), label="position seed"))
    for _ in range(data.draw(st.integers(0, 30), label="position steps")):
        legal_step(env)
    if env.agent_selection not in env.terminations:  # every agent left: a table to play on
        env.reset(seed=0)


class LegalPick(int):
    """Stands for the legal action of this index (mod the number legal) in the drawn position."""


def legal_vec_step(venv: Any) -> None:
    venv.step(venv.action_masks().argmax(1))


def attempt(
    entry: str,
    game: str,
    call: Callable[[], Any],
    names: list[str],
    snapshot: Callable[[], Any] = lambda: None,
) -> tuple[bool, Any]:
    """Run ``call``: a valid result, or ``ValueError``/``TypeError`` naming one of ``names``
    with nothing changed. Returns (accepted, result); records the outcome.
    """
    before = snapshot()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unknown AEC reset options only warn
            result = call()
    except (ValueError, TypeError) as e:
        msg = str(e)
        assert any(n in msg for n in names), f"{entry}: {msg!r} names none of {names}"
        assert snapshot() == before, f"{entry}: a refused call changed the state ({msg})"
        COUNTS[entry, "refused"] += 1
        return False, None
    COUNTS[entry, "accepted"] += 1
    return True, result


def option_values(game: str) -> tuple[list[str], st.SearchStrategy[Any]]:
    """The option names of a game and plausible values for them (mixed with junk)."""
    cls = MODULES[game].raw_env.config_cls
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    plausible = st.sampled_from(
        [f.default for f in fields]
        + ["hand", "match", "game", "normalized", "raw", "ansi", "penalty", "floating"]
    )
    values = st.tuples(plausible | st.integers(0, 12) | st.booleans()).map(lambda t: t[0])
    return names, values | JUNK


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    """Print how many cases each entry point tried (and how many it accepted / refused)."""
    yield
    entries = sorted({e for e, _ in COUNTS})
    print("\nfuzz cases per entry point (accepted / refused):")
    for e in entries:
        a, r = COUNTS[e, "accepted"], COUNTS[e, "refused"]
        print(f"  {e:40s} {a + r:5d}  ({a} / {r})")


# -- the entry points -----------------------------------------------------------------------
@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_raw_env_options(game: str, data: st.DataObject) -> None:
    names, values = option_values(game)
    keys = st.sampled_from([*names, "render_mode", "not_an_option"])
    options = data.draw(
        st.just({}) | st.dictionaries(keys, values, min_size=1, max_size=3), label="options"
    )
    options = {**BASE_OPTIONS.get(game, {}), **options}
    ok, env = attempt(
        f"{game}.raw_env(**options)",
        game,
        lambda: MODULES[game].raw_env(**options),
        [*map(str, options), "options"],
    )
    if ok:
        env.reset(seed=0)
        legal_step(env)


def _decks(game: str) -> st.SearchStrategy[Any]:
    """Stacked decks: valid ones (shuffled, jokers as 52 or 53, as text), near misses, junk."""
    full = [int(c) for c in aec(game).game.deck]
    valid = st.permutations(full)
    jokers_53 = valid.map(lambda d: [53 if c == 52 else c for c in d])
    text = valid.map(lambda d: " ".join(card_to_str(c) for c in d))

    def spoil(d: list[int], i: int, v: Any) -> list[Any]:
        d = list(d)
        d[i % len(d)] = v
        return d

    spoiled = st.builds(spoil, valid, st.integers(0, 200), SCALARS | LISTS)
    short = valid.map(lambda d: d[:-1])
    arrays = valid.map(lambda d: np.array(d, dtype=np.int8))
    one = valid | jokers_53 | text | spoiled | short | arrays
    if game == "gin_rummy_4p":  # a deck per table
        two = st.lists(valid | text | arrays, min_size=2, max_size=2)
        return two | st.lists(one | JUNK, min_size=1, max_size=3) | one | JUNK
    return one | JUNK


def _dealers(game: str, p: int) -> st.SearchStrategy[Any]:
    """First dealers: seats (4-player Gin: a pair of seats, one per table), near misses, junk."""
    if game == "gin_rummy_4p":
        pairs = st.tuples(st.integers(-1, 4), st.integers(-1, 4)).map(list)
        return pairs | st.lists(st.integers(0, 3) | JUNK, max_size=3) | st.integers(-1, p) | JUNK
    return st.integers(-1, p) | JUNK


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_reset(game: str, data: st.DataObject) -> None:
    env = aec(game)
    position(env, data)
    p = env.game.num_players
    seed = data.draw(st.integers(0, 2**64) | JUNK, label="seed")
    options = data.draw(
        st.fixed_dictionaries(
            {},
            optional={
                "deck": _decks(game),
                "dealer": _dealers(game, p),
                "other": JUNK,
            },
        )
        | JUNK,
        label="options",
    )
    attempt(
        f"{game}.reset(seed, options)",
        game,
        lambda: env.reset(seed=seed, options=options),
        ["seed", "options"],
        lambda: aec_snapshot(env),
    )
    legal_step(env)


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_step(game: str, data: st.DataObject) -> None:
    env = aec(game, "step", max_steps=6)  # short episodes: finished (dead) agents come up too
    position(env, data)
    n = env.game.num_actions
    action = data.draw(
        st.builds(LegalPick, st.integers(0, 999)) | st.integers(-2, n + 2) | st.none() | JUNK,
        label="action",
    )
    if isinstance(action, LegalPick):
        legal = np.flatnonzero(env.game.masks[0, :n])
        action = int(legal[action % legal.size]) if legal.size else None
    names = ["action"]
    zero_d_int = isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"
    if is_int(action) or zero_d_int:  # the action types the env accepts (check_action)
        # an illegal action is named by its name: "DISCARD[Qs] is illegal in phase ..."
        a = int(action)
        gin = name_of(game) == "gin_rummy"
        names.append(gin_enc.action_name(a) if gin else env.layout.action_name(a))
    attempt(
        f"{game}.step(action)", game, lambda: env.step(action), names, lambda: aec_snapshot(env)
    )
    legal_step(env)


@pytest.mark.parametrize("method", ["observe", "action_space", "observation_space"])
@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_agent_lookups(game: str, method: str, data: st.DataObject) -> None:
    env = aec(game)
    position(env, data)
    agent = data.draw(st.sampled_from(env.possible_agents) | JUNK, label="agent")
    before = aec_snapshot(env)
    attempt(f"{game}.{method}(agent)", game, lambda: getattr(env, method)(agent), ["agent"])
    assert aec_snapshot(env) == before  # looking never changes anything
    legal_step(env)


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_sample_worlds(game: str, data: st.DataObject) -> None:
    env = aec(game)
    position(env, data)
    agent = data.draw(st.sampled_from(env.possible_agents) | JUNK, label="agent")
    n = data.draw(st.integers(1, 4) | JUNK, label="n")
    assume(not (is_int(n) and n > SMALL))
    seed = data.draw(
        st.integers(0, 2**64) | st.builds(np.random.default_rng, st.integers(0, 99)) | JUNK,
        label="seed",
    )
    before = aec_snapshot(env)
    ok, worlds = attempt(
        f"{game}.sample_worlds(agent, n, seed)",
        game,
        lambda: env.sample_worlds(agent, n, seed),
        ["agent", "n", "seed"],
    )
    assert aec_snapshot(env) == before  # the real game is never touched
    if ok:
        assert worlds.num_games == n
    legal_step(env)


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_make_vec(game: str, data: st.DataObject) -> None:
    names, values = option_values(game)
    name = data.draw(
        st.just(name_of(game)) | st.sampled_from([*map(name_of, GAMES), game]) | JUNK, label="name"
    )
    num_envs = data.draw(st.integers(1, 4) | JUNK, label="num_envs")
    assume(not (is_int(num_envs) and num_envs > SMALL))
    seed = data.draw(
        st.integers(0, 2**64) | st.lists(st.integers(0, 99), max_size=5) | JUNK, label="seed"
    )
    keys = st.sampled_from([*names, "not_an_option"])
    options = data.draw(
        st.just({}) | st.dictionaries(keys, values, min_size=1, max_size=2), label="options"
    )
    options = {**BASE_OPTIONS.get(game, {}), **options}
    ok, venv = attempt(
        f"{game}.make_vec(name, num_envs, seed, **options)",
        game,
        lambda: rummy_env.make_vec(name, num_envs, seed=seed, **options),
        ["name", "num_envs", "seed", *map(str, options)],
    )
    if ok:
        venv.reset()
        legal_vec_step(venv)


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_vec_reset(game: str, data: st.DataObject) -> None:
    venv = vec(game)
    venv.reset(seed=data.draw(st.integers(0, 30), label="position seed"))
    p = venv.num_players
    per_game = st.lists(st.integers(0, 2**64) | SCALARS, min_size=2, max_size=4)
    seed = data.draw(st.integers(0, 2**64) | per_game | JUNK, label="seed")
    decks = st.lists(st.none() | _decks(game), min_size=2, max_size=4)
    dealers = st.lists(st.none() | _dealers(game, p) | SCALARS, min_size=2, max_size=4)
    options = data.draw(
        st.fixed_dictionaries(
            {}, optional={"decks": decks | JUNK, "dealers": dealers | JUNK, "other": JUNK}
        )
        | JUNK,
        label="options",
    )
    attempt(
        f"{game}.venv.reset(seed, options)",
        game,
        lambda: venv.reset(seed=seed, options=options),
        ["seed", "options", "decks", "dealers"],
        lambda: vec_snapshot(venv),
    )
    legal_vec_step(venv)


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_vec_step(game: str, data: st.DataObject) -> None:
    venv = vec(game)
    venv.reset(seed=data.draw(st.integers(0, 30), label="position seed"))
    for _ in range(data.draw(st.integers(0, 30), label="position steps")):
        legal_vec_step(venv)
    legal = venv.action_masks().argmax(1)
    n_act = venv.single_action_space.n
    kind = data.draw(
        st.sampled_from(["legal", "list", "float", "bool", "uint8", "replace", "junk"]),
        label="kind",
    )
    if kind == "replace":
        actions: Any = legal.tolist()
        i = data.draw(st.integers(0, 2), label="game")
        actions[i] = data.draw(st.integers(-2, n_act + 2) | SCALARS | LISTS, label="action")
    elif kind == "junk":
        actions = data.draw(JUNK, label="actions")
    else:
        conv = {"legal": np.asarray, "list": list, "float": lambda a: a.astype(np.float64)}
        conv |= {"bool": lambda a: a.astype(bool), "uint8": lambda a: a.astype(np.uint8)}
        actions = conv[kind](legal)
    attempt(
        f"{game}.venv.step(actions)",
        game,
        lambda: venv.step(actions),
        ["actions"],
        lambda: vec_snapshot(venv),
    )
    legal_vec_step(venv)


def test_every_entry_point_was_fuzzed() -> None:
    """Runs last in this module: each entry point fuzzed tried its cases (10 per game)."""
    entries = {e for e, _ in COUNTS}
    if not entries:
        pytest.skip("run with the fuzz tests of this module")
    for e in entries:
        assert COUNTS[e, "accepted"] + COUNTS[e, "refused"] >= MAX_EXAMPLES // 2, e


# -- the agents side and the single-agent wrapper --------------------------------------------
@FUZZ
@given(data=st.data())
def test_fuzz_single_agent_env_arguments(data: st.DataObject) -> None:
    from rummy_env.wrappers import RummySingleAgentEnv

    game = data.draw(st.sampled_from(GAMES), label="game")
    players = {"num_players": 4} if game == "gin_rummy_4p" else {}
    opponents = data.draw(st.none() | JUNK, label="opponents")
    seat = data.draw(st.none() | st.integers(-1, 5) | JUNK, label="learner_seat")
    features = data.draw(st.none() | JUNK, label="features")
    ok, env = attempt(
        "RummySingleAgentEnv(game, opponents, learner_seat, features)",
        game,
        lambda: RummySingleAgentEnv(
            name_of(game), opponents=opponents, learner_seat=seat, features=features, **players
        ),
        ["opponents", "learner_seat", "features", "need"],
    )
    if ok:
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs)


@FUZZ
@given(data=st.data())
def test_fuzz_agent_registry_and_features(data: st.DataObject) -> None:
    from rummy_agents import agent_spec
    from rummy_agents.features import FeatureSet

    names = ["random", "simple", "greedy", "ppo", "ismcts@iterations=5", "simple@x", "nope"]
    name = data.draw(st.sampled_from(names) | STRINGS, label="name")
    game = data.draw(st.none() | st.sampled_from([*map(name_of, GAMES), "chess"]), label="game")
    attempt("agent_spec(name, game)", "agents", lambda: agent_spec(name, game),
            ["agent", "game", name])  # fmt: skip
    game = data.draw(st.sampled_from([*map(name_of, GAMES), "chess"]) | JUNK, label="game")
    pieces = data.draw(st.sampled_from(["none", "gin", "deadwood", "joker_cards"]) | STRINGS,
                       label="features")  # fmt: skip
    attempt("FeatureSet(game, features)", "agents", lambda: FeatureSet(game, pieces),
            ["game", "features", "piece"])  # fmt: skip


def test_table_views_refuse_the_seat_sitting_out() -> None:
    from rummy_env.envs.view import SeatView

    env = gin_rummy_v0.raw_env(num_players=3)
    env.reset(seed=0)
    out = f"player_{int(env.state_record['dealer'])}"
    with pytest.raises(ValueError, match="sits out"):
        SeatView(env, out).table_view()
    with pytest.raises(ValueError, match="sits out"):
        env.game.table_game(0, int(env.state_record["dealer"]))
