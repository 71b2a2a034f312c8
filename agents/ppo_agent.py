"""A learned agent: a masked actor-critic network loaded from a checkpoint.

Checkpoints come from ``experiments/ppo_selfplay.py`` (a ``.pt`` file: network weights plus the
game, rule options, observation features and layer sizes) or from ``experiments/train_sb3.py``
(an SB3 ``model.zip`` with its ``model.json`` beside it). The agent acts from the seat's own
observation (plus features computed from it) and the action mask: masked logits, so it never
picks an illegal action.

In the arena::

    rummy-env arena --game gin_rummy --agents ppo@checkpoint=results/ppo_gin_rummy.pt,simple
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from rummy_agents.features import FeatureSet, add_features, feature_size

CHECKPOINT_FORMAT = "rummy_env-ppo-v1"
MASKED_LOGIT = -1e8


def _layer(i: int, o: int, std: float = 2**0.5) -> nn.Linear:
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)  # CleanRL's initialisation
    nn.init.constant_(lin.bias, 0.0)
    return lin


class MaskedActorCritic(nn.Module):
    """MLP trunk with a policy head (one logit per action) and a value head, plus an optional
    card head for games whose actions are indexed by card.

    The card head scores every card with one small network shared by all cards: its inputs are
    the card's entries in the 52-wide card planes of the input (hand, top discard, ...,
    deadwood after discarding it) plus a projection of the trunk's state, and its outputs are
    added to the logits of the card-indexed action blocks (discard c, knock c). A plain MLP has
    to learn 52 separate "this card, this action" mappings; the shared head learns one.

    Meld planes (``meld_planes``) are input planes aligned with a block of actions (Rummy 51's
    ``joker_cards_melds``: the melds of the arrangement leaving the fewest cards, one entry per
    ``MELD[t]``): a gate computed from the trunk's state scales each plane into those actions'
    logits, so the network learns when to trust the plane rather than 685 templates.

    Args:
        obs_size: input size (observation plus features).
        num_actions: number of action ids.
        hidden: width of each hidden layer.
        layers: number of hidden layers.
        card_inputs: offsets of 52-wide card planes in the input (empty: no card head).
        card_actions: first action id of each 52-wide card-indexed action block.
        card_select: (action id, plane offset) pairs: the action's logit also gets the card
            head's score of the cards marked in that plane (e.g. take the top discard).
        card_hidden: width of the card head.
        meld_planes: (first action id, input offset, width) of each input plane added, gated,
            to the logits of the actions it is aligned with.
    """

    def __init__(
        self,
        obs_size: int,
        num_actions: int,
        hidden: int = 128,
        layers: int = 2,
        card_inputs: Sequence[int] = (),
        card_actions: Sequence[int] = (),
        card_hidden: int = 32,
        card_select: Sequence[Sequence[int]] = (),
        meld_planes: Sequence[Sequence[int]] = (),
    ) -> None:
        super().__init__()
        dims = [obs_size] + [hidden] * layers
        trunk: list[nn.Module] = []
        for i, o in zip(dims[:-1], dims[1:], strict=True):
            trunk += [_layer(i, o), nn.Tanh()]
        self.trunk = nn.Sequential(*trunk)
        self.policy = _layer(hidden, num_actions, 0.01)
        self.value = _layer(hidden, 1, 1.0)
        self.card_inputs = [int(o) for o in card_inputs]
        self.card_actions = [int(a) for a in card_actions]
        self.card_select = [(int(a), int(o)) for a, o in card_select]
        self.meld_planes = [(int(a), int(o), int(w)) for a, o, w in meld_planes]
        if self.meld_planes:
            self.meld_gate = _layer(hidden, len(self.meld_planes), 0.0)  # starts off
        if self.card_inputs and self.card_actions:
            self.card_in = _layer(len(self.card_inputs), card_hidden)
            self.card_ctx = _layer(hidden, card_hidden)
            n_out = len(self.card_actions) + len(self.card_select)
            self.card_out = _layer(card_hidden, n_out, 0.01)
            ids = [b + c for b in self.card_actions for c in range(52)]
            self.register_buffer("card_ids", torch.tensor(ids), persistent=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits (illegal actions at ``MASKED_LOGIT``) and values, for (B, D) inputs and
        (B, A) bool masks.
        """
        h = self.trunk(x)
        logits = self.policy(h)
        if self.card_inputs and self.card_actions:
            planes = torch.stack([x[:, o : o + 52] for o in self.card_inputs], -1)  # (B, 52, K)
            z = torch.tanh(self.card_in(planes) + self.card_ctx(h)[:, None, :])
            out = self.card_out(z)  # (B, 52, M + S)
            m = len(self.card_actions)
            per_card = out[:, :, :m].transpose(1, 2).reshape(x.shape[0], -1)  # (B, M * 52)
            logits = logits.index_add(1, self.card_ids, per_card)
            for j, (a, o) in enumerate(self.card_select):
                score = (x[:, o : o + 52] * out[:, :, m + j]).sum(1)
                logits = logits.index_add(1, self.card_ids.new_tensor([a]), score[:, None])
        if self.meld_planes:
            gate = self.meld_gate(h)
            add = torch.zeros_like(logits)
            for k, (a, o, w) in enumerate(self.meld_planes):
                add[:, a : a + w] += gate[:, k : k + 1] * x[:, o : o + w]
            logits = logits + add
        return logits.masked_fill(~mask, MASKED_LOGIT), self.value(h).squeeze(-1)


