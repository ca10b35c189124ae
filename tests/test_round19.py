"""Hostile round 26's silent wrong results, each refused now.

A GRU (or LSTM, RNN) given ``--depth`` or ``--transform-bias`` on the command
line at the task's default value trained without a word and its record stated
a setting the run never read; time-first inputs ``(T, N, I)`` with targets
``(N, T)`` (the batch-first layout of one target per step) trained as ``K = T``
outputs read at the last step.
"""

import json

import pytest
import torch
from tiny_runs import CLI, one_error_line

from rhn.__main__ import main
from rhn.owntasks import tensor_task


@pytest.mark.parametrize(
    ("model", "flag", "value"),
    [
        ("gru", "--depth", "3"),  # the adding task's own depth: no warning before
        ("lstm", "--depth", "1"),
        ("rnn", "--transform-bias", "-2"),
        ("dtrnn", "--transform-bias", "-3"),
    ],
)
def test_an_option_the_model_does_not_read_is_refused(
    tmp_path, capsys, model, flag, value
):
    out = tmp_path / "run"
    code = main(["train", *CLI, "--model", model, flag, value, "--out", str(out)])
    err = one_error_line(capsys)
    assert code == 2
    assert f"{flag} {float(value) if 'bias' in flag else value}" in err
    assert f"--model {model}" in err and f"leave {flag} out" in err
    assert not out.exists()


def test_depth_is_still_taken_by_the_models_that_read_it(tmp_path, capsys):
    out = tmp_path / "dt"
    argv = ["train", *CLI, "--model", "dtrnn", "--depth", "2", "--out", str(out)]
    assert main(argv) == 0
    assert json.loads((out / "metrics.json").read_text())["config"]["depth"] == 2


def test_a_resume_of_a_gru_run_refuses_a_typed_depth(tmp_path, capsys):
    out = tmp_path / "g"
    assert main(["train", *CLI, "--model", "gru", "--out", str(out)]) == 0
    before = (out / "metrics.json").read_bytes()
    capsys.readouterr()
    code = main(["train", "--resume", str(out), "--steps", "5", "--depth", "4"])
    assert code == 2
    assert "--model gru" in one_error_line(capsys)
    assert (out / "metrics.json").read_bytes() == before


def test_time_first_inputs_with_batch_first_step_targets_are_refused():
    x = torch.randn(6, 60, 1)  # (T, N, I)
    with pytest.raises(ValueError, match=r"\(60, 6\).*readout='last'.*\(T, N\)"):
        tensor_task(x, x[:, :, 0].t().contiguous())
    # said outright, each reading is taken
    y = x[:, :, 0].t().contiguous()
    assert tensor_task(x, y, readout="last").output_size == 6
    with pytest.raises(ValueError, match=r"\(T, N\) = \(6, 60\) for one target per"):
        tensor_task(x, y, readout="all")


def test_targets_per_sequence_of_another_width_are_not_ambiguous():
    x = torch.randn(6, 60, 1)
    assert tensor_task(x, torch.randn(60, 3)).output_size == 3
    assert tensor_task(x, x[:, :, 0]).readout == "all"  # (T, N): per step
