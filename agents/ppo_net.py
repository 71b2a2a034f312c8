"""The masked actor-critic network of the PPO agents (torch): training builds and saves it,
:class:`rummy_agents.ppo_agent.PPOAgent` plays its weights (with numpy, so playing needs no torch).

A checkpoint (format ``rummy_env-ppo-v1``) is a dict of the network's weights (``state_dict``) plus
what rebuilds and feeds it: game, rule options, observation features and layer sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from rummy_agents.ppo_agent import CHECKPOINT_FORMAT, MASKED_LOGIT
from rummy_env.core.jit import kernel


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

    card_ids: torch.Tensor  # a buffer (register_buffer) of the card head's action ids

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
        logits, value = self._logits(x)
        return logits.masked_fill(~mask, MASKED_LOGIT), value

    def _trunk(self, x: torch.Tensor, sparse: SparseRows | None) -> torch.Tensor:
        """The trunk's state; with ``sparse`` (``sparse_rows(x)``) the first layer sums the
        weight columns of each row's nonzero inputs instead of multiplying the whole row.
        """
        if sparse is None:
            return self.trunk(x)
        first = self.trunk[0]
        h = _SparseFirstLayer.apply(sparse[0], sparse[1], first.weight, self._first_t())
        return self.trunk[1:](h + first.bias)

    def _first_t(self) -> torch.Tensor:
        """The first layer's weight transposed and contiguous (the sparse layer's lookup table),
        copied again only when the weight has changed since (its storage or in-place version
        counter): a rollout's steps all read one copy, where a copy per call cost about 1 ms of
        every 500 Rum step. Detached: the sparse layer computes the weight's gradient itself.
        """
        w = cast(nn.Linear, self.trunk[0]).weight  # the first layer of the trunk
        key = (w.data_ptr(), w._version, tuple(w.shape))
        cached = self.__dict__.get("_first_t_cache")
        if cached is None or cached[0] != key:
            cached = (key, w.detach().t().contiguous())
            self.__dict__["_first_t_cache"] = cached
        return cached[1]

    def _extra_at(
        self,
        x: torch.Tensor,
        h: torch.Tensor,
        rows: torch.Tensor,
        cols: torch.Tensor,
        x_rows: torch.Tensor | None = None,
    ) -> torch.Tensor | None:
        """What the card head and the meld planes add to the logits of the (row, action)
        pairs ``rows, cols`` (``_logits`` adds them to every action), or None. The inputs are
        ``x``, or ``x[x_rows]`` when ``x_rows`` is given (read column by column, not copied).

        The card head runs only where it scores something: at the card of each legal card
        action, and at the cards a ``card_select`` plane marks in the rows where its action is
        legal (a few per row, where ``_logits`` runs it at all 52 cards of every row).
        """
        add = None

        def plus(term: torch.Tensor) -> None:
            nonlocal add
            add = term if add is None else add + term

        x_at = rows if x_rows is None else x_rows[rows]  # the input row of each pair
        if self.card_inputs and self.card_actions:
            # per scored (pair, card): the pair, the card, the head's output column, a weight
            pair, card, head, weight = [], [], [], []
            for b, first in enumerate(self.card_actions):
                pos = cols - first
                k = ((pos >= 0) & (pos < 52)).nonzero().squeeze(1)
                pair.append(k)
                card.append(pos[k])
                head.append(torch.full_like(k, b))
                weight.append(torch.ones(k.shape[0], dtype=h.dtype, device=h.device))
            m = len(self.card_actions)
            for j, (a, o) in enumerate(self.card_select):
                k = (cols == a).nonzero().squeeze(1)
                marks = x[x_at[k, None], torch.arange(o, o + 52, device=x.device)]
                i, c = marks.nonzero(as_tuple=True)
                pair.append(k[i])
                card.append(c)
                head.append(torch.full_like(i, m + j))
                weight.append(marks[i, c])
            k, c = torch.cat(pair), torch.cat(card)
            offsets = torch.tensor(self.card_inputs, device=x.device)
            planes = x[x_at[k, None], offsets + c[:, None]]  # (P, K)
            ctx = self.card_ctx(h).index_select(0, rows.index_select(0, k))
            out = self.card_out(torch.tanh(self.card_in(planes) + ctx))  # (P, M + S)
            score = out.gather(1, torch.cat(head)[:, None]).squeeze(1) * torch.cat(weight)
            plus(torch.zeros(rows.shape[0], dtype=h.dtype, device=h.device).index_add(0, k, score))
        if self.meld_planes:
            gate = self.meld_gate(h)
            for j, (a, o, w) in enumerate(self.meld_planes):
                pos = cols - a
                inside = (pos >= 0) & (pos < w)
                plane = x[x_at, o + pos.clamp(0, w - 1)]
                plus(torch.where(inside, gate[rows, j] * plane, 0.0))
        return add

    def _logits(
        self, x: torch.Tensor, sparse: SparseRows | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked (B, A) logits and (B,) values."""
        h = self._trunk(x, sparse)
        logits = self.policy(h)
        # the additions in the order of the runs before forward_legal (the same floats)
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
        return logits, self.value(h).squeeze(-1)

    def forward_legal(
        self,
        x: torch.Tensor,
        legal: torch.Tensor,
        valid: torch.Tensor,
        sparse: SparseRows | None = None,
        x_rows: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The logits of the legal actions only, and the values: ``forward``'s logits at
        ``legal`` (B, L) action ids (``legal_actions``), ``MASKED_LOGIT`` where ``valid`` (B, L)
        is False. The same distribution over the legal moves for far less work with thousands
        of actions (500 Rum: 1,766, Rummy 51: 3,188, a few dozen legal): the policy layer
        scores the legal (row, action) pairs only, the card head the cards those pairs are
        about (not all 52 of every row), and the softmax work (sampling, log-probabilities,
        entropy) runs over L columns; the same values up to float rounding. ``sparse``
        (``sparse_rows(x)``, on CPU) makes the first layer read only each row's nonzero inputs
        (about 4% of them in the joker games' feature sets): the same values up to float
        rounding. ``x_rows`` (with ``sparse`` of those rows): the batch is rows ``x_rows`` of
        ``x`` (a rollout's storage), of which the card head and meld planes read their columns
        only: the same values as ``x[x_rows]`` without copying whole rows out.

        Raises:
            ValueError: for ``x_rows`` without ``sparse``, or not one row id per batch row.
        """
        if x_rows is not None:
            if sparse is None:
                raise ValueError("x_rows needs sparse (sparse_rows(x, x_rows)): the trunk reads it")
            if x_rows.shape != (legal.shape[0],) or sparse[0].shape[0] != legal.shape[0]:
                raise ValueError(
                    f"x_rows must hold one row id per batch row ({legal.shape[0]}, as legal and "
                    f"sparse), got shape {tuple(x_rows.shape)} and sparse of "
                    f"{sparse[0].shape[0]} rows"
                )
        h = self._trunk(x, sparse)
        rows, pos = valid.nonzero(as_tuple=True)
        cols = legal[rows, pos]
        # index_select, not h[rows]: its backward is index_add_, which sums each weight row's
        # shares in order; advanced indexing's backward (index_put_ accumulate) sums the policy
        # weight's rows in a thread-dependent order, so runs on 2+ threads did not reproduce
        w, bias = self.policy.weight, self.policy.bias
        picked = (h.index_select(0, rows) * w.index_select(0, cols)).sum(-1)
        picked = picked + bias.index_select(0, cols)
        add = self._extra_at(x, h, rows, cols, x_rows)
        if add is not None:
            picked = picked + add
        logits = h.new_full(legal.shape, MASKED_LOGIT).index_put((rows, pos), picked)
        return logits, self.value(h).squeeze(-1)


SparseRows = tuple[torch.Tensor, torch.Tensor]
"""A (B, D) input's nonzero entries as (B, K) column ids and (B, K) values, K its most nonzeros
in a row, padded with column 0 and value 0."""


class _SparseFirstLayer(torch.autograd.Function):
    """``x @ weight.T`` for an input given by its nonzero entries (``SparseRows``): the forward
    pass is torch's ``embedding_bag`` over ``weight.T``; the backward pass adds each entry's
    share of the gradient to its weight column (a numba kernel: torch's own backward of
    ``embedding_bag`` sorts the ids first, and was 6 times slower here).
    """

    @staticmethod
    def forward(
        ctx: Any, idx: torch.Tensor, val: torch.Tensor, weight: torch.Tensor, weight_t: torch.Tensor
    ):
        """``weight_t`` is ``weight.t().contiguous()`` (``_first_t``): the rows looked up."""
        ctx.save_for_backward(idx, val)
        ctx.in_features = weight.shape[1]
        return F.embedding_bag(idx, weight_t, mode="sum", per_sample_weights=val)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor):
        idx, val = ctx.saved_tensors
        g = grad.contiguous()
        gw = torch.zeros((ctx.in_features, g.shape[1]), dtype=g.dtype)
        _scatter_rows(idx.numpy(), val.numpy(), g.numpy(), gw.numpy())
        return None, None, gw.t(), None


@kernel
def _scatter_rows(idx, val, grad, out):  # pragma: no cover - compiled
    b, k = idx.shape
    h = grad.shape[1]
    for i in range(b):
        for j in range(k):
            v = val[i, j]
            if v != 0.0:
                c = idx[i, j]
                for t in range(h):
                    out[c, t] += v * grad[i, t]


@kernel
def _pack_nonzero(x, rows, idx, val):  # pragma: no cover - compiled
    # x: float rows (sparse_rows) or bool rows (legal_actions, val = valid); packs x[rows[i]]
    d = x.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        k = 0
        for j in range(d):
            if x[r, j]:
                idx[i, k] = j
                val[i, k] = x[r, j]
                k += 1


@kernel
def _max_nonzero(x, rows):  # pragma: no cover - compiled
    d = x.shape[1]
    most = 1
    for i in range(rows.shape[0]):
        r = rows[i]
        k = 0
        for j in range(d):
            if x[r, j]:
                k += 1
        most = max(most, k)
    return most


def _row_ids(num_rows: int, rows: np.ndarray | None) -> np.ndarray:
    """``rows`` as int64 ids of rows among ``num_rows`` (all of them when None), checked."""
    if rows is None:
        return np.arange(num_rows, dtype=np.int64)
    given = np.asarray(rows)
    if given.dtype.kind not in "iu":
        raise TypeError(f"rows must be an integer array of row ids, got dtype {given.dtype}")
    ids = np.ascontiguousarray(given, dtype=np.int64)
    if ids.ndim != 1 or (ids.size and (ids.min() < 0 or ids.max() >= num_rows)):
        raise ValueError(
            f"rows must be a 1-D array of row ids in [0, {num_rows}), got shape "
            f"{ids.shape} with values in [{ids.min() if ids.size else '-'}, "
            f"{ids.max() if ids.size else '-'}]"
        )
    return ids


def sparse_rows(x: np.ndarray | torch.Tensor, rows: np.ndarray | None = None) -> SparseRows:
    """The nonzero entries of each row of a (B, D) float32 CPU array (``forward_legal``'s
    ``sparse``): (B, K) int64 column ids and float32 values, K = the most nonzeros of a row
    (at least 1), padded with column 0 and value 0, which adds nothing. With ``rows`` (row ids),
    those rows only, in that order: ``sparse_rows(x[rows])`` without copying them out first.
    """
    arr = x.numpy() if isinstance(x, torch.Tensor) else x
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    ids = _row_ids(arr.shape[0], rows)
    k = _max_nonzero(arr, ids) if ids.size else 1
    idx = np.zeros((ids.size, k), dtype=np.int64)
    val = np.zeros((ids.size, k), dtype=np.float32)
    _pack_nonzero(arr, ids, idx, val)
    return torch.from_numpy(idx), torch.from_numpy(val)


def legal_actions(
    mask: torch.Tensor | np.ndarray, rows: np.ndarray | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The legal action ids of each row of a (B, A) bool mask, ascending, padded: (legal, valid),
    both (B, L) with L the most legal actions of a row (at least 1); padding is action 0, not
    valid. A CPU mask (or a numpy one) is read by a numba kernel, a GPU one by torch. With
    ``rows`` (row ids), those rows only, in that order: ``legal_actions(mask[rows])``.
    """
    if isinstance(mask, torch.Tensor) and mask.device.type != "cpu":
        if rows is not None:
            mask = mask[torch.from_numpy(_row_ids(mask.shape[0], rows)).to(mask.device)]
        return _legal_actions_torch(mask)
    arr = mask.numpy() if isinstance(mask, torch.Tensor) else np.asarray(mask)
    arr = np.ascontiguousarray(arr.astype(np.bool_, copy=False))
    ids = _row_ids(arr.shape[0], rows)
    width = _max_nonzero(arr, ids) if ids.size else 1
    legal = np.zeros((ids.size, width), dtype=np.int64)
    valid = np.zeros((ids.size, width), dtype=np.bool_)
    _pack_nonzero(arr, ids, legal, valid)
    return torch.from_numpy(legal), torch.from_numpy(valid)


def _legal_actions_torch(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``legal_actions`` in torch ops, on the mask's device."""
    rows, cols = mask.nonzero(as_tuple=True)
    counts = torch.bincount(rows, minlength=mask.shape[0])
    width = max(1, int(counts.max())) if mask.shape[0] else 1
    start = torch.cumsum(counts, 0) - counts
    pos = torch.arange(rows.shape[0], device=mask.device) - start[rows]
    legal = torch.zeros((mask.shape[0], width), dtype=torch.long, device=mask.device)
    valid = torch.zeros((mask.shape[0], width), dtype=torch.bool, device=mask.device)
    legal[rows, pos] = cols
    valid[rows, pos] = True
    return legal, valid


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


__all__ = [
    "CHECKPOINT_FORMAT",
    "MASKED_LOGIT",
    "MaskedActorCritic",
    "build_checkpoint",
    "load_network",
]
