"""Hostile round 9 (issue 32): what a fresh hostile tester found.

Each test is one case: a resume appending to a log that lost rows (cut
short, moved away, left in a moved folder), an own task's baseline that
switches the divergence check off, an own task's batches of another size
or target dtype mid-run, and errors that blamed the wrong thing or nothing:
one path for out and log_csv, a backup checkpoint whose folder holds a new
run, a path given as a module, ``load_model("")``, a parameter budget below
the smallest model, and a resume with no step left to train.
"""

import dataclasses
import json
import shutil

import pytest
import torch
from tiny_runs import CLI, contents, one_error_line, rows, tiny

from rhn.__main__ import main
from rhn.baselines import build_model, count_parameters
from rhn.tasks import TASKS
from rhn.train import TrainConfig, load_model, train

# --- 1. a resume never leaves a gap in the log it appends to --------------------


def logged_run(tmp_path, steps=6):
    out, log = tmp_path / "run", tmp_path / "log.csv"
    config = tiny(out=str(out), log_csv=str(log), steps=steps)
    train(config)
    assert [r["step"] for r in rows(log)] == [str(s) for s in range(1, steps + 1)]
    return out, log, config


def test_a_resume_refuses_a_log_cut_short(tmp_path, capsys):
    out, log, config = logged_run(tmp_path)
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:3]))  # header and steps 1-2
    before, logged = contents(out), log.read_bytes()
    with pytest.raises(ValueError, match="log_csv") as caught:
        train(dataclasses.replace(config, steps=8), resume=out)
    message = str(caught.value)
    assert "\n" not in message and "steps 1-2 only" in message
    assert "at step 6" in message and "steps 3-6" in message
    assert "restore" in message and "--log-csv" in message
    assert contents(out) == before and log.read_bytes() == logged
    # the command line: the log the run recorded, one line
    assert main(["train", *CLI, "--steps", "8", "--resume", str(out)]) == 2
    assert "steps 1-2 only" in one_error_line(capsys)
    assert contents(out) == before and log.read_bytes() == logged


def test_a_resume_refuses_a_log_moved_away_and_takes_a_new_one(tmp_path, capsys):
    out, log, config = logged_run(tmp_path)
    log.rename(tmp_path / "log.saved.csv")
    with pytest.raises(ValueError, match="is missing") as caught:
        train(dataclasses.replace(config, steps=8), resume=out)
    assert "at step 6" in str(caught.value) and not log.exists()
    assert main(["train", *CLI, "--steps", "8", "--resume", str(out)]) == 2
    assert "is missing" in one_error_line(capsys) and not log.exists()
    # the way on: a new file for the rest of the run, then resumed with it
    new = tmp_path / "rest.csv"
    train(dataclasses.replace(config, steps=8, log_csv=str(new)), resume=out)
    assert [r["step"] for r in rows(new)] == ["7", "8"]
    train(dataclasses.replace(config, steps=9, log_csv=str(new)), resume=out)
    assert [r["step"] for r in rows(new)] == ["7", "8", "9"]
    # back to the first log, restored: it stops at step 6, the run is at 9
    (tmp_path / "log.saved.csv").rename(log)
    with pytest.raises(ValueError, match="up to step 6, but the run is at step 9"):
        train(dataclasses.replace(config, steps=10), resume=out)
    assert [r["step"] for r in rows(log)][-1] == "6"
    new.write_text(new.read_text().splitlines(keepends=True)[0])  # header only
    with pytest.raises(ValueError, match="rows of steps none only"):
        train(dataclasses.replace(config, steps=10, log_csv=str(new)), resume=out)


def test_a_resume_after_the_folder_moved_mid_run_refuses_the_missing_log(tmp_path):
    out = tmp_path / "x7"
    log = out / "log.csv"  # inside the folder: it moves with it
    config = tiny(out=str(out), steps=6, checkpoint_every=2, log_csv=str(log))

    def at_step_3(event):
        if event["step"] == 3:
            shutil.move(out, tmp_path / "x7moved")

    with pytest.raises(ValueError, match="moved or removed"):
        train(config, callback=at_step_3)
    assert not log.exists()  # the rows went with the folder
    with pytest.raises(ValueError, match="is missing") as caught:
        train(config, resume=out)
    assert "at step 4" in str(caught.value) and not log.exists()


