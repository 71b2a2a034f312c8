"""``MaskedActorCritic.forward_legal`` is ``forward`` at the legal actions: the same logits,
log-probabilities and values, with the card head and meld planes too; ``legal_actions`` lists
each row's legal ids in order."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from rummy_agents.ppo_net import MaskedActorCritic, legal_actions  # noqa: E402

HEADS = [
    {},
    {"card_inputs": [0, 52], "card_actions": [10, 100], "card_select": [(5, 104)]},
    {"meld_planes": [(200, 150, 80)]},
    {"card_inputs": [0, 52], "card_actions": [10], "meld_planes": [(200, 150, 80), (0, 0, 5)]},
]


@pytest.mark.parametrize("heads", HEADS)
@pytest.mark.parametrize("density", [0.01, 0.1, 0.9])
def test_forward_legal_is_forward_at_the_legal_actions(heads, density):
    gen = torch.Generator().manual_seed(0)
    net = MaskedActorCritic(400, 300, 32, 2, **heads)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
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
