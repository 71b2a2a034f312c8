"""Feature pieces: the legacy names are their pieces, byte for byte; a FeatureSet takes the game
and config explicitly, refuses pieces of other games, and reads the 500 Rum layouts that share
an observation width.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rummy_env
from rummy_agents.features import (
    FEATURES,
    LEGACY_NAMES,
    PIECES,
    FeatureSet,
    add_features,
    card_layout,
    feature_size,
    guess_feature_set,
    meld_planes,
)
from rummy_env.encodings import five_hundred_rum as E500
from rummy_env.encodings import rummy51 as E51

ROOT = Path(__file__).resolve().parent.parent


def _observations(game: str, options: dict, steps: int = 30, n: int = 4) -> np.ndarray:
    venv = rummy_env.make_vec(game, n, seed=5, **options)
    obs, _ = venv.reset(seed=5)
    rng = np.random.default_rng(5)
    rows = [obs["observation"]]
    for _ in range(steps):
        masks = venv.action_masks()
        obs, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        rows.append(obs["observation"])
    venv.close()
    return np.concatenate(rows)


def _games_of(name: str) -> set[str]:
    pieces = LEGACY_NAMES[name]
    games = {"gin_rummy", "five_hundred_rum", "rummy51"}
    for p in pieces:
        games &= set(PIECES[p].games)
    return games


def test_legacy_names_list_pieces_that_sum_to_their_size():
    assert FEATURES == tuple(LEGACY_NAMES)
    assert LEGACY_NAMES["none"] == () and feature_size("none") == 0
    for name, pieces in LEGACY_NAMES.items():
        assert feature_size(name) == feature_size(pieces) == sum(PIECES[p].size for p in pieces)
        if pieces:
            assert feature_size("+".join(pieces)) == feature_size(name)
    # each legacy set is the previous one plus more pieces
    chain = [n for n in FEATURES if n.startswith("joker_cards")]
    for a, b in zip(chain, chain[1:], strict=False):
        assert LEGACY_NAMES[b][: len(LEGACY_NAMES[a])] == LEGACY_NAMES[a]


@pytest.mark.parametrize(
    "game, options",
    [("gin_rummy", {}), ("five_hundred_rum", {"num_players": 4}), ("rummy51", {})],
)
def test_each_legacy_name_is_its_pieces_byte_for_byte(game, options):
    x = _observations(game, options)
    w = x.shape[1]
    for name in FEATURES:
        if game not in _games_of(name):
            continue
        legacy = add_features(name, x)  # the layout guessed from the width, as checkpoints did
        by_name = FeatureSet(game, name, options)
        by_pieces = FeatureSet(game, LEGACY_NAMES[name], options)
        assert by_name.name == name and by_pieces.pieces == LEGACY_NAMES[name]
        assert by_name(x).tobytes() == legacy.tobytes()
        assert by_pieces(x).tobytes() == legacy.tobytes()
        assert by_name(x[3]).tobytes() == legacy[3].tobytes()
        # every piece alone gives its slice: pieces do not depend on their neighbours
        for p in LEGACY_NAMES[name]:
            alone = FeatureSet(game, (p,), options)(x)[:, w:]
            at = by_name.offset(p)
            assert alone.tobytes() == legacy[:, at : at + PIECES[p].size].tobytes(), (name, p)
        assert by_name.card_layout() == card_layout(game, name, w)
        assert by_name.meld_planes() == meld_planes(game, name, w)


def test_a_feature_set_refuses_other_games_pieces():
    with pytest.raises(ValueError, match=r"game must be one of .*'chess'"):
        FeatureSet("chess", "none")
    with pytest.raises(ValueError, match=r"features: piece 'take_gains' is for 500 Rum .*rummy51"):
        FeatureSet("rummy51", "joker_cards_takes")
    with pytest.raises(ValueError, match=r"features: piece 'gin_deadwood' is for Gin Rummy"):
        FeatureSet("five_hundred_rum", "gin_deadwood")
    with pytest.raises(ValueError, match=r"features: piece 'melds_with_hand' .*not 'gin_rummy'"):
        FeatureSet("gin_rummy", "joker_cards")
    with pytest.raises(ValueError, match=r"features: unknown feature set or piece 'nope'"):
        FeatureSet("rummy51", "top_discard+nope")
    with pytest.raises(ValueError, match="named twice"):
        FeatureSet("rummy51", ("top_discard", "top_discard"))
    with pytest.raises(ValueError, match="unknown Rummy 51 option"):
        FeatureSet("rummy51", "joker_cards", {"num_decks": 2})
    from rummy_env.rules.five_hundred_rum.config import FiveHundredRumConfig

    with pytest.raises(ValueError, match="config must be a Rummy51Config"):
        FeatureSet("rummy51", "joker_cards", FiveHundredRumConfig())
    with pytest.raises(ValueError, match="layout must be"):
        FeatureSet("rummy51", "joker_cards", layout=E500.Layout(2, 54))
    with pytest.raises(ValueError, match="disagrees"):
        FeatureSet("rummy51", "joker_cards", {"num_players": 3}, layout=E51.Layout(2))
    # observations of another layout are refused, not misread
    fs = FeatureSet("rummy51", "joker_cards", {"num_players": 3})
    with pytest.raises(ValueError, match=r"reads Rummy 51 observations .* wide \(3 players"):
        fs(np.zeros((1, E51.Layout(2).obs_size), np.float32))


@pytest.mark.parametrize(
    "game, name",
    [("gin_rummy", "gin_deadwood"), ("five_hundred_rum", "joker_cards_planner"),
     ("rummy51", "joker_cards_melds")],
)  # fmt: skip
def test_out_is_filled_with_the_fresh_result_and_checked(game, name):
    """``out=`` writes the same bytes a fresh call returns, rows or one observation, whatever
    ``out`` held before; a wrong ``out`` is refused before anything is written."""
    x = _observations(game, {}, steps=12)
    fresh = add_features(name, x, game, {})
    out = np.full(fresh.shape, np.nan, np.float32)
    assert add_features(name, x, game, {}, out) is out
    assert out.tobytes() == fresh.tobytes()
    one = np.full(fresh.shape[1:], -7.0, np.float32)
    assert FeatureSet(game, name)(x[2], one) is one and one.tobytes() == fresh[2].tobytes()
    view = np.zeros((2, *fresh.shape), np.float32)[1]  # a slice of a larger store
    add_features(name, x, game, {}, view)
    assert view.tobytes() == fresh.tobytes()
    read_only = np.zeros(fresh.shape, np.float32)
    read_only.flags.writeable = False
    n, w = fresh.shape
    bad = [
        (TypeError, r"out must be a writeable float32 numpy array, got a float64 array",
         np.zeros(fresh.shape)),
        (TypeError, r"got a float32 array \(read-only\)", read_only),
        (TypeError, r"got list", fresh.tolist()),
        (ValueError, rf"out must have shape \({n}, {w}\) .*got \({n}, {w - 1}\)",
         np.zeros((n, w - 1), np.float32)),
        (ValueError, r"got \(1, ", np.zeros((1, fresh.shape[1]), np.float32)),
    ]  # fmt: skip
    for err, match, o in bad:
        before = None if isinstance(o, list) else o.copy()
        with pytest.raises(err, match=match):
            add_features(name, x, game, {}, o)
        if before is not None:
            assert o.tobytes() == before.tobytes()
    with pytest.raises(ValueError, match=r"out must have shape \("):
        FeatureSet(game, name)(x[0], out)  # one observation, a batch's out


@cache
def _out_case() -> tuple[np.ndarray, np.ndarray]:
    """Rummy 51 observations and their ``joker_cards_melds`` features, made once."""
    x = _observations("rummy51", {}, steps=6, n=3)
    return x, add_features("joker_cards_melds", x, "rummy51", {})


@settings(max_examples=60, deadline=None)
@given(
    dtype=st.sampled_from([np.float32, np.float64, np.float16, np.int32, np.int8, np.bool_]),
    rows=st.integers(0, 5),
    extra=st.integers(-3, 3),
    flat=st.booleans(),
    writeable=st.booleans(),
)
def test_out_of_any_dtype_or_shape_is_filled_only_when_exact(dtype, rows, extra, flat, writeable):
    """Whatever ``out`` is drawn (dtype, rows, width, 1-D or 2-D, read-only), it is filled
    with the fresh result exactly when it is a writeable float32 array of the result's shape;
    otherwise a TypeError or ValueError naming ``out``, and ``out`` is untouched."""
    x, fresh = _out_case()
    n, w = fresh.shape
    shape = (w + extra,) if flat else (rows, w + extra)
    out = np.full(shape, 3, dtype=dtype)
    out.flags.writeable = writeable
    before = out.copy()
    ok = dtype is np.float32 and writeable and shape == (n, w)
    if ok:
        add_features("joker_cards_melds", x, "rummy51", {}, out)
        assert out.tobytes() == fresh.tobytes()
        return
    err = TypeError if dtype is not np.float32 or not writeable else ValueError
    with pytest.raises(err, match="out must"):
        add_features("joker_cards_melds", x, "rummy51", {}, out)
    assert out.tobytes() == before.tobytes()


def test_pieces_in_any_order_and_by_plus_names():
    x = _observations("rummy51", {}, steps=10)
    w = x.shape[1]
    fs = FeatureSet("rummy51", "going_out+top_discard")
    assert fs.name == "going_out+top_discard" and fs.size == 3 + 52
    y = fs(x)
    ref = add_features("joker_cards_out", x)
    legacy = FeatureSet("rummy51", "joker_cards_out")
    top = legacy.offset("top_discard")
    np.testing.assert_array_equal(y[:, w : w + 3], ref[:, legacy.offset("going_out") :][:, :3])
    np.testing.assert_array_equal(y[:, w + 3 :], ref[:, top : top + 52])
    planes, blocks, select = fs.card_layout()
    assert planes[-1] == w + 3 and select == [(E51.Layout(2).take_discard, w + 3)]


@pytest.mark.parametrize(
    "options, players, deck",
    [({"num_players": 3}, 3, 54), ({"num_players": 4, "no_jokers": True}, 4, 52)],
)
def test_500_rum_layouts_of_one_width_work_with_the_config(options, players, deck):
    x = _observations("five_hundred_rum", options, steps=12)
    assert x.shape[1] == 1760  # both layouts are 1,760 wide
    with pytest.raises(ValueError, match="cannot tell apart"):
        guess_feature_set("joker_cards_planner", 1760)
    with pytest.raises(ValueError, match="cannot tell apart"):
        add_features("joker_cards", x)
    fs = FeatureSet("five_hundred_rum", "joker_cards_planner", options)
    assert (fs.layout.num_players, fs.layout.deck_size) == (players, deck)
    y = fs(x)
    assert y.shape == (x.shape[0], 1760 + feature_size("joker_cards_planner"))
    np.testing.assert_array_equal(y, add_features("joker_cards_planner", x, "five_hundred_rum",
                                                  options))  # fmt: skip
    # the top-discard piece is the one-hot of the pile's top card in this layout
    pile = fs.layout.split(x)["pile_sequence"]
    top = np.rint(pile[:, 0] * 53).astype(int) - 1
    at = fs.offset("top_discard")
    for i in range(x.shape[0]):
        want = np.zeros(52, np.float32)
        if 0 <= top[i] < 52:
            want[top[i]] = 1.0
        np.testing.assert_array_equal(y[i, at : at + 52], want)
    # the fewest opponent cards: one-hot of the smallest other hand in this layout
    sizes = np.rint(fs.layout.split(x)["hand_sizes"][:, 1:] * 13).min(axis=1).astype(int)
    phase = fs.layout.split(x)["phase"]
    at = fs.offset("fewest_opponent_cards")
    for i in np.flatnonzero(phase[:, E500.PH_OVER] < 0.5):
        assert y[i, at + min(sizes[i], 11)] == 1.0 and y[i, at : at + 12].sum() == 1.0
    planes = meld_planes("five_hundred_rum", "joker_cards_planner", 1760, options)
    assert planes[1] == (fs.layout.take_base, fs.offset("take_gains"), deck)


def test_published_checkpoints_name_the_layout_their_feature_set_gives():
    torch = pytest.importorskip("torch")
    from rummy_agents.ppo_agent import PPOAgent

    for path in sorted((ROOT / "results").glob("ppo_*.pt")):
        meta = torch.load(path, map_location="cpu", weights_only=True)
        agent = PPOAgent(checkpoint=str(path))
        fs = agent.feature_set
        assert (fs.game, fs.name) == (meta["game"], meta["features"])
        assert fs.obs_size + fs.size == meta["obs_size"]
        planes, blocks, select = fs.card_layout()
        assert planes == list(meta["card_inputs"]) and blocks == list(meta["card_actions"])
        assert select == [tuple(s) for s in meta["card_select"]]
        assert fs.meld_planes() == [tuple(p) for p in meta.get("meld_planes", [])]
