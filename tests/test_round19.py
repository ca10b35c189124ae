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


# Hostile round 27: three borderline silent results and two unclear errors.


def test_valid_fraction_beside_a_valid_split_is_refused():
    from torch.utils.data import DataLoader, TensorDataset

    from rhn.owntasks import loader_task

    x, y = torch.randn(50, 6, 2), torch.randn(50)
    with pytest.raises(ValueError, match="give valid or valid_fraction, not both"):
        tensor_task(x, y, batch_first=True, valid=(x[:10], y[:10]), valid_fraction=0.5)
    loader = DataLoader(TensorDataset(x, y), batch_size=10)
    with pytest.raises(ValueError, match="give valid or valid_fraction, not both"):
        loader_task(loader, loader, valid_fraction=0.5)
    # either alone is taken; left out, the last fifth is held out
    assert tensor_task(x, y, batch_first=True, valid=(x[:10], y[:10])) is not None
    assert tensor_task(x, y, batch_first=True, valid_fraction=0.5) is not None


def _sweep_of(tmp_path, *options):
    from tiny_runs import SWEEP

    from rhn.experiments import load_sweep

    out = tmp_path / "s.json"
    argv = ["sweep", *SWEEP, *options, "--grid", "model=rhn,gru", "--out", str(out)]
    assert main(argv) in (0, 1)  # 1: a run diverged
    return load_sweep(out)


def test_a_sweeps_summary_leaves_diverged_runs_out_of_its_statistics(tmp_path):
    from rhn.experiments import summarize

    record = _sweep_of(tmp_path, "--lr", "1", "--clip", "0")  # the RHN diverges
    rows = {row["model"]: row for row in summarize(record)}
    runs = {run["config"]["model"]: run for run in record["runs"]}
    for model, row in rows.items():
        diverged = bool(runs[model]["metrics"].get("diverged"))
        assert row["diverged"] == int(diverged)
        assert row["values"] == [runs[model]["metrics"]["test_loss"]]
        if diverged:  # its loss is listed, not averaged as a trained result
            assert all(row[k] != row[k] for k in ("mean", "min", "max"))
        else:
            assert row["mean"] == row["values"][0]
    assert any(row["diverged"] for row in rows.values())


def test_a_sweeps_gru_records_the_tasks_depth_not_the_rhns(tmp_path):
    record = _sweep_of(tmp_path, "--depth", "3", "--transform-bias", "-2")
    config = {run["config"]["model"]: run["config"] for run in record["runs"]}
    assert (config["rhn"]["depth"], config["rhn"]["transform_bias"]) == (3, -2.0)
    # what `python -m rhn train --model gru` records: the task's defaults
    assert (config["gru"]["depth"], config["gru"]["transform_bias"]) == (2, -3.0)


def test_a_torch_device_is_taken_as_load_model_takes_it():
    from rhn.train import TrainConfig

    assert TrainConfig(device=torch.device("cpu"), progress=False).device == "cpu"


def test_a_divergence_with_clipping_off_says_to_set_a_clip(tmp_path, capsys):
    from rhn.train.run import _lower_hint

    argv = ["train", *CLI, "--lr", "5", "--clip", "0", "--out", str(tmp_path / "r")]
    assert main(argv) == 1  # diverged
    said = one_error_line(capsys)
    assert "set --clip 1" in said and "lower --lr or --clip" not in said
    # the message of a loss that overflowed, with and without clipping
    assert "--clip 1" in _lower_hint(0.0) and "gradient clip" not in _lower_hint(0.0)
    assert "gradient clip" in _lower_hint(1.0)


def test_a_sweep_recorded_before_resumes_with_the_grus_base_depth(tmp_path):
    """An interrupted sweep whose GRU run recorded the base's depth (as
    sweeps did before) still resumes: the field is not the GRU's."""
    from tiny_runs import SWEEP

    out = tmp_path / "s.json"
    argv = ["sweep", *SWEEP, "--depth", "3", "--grid", "model=gru,rhn"]
    argv += ["--out", str(out)]
    assert main(argv) in (0, 1)
    record = json.loads(out.read_text())
    assert record["runs"][0]["config"]["model"] == "gru"
    record["runs"][0]["config"]["depth"] = 3  # what the older sweep wrote
    record["runs"] = record["runs"][:1]
    record["complete"] = False
    out.write_text(json.dumps(record))
    assert main([*argv, "--resume"]) in (0, 1)
    resumed = json.loads(out.read_text())
    assert resumed["complete"] and len(resumed["runs"]) == 2


