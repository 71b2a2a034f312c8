"""``MaskedActorCritic.forward_legal`` is ``forward`` at the legal actions: the same logits,
log-probabilities and values, with the card head and meld planes too; ``legal_actions`` lists
each row's legal ids in order."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from rummy_agents.ppo_net import (  # noqa: E402
    MaskedActorCritic,
    _legal_actions_torch,
    legal_actions,
    sparse_rows,
)

HEADS = [
    {},
    {"card_inputs": [0, 52], "card_actions": [10, 100], "card_select": [(5, 104)]},
    {"meld_planes": [(200, 150, 80)]},
    {"card_inputs": [0, 52], "card_actions": [10], "meld_planes": [(200, 150, 80), (0, 0, 5)]},
]


def _random_net(heads: dict, seed: int) -> tuple[MaskedActorCritic, torch.Generator]:
    """A 400-input, 300-action network with ``heads``, its weights drawn at scale 0.3 (every
    head matters), and the generator to draw its inputs from."""
    gen = torch.Generator().manual_seed(seed)
    net = MaskedActorCritic(400, 300, 32, 2, **heads)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return net, gen


@pytest.mark.parametrize("heads", HEADS)
@pytest.mark.parametrize("density", [0.01, 0.1, 0.9])
def test_forward_legal_is_forward_at_the_legal_actions(heads, density):
    net, gen = _random_net(heads, 0)
    x = torch.randn(64, 400, generator=gen)
    mask = torch.rand(64, 300, generator=gen) < density
    mask[:, 7] = True  # every row has a legal action
    full, value = net(x, mask)
    legal, valid = legal_actions(mask)
    assert torch.equal(legal[valid], mask.nonzero()[:, 1])
    assert torch.equal(valid.sum(1), mask.sum(1))
    logits, value2 = net.forward_legal(x, legal, valid)
    assert torch.equal(value, value2)
    assert torch.allclose(logits[valid], full.gather(1, legal)[valid], atol=1e-5)
    lp_full = torch.log_softmax(full, 1).gather(1, legal)
    assert torch.allclose(torch.log_softmax(logits, 1)[valid], lp_full[valid], atol=1e-5)
    assert (logits[~valid] < -1e7).all()


@pytest.mark.parametrize("heads", HEADS)
@pytest.mark.parametrize("marks", [0.0, 0.05, 1.0])
def test_forward_legal_gradients_are_forwards(heads, marks):
    """The card head scored at the legal pairs' cards only (and at the cards a select plane
    marks) gives ``forward``'s gradients for every parameter, whatever share of the select
    plane is marked (none, a few cards, all 52), rows without a legal card action too."""
    net, gen = _random_net(heads, 6)
    x = torch.randn(64, 400, generator=gen)
    x[:, 104:156] *= torch.rand(64, 52, generator=gen) < marks  # the select plane's marks
    mask = torch.rand(64, 300, generator=gen) < 0.05
    mask[:, 5] = True  # the select action, legal everywhere
    mask[:8, 10:62] = False  # rows without a legal card action
    mask[:8, 100:152] = False
    legal, valid = legal_actions(mask)
    grads = []
    for legal_only in (False, True):
        net.zero_grad()
        if legal_only:
            logits, value = net.forward_legal(x, legal, valid)
            logp = torch.log_softmax(logits, 1)[valid]
        else:
            logits, value = net(x, mask)
            logp = torch.log_softmax(logits, 1).gather(1, legal)[valid]
        (logp.sum() + value.sum()).backward()
        grads.append([p.grad.clone() for p in net.parameters()])
    for a, b in zip(*grads, strict=True):
        # equal up to float32 rounding at the gradient's own scale: entries near zero are sums of
        # terms of the largest entries' size (~1e3 here), whose rounding depends on the order
        # torch reduces them in (threads, kernels), so a fixed absolute tolerance was flaky
        scale = float(a.abs().max()) + 1.0
        assert torch.allclose(a, b, atol=1e-5 * scale, rtol=1e-4)


@pytest.mark.parametrize("heads", HEADS)
@pytest.mark.parametrize("zeros", [0.0, 0.5, 0.97, 1.0])
def test_sparse_first_layer_is_the_dense_one(heads, zeros):
    """``sparse_rows`` lists each row's nonzero inputs, and ``forward_legal`` with it gives the
    dense network's logits, values and gradients (up to float rounding), all-zero rows too."""
    gen = torch.Generator().manual_seed(1)
    net = MaskedActorCritic(400, 300, 32, 2, **heads)
    x = torch.randn(48, 400, generator=gen)
    x[torch.rand(48, 400, generator=gen) < zeros] = 0.0
    x[3] = 0.0
    idx, val = sparse_rows(x)
    assert idx.shape == val.shape and idx.shape[1] == max(1, int((x != 0).sum(1).max()))
    dense = torch.zeros_like(x).scatter_add_(1, idx, val)
    assert torch.equal(dense, x)
    mask = torch.rand(48, 300, generator=gen) < 0.05
    mask[:, 11] = True
    legal, valid = legal_actions(mask)
    grads = []
    for sparse in (None, (idx, val)):
        net.zero_grad()
        logits, value = net.forward_legal(x, legal, valid, sparse)
        (torch.log_softmax(logits, 1)[valid].sum() + value.sum()).backward()
        grads.append([p.grad.clone() for p in net.parameters()])
        if sparse is None:
            ref = logits, value
    assert torch.allclose(logits, ref[0], atol=1e-5) and torch.allclose(value, ref[1], atol=1e-5)
    for a, b in zip(*grads, strict=True):
        assert torch.allclose(a, b, atol=1e-4)