def test_rows_the_package_moved_aside_do_not_trip_the_check(tmp_path, capsys):
    out, log, config = logged_run(tmp_path, steps=4)
    backup = tmp_path / "step4.pt"
    shutil.copy(out / "checkpoint.pt", backup)
    train(dataclasses.replace(config, steps=6), resume=out)
    shutil.copy(backup, out / "checkpoint.pt")  # an older checkpoint put back
    train(dataclasses.replace(config, steps=6), resume=out)
    assert "moved 2 rows" in capsys.readouterr().err
    assert [r["step"] for r in rows(log)] == [str(s) for s in range(1, 7)]


def test_a_checkpoint_without_the_log_record_still_resumes(tmp_path):
    out, log, config = logged_run(tmp_path)
    state = torch.load(out / "checkpoint.pt", weights_only=False)
    assert state["log"]["last_step"] == 6 and state["log"]["from_step"] == 0
    del state["log"]  # written before the record
    torch.save(state, out / "checkpoint.pt")
    train(dataclasses.replace(config, steps=7), resume=out)
    assert rows(log)[-1]["step"] == "7"


# --- 2. a baseline that would switch the divergence check off -------------------


def own_adding(**fields):
    return dataclasses.replace(TASKS["adding"], name="own_adding", **fields)


@pytest.mark.parametrize("value", [float("nan"), -1.0, float("inf")])
def test_a_nan_negative_or_infinite_baseline_is_refused(value, tmp_path):
    task = own_adding(baseline=lambda seq_len: value)
    config = tiny(task=task, out=str(tmp_path / "b"))
    with pytest.raises(ValueError, match=r"own_adding.*baseline\(6\)") as caught:
        train(config)
    assert "\n" not in str(caught.value) and str(value) in str(caught.value)
    assert not (tmp_path / "b" / "checkpoint.pt").exists()


def test_a_baseline_of_zero_trains_and_says_once_how_divergence_is_judged(capsys):
    # tensor_task refuses constant targets; an own Task may still have them
    task = own_adding(baseline=lambda seq_len: 0)
    result = train(tiny(task=task))
    assert result.metrics["baseline"] == 0 and result.metrics["steps"] == 3
    err = capsys.readouterr().err
    assert err.count("baseline of 0") == 1 and err.count("\n") == 1, err
    assert "non-finite" in err


# --- 3. an own task's batch of another size or target dtype mid-run -------------


def changing_task(at_step, change):
    """Adding, whose generate changes the training batch of step ``at_step``
    (``0``: the held-out set, the 32 sequences drawn without a generator)."""
    adding = TASKS["adding"]
    steps = []

    def generate(n, seq_len, **kwargs):
        x, y = adding.generate(n, seq_len, **kwargs)
        if kwargs.get("generator") is not None and n == 8:  # tiny's batch_size
            steps.append(n)  # a training batch (not a batch of the start's checks)
            return change(x, y) if len(steps) == at_step else (x, y)
        return change(x, y) if at_step == 0 and n == 32 else (x, y)

    return own_adding(generate=generate)


def test_a_training_batch_of_another_size_stops_the_run_and_keeps_its_steps(tmp_path):
    task = changing_task(2, lambda x, y: (x[:, :3], y[:3]))
    out = tmp_path / "n"
    config = tiny(task=task, out=str(out))
    with pytest.raises(ValueError, match="asked for 8 sequences") as caught:
        train(config)
    assert "own_adding" in str(caught.value) and "step 2" in str(caught.value)
    assert "(6, 3, 2)" in str(caught.value)
    assert torch.load(out / "checkpoint.pt", weights_only=False)["step"] == 1


def test_a_held_out_set_of_another_size_is_refused_before_any_step():
    task = changing_task(0, lambda x, y: (x[:, :3], y[:3]))
    config = tiny(task=task)
    with pytest.raises(ValueError, match="asked for 32 sequences .the held-out set"):
        train(config)


def test_targets_of_another_dtype_mid_run_stop_the_run(tmp_path):
    task = changing_task(3, lambda x, y: (x, y.round().long()))
    config = tiny(task=task)
    with pytest.raises(ValueError, match="targets of dtype torch.int64") as caught:
        train(config)
    assert "mse" in str(caught.value) and "step 3" in str(caught.value)
    labels = dataclasses.replace(TASKS["temporal_order"], name="own_order")
    real = labels.generate
    labels = dataclasses.replace(
        labels, generate=lambda *a, **k: (real(*a, **k)[0], real(*a, **k)[1].float())
    )
    with pytest.raises(ValueError, match="cross_entropy"):
        train(tiny(task=labels, seq_len=10))


# --- 4. one path for out and log_csv ---------------------------------------------


