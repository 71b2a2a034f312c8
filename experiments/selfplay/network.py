"""The network of a run: its layout from the config, its start (fresh, or an agent's weights,
widened to a feature set that extends the agent's), and the agent files it is saved as.

The layout (``meta``) is what an agent file records beside the weights
(``rummy_agents.ppo_agent``, format ``rummy_env-ppo-v1``): game, rule options, features, input
width, actions, layer sizes, the per-card head and the gated planes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from rummy_agents.features import card_layout, feature_size, meld_planes
from rummy_agents.ppo_agent import load_checkpoint
from rummy_agents.ppo_net import MaskedActorCritic, build_checkpoint, load_network
from selfplay.config import Config


def network_meta(cfg: Config, obs_size: int, num_actions: int) -> dict[str, Any]:
    """The network's layout for observations of ``obs_size`` values and ``num_actions``
    actions of ``cfg.game``, with ``cfg.features`` appended to the observations."""
    meta = {
        "game": cfg.game,
        "options": cfg.options,
        "features": cfg.features,
        "obs_size": obs_size + feature_size(cfg.features),
        "num_actions": int(num_actions),
        "hidden": cfg.hidden,
        "layers": cfg.layers,
    }
    if cfg.card_head:
        planes, blocks, select = card_layout(cfg.game, cfg.features, obs_size, cfg.options)
        meta.update(card_inputs=planes, card_actions=blocks, card_select=select)
        meta["card_hidden"] = cfg.card_head
    meld = meld_planes(cfg.game, cfg.features, obs_size, cfg.options)
    if meld:
        meta["meld_planes"] = meld
    return meta


def new_network(meta: dict[str, Any]) -> MaskedActorCritic:
    """A freshly initialised network of layout ``meta`` (on the CPU)."""
    return load_network({**meta, "state_dict": None})


def save_agent(net: MaskedActorCritic, meta: dict[str, Any], global_step: int, path: Path) -> None:
    """Save ``net`` as a playable agent file (``rummy_agents.ppo_agent.PPOAgent``), its weights
    on the CPU so that it loads on any machine."""
    cpu_net = new_network(meta)
    cpu_net.load_state_dict(net.state_dict())
    torch.save(build_checkpoint(cpu_net, {**meta, "global_step": global_step}), path)


def card_head_only(net: MaskedActorCritic) -> None:
    """Make the card-indexed actions' logits the card head's alone (``--card-head-only``):
    zero their rows of the policy layer and zero those rows' gradients from now on, so that
    Adam leaves them at zero (a zero gradient moves neither moment). The agent files keep the
    usual layout: the rows are saved as zeros and play the same anywhere."""
    ids = getattr(net, "card_ids", None)
    if ids is None:
        raise ValueError("card_head_only: the network has no card head")
    rows = torch.zeros(net.policy.out_features, dtype=torch.bool, device=ids.device)
    rows[ids] = True
    with torch.no_grad():
        net.policy.weight[rows] = 0.0
        net.policy.bias[rows] = 0.0
    net.policy.weight.register_hook(lambda g: g.masked_fill(rows[:, None], 0.0))
    net.policy.bias.register_hook(lambda g: g.masked_fill(rows, 0.0))


# feature sets that append inputs to another's, and may start from a network trained on it
WIDENS = {
    "gin_deadwood_relative": "gin_deadwood",
    "joker_cards_melds": "joker_cards_plan",
    "joker_cards_discards": "joker_cards_takes",
    "joker_cards_planner": "joker_cards_discards",
}


def _as_lists(x: Any) -> Any:
    """``x`` with its tuples as lists, at any depth (an ``.npz`` agent's metadata is JSON, so
    its tuples read back as lists); anything else as it is."""
    return [_as_lists(v) for v in x] if isinstance(x, (list, tuple)) else x


def init_weights(path: str, meta: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The network weights of agent file ``path`` (``--init-agent``: a ``.pt`` checkpoint or
    a published ``.npz`` agent, whose int8 weights are read back as float32), checked against
    the run's game, options, features and layer sizes (``meta``).

    An agent trained on the features the run's extend (:data:`WIDENS`: ``joker_cards_plan``
    for ``joker_cards_melds``, ``joker_cards_takes`` for ``joker_cards_discards``) is widened:
    the new inputs get zero weights (in the first layer, and as new card-head planes), new
    gated planes a zero gate, and new heads their fresh initialisation, so the run starts
    from the agent's exact policy. So is an agent with narrower hidden layers (``--hidden``
    above the agent's, same ``--layers``): the new hidden units get their fresh incoming
    weights, and every old unit and head reads them with zero weights, so the run again starts
    from the agent's exact policy; the weights that read the new units learn from the first
    update on, and the new units' own weights from the second.

    Raises:
        ValueError: when the file is not an agent checkpoint or was made for another network.
    """
    try:
        ckpt, arrays = load_checkpoint(path)
    except ValueError as e:
        raise ValueError(f"--init-agent {path}: {e}") from None

    differ = [k for k in meta if _as_lists(ckpt.get(k)) != _as_lists(meta[k])]
    widen = WIDENS.get(meta["features"]) == ckpt.get("features")
    had_hidden = ckpt.get("hidden")
    grow = isinstance(had_hidden, int) and 0 < had_hidden < meta["hidden"]
    if grow:
        differ = [k for k in differ if k != "hidden"]
    if widen:
        grown = ("features", "obs_size", "meld_planes", "card_inputs")  # new ones appended
        differ = [k for k in differ if k not in grown]
        for k in ("card_inputs", "meld_planes"):  # the agent's planes come first, unmoved
            had, has = _as_lists(ckpt.get(k) or []), _as_lists(meta.get(k) or [])
            if has[: len(had)] != had:
                differ.append(k)
    if differ:
        got = ", ".join(f"{k}={ckpt.get(k)!r} (run: {meta[k]!r})" for k in differ)
        raise ValueError(f"--init-agent {path}: made for another network: {got}")
    weights = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in arrays.items()}
    if widen or grow:
        fresh = new_network(meta).state_dict()
        for k, v in fresh.items():
            if k not in weights:
                weights[k] = v
            elif weights[k].shape != v.shape:  # inputs, gates or units appended after the old
                old = weights[k]
                # new hidden units (trunk rows) start fresh; whatever else is new is zero,
                # so no old unit, gate or head reads a new input or unit
                padded = v.clone() if grow and k.startswith("trunk.") else v.new_zeros(v.shape)
                padded[: old.shape[0]] = 0.0
                padded[tuple(slice(0, n) for n in old.shape)] = old
                weights[k] = padded
    return weights