def build_checkpoint(net: MaskedActorCritic, meta: dict[str, Any]) -> dict[str, Any]:
    """The agent checkpoint dict of a network: weights plus what is needed to rebuild and feed
    it (``meta``: game, options, features, obs_size, num_actions, hidden, layers, ...).
    """
    return {"format": CHECKPOINT_FORMAT, **meta, "state_dict": net.state_dict()}


def load_network(ckpt: Mapping[str, Any]) -> MaskedActorCritic:
    """Rebuild the network of an agent checkpoint dict (in eval mode; freshly initialised when
    ``state_dict`` is None).
    """
    net = MaskedActorCritic(
        ckpt["obs_size"],
        ckpt["num_actions"],
        ckpt["hidden"],
        ckpt["layers"],
        ckpt.get("card_inputs", ()),
        ckpt.get("card_actions", ()),
        ckpt.get("card_hidden", 32),
        ckpt.get("card_select", ()),
        ckpt.get("meld_planes", ()),
    )
    if ckpt.get("state_dict") is not None:
        net.load_state_dict(ckpt["state_dict"])
    return net.eval()


_CACHE: dict[str, tuple[Any, dict[str, Any]]] = {}


def _load(path: str) -> tuple[Any, dict[str, Any]]:
    """(policy, meta) of a checkpoint file, cached: the arena builds an agent for every game."""
    key = str(Path(path).resolve())
    if key not in _CACHE:
        p = Path(path)
        if p.suffix == ".zip":
            import json

            from sb3_contrib import MaskablePPO

            meta = json.loads((p.parent / "model.json").read_text())
            _CACHE[key] = (MaskablePPO.load(p, device="cpu"), meta)
        else:
            ckpt = torch.load(p, map_location="cpu", weights_only=True)
            if ckpt.get("format") != CHECKPOINT_FORMAT:
                raise ValueError(f"{path}: not a {CHECKPOINT_FORMAT} checkpoint")
            meta = {k: v for k, v in ckpt.items() if k != "state_dict"}
            _CACHE[key] = (load_network(ckpt), meta)
    return _CACHE[key]


class PPOAgent:
    """Plays a trained checkpoint (single observations or batches).

    Args:
        seed: seed of the generator used when ``deterministic`` is False.
        checkpoint: path of a ``.pt`` agent checkpoint or an SB3 ``model.zip``.
        deterministic: play the most probable legal action (default) or sample.
        threads: torch CPU threads (set globally; 1 suits one decision at a time and arena
            worker processes).
    """

    name = "ppo"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str = "results/ppo_gin_rummy.pt",
        deterministic: bool = True,
        threads: int | None = 1,
    ) -> None:
        if threads:
            torch.set_num_threads(int(threads))
        self.policy, self.meta = _load(str(checkpoint))
        self.sb3 = not isinstance(self.policy, MaskedActorCritic)
        self.features = self.meta.get("features", "none")
        # the input features, read through the layout of the game and options trained on
        game = self.meta.get("game")
        self.feature_set = None
        if game is not None:
            self.feature_set = FeatureSet(game, self.features, self.meta.get("options") or {})
        self.deterministic = bool(deterministic)
        self.rng = np.random.default_rng(seed)
        self.gen = torch.Generator().manual_seed(int(self.rng.integers(2**31 - 1)))
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

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(N,) legal actions for (N, O) observations and (N, A) masks (vector env rows).

        Raises:
            ValueError: if a row has no legal action.
        """
        m = np.asarray(masks) == 1
        if not m.any(axis=1).all():
            raise ValueError("a mask has no legal action")
        self._check_shapes(np.shape(observations)[-1], m.shape[-1])
        if self.feature_set is not None:
            x = self.feature_set(observations)
        else:  # no game recorded: the layout is guessed from the observation's width
            x = add_features(self.features, observations)
        if self.sb3:
            acts, _ = self.policy.predict(x, action_masks=m, deterministic=self.deterministic)
            return np.asarray(acts, dtype=np.int64)
        logits, _ = self.policy(torch.from_numpy(x), torch.from_numpy(m))
        if self.deterministic:
            return logits.argmax(1).numpy().astype(np.int64)
        probs = torch.softmax(logits, 1)
        return torch.multinomial(probs, 1, generator=self.gen).squeeze(1).numpy().astype(np.int64)


__all__ = ["CHECKPOINT_FORMAT", "MaskedActorCritic", "PPOAgent", "build_checkpoint", "load_network"]
