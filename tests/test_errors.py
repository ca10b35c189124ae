"""Bad arguments and inputs fail early with a message naming the argument."""

import pytest
import torch

import rhn


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"depth": 0}, ValueError, ["depth", ">= 1", "0"]),
        ({"depth": 2.0}, TypeError, ["depth", "int", "float"]),
        ({"hidden_size": -3}, ValueError, ["hidden_size", "-3"]),
        ({"input_size": 0}, ValueError, ["input_size", "0"]),
        ({"num_layers": 0}, ValueError, ["num_layers", "0"]),
        ({"input_dropout": 1.0}, ValueError, ["input_dropout", "[0, 1)", "1.0"]),
        ({"state_dropout": -0.1}, ValueError, ["state_dropout", "-0.1"]),
        ({"output_dropout": "0.5"}, TypeError, ["output_dropout", "str"]),
        ({"transform_bias": float("nan")}, ValueError, ["transform_bias", "nan"]),
        ({"batch_first": 1}, TypeError, ["batch_first", "bool"]),
        ({"coupled": "yes"}, TypeError, ["coupled", "bool"]),
    ],
)
def test_constructor_arguments(kwargs, error, words):
    args = {"input_size": 3, "hidden_size": 4, "depth": 2, **kwargs}
    with pytest.raises(error) as info:
        rhn.RHN(**args)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("name", ["rhn", "rnn", "lstm", "gru"])
def test_forward_inputs(name):
    kwargs = {"depth": 2} if name == "rhn" else {}
    model = rhn.build_model(name, 3, 4, num_layers=2, **kwargs)
    cases = [
        ([[1.0, 2.0, 3.0]], TypeError, ["x", "torch.Tensor", "list"]),
        (torch.ones(5, 2, 3, dtype=torch.long), TypeError, ["x", "floating", "int64"]),
        (torch.ones(5, 2, 2, 3), ValueError, ["x", "(T, B, I)", "(5, 2, 2, 3)"]),
        (torch.ones(5), ValueError, ["x", "1-D"]),
        (torch.ones(5, 2, 7), ValueError, ["x", "3 features", "(5, 2, 7)"]),
        (torch.ones(0, 2, 3), ValueError, ["x", "at least one time step"]),
        (torch.ones(5, 2, 3, dtype=torch.float64), TypeError, ["x", "float32"]),
    ]
    for x, error, words in cases:
        with pytest.raises(error) as info:
            model(x)
        for word in words:
            assert word in str(info.value), x if isinstance(x, list) else x.shape


@pytest.mark.parametrize("name", ["rhn", "rnn", "gru"])
def test_forward_state(name):
    kwargs = {"depth": 2} if name == "rhn" else {}
    model = rhn.build_model(name, 3, 4, num_layers=2, **kwargs)
    x = torch.ones(5, 2, 3)
    with pytest.raises(
        ValueError,
        match=r"state must have shape \(N, B, H\) = "
        r"\(2, 2, 4\) for this input, got \(2, 4\)",
    ):
        model(x, torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"\(N, H\) = \(2, 4\).*got \(1, 4\)"):
        model(x[:, 0], torch.zeros(1, 4))
    with pytest.raises(TypeError, match="state must be a torch.Tensor, got list"):
        model(x, [0.0])
    with pytest.raises(TypeError, match="state must have dtype torch.float32"):
        model(x, torch.zeros(2, 2, 4, dtype=torch.float64))


def test_lstm_state_must_be_a_pair():
    model = rhn.LSTM(3, 4)
    x = torch.ones(5, 2, 3)
    with pytest.raises(TypeError, match=r"pair \(h, c\)"):
        model(x, torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match=r"state\[1\] must have shape"):
        model(x, (torch.zeros(1, 2, 4), torch.zeros(1, 4)))


def test_cell_inputs():
    cell = rhn.RHNCell(3, 4, 2)
    with pytest.raises(
        ValueError, match=r"x must have shape \(B, I\).*I = 3.*\(2, 5\)"
    ):
        cell(torch.ones(2, 5))
    with pytest.raises(
        ValueError, match=r"s must have shape \(B, H\) = \(2, 4\).*\(2, 3\)"
    ):
        cell(torch.ones(2, 3), torch.zeros(2, 3))
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        cell(torch.ones(2, 3, dtype=torch.int32))


def test_unknown_model_name_and_missing_depth():
    with pytest.raises(
        ValueError,
        match=r"name must be one of \['rhn', 'rnn', 'lstm', 'gru', 'dtrnn'\], got "
        r"'transformer'",
    ):
        rhn.build_model("transformer", 3, 4)
    with pytest.raises(TypeError, match="name must be one of"):
        rhn.build_model(None, 3, 4)
    with pytest.raises(ValueError, match="depth"):
        rhn.build_model("rhn", 3, 4)
    assert isinstance(rhn.build_model("LSTM", 3, 4), rhn.LSTM)


def test_baseline_and_highway_arguments():
    with pytest.raises(ValueError, match="nonlinearity must be one of"):
        rhn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout must be a dropout rate"):
        rhn.GRU(3, 4, dropout=2)
    with pytest.raises(ValueError, match="size must be an int >= 1, got 0"):
        rhn.Highway(0)
    with pytest.raises(ValueError, match=r"x must have shape \(\*, 4\)"):
        rhn.Highway(4)(torch.ones(2, 3))
    with pytest.raises(ValueError, match="activation must be one of"):
        rhn.Highway(4, activation="gelu2")
