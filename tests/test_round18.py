"""Hostile round 23: code the user plugs into a run (callbacks, loggers, own
tasks) can no longer lose the run or change its record unseen.

Each test fails on the code before this round: a logger whose close() raised
left a finished run without checkpoint or metrics; a KeyboardInterrupt raised
by a callback wrote no checkpoint; loggers shared one row (a logger that
rounded a loss changed the CSV log); a callback's truthy return stopped the
run, its model.eval() left the run training in eval mode, its change to the
history went into metrics.json; an own Task with held-out splits and no
fingerprint crashed with an IndexError.
"""

import dataclasses
import json

import pytest
import torch

from rhn.tasks import TASKS, Task
from rhn.train import CSVLogger, Logger, load_model, train


def _tiny(**kw):
    # the hostile rounds' shared tiny run (tests/tiny_runs.py), at these steps
    from tiny_runs import tiny

    return tiny(**{"steps": 6, "eval_every": 2, **kw})


class _Failing(Logger):
    """A dashboard whose last flush fails."""

    def log(self, row):
        pass

    def close(self):
        raise OSError("dashboard: connection lost")


def test_a_logger_whose_close_fails_loses_nothing(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(OSError, match="connection lost") as caught:
        train(_tiny(out=str(out)), loggers=[_Failing()])
    assert "checkpoint and metrics are written" in "".join(caught.value.__notes__)
    assert json.loads((out / "metrics.json").read_text())["steps"] == 6
    assert load_model(out) is not None
    # and a resume past it goes on from step 6
    again = train(_tiny(out=str(out), steps=8), resume=str(out))
    assert again.metrics["steps"] == 8


def test_a_keyboard_interrupt_raised_by_a_callback_keeps_the_steps(tmp_path):
    out = tmp_path / "run"

    def stop_hard(event):
        if event["step"] == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as caught:
        train(_tiny(out=str(out), steps=20, eval_every=10), callback=stop_hard)
    assert "checkpoint of step 5" in "".join(caught.value.__notes__)
    resumed = train(_tiny(out=str(out), steps=20, eval_every=10), resume=str(out))
    whole = train(_tiny(out=str(tmp_path / "whole"), steps=20, eval_every=10))
    assert resumed.history == whole.history


class _Rounding(Logger):
    def check(self, info):
        info["columns"].clear()  # a logger that changes what it is given

    def log(self, row):
        row["train_loss"] = round(row["train_loss"], 1)
        row.pop("seconds")


def test_each_logger_gets_its_own_row_and_info(tmp_path):
    log = tmp_path / "log.csv"
    out = tmp_path / "run"
    train(_tiny(out=str(out)), loggers=[_Rounding(), CSVLogger(log)])
    rows = log.read_text().splitlines()
    assert rows[0].startswith("segment,step,train_loss") and "seconds" in rows[0]
    losses = [r.split(",")[2] for r in rows[1:]]
    assert all(len(x.split(".")[-1]) > 2 for x in losses)  # not rounded
    train(_tiny(out=str(out), log_csv=str(log), steps=8), resume=str(out))


def test_a_callback_returns_true_false_or_none():
    with pytest.raises(TypeError, match=r"callback must return True.*got float"):
        train(_tiny(), callback=lambda event: event["train_loss"])
    with pytest.raises(TypeError, match=r"callback must be a function.*int 5"):
        train(_tiny(), callback=5)
    ran = train(_tiny(), callback=lambda event: False)
    assert ran.metrics["steps"] == 6


def test_a_callback_that_evaluates_leaves_the_run_training():
    seen = []

    def peek(event):
        seen.append(event["model"].training)
        event["model"].eval()  # evaluates, and forgets to switch back

    train(_tiny(model="rhn", dropout=0.3, steps=4), callback=peek)
    assert seen == [True] * 4  # every step trained, with its dropout


def test_a_callback_may_not_change_the_runs_history():
    def clear(event):
        if event["step"] == 3:
            event["history"]["train_loss"].clear()

    with pytest.raises(ValueError, match=r"callback: it changed event\['history'\]"):
        train(_tiny(), callback=clear)


def test_an_own_task_with_held_out_splits_and_no_fingerprint_trains():
    base = TASKS["adding"]
    data = {s: base.generate(40, 5, seed=i) for i, s in enumerate(("valid", "test"))}

    def generate(num_samples, seq_len, *, seed=0, generator=None, split="train",
                 **kwargs):  # fmt: skip
        if split != "train":
            return data[split]
        return base.generate(num_samples, seq_len, seed=seed, generator=generator)

    task = Task("mine", generate, 2, 1, "mse", "last", base.baseline,
                held_out=("valid", "test"))  # fmt: skip
    result = train(dataclasses.replace(_tiny(), task=task))
    assert result.metrics["valid_loss"] is not None
    assert isinstance(result.metrics["test_loss"], float)
    assert torch.isfinite(torch.tensor(result.metrics["test_loss"]))


def test_the_accuracy_of_labels_per_step_without_a_mask_is_a_share():
    """Round 24, S1: without a mask the accuracy of labels per step was the
    labels right divided by the sequences, not by the labels (3.3 for 0.47)."""
    from rhn.owntasks import tensor_task

    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 3, (7, 60), generator=g)  # (T, N)
    x = torch.nn.functional.one_hot(labels, 3).float()
    task = tensor_task(x, labels)
    result = train(_tiny(task=task, seq_len=None, model="gru", steps=4))
    xv, yv = task.generate(10**6, 7, split=task.held_out[0])[:2]
    with torch.no_grad():
        by_hand = float((result.model(xv).argmax(-1) == yv).double().mean())
    assert 0 <= result.metrics["valid_accuracy"] <= 1
    assert result.metrics["valid_accuracy"] == pytest.approx(by_hand, abs=1e-12)


