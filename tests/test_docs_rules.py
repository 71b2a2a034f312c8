"""The rules pages of the docs list every rule option of the game's config with its default."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from rummy_env.rules.five_hundred_rum.config import FiveHundredRumConfig
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.rummy51.config import Rummy51Config
from rummy_env.testing.spec import spec_table

DOCS = Path(__file__).resolve().parents[1] / "docs" / "games"
PAGES = {
    "gin_rummy.md": GinRummyConfig,
    "five_hundred_rum.md": FiveHundredRumConfig,
    "rummy51.md": Rummy51Config,
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_rule_options_table_matches_config(page: str) -> None:
    text = (DOCS / page).read_text().replace("### Rule options", "## Rule options")
    rows = spec_table(text, "Rule options")
    fields = {f.name: f.default for f in dataclasses.fields(PAGES[page])}
    assert [r[0].strip("`") for r in rows] == list(fields)
    for row in rows:
        name, default = row[0].strip("`"), row[1].strip("`")
        want = fields[name]
        assert default == (f'"{want}"' if isinstance(want, str) else str(want)), name


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_option_is_explained_in_the_rules(page: str) -> None:
    text = (DOCS / page).read_text()
    rules = text.split("### Rule options", 1)[0]
    env_only = {"episode", "reward", "max_steps", "max_pile_draws", "elimination"}
    for f in dataclasses.fields(PAGES[page]):
        if f.name not in env_only:
            assert re.search(rf"`{f.name}[`=]", rules), f.name  # `name` or `name=...`


def test_game_pages_pull_the_env_docstrings() -> None:
    for page in PAGES:
        module = "rummy_env.envs." + page.removesuffix(".md")
        assert f"% envspec: {module} heading-offset=1" in (DOCS / page).read_text()
