"""Variational dropout over the windows of truncated backpropagation through time."""

import pytest
import torch

import rhn

RATES = {"input_dropout": 0.3, "state_dropout": 0.4, "output_dropout": 0.2}
F64 = torch.float64


def _model(kind, impl="fast"):
    torch.manual_seed(0)
    if kind == "dtrnn":
        return rhn.DTRNN(3, 5, 2, num_layers=2, **RATES).double().train()
    return rhn.RHN(3, 5, 2, num_layers=2, impl=impl, **RATES).double().train()


def _windows(model, x, W, masks=None):
    state, outputs = None, []
    for window in x.split(W):
        out, state = model(window, state, masks=masks)
        outputs.append(out)
        state = state.detach()
    return torch.cat(outputs), state


@pytest.mark.parametrize(
    "kind, impl", [("rhn", "fast"), ("rhn", "loop"), ("dtrnn", "")]
)
def test_masks_kept_across_windows_equal_one_pass(kind, impl):
    model = _model(kind, impl)
    x = torch.randn(12, 4, 3, dtype=F64)  # (T, B, I)
    masks = model.dropout_masks(4)
    whole, final = model(x, masks=masks)
    windowed, state = _windows(model, x, 4, masks)
    assert torch.equal(windowed, whole) and torch.equal(state, final)
    # and the masks do drop: without them the output differs
    model.eval()
    plain, _ = model(x)
    assert not torch.allclose(plain, whole)


def test_without_masks_each_call_draws_new_ones():
    model = _model("rhn")
    x = torch.randn(12, 4, 3, dtype=F64)
    torch.manual_seed(1)
    whole, _ = model(x)
    torch.manual_seed(1)
    windowed, _ = _windows(model, x, 6)
    # the first window drew the masks the whole pass drew; the second new ones
    assert torch.equal(windowed[:6], whole[:6])
    assert not torch.allclose(windowed[6:], whole[6:])


def test_dropout_masks_draws_what_forward_draws():
    model = _model("rhn")
    x = torch.randn(5, 4, 3, dtype=F64)
    torch.manual_seed(2)
    masks = model.dropout_masks(4)
    given, _ = model(x, masks=masks)
    torch.manual_seed(2)
    drawn, _ = model(x)
    assert torch.equal(given, drawn)
    assert masks.batch_size == 4
    assert [m.shape for m in masks.input] == [(4, 3), (4, 5)]
    assert [m.shape for m in masks.state] == [(4, 5), (4, 5)]
    assert masks.output.shape == (4, 5)
    kept = masks.state[0].unique().tolist()
    assert sorted(kept) == pytest.approx([0.0, 1 / (1 - 0.4)])


def test_masks_gradients_match_one_pass_inside_the_last_window():
    model = _model("rhn")
    x = torch.randn(8, 2, 3, dtype=F64, requires_grad=True)
    masks = model.dropout_masks(2)
    whole, _ = model(x, masks=masks)
    windowed, _ = _windows(model, x, 4, masks)
    g_whole = torch.autograd.grad(whole[-1].sum(), x)[0]
    g_win = torch.autograd.grad(windowed[-1].sum(), x)[0]
    torch.testing.assert_close(g_win[4:], g_whole[4:])
    assert torch.all(g_win[:4] == 0)


def test_eval_mode_ignores_masks_and_zero_rates_give_none():
    model = _model("rhn").eval()
    x = torch.randn(5, 4, 3, dtype=F64)
    masks = model.dropout_masks(4)
    torch.testing.assert_close(model(x, masks=masks)[0], model(x)[0], rtol=0, atol=0)
    none = rhn.RHN(3, 5).dropout_masks(4)
    assert none.input == (None,) and none.state == (None,) and none.output is None
    assert none.batch_size is None


def test_bad_masks_are_refused():
    model = _model("rhn")
    x = torch.randn(5, 4, 3, dtype=F64)
    with pytest.raises(ValueError, match="batch size 3.*batch size 4"):
        model(x, masks=model.dropout_masks(3))
    with pytest.raises(TypeError, match="DropoutMasks"):
        model(x, masks={"state": None})
    one_layer = rhn.RHN(3, 5, 2, state_dropout=0.5).double().dropout_masks(4)
    with pytest.raises(ValueError, match="num_layers=2"):
        model(x, masks=one_layer)
    with pytest.raises(ValueError, match="batch_size"):
        model.dropout_masks(-1)