def test_the_history_names_the_validation_accuracy_too():
    """Round 24, S2: an own task's history had valid_loss but no
    valid_accuracy (its test_accuracy holds the validation split's)."""
    from rhn.owntasks import tensor_task

    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 80, 2, generator=g)
    task = tensor_task(x, (x[-1, :, 0] > 0).long(), test_fraction=0.2)
    result = train(_tiny(task=task, seq_len=None, model="gru"))
    h = result.history
    assert h["valid_accuracy"] == h["test_accuracy"]
    assert len(h["valid_accuracy"]) == len(h["eval_step"]) == 3
    assert h["valid_accuracy"][-1] == result.metrics["valid_accuracy"]


def test_a_study_never_writes_over_a_file_it_did_not_write(tmp_path, capsys):
    """Round 24, D1: python -m rhn.studies wrote its record over a run's
    checkpoint, a run's metrics.json or a sweep's record, without a word."""
    from rhn.studies.__main__ import main

    run = tmp_path / "run"
    train(_tiny(out=str(run)))
    for victim in ("checkpoint.pt", "metrics.json"):
        before = (run / victim).read_bytes()
        with pytest.raises(SystemExit):
            main(["rerun", "--check", "x", "--out", str(run / victim)])
        assert "a study never replaces a run's files" in capsys.readouterr().err
        assert (run / victim).read_bytes() == before
    sweep_record = tmp_path / "sw.json"  # another writer's record
    sweep_record.write_text('{"format": 1, "call": {}, "runs": []}')
    with pytest.raises(SystemExit):
        main(["race", "--out", str(sweep_record), "--overwrite"])
    assert "not a study's record" in capsys.readouterr().err
    study = tmp_path / "study.json"
    study.write_text('{"settings": {}, "runs": []}')
    with pytest.raises(SystemExit):
        main(["rerun", "--check", "x", "--out", str(study)])
    assert "pass --overwrite" in capsys.readouterr().err


def test_a_single_grid_value_no_model_reads_is_refused_too():
    """Round 25, S1: --grid forget_bias=1 with model=rhn,gru ran, recorded
    forget_bias None for every run and dropped the field from the record."""
    from rhn.experiments import sweep

    grid = {"model": ["rhn", "gru"], "forget_bias": [1.0]}
    with pytest.raises(ValueError, match=r"grid\['forget_bias'\].*value would be"):
        sweep(_tiny(), grid, seeds=[0])


def test_a_study_never_races_another_for_its_record_nor_writes_into_a_run(
    tmp_path, capsys
):
    """Round 25, D1 and D2: two studies with one --out both ran and the later
    replaced the earlier's record; a study wrote into a running run's folder,
    whose metrics.json then replaced the study's record."""
    from rhn.studies.__main__ import main
    from rhn.train import records

    out = tmp_path / "st.json"
    held = records.FolderLock(
        tmp_path, path=records.file_lock_path(out), holder="study", guards=out
    ).acquire()  # a study running into st.json
    try:
        with pytest.raises(SystemExit):
            main(["race", "--seeds", "0", "--out", str(out)])
        assert "another study" in capsys.readouterr().err
    finally:
        held.release()
    running = tmp_path / "run"
    running.mkdir()
    (running / "run.json").write_text('{"run_id": "x"}')  # claimed, no file yet
    with pytest.raises(SystemExit):
        main(["race", "--seeds", "0", "--out", str(running / "metrics.json")])
    assert "never replaces a run's files" in capsys.readouterr().err
    assert sorted(p.name for p in running.iterdir()) == ["run.json"]


@pytest.mark.parametrize("batch_first", [False, True])
def test_one_sequence_of_the_wrong_width_is_named_as_given(batch_first):
    """Round 25, U1: a loaded model given (5, 3) for 2 features said
    "got shape (1, 5, 3)", a shape the user never passed."""
    import rhn
    from rhn.train.model import SequenceModel

    net = SequenceModel(rhn.RHN(2, 5), 1, batch_first=batch_first)
    with pytest.raises(ValueError, match=r"one sequence \(T, 2\).*got shape \(5, 3\)"):
        net(torch.randn(5, 3))


def test_a_task_module_not_found_says_where_python_looked(tmp_path, monkeypatch):
    """Round 25, U11: a resume from another directory failed with "No module
    named 'mytasks'" and no word that the module is looked for in the
    current directory."""
    from rhn.owntasks import task_from_spec

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"current directory \(.*\) and on PYTHONPATH"):
        task_from_spec("nosuchmodule_here:make")


def test_a_relative_log_from_another_directory_does_not_split_the_log(
    tmp_path, monkeypatch
):
    """Round 26, S3: a resume given log_csv="rl.csv" from another directory
    started a second rl.csv there, part-way through the run."""
    monkeypatch.chdir(tmp_path)
    first = _tiny(out="run", log_csv="rl.csv", steps=4)
    train(first)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    again = dataclasses.replace(first, out="../run", steps=6)
    with pytest.raises(ValueError, match=r"current directory.*steps up to 4"):
        train(again, resume="../run")
    assert not (tmp_path / "sub" / "rl.csv").exists()
    # the run's own log, by its path: the log stays whole
    train(dataclasses.replace(again, log_csv="../rl.csv"), resume="../run")
    assert len((tmp_path / "rl.csv").read_text().splitlines()) == 7
