"""A feature set for one game and observation layout (:class:`FeatureSet`), and the functions
that older call sites use (:func:`add_features`, :func:`feature_size`, :func:`card_layout`,
:func:`meld_planes`, :func:`default_features`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, cast

import numpy as np

from rummy_agents.features import joker_cards as J
from rummy_agents.features.gin import gin_deadwood
from rummy_agents.features.pieces import (
    BLOCK_SIZES,
    GAME_NAMES,
    JOKER_GAMES,
    LEGACY_NAMES,
    PIECES,
    parse_pieces,
    pieces_size,
)
from rummy_agents.features.searches import FIVE_HUNDRED_RUM_VALUES, RUMMY51_VALUES
from rummy_env.encodings import five_hundred_rum as E500
from rummy_env.encodings import gin_rummy as EGin
from rummy_env.encodings import rummy51 as E51
from rummy_env.games import GAMES
from rummy_env.rules.five_hundred_rum.config import FiveHundredRumConfig
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.options import RuleOptions
from rummy_env.rules.rummy51.config import Rummy51Config

FEATURES = tuple(LEGACY_NAMES)
"""The legacy feature-set names (:data:`LEGACY_NAMES`), as checkpoints store them."""

_LAYOUTS = {"five_hundred_rum": E500.Layout, "rummy51": E51.Layout}

Features = str | Sequence[str]
"""A legacy feature-set name, a piece name, piece names joined by ``+``, or piece names."""


def game_config(game: str, config: RuleOptions | Mapping[str, Any] | None = None) -> RuleOptions:
    """The rule config of ``game`` from a config, a mapping of rule options (as checkpoints store
    them) or ``None`` (the defaults).

    Raises:
        ValueError: for an unknown game, unknown options or a config of another game.
    """
    if game not in GAMES:
        raise ValueError(f"game must be one of {', '.join(GAMES)}, got {game!r}")
    cls = GAMES[game][0]
    if config is None:
        return cls()
    if isinstance(config, Mapping):
        return cls.from_kwargs(**config)
    if not isinstance(config, cls):
        raise ValueError(
            f"config must be a {cls.__name__} (game {game!r}), a mapping of its options or None, "
            f"got {type(config).__name__}"
        )
    return config


def observation_layout(game: str, config: RuleOptions | Mapping[str, Any] | None = None) -> Any:
    """The encoding layout of ``game``'s observations under ``config``: a
    ``rummy_env.encodings.<game>.Layout`` for the joker games, ``None`` for Gin Rummy (whose
    encoding is a fixed table of pieces).
    """
    cfg = game_config(game, config)
    if game in _LAYOUTS:
        joker_cfg = cast(FiveHundredRumConfig | Rummy51Config, cfg)  # the config of ``game``
        return _LAYOUTS[game](joker_cfg.num_players, joker_cfg.deck_size)
    return None


class FeatureSet:
    """A learner's extra observation entries for one game: ``size`` entries appended by
    ``features(obs)`` (what ``rummy_env.wrappers.RummySingleAgentEnv`` takes as ``features``).

    The pieces read the observation through the offsets of the game's encoding layout, built
    from the rule config (players and deck size), so observations of equal width but another
    layout cannot be mistaken for one another.

    Args:
        game: ``"gin_rummy"``, ``"five_hundred_rum"`` or ``"rummy51"``.
        features: a legacy feature-set name (:data:`LEGACY_NAMES`, such as a checkpoint's
            ``features``), a piece name, piece names joined by ``+``, or a sequence of piece
            names (:data:`PIECES`), in the order they are appended.
        config: the game's rule config, a mapping of its options (a checkpoint's ``options``),
            or ``None`` for the defaults.
        layout: the observation layout (``rummy_env.encodings.<game>.Layout``, joker games
            only), when the caller has it rather than the config; it must agree with ``config``
            when both are given.

    Attributes:
        game: the game.
        name: the legacy name the set was given by, else its pieces joined by ``+``
            (``"none"`` for no pieces).
        pieces: the piece names, in order.
        config: the rule config (``None`` when only a layout was given).
        layout: the joker games' observation layout; ``None`` for Gin Rummy.
        obs_size: width of the observations the set reads.
        size: number of feature entries appended.

    Raises:
        ValueError: for an unknown game or piece, a piece of another game, a config of another
            game, or a layout of another game or that disagrees with ``config``.
    """

    def __init__(
        self,
        game: str,
        features: Features = "none",
        config: RuleOptions | Mapping[str, Any] | None = None,
        *,
        layout: Any = None,
    ) -> None:
        if not isinstance(game, str) or game not in GAMES:
            raise ValueError(f"game must be one of {', '.join(GAMES)}, got {game!r}")
        self.game = game
        self.pieces = parse_pieces(features)
        for n in self.pieces:
            games = PIECES[n].games
            if game not in games:
                allowed = [p for p, piece in PIECES.items() if game in piece.games]
                raise ValueError(
                    f"features: piece {n!r} is for {' and '.join(GAME_NAMES[g] for g in games)} "
                    f"({', '.join(games)}), not {game!r}; pieces for {game!r}: "
                    f"{', '.join(allowed)}"
                )
        if isinstance(features, str) and features in LEGACY_NAMES:
            self.name = features
        else:
            self.name = "+".join(self.pieces) or "none"
        self.config = None if config is None and layout is not None else game_config(game, config)
        if layout is None:
            layout = observation_layout(game, self.config)
        elif game not in _LAYOUTS or not isinstance(layout, _LAYOUTS[game]):
            want = f"a {_LAYOUTS[game].__module__}.Layout" if game in _LAYOUTS else "None"
            raise ValueError(f"layout must be {want} for {game!r}, got {layout!r}")
        elif self.config is not None and layout != observation_layout(game, self.config):
            raise ValueError(
                f"layout {layout!r} disagrees with config {self.config!r}: pass one of them"
            )
        self.layout = layout
        if game == "gin_rummy":
            gin = self._gin_config()
            self.obs_size = EGin.observation_size(gin.auto_meld, gin.num_players)
        else:
            self.obs_size = layout.obs_size
        self.size = pieces_size(self.pieces)
        at = 0
        self._at: dict[str, int] = {}
        for n in self.pieces:
            self._at[n] = at
            at += PIECES[n].size
        self._blocks = {PIECES[n].block for n in self.pieces}
        if "gin_rel" in self._blocks:
            self._blocks.add("gin")  # computed by the same kernel
        if self._blocks & {"takes", "discards"}:
            self._blocks.add("cards")  # the table-fit plane
        if "discards" in self._blocks:
            self._blocks.add("turn")  # the free arrangement's melded copies
        if game in JOKER_GAMES:
            lay = self.layout
            self._offs = np.array([lay.offset(n) for n in J.CARD_PIECES], np.int64)
            self._offs2 = np.array(
                [lay.offset(n) if n in {p.name for p in lay.pieces} else -1 for n in J.TURN_PIECES],
                np.int64,
            )
            self._vals = RUMMY51_VALUES if game == "rummy51" else FIVE_HUNDRED_RUM_VALUES
            self._held = bool({"held_points", "free_arrangement_copies"} & set(self.pieces))
            self._held = self._held or "discards" in self._blocks
            self._fewest = "fewest_cards_melds" in self.pieces

    def _gin_config(self) -> GinRummyConfig:
        """The rule config of a Gin Rummy set (never ``None``: Gin Rummy takes no layout)."""
        return cast(GinRummyConfig, self.config)

    def offset(self, piece: str) -> int:
        """Offset of a piece in the featured observation (observation first, then pieces).

        Raises:
            KeyError: for a piece the set has not.
        """
        return self.obs_size + self._at[piece]

    def check_width(self, width: int) -> None:
        """Raise a clear error unless observations ``width`` wide are the ones the set reads.

        Raises:
            ValueError: for another width.
        """
        if int(width) != self.obs_size:
            raise ValueError(
                f"{self!r} reads {GAME_NAMES[self.game]} observations {self.obs_size} wide "
                f"({self._where()}); got {width}: build the FeatureSet from the env's config"
            )

    def _where(self) -> str:
        if self.layout is None:
            return "auto_meld" if self._gin_config().auto_meld else "manual melds"
        return f"{self.layout.num_players} players, {self.layout.deck_size} cards"

    def __call__(self, obs: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``obs`` ((O,) or (B, O)) with the features appended: a fresh float32 array, or
        ``out`` (float32, of the result's shape) filled and returned (a rollout's storage: no
        copy of the rows afterwards).

        Raises:
            TypeError: for an ``out`` that is not a writeable float32 numpy array.
            ValueError: for an ``out`` of another shape.
        """
        x = np.asarray(obs, dtype=np.float32)
        single = x.ndim == 1
        x2 = x[None] if single else x
        w = x2.shape[1]
        if self.pieces:
            self.check_width(w)
        shape = (x2.shape[0], w + self.size)
        if out is None:
            out = np.empty(shape[1:] if single else shape, dtype=np.float32)
        else:
            _check_out(out, shape[1:] if single else shape)
        rows = out[None] if single else out
        rows[:, :w] = x2
        if self.pieces:
            blocks = self._compute(np.ascontiguousarray(x2))
            for n in self.pieces:
                p = PIECES[n]
                at = w + self._at[n]
                rows[:, at : at + p.size] = blocks[p.block][:, p.start : p.start + p.size]
        return out

    def _compute(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """The blocks the pieces are cut from, for C-contiguous float32 observations (B, O)."""
        b = obs.shape[0]
        out = {k: np.zeros((b, BLOCK_SIZES[k]), np.float32) for k in self._blocks}
        if "gin" in out:
            gin_offs = EGin.piece_offsets(self._gin_config().auto_meld)
            rel = out.get("gin_rel")
            gin_deadwood(obs, out["gin"], gin_offs["hand"], gin_offs["discard_top"], rel)
            return out
        lay, offs, offs2 = self.layout, self._offs, self._offs2
        if "cards" in out:
            J.card_planes(obs, out["cards"], offs, lay.max_melds, self.game == "rummy51")
        if "turn" in out:
            J.turn_block(
                obs, out["turn"], offs, offs2, lay.max_melds, self._held, self._fewest, self._vals
            )
        fit = out["cards"][:, J.TABLE_FIT] if "cards" in out else None
        if "takes" in out:
            J.take_depths(
                obs, out["takes"], fit, offs, offs2, lay.deck_size, FIVE_HUNDRED_RUM_VALUES
            )
        if "discards" in out:
            melded = out["turn"][:, J.MELDED_COPIES]
            counts = lay.offset("pile_counts")
            J.discard_planes(
                obs, out["discards"], fit, melded, offs, offs2, counts, FIVE_HUNDRED_RUM_VALUES
            )
        if "plan" in out:
            J.plan_block(obs, out["plan"], lay)
        return out

    def card_layout(self) -> tuple[list[int], list[int], list[tuple[int, int]]]:
        """Card planes of the featured observation and the card-indexed actions, for a policy's
        card head: (offsets of 52-wide card planes, first ids of 52-wide action blocks, (action
        id, plane offset) of actions about the card marked in a plane).

        Gin Rummy: the observation's hand, top-discard, pile and opponent planes, then the
        pieces' planes; ``DISCARD[c]`` and ``KNOCK[c]``; taking the discard is about the card
        of the top-discard plane. Joker games: the ``hand``, next player's ``known`` and
        ``pile_counts`` planes, then the pieces' planes; ``DISCARD[c]`` of naturals; taking the
        top discard (500 Rum: depth 0) is about the card of the ``top_discard`` piece (when the
        set has it). Empty for joker-game sets without card planes.
        """
        planes = [self.offset(n) + k for n in self.pieces for k in PIECES[n].card_planes]
        if self.game == "gin_rummy":
            offs = EGin.piece_offsets(self._gin_config().auto_meld)
            raw = [offs[n] for n in ("hand", "discard_top", "discard_pile", "opponent_known")]
            return (
                raw + planes,
                [EGin.DISCARD_BASE, EGin.KNOCK_BASE],
                [(EGin.TAKE_DISCARD, offs["discard_top"])],
            )
        if not planes:
            return [], [], []
        lay = self.layout
        raw = [lay.offset(n) for n in ("hand", "known", "pile_counts")]
        take = lay.take_base if self.game == "five_hundred_rum" else lay.take_discard
        select = [(take, self.offset("top_discard"))] if "top_discard" in self.pieces else []
        return raw + planes, [lay.discard_base], select

    def meld_planes(self) -> list[tuple[int, int, int]]:
        """(first action id, input offset, width) of each piece aligned with a block of
        actions, for a policy head that adds a gated copy of the piece to those actions'
        logits: ``fewest_cards_melds`` and ``greedy_plan_melds`` with ``MELD[t]``,
        ``take_gains`` with ``TAKE_DISCARD[d]`` (the deck's size of them), ``discard_scores``
        and ``free_discard_scores`` with ``DISCARD[c]`` of naturals; in the set's order.
        """
        out = []
        for n in self.pieces:
            kind = PIECES[n].actions
            if kind == "meld":
                out.append((self.layout.meld_base, self.offset(n), PIECES[n].size))
            elif kind == "take":
                out.append((self.layout.take_base, self.offset(n), self.layout.deck_size))
            elif kind == "discard":
                out.append((self.layout.discard_base, self.offset(n), 52))
        return out

    def __repr__(self) -> str:
        return f"FeatureSet({self.game!r}, {self.name!r})"


def _check_out(out: object, shape: tuple[int, ...]) -> None:
    """Raise unless ``out`` is a writeable float32 numpy array of ``shape``."""
    if not isinstance(out, np.ndarray) or out.dtype != np.float32 or not out.flags.writeable:
        what = (
            f"a {out.dtype} array" + ("" if out.flags.writeable else " (read-only)")
            if isinstance(out, np.ndarray)
            else type(out).__name__
        )
        raise TypeError(f"out must be a writeable float32 numpy array, got {what}")
    if out.shape != shape:
        raise ValueError(
            f"out must have shape {shape} (the observations and features), got {out.shape}"
        )


# -- functions of older call sites ------------------------------------------------------------


def _key(features: Features) -> str | tuple[str, ...]:
    return features if isinstance(features, str) else tuple(features)


def feature_size(features: Features) -> int:
    """Number of feature entries of a feature set (a legacy name or pieces: see
    :class:`FeatureSet`).

    Raises:
        ValueError: for an unknown feature set or piece.
    """
    return pieces_size(parse_pieces(features))


@cache
def _explicit(game: str, features: str | tuple[str, ...], config: RuleOptions) -> FeatureSet:
    return FeatureSet(game, features, config)


def _resolve(
    game: str | None,
    features: Features,
    width: int,
    config: RuleOptions | Mapping[str, Any] | None,
) -> FeatureSet:
    """The feature set for observations ``width`` wide: from the game and config when both are
    given, else from the width (:func:`guess_feature_set`).
    """
    if game is not None and config is not None:
        fs = _explicit(game, _key(features), game_config(game, config))
        if fs.pieces:
            fs.check_width(width)
        return fs
    return guess_feature_set(_key(features), int(width), game)


def add_features(
    name: Features,
    obs: np.ndarray,
    game: str | None = None,
    config: RuleOptions | Mapping[str, Any] | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """``obs`` with the features of ``name`` appended (a fresh float32 array, or ``out``).

    Args:
        name: a feature set (a legacy name or pieces: see :class:`FeatureSet`).
        obs: (B, O) or (O,) observations of one game.
        game: the game; with ``config``, the layout comes from them. Without (older call
            sites), the game and layout are guessed from the width (:func:`guess_feature_set`).
        config: the game's rule config or options.
        out: a float32 array of the result's shape to write it into (``None``: a new one).

    Returns:
        (B, O + F) or (O + F,) float32: ``out`` when given.

    Raises:
        TypeError: for an ``out`` that is not a writeable float32 numpy array.
        ValueError: for an unknown feature set, a piece of another game, observations the
            set cannot read, or an ``out`` of another shape.
    """
    x = np.asarray(obs, dtype=np.float32)
    return _resolve(game, name, x.shape[-1], config)(x, out)


def card_layout(
    game: str,
    features: Features,
    obs_size: int,
    config: RuleOptions | Mapping[str, Any] | None = None,
) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """:meth:`FeatureSet.card_layout` of ``features`` for ``game``'s observations of
    ``obs_size`` (the raw observation, without features).

    Args:
        game: game name.
        features: the feature set appended to the observation.
        obs_size: size of the raw observation.
        config: the game's rule config or options; ``None``: the layout is guessed from
            ``obs_size`` (:func:`guess_feature_set`).
    """
    return _resolve(game, features, obs_size, config).card_layout()


def meld_planes(
    game: str,
    features: Features,
    obs_size: int,
    config: RuleOptions | Mapping[str, Any] | None = None,
) -> list[tuple[int, int, int]]:
    """:meth:`FeatureSet.meld_planes` of ``features`` for ``game``'s observations of
    ``obs_size`` (arguments as :func:`card_layout`'s).
    """
    return _resolve(game, features, obs_size, config).meld_planes()


def default_features(game: str) -> str:
    """The feature set used by default for ``game`` (a legacy name)."""
    if game == "gin_rummy":
        return "gin_deadwood"
    return "joker_cards" if game in JOKER_GAMES else "none"


# -- fallback: the layout guessed from the observation's width ---------------------------------
# Only for call sites that pass no game and config (older scripts, tests of the legacy names).
# Two 500 Rum layouts share a width (3 players and 54 cards, 4 players and 52: 1,760): those
# are refused here, and work with the game and config given.


@cache
def _joker_layouts() -> dict[int, Any]:
    """Observation width -> (game, layout) of every 500 Rum and Rummy 51 player count and deck."""
    found: dict[int, list[tuple[str, Any]]] = {}
    lay: E500.Layout | E51.Layout
    for p in range(2, 9):
        for deck in (52, 54, 104, 108):  # 500 Rum: one or two decks, jokers or none
            lay = E500.Layout(p, deck)
            found.setdefault(lay.obs_size, []).append(("five_hundred_rum", lay))
        if p <= 6:
            lay = E51.Layout(p, 108)
            found.setdefault(lay.obs_size, []).append(("rummy51", lay))
    return {w: v[0] if len(v) == 1 else v for w, v in found.items()}


def joker_layout(width: int) -> tuple[str, Any]:
    """Fallback: the game and observation layout of a 500 Rum or Rummy 51 observation of
    ``width``, guessed from the width alone.

    Raises:
        ValueError: for a width no joker-game layout has, or one two layouts share (500 Rum
            with 3 players and 54 cards, and with 4 players and 52: 1,760 wide).
    """
    hit = _joker_layouts().get(int(width))
    if hit is None:
        raise ValueError(
            f"joker_cards needs a 500 Rum or Rummy 51 observation; no layout is {width} wide"
        )
    if isinstance(hit, list):
        which = ", ".join(f"{g} with {lay.num_players} players and {lay.deck_size} cards"
                          for g, lay in hit)  # fmt: skip
        raise ValueError(
            f"joker_cards cannot tell apart observations {width} wide: {which}; pass the game "
            "and config"
        )
    return hit


@cache
def guess_feature_set(
    features: str | tuple[str, ...], width: int, game: str | None = None
) -> FeatureSet:
    """Fallback: the feature set for observations ``width`` wide, the game (when not given) and
    layout guessed from the width. Prefer :class:`FeatureSet` with the game and config.

    Raises:
        ValueError: for a width no layout of the pieces' games has, or an ambiguous one.
    """
    pieces = parse_pieces(features)
    gin = any("gin_rummy" in PIECES[n].games for n in pieces)
    if not pieces:
        return FeatureSet(game or "gin_rummy", features)
    if gin and game in (None, "gin_rummy"):
        for auto_meld in (True, False):
            if EGin.observation_size(auto_meld) == width:
                return FeatureSet("gin_rummy", features, {"auto_meld": auto_meld})
        raise ValueError(
            f"gin_deadwood needs a Gin Rummy observation (hand, discard_top); no Gin Rummy "
            f"observation is {width} wide"
        )
    if game in (None, *JOKER_GAMES) and not gin:
        guessed, layout = joker_layout(width)
        if game not in (None, guessed):
            raise ValueError(f"observations {width} wide are {guessed}'s, not {game!r}")
        return FeatureSet(guessed, features, layout=layout)
    assert game is not None  # the branches above return or raise for None
    return FeatureSet(game, features)  # a piece of another game: refused with a clear error


__all__ = [
    "FEATURES",
    "FeatureSet",
    "add_features",
    "card_layout",
    "default_features",
    "feature_size",
    "game_config",
    "guess_feature_set",
    "joker_layout",
    "meld_planes",
    "observation_layout",
]
