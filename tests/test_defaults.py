"""One set of defaults (rhn.defaults) and the Highway's keyword names."""

import inspect
import math
import re
import subprocess
import sys
import warnings

import pytest
import torch

import rhn
from rhn import defaults
from rhn.train import TrainConfig


def test_model_trainer_and_cli_share_their_defaults():
    for cls in (rhn.RHN, rhn.RHNCell):
        params = inspect.signature(cls).parameters
        assert params["transform_bias"].default == defaults.TRANSFORM_BIAS
        assert params["depth"].default == defaults.DEPTH
    config = TrainConfig()
    assert config.transform_bias == defaults.TRANSFORM_BIAS
    assert config.depth == defaults.DEPTH
    model = rhn.RHN(2, 4)
    assert (model.depth, model.transform_bias) == (defaults.DEPTH, -3.0)
    H = model.hidden_size
    assert torch.all(model.cells[0].recurrent_bias(0)[H:] == -3.0)


def test_cli_defaults_are_the_trainers():
    help_text = subprocess.run(
        [sys.executable, "-m", "rhn", "train", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    flat = " ".join(help_text.split())  # argparse wraps its lines
    for flag, value in (("depth", defaults.DEPTH), ("transform-bias", -3.0)):
        shown = re.search(rf"--{flag} \w+ [^\[]*?\(default: ([^)]*)\)", flat)
        assert shown is not None and shown.group(1) == str(value), flag


@pytest.mark.parametrize(
    "depth, ref_bias, ref_depth",
    [(10, -2.0, 1), (4, -3.0, 1), (3, 1.5, 2), (1, -3.0, 1)],
)
def test_matched_transform_bias_keeps_the_carry(depth, ref_bias, ref_depth):
    b = defaults.matched_transform_bias(depth, ref_bias, ref_depth)
    keep = (1 - torch.sigmoid(torch.tensor(b, dtype=torch.float64))) ** depth
    ref = (1 - torch.sigmoid(torch.tensor(ref_bias, dtype=torch.float64))) ** ref_depth
    torch.testing.assert_close(keep, ref, rtol=1e-12, atol=0)
    # a real cell with zero weights carries exactly that fraction per step
    cell = rhn.RHNCell(3, 4, depth, transform_bias=b).double()
    with torch.no_grad():
        for p in cell.parameters():
            if p.dim() == 2:
                p.zero_()
    s0 = torch.randn(2, 4, dtype=torch.float64)
    torch.testing.assert_close(
        cell(torch.zeros(2, 3, dtype=torch.float64), s0), ref * s0
    )


def test_matched_transform_bias_numbers_of_the_book():
    assert round(defaults.matched_transform_bias(10, -2.0), 2) == -4.36  # ch. 8, ex. 1
    assert -4.45 < defaults.matched_transform_bias(4, -3.0) < -4.35  # ch. 11, ex. 4
    # very negative biases: b ~ b_1 - ln D
    deep = defaults.matched_transform_bias(10, -30.0)
    assert abs(deep - (-30.0 - math.log(10))) < 1e-9


def test_matched_transform_bias_refuses_bad_arguments():
    with pytest.raises(ValueError, match="depth"):
        defaults.matched_transform_bias(0)
    with pytest.raises(TypeError, match="reference_bias"):
        defaults.matched_transform_bias(2, "-3")
    with pytest.raises(ValueError, match="reference_bias"):
        defaults.matched_transform_bias(2, -800.0)  # carry rounds to exactly 1


def test_highway_transform_bias_and_the_deprecated_gate_bias():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = rhn.Highway(5, transform_bias=-3.0)
    assert new.transform_bias == -3.0 and torch.all(new.bias[5:] == -3.0)
    assert "transform_bias=-3.0" in repr(new)
    with pytest.warns(DeprecationWarning, match="transform_bias"):
        old = rhn.Highway(5, gate_bias=-3.0)
    assert old.transform_bias == -3.0 and torch.all(old.bias[5:] == -3.0)
    with pytest.warns(DeprecationWarning, match="transform_bias"):
        assert old.gate_bias == -3.0
    with pytest.raises(TypeError, match="not both"):
        rhn.Highway(5, transform_bias=-1.0, gate_bias=-3.0)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="gate_bias"):
        rhn.Highway(5, gate_bias=float("nan"))
    default = rhn.Highway(5)
    assert default.transform_bias == defaults.HIGHWAY_TRANSFORM_BIAS == -3.0
    assert defaults.HIGHWAY_TRANSFORM_BIAS == defaults.TRANSFORM_BIAS
    assert rhn.cells.Highway is rhn.Highway
