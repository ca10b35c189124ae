"""Baselines share RHN's interface; models are built and size-matched by name."""

import pytest
import torch

import rhn


@pytest.mark.parametrize("name", ["rnn", "lstm", "gru", "rhn"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_same_call_signature_and_shapes(name, batch_first):
    kwargs = {"depth": 2} if name == "rhn" else {}
    model = rhn.build_model(name, 3, 8, num_layers=2, batch_first=batch_first, **kwargs)
    assert (model.input_size, model.hidden_size, model.num_layers) == (3, 8, 2)
    x = torch.randn(4, 6, 3) if batch_first else torch.randn(6, 4, 3)
    out, state = model(x)
    assert out.shape == ((4, 6, 8) if batch_first else (6, 4, 8))
    parts = state if name == "lstm" else (state,)
    for part in parts:
        assert part.shape == (2, 4, 8)
    # feeding the state back continues the sequence
    time = 1 if batch_first else 0
    first, second = x.split([2, 4], dim=time)
    out1, state1 = model(first)
    out2, _ = model(second, state1)
    torch.testing.assert_close(torch.cat([out1, out2], dim=time), out)
    # unbatched
    out_u, state_u = model(x.select(1 - time, 0))
    assert out_u.shape == (6, 8)
    for part in state_u if name == "lstm" else (state_u,):
        assert part.shape == (2, 8)


def test_wrappers_reuse_torch_modules():
    torch.manual_seed(0)
    model = rhn.GRU(3, 5)
    x = torch.randn(7, 2, 3)
    torch.testing.assert_close(model(x)[0], model.rnn(x)[0])
    assert isinstance(rhn.LSTM(3, 5).rnn, torch.nn.LSTM)
    assert rhn.RNN(3, 5, nonlinearity="relu").rnn.nonlinearity == "relu"


@pytest.mark.parametrize("name", ["rnn", "lstm", "gru", "rhn"])
def test_matched_hidden_size_is_closest(name):
    kwargs = {"depth": 3} if name == "rhn" else {}
    target = rhn.count_parameters(rhn.LSTM(16, 64))
    h = rhn.matched_hidden_size(name, 16, target, **kwargs)

    def size(hidden):
        return rhn.count_parameters(rhn.build_model(name, 16, hidden, **kwargs))

    assert abs(size(h) - target) <= abs(size(h - 1) - target)
    assert abs(size(h) - target) <= abs(size(h + 1) - target)
    assert abs(size(h) - target) / target < 0.05


def test_matched_lstm_for_the_benchmark_rhn():
    target = rhn.count_parameters(rhn.RHN(64, 256, 5))
    assert rhn.matched_hidden_size("lstm", 64, target) == 384


def test_lstm_forget_bias_sets_exactly_the_forget_gate():
    H = 5
    torch.manual_seed(0)
    default = rhn.LSTM(3, H, num_layers=2)
    torch.manual_seed(0)
    model = rhn.build_model("lstm", 3, H, num_layers=2, forget_bias=1.0)
    assert model.forget_bias == 1.0 and default.forget_bias is None
    for k in range(2):
        b_ih = getattr(model.rnn, f"bias_ih_l{k}")
        b_hh = getattr(model.rnn, f"bias_hh_l{k}")
        # gates stacked i, f, g, o: the whole +1 sits in bias_ih, bias_hh is 0
        assert torch.equal(b_ih[H : 2 * H], torch.ones(H))
        assert torch.equal(b_hh[H : 2 * H], torch.zeros(H))
        assert torch.equal((b_ih + b_hh)[H : 2 * H], torch.ones(H))
        # every other slice keeps torch's initialisation
        for name in (f"bias_ih_l{k}", f"bias_hh_l{k}"):
            mine, torchs = getattr(model.rnn, name), getattr(default.rnn, name)
            keep = torch.ones(4 * H, dtype=torch.bool)
            keep[H : 2 * H] = False
            assert torch.equal(mine[keep], torchs[keep])
            assert not torch.equal(mine, torchs)


def test_lstm_forget_bias_acts_as_the_forget_gate():
    # With zero weights and input the cell update is c1 = f * c0 + i * g, where
    # f = sigm(forget bias), i = sigm(b_i), g = tanh(b_g) (PyTorch's equations).
    H = 4
    model = rhn.LSTM(2, H, forget_bias=1.5).double()
    with torch.no_grad():
        model.rnn.weight_ih_l0.zero_()
        model.rnn.weight_hh_l0.zero_()
    b = (model.rnn.bias_ih_l0 + model.rnn.bias_hh_l0).detach()
    c0 = torch.randn(1, 3, H, dtype=torch.float64)
    h0 = torch.zeros_like(c0)
    _, (_, c1) = model(torch.zeros(1, 3, 2, dtype=torch.float64), (h0, c0))
    f = torch.sigmoid(torch.tensor(1.5, dtype=torch.float64))
    i, g = torch.sigmoid(b[:H]), torch.tanh(b[2 * H : 3 * H])
    torch.testing.assert_close(c1, f * c0 + i * g)


def test_lstm_forget_bias_none_is_torchs_init_and_errors():
    torch.manual_seed(3)
    mine = rhn.LSTM(2, 6)
    torch.manual_seed(3)
    theirs = torch.nn.LSTM(2, 6)
    for name, p in theirs.named_parameters():
        assert torch.equal(getattr(mine.rnn, name), p)
    with pytest.raises(TypeError, match="forget_bias"):
        rhn.LSTM(2, 6, forget_bias="1")
    with pytest.raises(ValueError, match="forget_bias"):
        rhn.LSTM(2, 6, forget_bias=float("nan"))
    # a budget-matched LSTM (built on the meta device) accepts the keyword too
    assert rhn.matched_hidden_size("lstm", 2, 5000, forget_bias=1.0) > 0


def test_forget_bias_from_the_config_and_the_command_line():
    from rhn.__main__ import train_parser
    from rhn.train import TrainConfig, make_model

    core = make_model(TrainConfig(model="lstm", forget_bias=1.0, device="cpu")).core
    H = core.hidden_size
    bias = core.rnn.bias_ih_l0 + core.rnn.bias_hh_l0
    assert torch.equal(bias[H : 2 * H], torch.ones(H))
    # the other models have no forget gate: refused, not ignored
    with pytest.raises(ValueError, match="no forget gate"):
        TrainConfig(model="gru", forget_bias=1.0, device="cpu")
    assert TrainConfig().forget_bias is None
    with pytest.raises(TypeError, match="forget_bias"):
        TrainConfig(forget_bias="one")
    args = train_parser().parse_args(["--forget-bias", "1"])
    assert args.forget_bias == 1.0
