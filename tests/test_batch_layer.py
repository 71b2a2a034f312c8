"""The batch layer written once (``rummy_env.core.batch``): common record fields, hooks by game."""

from __future__ import annotations

import numpy as np
import pytest
from numba import types
from numba.np.numpy_support import from_dtype

from rummy_env.core import batch
from rummy_env.rules.five_hundred_rum import kernels as K500
from rummy_env.rules.five_hundred_rum.state import make_state_dtype as five_hundred_rum_dtype
from rummy_env.rules.gin_rummy import kernels as KGIN
from rummy_env.rules.gin_rummy.state import GIN_STATE_DTYPE
from rummy_env.rules.rummy51 import kernels as K51
from rummy_env.rules.rummy51.state import make_state_dtype as rummy51_dtype

COMMON = ("phase", "cur", "dealer", "outcome", "done", "truncated", "rewards", "steps")


def test_a_record_lists_every_common_field_once():
    with pytest.raises(ValueError, match="common field"):
        batch.record_dtype(2, [("x", np.int8), "phase"])
    with pytest.raises(ValueError, match="common field"):
        batch.record_dtype(2, [*COMMON, "hands_played", "rng", "rng"])
    dt = batch.record_dtype(3, [("x", np.int8), *COMMON, "hands_played", "rng"])
    assert dt["rewards"].shape == (3,) and dt.isalignedstruct


@pytest.mark.parametrize(
    "dtypes",
    [
        [GIN_STATE_DTYPE],
        [five_hundred_rum_dtype(p, d, d // 3) for p, d in ((2, 54), (5, 108), (8, 104))],
        [rummy51_dtype(p, 108, 36) for p in (2, 6)],
    ],
)
def test_each_game_answers_for_its_records_of_every_size(dtypes):
    tests = {
        "gin": batch.for_records(GIN_STATE_DTYPE.names),
        "rum": batch.for_records(five_hundred_rum_dtype(2, 54, 18).names),
        "r51": batch.for_records(rummy51_dtype(2, 108, 36).names),
    }
    for dt in dtypes:
        rec = from_dtype(dt)
        owners = [name for name, ok in tests.items() if ok(rec)]
        assert len(owners) == 1
        # the entry points' states arrays too (``new_work`` is chosen by them)
        assert [n for n, ok in tests.items() if ok(types.Array(rec, 1, "C"))] == owners


# the optional hooks each game needs: worlds dealt by ``deal_worlds``, a pending ``settle``
OPTIONAL_USED = {"gin_rummy": ("settle",), "500": ("world_ok",), "51": ("world_ok",)}


@pytest.mark.parametrize("kernels,key", [(KGIN, "gin_rummy"), (K500, "500"), (K51, "51")])
def test_every_game_defines_the_hooks(kernels, key):
    for name in batch.HOOKS:
        if name in batch.OPTIONAL_HOOKS and name not in OPTIONAL_USED[key]:
            assert not hasattr(kernels, name), name
            continue
        assert callable(getattr(kernels, name)), name


def test_a_game_without_a_hook_is_refused():
    with pytest.raises(ValueError, match="apply_action"):  # before registering anything
        batch.register(("x",), {"__name__": "incomplete", "new_work": print})


@pytest.mark.parametrize("game", ["gin_rummy", "five_hundred_rum", "rummy51"])
def test_play_random_is_public_and_matches_serial(game):
    from rummy_env.games import GAMES

    cfg_cls, game_cls = GAMES[game]
    a, b = game_cls(cfg_cls(), 12), game_cls(cfg_cls(), 12)
    a.seed(5)
    b.seed(5)
    pa, pb = a.play_random(2), b.play_random(2, parallel=False)
    for k in ("outcome", "decisions", "hands", "points"):
        np.testing.assert_array_equal(pa[k], pb[k])
    assert pa["points"].shape == (12, 2, a.num_players)
    assert (pa["decisions"] > 0).all() and (pa["hands"] >= 1).all()
