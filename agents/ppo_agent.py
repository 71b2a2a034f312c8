"""A learned agent: a masked actor-critic network played from its weights.

Weights come from ``experiments/ppo_selfplay.py`` (a ``.pt`` checkpoint: network weights plus the
game, rule options, observation features and layer sizes), from a published agent shipped in the
package (``.npz``, :mod:`rummy_agents.published`) or from ``experiments/train_sb3.py`` (an SB3
``model.zip`` with its ``model.json`` beside it). The agent acts from the seat's own observation
(plus features computed from it) and the action mask: masked logits, so it never picks an illegal
action. The network runs in numpy: playing a ``.npz`` agent needs no torch (reading a ``.pt``
file or an SB3 model does).

In the arena (``ppo`` alone plays the published agent of the game)::

    rummy-env arena --game gin_rummy --agents ppo,simple
    rummy-env arena --game gin_rummy --agents ppo@checkpoint=runs/gin/agent.pt,simple
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rummy_agents.features import FeatureSet, add_features, feature_size

CHECKPOINT_FORMAT = "rummy_env-ppo-v1"
MASKED_LOGIT = -1e8


class NumpyActorCritic:
    """The policy of :class:`rummy_agents.ppo_net.MaskedActorCritic` in numpy (float32).

    Args:
        meta: the checkpoint's description (``hidden``, ``layers``, ``card_inputs``,
            ``card_actions``, ``card_select``, ``meld_planes``).
        weights: the network's parameters by their torch names (``trunk.0.weight``, ...).
    """

    def __init__(self, meta: Mapping[str, Any], weights: Mapping[str, np.ndarray]) -> None:
        w = {k: np.asarray(v, dtype=np.float32) for k, v in weights.items()}
        self.weights = w
        """The parameters by their torch names (float32 arrays)."""
        self.trunk = [(w[f"trunk.{2 * i}.weight"].T, w[f"trunk.{2 * i}.bias"])
                      for i in range(int(meta["layers"]))]  # fmt: skip
        self.policy = (w["policy.weight"].T, w["policy.bias"])
        self.card_inputs = [int(o) for o in meta.get("card_inputs", ())]
        self.card_actions = [int(a) for a in meta.get("card_actions", ())]
        self.card_select = [(int(a), int(o)) for a, o in meta.get("card_select", ())]
        self.meld_planes = [(int(a), int(o), int(n)) for a, o, n in meta.get("meld_planes", ())]
        if self.card_inputs and self.card_actions:
            self.card_in = (w["card_in.weight"].T, w["card_in.bias"])
            self.card_ctx = (w["card_ctx.weight"].T, w["card_ctx.bias"])
            self.card_out = (w["card_out.weight"].T, w["card_out.bias"])
        if self.meld_planes:
            self.meld_gate = (w["meld_gate.weight"].T, w["meld_gate.bias"])

    def logits(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Masked logits (illegal actions at ``MASKED_LOGIT``) for (B, D) float32 inputs and
        (B, A) bool masks: the same computation as the torch network's ``forward``.
        """
        h = x
        for weight, bias in self.trunk:
            h = np.tanh(h @ weight + bias)
        logits = h @ self.policy[0] + self.policy[1]
        if self.card_inputs and self.card_actions:
            planes = np.stack([x[:, o : o + 52] for o in self.card_inputs], -1)  # (B, 52, K)
            ctx = h @ self.card_ctx[0] + self.card_ctx[1]
            z = np.tanh(planes @ self.card_in[0] + self.card_in[1] + ctx[:, None, :])
            out = z @ self.card_out[0] + self.card_out[1]  # (B, 52, M + S)
            for j, b in enumerate(self.card_actions):
                logits[:, b : b + 52] += out[:, :, j]
            m = len(self.card_actions)
            for j, (a, o) in enumerate(self.card_select):
                logits[:, a] += (x[:, o : o + 52] * out[:, :, m + j]).sum(1)
        if self.meld_planes:
            gate = h @ self.meld_gate[0] + self.meld_gate[1]
            for k, (a, o, n) in enumerate(self.meld_planes):
                logits[:, a : a + n] += gate[:, k : k + 1] * x[:, o : o + n]
        return np.where(mask, logits, np.float32(MASKED_LOGIT))


