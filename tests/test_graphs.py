"""rhn.graphs: the CPU stand-in of the CUDA-graph training step, and its errors.

The capture itself needs a GPU; everything around it (static buffers, the
warm-up that is undone, the step, the checks) runs here with capture=False.
"""

import pytest
import torch
import torch.nn.functional as F

import rhn
from rhn import graphs


def setup(optimizer, seed=0):
    torch.manual_seed(seed)
    model = rhn.RHN(3, 6, depth=2, num_layers=2, coupled=False)
    head = torch.nn.Linear(6, 4)
    params = [*model.parameters(), *head.parameters()]
    opt = optimizer(params)

    def loss_fn(x, y):
        return F.cross_entropy(head(model(x)[0][-1]), y)

    return loss_fn, params, opt


def batches(n, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(7, 5, 3, generator=g), torch.randint(0, 4, (5,), generator=g))
            for _ in range(n)]  # fmt: skip


OPTIMIZERS = {
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2),
    "sgd-momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@pytest.mark.parametrize("amp_dtype", [None, torch.bfloat16])
def test_stand_in_equals_eager_training(name, amp_dtype):
    data = batches(4)
    # eager reference: four plain steps
    loss_fn, params, opt = setup(OPTIMIZERS[name])
    want = []
    for x, y in data:
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=amp_dtype, enabled=amp_dtype is not None):
            loss = loss_fn(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 0.5)
        opt.step()
        want.append(loss.item())
    want_params = [p.detach().clone() for p in params]
    # the graphed step's logic: three warm-up steps that are undone, then steps
    loss_fn, params, opt = setup(OPTIMIZERS[name])
    step = graphs.GraphedStep(
        loss_fn, params, opt, *data[0], clip=0.5, amp_dtype=amp_dtype, capture=False
    )
    got = [step(x, y).item() for x, y in data]
    assert got == pytest.approx(want, rel=1e-6, abs=1e-7)
    for p, w in zip(params, want_params, strict=True):
        torch.testing.assert_close(p, w)


def test_warm_up_is_undone_exactly():
    loss_fn, params, opt = setup(OPTIMIZERS["adam"])
    before = [p.detach().clone() for p in params]
    graphs.GraphedStep(loss_fn, params, opt, *batches(1)[0], capture=False)
    assert all(torch.equal(p, b) for p, b in zip(params, before, strict=True))
    assert all(p.grad is None for p in params)
    # Adam's state exists (made by the warm-up) and is that of a fresh optimizer
    state = opt.state[params[0]]
    assert float(state["step"]) == 0 and not state["exp_avg"].any()


def test_errors():
    loss_fn, params, opt = setup(OPTIMIZERS["adam"])
    x, y = batches(1)[0]
    with pytest.raises(RuntimeError, match="CUDA tensors.*capture=False"):
        graphs.GraphedStep(loss_fn, params, opt, x, y)
    with pytest.raises(ValueError, match="capturable=True"):
        graphs._check_optimizer(opt, capture=True)
    graphs._check_optimizer(torch.optim.Adam(params, capturable=True), capture=True)
    with pytest.raises(TypeError, match="optimizer"):
        graphs._check_optimizer("adam", capture=False)
    step = graphs.GraphedStep(loss_fn, params, opt, x, y, warmup=0, capture=False)
    with pytest.raises(ValueError, match=r"x must have the captured shape \(7, 5, 3\)"):
        step(x[:3], y)
    with pytest.raises(ValueError, match="y must have.*torch.int64"):
        step(x, y.float())
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        step(x.tolist(), y)