# Hostile round 28: two silent results and an unclear message.


def test_load_model_refuses_a_folder_holding_another_runs_checkpoint(tmp_path, capsys):
    import shutil

    from rhn.train import load_model

    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["train", *CLI, "--out", str(a)]) == 0
    assert main(["train", *CLI, "--model", "gru", "--out", str(b)]) == 0
    mixed = tmp_path / "mixed"
    shutil.copytree(b, mixed)
    shutil.copy(a / "checkpoint.pt", mixed / "checkpoint.pt")  # a's weights
    for given in (mixed, mixed / "checkpoint.pt"):
        with pytest.raises(ValueError, match="describe run"):
            load_model(given)
    # each folder as it was written, and a checkpoint file on its own, load
    assert load_model(a) is not None and load_model(b) is not None
    lone = tmp_path / "lone.pt"
    shutil.copy(a / "checkpoint.pt", lone)
    assert load_model(lone) is not None


def test_a_sweep_refuses_a_typed_option_no_model_of_it_reads(tmp_path, capsys):
    from tiny_runs import SWEEP

    for options in (
        ["--grid", "model=gru", "--depth", "3"],
        ["--model", "gru", "--transform-bias", "-5", "--grid", "lr=0.01,0.02"],
    ):
        out = tmp_path / "s.json"
        assert main(["sweep", *SWEEP, *options, "--out", str(out)]) == 2
        assert "which does not read it" in one_error_line(capsys)
        assert not out.exists()


def test_a_path_that_is_not_a_regular_file_is_named_so():
    from rhn.train import load_model

    with pytest.raises(ValueError, match="is not a regular file"):
        load_model("/dev/null")


# Hostile round 29: two silent results.


def test_load_model_warns_when_the_metrics_describe_an_earlier_step(tmp_path, capsys):
    import warnings

    from rhn.train import load_model
    from rhn.train.records import load_checkpoint, save_checkpoint

    out = tmp_path / "r"
    assert main(["train", *CLI, "--out", str(out)]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_model(out)  # a finished run: its file and its checkpoint agree
    # an extension interrupted: the checkpoint moved on, metrics.json did not
    state = load_checkpoint(out)
    state["step"] += 5
    save_checkpoint(out / "checkpoint.pt", state)
    with pytest.warns(
        UserWarning, match=r"at step 8, but its metrics.json describes step 3"
    ):
        load_model(out)


def test_summarize_without_the_metric_in_any_run_says_which_to_use(tmp_path):
    from tiny_runs import tiny

    from rhn.experiments import summarize, sweep

    x = torch.randn(40, 6, 1)
    task = tensor_task(x, x.sum((1, 2)), batch_first=True)  # no test split
    record = sweep(tiny(task=task, steps=2, eval_every=1), {"model": ["rhn"]}, [0])
    with pytest.raises(ValueError, match="no run has a test_loss.*metric='valid_loss'"):
        summarize(record)
    assert summarize(record, metric="valid_loss")[0]["n"] == 1
    assert summarize(record, metric="valid_loss", by="model")[0]["model"] == "rhn"


# Hostile round 30: a held-out split in the other layout, and nohup.


def test_a_held_out_split_in_the_other_layout_is_warned_of():
    import warnings

    x = torch.randn(30, 6, 1)  # (N, T, I), batch first
    y = x[:, :, 0]
    with pytest.warns(UserWarning, match="valid inputs read as 6 sequences of 10"):
        tensor_task(
            x[:20], y[:20], batch_first=True, readout="all",
            valid=(x[20:].transpose(0, 1), y[20:].T),  # time first
        )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same layout, or longer sequences
        tensor_task(
            x[:20], y[:20], batch_first=True, readout="all", valid=(x[20:], y[20:])
        )
        longer = torch.randn(10, 9, 1)
        tensor_task(
            x[:20],
            y[:20],
            batch_first=True,
            readout="all",
            valid=(longer, longer[:, :, 0]),
        )


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGHUP"), reason="POSIX")
def test_a_run_under_nohup_is_not_stopped_by_a_hangup():
    import os
    import signal

    from tiny_runs import tiny

    from rhn.train import train

    def hang_up(event):
        if event["step"] == 1:
            os.kill(os.getpid(), signal.SIGHUP)  # the terminal closes

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # what nohup does
    try:
        result = train(tiny(steps=3, out=None), callback=hang_up)
    finally:
        signal.signal(signal.SIGHUP, before)
    assert result.history["step"][-1] == 3
    assert signal.getsignal(signal.SIGHUP) is before