def read_npz(path: str | Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(meta, float32 weights) of an ``.npz`` agent file (:func:`write_npz`).

    Raises:
        ValueError: for a file that is not a ``rummy_env-ppo-v1`` agent.
    """
    with np.load(path, allow_pickle=False) as z:
        if "meta" not in z.files:
            raise ValueError(f"{path}: not a {CHECKPOINT_FORMAT} agent file (no meta)")
        meta = json.loads(str(z["meta"]))
        weights = {}
        for key in z.files:
            if key == "meta" or key.endswith("#scale"):
                continue
            v = z[key].astype(np.float32)
            if f"{key}#scale" in z.files:  # int8 rows times their float32 scales
                v = v * z[f"{key}#scale"][..., None]
            weights[key] = v
    if meta.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a {CHECKPOINT_FORMAT} agent file")
    return meta, weights


PRECISIONS = ("float32", "float16", "int8")


def write_npz(
    path: str | Path, meta: Mapping[str, Any], weights: Mapping[str, Any], precision: str
) -> None:
    """Write an agent as a compressed ``.npz``: ``meta`` as JSON and the weights stored as
    ``float32``, ``float16`` or ``int8`` (matrices per row with a float32 scale; vectors in
    float32).

    Raises:
        ValueError: for an unknown precision.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps({**meta, "precision": precision}))}
    for key, value in weights.items():
        v = np.asarray(value, dtype=np.float32)
        if precision == "float16":
            arrays[key] = v.astype(np.float16)
        elif precision == "int8" and v.ndim == 2:
            scale = np.abs(v).max(1) / 127.0
            scale[scale == 0] = 1.0
            arrays[key] = np.round(v / scale[:, None]).astype(np.int8)
            arrays[f"{key}#scale"] = scale.astype(np.float32)
        else:
            arrays[key] = v
    # mypy matches **arrays against the keyword allow_pickle (no key of ours is named so)
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]


_CACHE: dict[str, tuple[Any, dict[str, Any]]] = {}


def load_checkpoint(path: str | Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(meta, float32 weights) of a ``.pt`` checkpoint or an ``.npz`` agent file.

    Raises:
        ValueError: for a missing file or one that is not a ``rummy_env-ppo-v1`` agent.
        ImportError: for a ``.pt`` file without torch (the ``train`` extra).
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"checkpoint {str(path)!r}: no such file")
    if p.suffix == ".npz":
        return read_npz(p)
    try:
        import torch
    except ImportError:
        raise ImportError(
            f"checkpoint {str(path)!r}: reading a .pt file needs torch "
            "(pip install rummy_env[train]); published .npz agents do not"
        ) from None
    ckpt = torch.load(p, map_location="cpu", weights_only=True)
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a {CHECKPOINT_FORMAT} checkpoint")
    meta = {k: v for k, v in ckpt.items() if k != "state_dict"}
    weights = {k: v.float().numpy() for k, v in ckpt["state_dict"].items()}
    return meta, weights


def _load(path: str) -> tuple[Any, dict[str, Any]]:
    """(policy, meta) of a checkpoint file, cached: the arena builds an agent for every game."""
    key = str(Path(path).resolve())
    if key not in _CACHE:
        p = Path(path)
        if p.suffix == ".zip":
            if not p.is_file():
                raise ValueError(f"checkpoint {path!r}: no such file")
            from sb3_contrib import MaskablePPO

            meta = json.loads((p.parent / "model.json").read_text())
            _CACHE[key] = (MaskablePPO.load(p, device="cpu"), meta)
        else:
            meta, weights = load_checkpoint(p)
            _CACHE[key] = (NumpyActorCritic(meta, weights), meta)
    return _CACHE[key]