@pytest.mark.parametrize("density", [0.0, 0.02, 0.5, 1.0])
def test_legal_actions_kernel_is_the_torch_path(density):
    """The CPU kernel and the torch path (used on GPUs) list the same ids; numpy masks too."""
    gen = torch.Generator().manual_seed(2)
    mask = torch.rand(33, 120, generator=gen) < density
    legal, valid = legal_actions(mask)
    assert legal.shape[1] == max(1, int(mask.sum(1).max()))
    assert torch.equal(legal[valid], mask.nonzero()[:, 1])
    assert torch.equal(valid.sum(1), mask.sum(1))
    assert (legal[~valid] == 0).all()
    for other in (legal_actions(mask.numpy()), legal_actions(mask.numpy().astype("int8"))):
        assert torch.equal(other[0], legal) and torch.equal(other[1], valid)
    t_legal, t_valid = _legal_actions_torch(mask)
    assert torch.equal(t_legal, legal) and torch.equal(t_valid, valid)


@pytest.mark.parametrize("pick", [[], [0], [5, 2, 2, 31], list(range(32))])
def test_rows_argument_is_indexing_first(pick):
    """``sparse_rows(x, rows)`` and ``legal_actions(mask, rows)`` equal the functions on
    ``x[rows]`` and ``mask[rows]`` (repeats and any order), and bad ``rows`` raise."""
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(32, 90, generator=gen)
    x[torch.rand(32, 90, generator=gen) < 0.8] = 0.0
    mask = torch.rand(32, 70, generator=gen) < 0.1
    rows = torch.tensor(pick, dtype=torch.long).numpy()
    for got, want in (
        (sparse_rows(x, rows), sparse_rows(x[rows])),
        (legal_actions(mask, rows), legal_actions(mask[rows])),
        (legal_actions(mask.numpy(), rows), legal_actions(mask[rows])),
    ):
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    for bad in ([32], [-1], [[0, 1]]):
        with pytest.raises(ValueError, match="rows must be"):
            sparse_rows(x, torch.tensor(bad).numpy())
        with pytest.raises(ValueError, match="rows must be"):
            legal_actions(mask, torch.tensor(bad).numpy())
    for bad_type in (torch.ones(32, dtype=torch.bool).numpy(), torch.zeros(3).numpy()):
        with pytest.raises(TypeError, match="integer array"):
            sparse_rows(x, bad_type)
        with pytest.raises(TypeError, match="integer array"):
            legal_actions(mask, bad_type)


