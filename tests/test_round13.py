"""Hostile round 13: a run that stopped early, resumed; a folder at the lock
path; a task that switches gradients off; torch's default dtype changed.

A run stopped by ``stop_loss`` or ``patience`` before ``steps`` used to train
one more evaluation block when resumed (its checkpoint did not say it had
stopped) and stop again: a history one block longer than the run's, without
a word. The stop is now the run's own record (``stop_reason`` in the
checkpoint): a resume in the run's own
folder trains nothing, leaves its files as they are and says why in one line;
a resume into another folder (a branch) copies the run as it stopped.
"""

import dataclasses
import json
import sys

import pytest
import torch
from tiny_runs import CLI, contents, tiny

from rhn.__main__ import main
from rhn.train import train

# stop_loss far above the adding problem's loss: it stops at its first
# evaluation (step 2 of 40); patience=1 at lr=0.1 stops once a held-out loss
# is not a new best (at step 4 here)
STOPS = {
    "stop_loss": ({"stop_loss": 1e9}, ["--stop-loss", "1e9"], "fell below stop_loss"),
    "patience": (
        {"patience": 1, "lr": 0.1},
        ["--patience", "1", "--lr", "0.1"],
        "did not improve",
    ),
}


def _stopped(tmp_path, how):
    fields, *_ = STOPS[how]
    out = tmp_path / "run"
    config = tiny(steps=40, eval_every=2, out=str(out), **fields)
    first = train(config)
    assert first.metrics["steps"] < 40, first.metrics  # it did stop early
    return out, config, first


@pytest.mark.parametrize("how", sorted(STOPS))
def test_a_resumed_run_that_stopped_early_trains_nothing(tmp_path, capsys, how):
    out, config, first = _stopped(tmp_path, how)
    before = contents(out)
    capsys.readouterr()
    again = train(config, resume=out)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stopped early at step" in err, err
    assert STOPS[how][2] in err, err
    assert contents(out) == before  # not one byte rewritten
    assert again.history == first.history
    assert again.metrics["test_loss"] == first.metrics["test_loss"]
    assert not again.written


