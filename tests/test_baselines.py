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