@pytest.mark.parametrize("heads", HEADS)
@pytest.mark.parametrize("pick", [[0], [5, 2, 2, 31], list(range(40))[::-1]])
def test_x_rows_reads_the_rows_in_place(heads, pick):
    """``forward_legal(x, ..., sparse_rows(x, rows), x_rows=rows)`` is ``forward_legal`` on
    ``x[rows]``: the same logits, values and gradients, bit for bit; ``x_rows`` without the
    packed rows is refused."""
    gen = torch.Generator().manual_seed(5)
    net = MaskedActorCritic(400, 300, 32, 2, **heads)
    x = torch.randn(40, 400, generator=gen)
    x[torch.rand(40, 400, generator=gen) < 0.9] = 0.0
    mask = torch.rand(40, 300, generator=gen) < 0.05
    mask[:, 11] = True
    rows = torch.tensor(pick, dtype=torch.long)
    legal, valid = legal_actions(mask, rows.numpy())
    got = []
    for args in (
        (x[rows], legal, valid, sparse_rows(x[rows])),
        (x, legal, valid, sparse_rows(x, rows.numpy()), rows),
    ):
        net.zero_grad()
        logits, value = net.forward_legal(*args)
        (torch.log_softmax(logits, 1)[valid].sum() + value.sum()).backward()
        got.append([logits, value, *(p.grad.clone() for p in net.parameters())])
    assert all(torch.equal(a, b) for a, b in zip(*got, strict=True))
    with pytest.raises(ValueError, match="x_rows needs sparse"):
        net.forward_legal(x, legal, valid, None, rows)
    with pytest.raises(ValueError, match="one row id per batch row"):
        net.forward_legal(x, legal, valid, sparse_rows(x, rows.numpy()), rows[:-1])


def test_sparse_layer_reads_the_weight_after_every_change():
    """The sparse first layer's transposed weight is reused while the weight is unchanged and
    follows every change of it: optimiser steps, ``load_state_dict``, in-place edits."""
    gen = torch.Generator().manual_seed(4)
    net = MaskedActorCritic(200, 50, 16, 2)
    x = torch.randn(24, 200, generator=gen)
    x[torch.rand(24, 200, generator=gen) < 0.9] = 0.0
    mask = torch.rand(24, 50, generator=gen) < 0.2
    mask[:, 0] = True
    legal, valid = legal_actions(mask)
    sparse = sparse_rows(x)

    def check() -> None:
        got = net.forward_legal(x, legal, valid, sparse)
        want = net.forward_legal(x, legal, valid)
        assert torch.allclose(got[0], want[0], atol=1e-5)
        assert torch.allclose(got[1], want[1], atol=1e-5)

    check()
    assert net._first_t() is net._first_t()  # unchanged weight: one copy
    optim = torch.optim.Adam(net.parameters(), lr=0.1)
    for _ in range(3):
        logits, value = net.forward_legal(x, legal, valid, sparse)
        optim.zero_grad()
        (torch.log_softmax(logits, 1)[valid].sum() + value.sum()).backward()
        optim.step()
        check()
    other = MaskedActorCritic(200, 50, 16, 2)
    net.load_state_dict(other.state_dict())
    check()
    with torch.no_grad():
        net.trunk[0].weight.mul_(3.0)
    check()


@pytest.mark.parametrize("sparse", [False, True])
def test_gradients_repeat_bit_for_bit_on_two_threads(sparse):
    """The same batch gives the same gradients, bit for bit, with torch on 2 threads: seeded
    training runs on 2+ threads reproduce. (Advanced indexing's backward added the policy
    weight's rows in a thread-dependent order; 2,000 legal pairs on a few dozen actions made
    it differ on almost every call.)"""
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        gen = torch.Generator().manual_seed(2)
        heads = {"card_inputs": [0, 52], "card_actions": [10], "meld_planes": [(200, 150, 80)]}
        net = MaskedActorCritic(400, 300, 256, 2, **heads)
        x = torch.randn(1500, 400, generator=gen)
        x[torch.rand(1500, 400, generator=gen) < 0.9] = 0.0
        mask = torch.rand(1500, 300, generator=gen) < 0.005
        mask[:, [3, 11, 40]] = True  # every row has a legal action, many share theirs
        legal, valid = legal_actions(mask)
        rows = sparse_rows(x) if sparse else None
        seen = []
        for _ in range(6):
            net.zero_grad()
            logits, value = net.forward_legal(x, legal, valid, rows)
            (torch.log_softmax(logits, 1)[valid].sum() + value.sum()).backward()
            seen.append([p.grad.clone() for p in net.parameters()])
        for grads in seen[1:]:
            assert all(torch.equal(a, b) for a, b in zip(seen[0], grads, strict=True))
    finally:
        torch.set_num_threads(threads)