def test_one_path_for_out_and_log_csv_is_named(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="log_csv and out name the same path"):
        tiny(out="api7c", log_csv="api7c")
    with pytest.raises(ValueError, match="same path"):
        tiny(out="api7c", log_csv="./api7c/")
    assert main(["train", *CLI, "--out", "api7b", "--log-csv", "api7b"]) == 2
    assert "same path" in one_error_line(capsys)
    assert not (tmp_path / "api7b").exists()


# --- 5. a backup checkpoint whose folder now holds another run -------------------


def test_a_backup_whose_folder_holds_another_run_names_the_folder(tmp_path, capsys):
    out, log = tmp_path / "bk", tmp_path / "bk.csv"
    train(tiny(out=str(out), log_csv=str(log)))
    shutil.copy(out / "checkpoint.pt", tmp_path / "backup.pt")
    train(tiny(out=str(out), seed=5), overwrite=True)
    before = contents(out)
    args = ["train", *CLI, "--steps", "6", "--resume", str(tmp_path / "backup.pt")]
    assert main(args) == 2
    err = one_error_line(capsys)
    assert "out:" in err and "already holds another run" in err, err
    assert contents(out) == before


# --- 6. a path where a module name belongs ---------------------------------------


@pytest.mark.parametrize("spec", ["./mt:ok", "dir/mt:ok", "mt.py:ok"])
def test_a_path_given_for_the_tasks_module_is_named(spec, capsys):
    assert main(["train", *CLI, "--task", spec]) == 2
    err = one_error_line(capsys)
    assert "module name" in err and repr(spec.split(":")[0]) in err, err


# --- 7. load_model("") --------------------------------------------------------


def test_load_model_of_an_empty_path_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    train(tiny(out="."))  # a run in the current directory: "" must not find it
    with pytest.raises(ValueError, match="run_or_checkpoint must be .*got ''"):
        load_model("")
    assert load_model(".").core.hidden_size == 8


# --- 8. a parameter budget the model cannot meet -------------------------------


def core_count(model, hidden, **kwargs):
    return count_parameters(build_model(model, 2, hidden, device="meta", **kwargs))


@pytest.mark.parametrize("model", ["rhn", "lstm", "gru", "rnn"])
def test_a_budget_below_the_smallest_model_is_refused(model, capsys, tmp_path):
    config = TrainConfig.for_task("adding", model=model, num_params=1, device="cpu")
    smallest = core_count(
        model, 1, **({"depth": config.depth} if model == "rhn" else {})
    )
    with pytest.raises(ValueError, match=f"at least {smallest},.*got 1"):
        train(config)
    args = ["train", "--task", "adding", "--model", model, "--num-params", "1"]
    args += ["--device", "cpu", "--no-progress", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    assert f"at least {smallest}" in one_error_line(capsys)


def test_a_budget_missed_widely_is_said(capsys):
    one, two = core_count("rhn", 1, depth=3), core_count("rhn", 2, depth=3)
    budget = (one + two) // 2 - 1  # closest to hidden size 1, far from both
    assert abs(one - budget) > 0.1 * budget
    fields = {"hidden_size": None, "num_params": budget, "depth": 3}
    result = train(tiny(**fields))
    assert result.metrics["num_params"] == one
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"num_params={budget}" in err and str(one) in err
    train(tiny(**{**fields, "num_params": 9649}))
    assert capsys.readouterr().err == ""  # a matched size lands close


# --- 9. a resume with nothing to train --------------------------------------------


def test_a_resume_at_its_last_step_leaves_the_files_alone(tmp_path, capsys):
    out, log, config = logged_run(tmp_path)
    first = json.loads((out / "metrics.json").read_text())
    before, logged = contents(out), log.read_bytes()
    capsys.readouterr()
    result = train(config, resume=out)
    assert contents(out) == before and log.read_bytes() == logged
    assert result.metrics["test_loss"] == first["test_loss"]
    assert result.metrics["steps"] == 6
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already at step 6" in err
    for extra in (["--steps", "6"], []):  # options left out: the run's own
        assert main(["train", "--no-progress", *extra, "--resume", str(out)]) == 0
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "already at step 6" in err
        assert contents(out) == before and log.read_bytes() == logged
    assert len(first["run"]["segments"]) == 1
    train(dataclasses.replace(config, steps=7), resume=out)  # more: trains
    record = json.loads((out / "metrics.json").read_text())
    assert record["steps"] == 7 and len(record["run"]["segments"]) == 2