@pytest.mark.parametrize("how", sorted(STOPS))
def test_the_cli_resume_of_a_stopped_run_says_so_in_one_line(tmp_path, capsys, how):
    _, flags, words = STOPS[how]
    out = tmp_path / "run"
    argv = ["train", *CLI, "--steps", "40", "--eval-every", "2", *flags]
    assert main([*argv, "--out", str(out)]) == 0
    before = contents(out)
    capsys.readouterr()
    assert main(["train", "--no-progress", "--resume", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stopped early" in err and words in err, err
    assert contents(out) == before


def test_more_steps_do_not_restart_a_stopped_run(tmp_path, capsys):
    # the stop rule is part of the run: more steps would stop at once again
    out, config, first = _stopped(tmp_path, "stop_loss")
    before = contents(out)
    again = train(dataclasses.replace(config, steps=80), resume=out)
    assert "stopped early" in capsys.readouterr().err
    assert contents(out) == before and again.history == first.history


def test_a_branch_of_a_stopped_run_is_the_run_as_it_stopped(tmp_path):
    out, config, first = _stopped(tmp_path, "patience")
    branch = tmp_path / "branch"
    copy = train(dataclasses.replace(config, out=str(branch)), resume=out)
    assert copy.history == first.history
    record = json.loads((branch / "metrics.json").read_text())
    assert record["history"] == first.history


# --- a folder where the lock file goes --------------------------------------------


def test_a_folder_at_the_lock_path_is_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    (out / "run.lock").mkdir(parents=True)
    assert main(["train", *CLI, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "run.lock' is a folder where rhn keeps the lock file" in err, err
    assert (out / "run.lock").is_dir() and not (out / "metrics.json").exists()


# --- a task that switches gradients off --------------------------------------------

NO_GRAD = """\
import torch
from rhn.tasks import TASKS, Task


def make():
    adding = TASKS["adding"]

    def generate(n, T, **kw):
        torch.set_grad_enabled(False)  # left off for whoever runs next
        return adding.generate(n, T, **kw)

    return Task(name="nograd", generate=generate, input_size=2, output_size=1,
                loss="mse", readout="last", baseline=lambda T: 1 / 6)
"""


@pytest.fixture
def no_grad_task(tmp_path, monkeypatch):
    (tmp_path / "nograd.py").write_text(NO_GRAD)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "nograd:make"
    sys.modules.pop("nograd", None)
    torch.set_grad_enabled(True)


def test_a_task_that_switches_gradients_off_trains_and_leaves_them_on(no_grad_task):
    from rhn.owntasks import task_from_spec

    task = task_from_spec(no_grad_task)
    result = train(tiny(task=task, steps=4, eval_every=2))
    assert len(result.history["train_loss"]) == 4
    assert torch.is_grad_enabled()  # the caller's mode, as it was


def test_train_called_under_no_grad_trains(tmp_path):
    with torch.no_grad():
        result = train(tiny(steps=4, eval_every=2))
        assert not torch.is_grad_enabled()  # the caller's mode is kept
    # the same run as outside torch.no_grad(), step for step
    assert result.history == train(tiny(steps=4, eval_every=2)).history


# --- torch's default dtype changed -------------------------------------------------


def test_a_changed_default_dtype_is_named_not_the_task():
    # float64 by default: the model is built in it, the adding problem still
    # generates float32; the error names the default, not a task to fix
    previous = torch.tensor(0.0).dtype
    torch.set_default_dtype(torch.float64)
    try:
        with pytest.raises(TypeError) as err:
            train(tiny(steps=2))
    finally:
        torch.set_default_dtype(previous)
    message = str(err.value)
    assert "default dtype is torch.float64" in message
    assert "torch.set_default_dtype(torch.float32)" in message
    assert "x.float()" not in message


# --- what is not an early stop (a sceptical review of the fix above) ---------------


def test_a_run_that_ran_all_its_steps_trains_on_when_given_more(tmp_path, capsys):
    # stop_loss holds at the last step, which ends the run anyway: given more
    # steps, it trains on, and its rule stops it at its next evaluation
    out = tmp_path / "run"
    config = tiny(steps=2, eval_every=2, stop_loss=1e9, out=str(out))
    assert train(config).metrics["steps"] == 2
    more = train(dataclasses.replace(config, steps=8), resume=out)
    assert "stopped early" not in capsys.readouterr().err
    assert more.history["step"] == [1, 2, 3, 4] and more.metrics["steps"] == 4
    again = train(dataclasses.replace(config, steps=8), resume=out)
    assert "stopped early at step 4" in capsys.readouterr().err
    assert again.history == more.history


def test_a_run_its_callback_stopped_trains_on_when_resumed(tmp_path, capsys):
    # the callback stops it at step 3, between evaluations; the evaluation
    # the run then adds is not its stop rule's, so a resume trains on
    out = tmp_path / "run"
    config = tiny(steps=20, eval_every=4, stop_loss=1e9, out=str(out))
    first = train(config, callback=lambda event: event["step"] == 3)
    assert first.history["eval_step"] == [3]
    resumed = train(config, resume=out)
    assert "stopped early" not in capsys.readouterr().err
    assert resumed.history["step"] == [1, 2, 3, 4]


# --- a checkpoint of another device's optimizer --------------------------------------


def test_a_checkpoint_of_a_cuda_graph_run_resumes_on_the_cpu(tmp_path):
    # a run that replayed CUDA graphs saves Adam as capturable, its rate a
    # tensor: on the CPU torch's capturable Adam refuses to step. Resumed, the
    # optimizer computes as this run's own (not capturable) and trains
    import rhn.train.run as run_mod

    out = tmp_path / "run"
    config = tiny(steps=6, eval_every=2, out=str(out))
    train(config, callback=lambda event: event["step"] == 3)
    state = run_mod.records.load_checkpoint(out)
    group = state["optimizer"]["param_groups"][0]
    group["capturable"], group["lr"] = True, torch.tensor(float(group["lr"]))
    run = run_mod._Run(config)
    run.restore(state)
    assert run.optimizer.param_groups[0]["capturable"] is False
    assert type(run.optimizer.param_groups[0]["lr"]) is float
    run.train_step()  # torch's capturable Adam would refuse the CPU here
    assert run.step == 4


def test_train_inside_inference_mode_is_one_line():
    with (
        torch.inference_mode(),
        pytest.raises(RuntimeError, match=r"inside torch\.inference_mode\(\)"),
    ):
        train(tiny(steps=2))