class PPOAgent:
    """Plays a trained network (single observations or batches).

    Args:
        seed: seed of the generator used when ``deterministic`` is False.
        checkpoint: path of a ``.pt`` checkpoint, an ``.npz`` agent file or an SB3
            ``model.zip``; None: the published agent of ``game``
            (:func:`rummy_agents.published.published_path`).
        game: the game played (the arena and the registry pass it); with a checkpoint, it must
            be the game the checkpoint was trained on.
        deterministic: play the most probable legal action (default) or sample.
        threads: torch CPU threads for SB3 models (set globally; 1 suits one decision at a time
            and arena worker processes).

    Raises:
        ValueError: for no checkpoint and no game (or a game with no published agent), a
            missing file, or a checkpoint of another game.
    """

    name = "ppo"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str | Path | None = None,
        game: str | None = None,
        deterministic: bool = True,
        threads: int | None = 1,
    ) -> None:
        if checkpoint is None:
            from rummy_agents.published import published_path

            if game is None:
                raise ValueError(
                    "PPOAgent needs checkpoint=PATH or game=NAME (the published agent of game)"
                )
            checkpoint = published_path(game)
        elif not isinstance(checkpoint, str | Path):
            raise TypeError(f"checkpoint must be a path, got {checkpoint!r}")
        self.checkpoint = str(checkpoint)
        if str(checkpoint).endswith(".zip") and threads:
            import torch

            torch.set_num_threads(int(threads))
        self.policy, self.meta = _load(self.checkpoint)
        self.sb3 = not isinstance(self.policy, NumpyActorCritic)
        self.features = self.meta.get("features", "none")
        # the input features, read through the layout of the game and options trained on
        trained_on = self.meta.get("game")
        if game is not None and trained_on is not None and trained_on != game:
            raise ValueError(
                f"checkpoint {self.checkpoint!r} was trained on {trained_on}, not {game}"
            )
        self.feature_set = None
        if trained_on is not None:
            self.feature_set = FeatureSet(trained_on, self.features, self.meta.get("options") or {})
        self.deterministic = bool(deterministic)
        self.rng = np.random.default_rng(seed)
        # (raw observation width, actions) the network was trained on; None: not recorded
        self._shape = None
        if not self.sb3 and "obs_size" in self.meta:
            raw = int(self.meta["obs_size"]) - feature_size(self.features)
            self._shape = (raw, int(self.meta["num_actions"]))

    def _check_shapes(self, obs_width: int, num_actions: int) -> None:
        """A clear error when the checkpoint was trained on another game or rule set."""
        if self._shape is not None and (obs_width, num_actions) != self._shape:
            want, n_act = self._shape
            raise ValueError(
                f"this checkpoint was trained on {self.meta.get('game', '?')} with options "
                f"{self.meta.get('options', {})} (observations of {want} values, {n_act} "
                f"actions); got {obs_width} values and {num_actions} actions: load a "
                "checkpoint trained on this game and player count"
            )

    def act(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """Choose a legal action for one observation dict (``view`` is unused)."""
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        mask = np.asarray(observation["action_mask"])[None]
        return int(self.act_batch(obs, mask)[0])

    def logits(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(N, A) masked float32 logits (illegal actions at ``MASKED_LOGIT``) for (N, O)
        observations and (N, A) masks: the network's scores behind :meth:`act_batch`.

        Raises:
            ValueError: for observations or actions of another game or rule set.
            TypeError: for an SB3 model (it has no numpy network to score with).
        """
        if self.sb3:
            raise TypeError(f"checkpoint {self.checkpoint!r}: an SB3 model has no numpy logits")
        m = np.asarray(masks) == 1
        self._check_shapes(np.shape(observations)[-1], m.shape[-1])
        return self.policy.logits(np.asarray(self._inputs(observations), dtype=np.float32), m)

    def _inputs(self, observations: np.ndarray) -> np.ndarray:
        if self.feature_set is not None:
            return self.feature_set(observations)
        # no game recorded: the layout is guessed from the observation's width
        return add_features(self.features, observations)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(N,) legal actions for (N, O) observations and (N, A) masks (vector env rows).

        Raises:
            ValueError: if a row has no legal action.
        """
        m = np.asarray(masks) == 1
        if not m.any(axis=1).all():
            raise ValueError("a mask has no legal action")
        if self.sb3:
            self._check_shapes(np.shape(observations)[-1], m.shape[-1])
            x = self._inputs(observations)
            acts, _ = self.policy.predict(x, action_masks=m, deterministic=self.deterministic)
            return np.asarray(acts, dtype=np.int64)
        logits = self.logits(observations, m)
        if self.deterministic:
            return logits.argmax(1).astype(np.int64)
        z = np.exp(logits - logits.max(1, keepdims=True))
        cum = np.cumsum(z / z.sum(1, keepdims=True), 1)
        u = self.rng.random((len(cum), 1))
        return np.minimum((cum < u).sum(1), m.shape[1] - 1).astype(np.int64)


def __getattr__(name: str) -> Any:
    # the torch network moved to rummy_agents.ppo_net; old imports keep working
    if name in ("MaskedActorCritic", "build_checkpoint", "load_network"):
        from rummy_agents import ppo_net

        return getattr(ppo_net, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CHECKPOINT_FORMAT",
    "MASKED_LOGIT",
    "NumpyActorCritic",
    "PPOAgent",
    "load_checkpoint",
    "read_npz",
    "write_npz",
]
