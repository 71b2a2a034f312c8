"""Renamed and re-versioned names: an old env version raises naming the current one (as
PettingZoo's do), a renamed public name answers as a deprecated alias for one release, and the
Gymnasium ids carry their env module's version."""

from __future__ import annotations

import re
import warnings

import gymnasium
import pytest
from pettingzoo.utils.deprecated_module import DeprecatedEnv

import rummy_agents
import rummy_env
from rummy_env.renamed import REMOVAL, renamed_attributes

OLD_VERSIONS = [
    (game, v) for game, mod in rummy_env.ENV_MODULES.items()
    for v in range(int(mod.__name__.rpartition("_v")[2]))
]  # fmt: skip


def test_there_are_old_versions_to_check():
    assert ("five_hundred_rum", 0) in OLD_VERSIONS and ("rummy51", 0) in OLD_VERSIONS


@pytest.mark.parametrize(("game", "version"), OLD_VERSIONS)
def test_an_old_env_version_names_the_current_one(game, version):
    current = rummy_env.ENV_MODULES[game].__name__.rpartition(".")[2]
    old = getattr(rummy_env, f"{game}_v{version}")  # importable, as in PettingZoo
    for make in (old.env, old.raw_env, old.parallel_env):
        with pytest.raises(DeprecatedEnv, match=rf"{game}_v{version} is now {current}\b"):
            make()
    with pytest.raises(AttributeError, match=current):
        old.SomethingElse  # noqa: B018
    assert issubclass(DeprecatedEnv, ImportError)


def test_the_from_import_form_works_like_pettingzoo():
    from rummy_env import five_hundred_rum_v0  # noqa: PLC0415

    with pytest.raises(ImportError, match="five_hundred_rum_v0 is now five_hundred_rum_v1"):
        five_hundred_rum_v0.env()


@pytest.mark.parametrize(
    "name", ["gin_rummy_v1", "rummy51_v9", "five_hundred_rum_vx", "no_such_game_v0", "x", "_v0"]
)
def test_other_unknown_names_are_plain_attribute_errors(name):
    with pytest.raises(AttributeError, match=re.escape(repr(name))):
        getattr(rummy_env, name)
    assert getattr(rummy_env, name, "default") == "default"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("GinNoviceAgent", "GinRummyNoviceAgent"),
        ("GinPlannerAgent", "GinRummyPlannerAgent"),
        ("GinSimpleAgent", "GinRummySimpleAgent"),
    ],
)
def test_renamed_agent_classes_are_deprecated_aliases(old, new):
    with pytest.warns(DeprecationWarning, match=rf"rummy_agents\.{old} is now rummy_agents\.{new}"):
        obj = getattr(rummy_agents, old)
    assert obj is getattr(rummy_agents, new)
    assert old not in rummy_agents.__all__ and new in rummy_agents.__all__


def test_rum_deck_is_a_deprecated_alias_of_joker_deck():
    import rummy_env.testing as testing  # noqa: PLC0415

    with pytest.warns(DeprecationWarning, match=rf"rum_deck is now .*joker_deck.*{REMOVAL}"):
        from rummy_env.testing import rum_deck  # noqa: PLC0415
    assert rum_deck is testing.joker_deck


def test_renamed_attributes_leaves_other_names_alone():
    getattr_ = renamed_attributes("rummy_agents", {"Old": "RandomAgent"})
    with pytest.warns(DeprecationWarning):
        assert getattr_("Old") is rummy_agents.RandomAgent
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="'New'"):
            getattr_("New")


def test_gymnasium_ids_follow_the_env_versions():
    for gym_id, game in rummy_env.GYM_IDS.items():
        module = rummy_env.ENV_MODULES[game].__name__
        assert gym_id.rpartition("-v")[2] == module.rpartition("_v")[2], (gym_id, module)


@pytest.mark.parametrize("old_id", ["rummy/FiveHundredRum-v0", "rummy/Rummy51-v0"])
def test_old_gymnasium_ids_raise_gymnasiums_deprecation_error(old_id):
    name = old_id.rpartition("-v")[0]
    with pytest.raises(gymnasium.error.DeprecatedEnv, match=rf"{name}-v1"):
        gymnasium.make(old_id)
