"""Hostile round 14: a failed --overwrite gives the replaced run back; the
model ``train`` returns reads data as ``load_model`` does.

``--overwrite`` sets the run it replaces aside and deletes it when the new
run writes its first checkpoint. A new run that diverged, or whose task
raised, before that wrote its own files over the folder on the way out
(the diverged run's metrics, the error path's checkpoint), which counted as
its first record and deleted the replaced run: one typo in ``--lr`` cost a
finished run. Now nothing of a failing run is written while the replaced
run is still aside, and the replaced run is put back.
"""

import dataclasses

import pytest
import torch
from tiny_runs import contents, rows, tiny

from rhn.owntasks import tensor_task
from rhn.tasks import Task
from rhn.train import load_model, train


def _two_inputs(
    name, generate, output_size=1, loss="mse", readout="last", baseline=1.0
):
    """A task of your own with two input channels, as these tests make them."""
    return Task(
        name=name,
        generate=generate,
        input_size=2,
        output_size=output_size,
        loss=loss,
        readout=readout,
        baseline=lambda seq_len: baseline,
    )


def _finished(tmp_path, **fields):
    out = tmp_path / "run"
    config = tiny(steps=6, eval_every=3, out=str(out), **fields)
    train(config)
    return out, config


def test_an_overwrite_that_diverges_puts_the_replaced_run_back(tmp_path):
    out, config = _finished(tmp_path)
    before = contents(out)
    typo = dataclasses.replace(config, lr=1e30, seed=1)
    with pytest.raises(FloatingPointError) as caught:
        train(typo, overwrite=True)
    assert "is back in place" in " ".join(getattr(caught.value, "__notes__", []))
    assert contents(out) == before  # the finished run, byte for byte
    assert caught.value.metrics["diverged"]  # what a sweep records is still there


class Failing:
    """A task's generate that raises on its ``fail_at``-th call."""

    def __init__(self, fail_at):
        self.calls, self.fail_at = 0, fail_at

    def __call__(self, batch_size, seq_len, **kwargs):
        self.calls += "generator" in kwargs  # training batches only
        if self.calls == self.fail_at:
            raise RuntimeError("the task's own code failed")
        from rhn.tasks import adding_problem

        return adding_problem(batch_size, seq_len, **kwargs)


def _task(fail_at):
    return _two_inputs("failing", Failing(fail_at), baseline=1 / 6)


def test_an_overwrite_whose_task_fails_puts_the_replaced_run_back(tmp_path):
    out = tmp_path / "run"
    first = tiny(task=_task(10**9), steps=6, eval_every=3, out=str(out))
    train(first)
    before = contents(out)
    failing = dataclasses.replace(first, task=_task(5), seed=1)  # at step 4 or so
    with pytest.raises(RuntimeError, match="own code failed") as caught:
        train(failing, overwrite=True)
    assert "is back in place" in " ".join(getattr(caught.value, "__notes__", []))
    assert _without_kept(contents(out)) == before  # its own state goes beside


def _without_kept(files):
    """A folder's files but the state an early-stopped --overwrite kept beside
    the run it could not replace (tests/test_round16.py)."""
    return {name: data for name, data in files.items() if ".orphan-" not in name}


def test_the_model_train_returns_reads_the_tasks_layout(tmp_path):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(120, 7, 2, generator=g)  # (N, T, I): batch first
    y = x[:, :3, 0].sum(1)
    task = tensor_task(x, y, batch_first=True, test_fraction=0.2, name="sum3")
    config = tiny(task=task, seq_len=7, steps=6, eval_every=3, out=str(tmp_path / "r"))
    result = train(config)
    loaded = load_model(tmp_path / "r")
    assert result.model.batch_first and loaded.batch_first
    with torch.no_grad():
        torch.testing.assert_close(result.model(x[:5]), loaded(x[:5]))
    # a built-in task's data are time first, and so is its model
    plain = train(tiny(steps=2, eval_every=1))
    assert not plain.model.batch_first


def test_a_row_a_full_disk_cut_short_is_written_again_by_the_resume(
    tmp_path, monkeypatch
):
    """The disk fills while step 4's row is written: the run stops with a
    checkpoint of step 4 (the step is done), and the resume writes that row
    again before going on, so the log has every step and a later resume is
    not refused for a gap."""
    from rhn.train import loggers

    out, log = tmp_path / "run", tmp_path / "log.csv"
    config = tiny(
        steps=8, eval_every=2, checkpoint_every=1, out=str(out), log_csv=str(log)
    )
    original = loggers.CSVLogger.log
    failed = []

    def full_disk(self, row, *rest):
        if row["step"] == 4 and not failed:
            failed.append(4)
            with open(self.path, "a") as f:
                f.write("0,4,0.1")  # cut short: no newline
            raise ValueError("log_csv: cannot write (No space left on device)")
        return original(self, row, *rest)

    monkeypatch.setattr(loggers.CSVLogger, "log", full_disk)
    with pytest.raises(ValueError, match="No space left"):
        train(config)
    monkeypatch.setattr(loggers.CSVLogger, "log", original)
    train(config, resume=out)
    steps = [int(r["step"]) for r in rows(log)]
    assert steps == list(range(1, 9)), steps
    longer = dataclasses.replace(config, steps=10)
    train(longer, resume=out)  # no gap to refuse
    assert [int(r["step"]) for r in rows(log)] == list(range(1, 11))


def test_a_task_whose_held_out_set_ignores_its_seed_is_refused(tmp_path):
    """The held-out set comes from ``generate(..., seed=...)``: a task that
    draws it from Python's ``random`` gave another test loss on every run of
    the same seed. Refused up front, like one whose batches ignore the
    generator."""
    import random

    from rhn.tasks import adding_problem

    def generate(batch_size, seq_len, seed=0, generator=None, **kwargs):
        if generator is None:  # the seed path: Python's random instead
            seed = random.randrange(10**6)
        return adding_problem(batch_size, seq_len, seed=seed, generator=generator)

    task = _two_inputs("drifting", generate, baseline=1 / 6)
    with pytest.raises(ValueError, match="neither repeated nor resumed"):
        train(tiny(task=task, steps=2, eval_every=1))


def _file_task(data):
    """A task drawing sequences from rows of ``data`` (N, T, 2), as one over
    a file of its own would: no fingerprint of its own."""

    def generate(batch_size, seq_len, seed=0, generator=None, **kwargs):
        g = generator or torch.Generator().manual_seed(seed)
        rows = torch.randint(0, len(data), (batch_size,), generator=g)
        x = data[rows].transpose(0, 1)  # (T, B, 2)
        return x, x[:, :, 0].sum(0)

    return _two_inputs("file", generate)


def test_a_resume_on_a_changed_data_file_is_refused(tmp_path):
    """The fingerprint of a task without one hashed 4 sequences: a file with
    every other row changed resumed without a word. It hashes 256 now."""
    data = torch.randn(1000, 6, 2, generator=torch.Generator().manual_seed(0))
    config = tiny(task=_file_task(data), steps=4, eval_every=2, out=str(tmp_path / "r"))
    train(config)
    changed = data.clone()
    changed[::10] += 1  # one row in ten
    more = dataclasses.replace(config, task=_file_task(changed), steps=6)
    with pytest.raises(ValueError, match="other data"):
        train(more, resume=tmp_path / "r")
    with pytest.raises(ValueError, match="other data"):
        load_model(tmp_path / "r", _file_task(changed))


def test_a_record_of_the_four_sequence_fingerprint_still_resumes(tmp_path):
    """A run recorded before the sample grew holds the hash of 4 sequences:
    it is checked against that hash, and resumes on its own data."""
    from rhn.train.config import task_fingerprint
    from rhn.train.records import load_checkpoint, save_checkpoint

    data = torch.randn(100, 6, 2, generator=torch.Generator().manual_seed(1))
    task = _file_task(data)
    config = tiny(task=task, steps=4, eval_every=2, out=str(tmp_path / "r"))
    train(config)
    path = tmp_path / "r" / "checkpoint.pt"
    state = load_checkpoint(path)
    legacy = task_fingerprint(task, 6, 4)
    assert (
        not legacy.startswith("s256-") and state["config"]["task_fingerprint"] != legacy
    )
    state["config"]["task_fingerprint"] = legacy
    state["config"].pop("task_fingerprint_4", None)
    save_checkpoint(path, state)
    result = train(dataclasses.replace(config, steps=6), resume=tmp_path / "r")
    assert result.metrics["steps"] == 6
    load_model(tmp_path / "r", task)  # the same data: loads
    changed = data.clone()
    changed += 1
    with pytest.raises(ValueError, match="other data"):
        load_model(tmp_path / "r", _file_task(changed))


def test_every_option_of_the_printed_resume_command_exists():
    """The command printed after an interrupt named every recorded field as an
    option, ``--cuda-graph False`` included, which the command line refused."""
    import dataclasses as dc
    import re

    from rhn.__main__ import NO_FLAG, _command_line, train_parser
    from rhn.train import TrainConfig

    values = {f.name: f.default for f in dc.fields(TrainConfig) if f.name != "task"}
    values.update(cuda_graph=False, hidden_size=8, progress=False)
    command = _command_line("adding", values, "run/checkpoint.pt")
    given = set(re.findall(r"--[a-z][a-z-]*", command))
    known = set(train_parser()._option_string_actions)
    assert given <= known, given - known
    assert "--cuda-graph" not in command and NO_FLAG == {"cuda_graph"}


def _own_task(name, x, y, loss, output_size):
    def generate(batch_size, seq_len, seed=0, generator=None, **kwargs):
        g = generator or torch.Generator().manual_seed(seed)
        rows = torch.randint(0, len(x), (batch_size,), generator=g)
        return x[rows].transpose(0, 1), y[rows]

    return _two_inputs(name, generate, output_size=output_size, loss=loss)


@pytest.mark.parametrize(
    "what, task, words",
    [
        (
            "a class label past output_size",
            lambda: _own_task(
                "labels",
                torch.randn(50, 6, 2),
                torch.arange(50) % 6,
                "cross_entropy",
                4,
            ),
            "class label 5 .* output_size=4 has classes 0 to 3",
        ),
        (
            "inputs of another width than input_size",
            lambda: _own_task("wide", torch.randn(50, 6, 3), torch.randn(50), "mse", 1),
            "inputs with 3 features .* input_size is 2",
        ),
    ],
)
def test_an_own_task_that_disagrees_with_itself_is_one_line(what, task, words):
    with pytest.raises(ValueError, match=words):
        train(tiny(task=task(), steps=2, eval_every=1))


def test_a_task_spec_naming_none_is_not_called_missing(tmp_path, monkeypatch):
    (tmp_path / "nonetask.py").write_text("sample_task = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from rhn.owntasks import task_from_spec

    with pytest.raises(ValueError, match="expected a Python function.*NoneType"):
        task_from_spec("nonetask:sample_task")


def test_masks_of_another_width_are_one_line():
    import rhn

    model = rhn.RHN(2, 8, state_dropout=0.3)
    other = rhn.RHN(2, 16, state_dropout=0.3).dropout_masks(3)
    with pytest.raises(ValueError, match=r"masks.state\[0\] has width 16.*needs 8"):
        model(torch.randn(5, 3, 2), masks=other)


def test_the_command_lines_own_warnings_are_one_line(tmp_path):
    """A warning of the package's on the command line (a stale lock taken
    over, a log row cut short) printed the package's file, line and source;
    now ``python -m rhn train: warning: ...``, one line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tiny_runs import CLI

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    out, log = tmp_path / "r", tmp_path / "log.csv"

    def run(*argv):
        return subprocess.run(
            [sys.executable, "-m", "rhn", "train", *argv],
            capture_output=True,
            text=True,
            env=env,
        )

    done = run(*CLI, "--out", str(out), "--log-csv", str(log))
    assert done.returncode == 0, done.stderr
    with open(log, "a") as f:  # a next row cut short (a full disk)
        f.write("4,0.5")
    done = run("--resume", str(out), "--steps", "4")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    said = [line for line in lines if "warning" in line.lower()]
    assert said == [
        line for line in lines if line.startswith("python -m rhn train: warning: ")
    ]
    assert said and "cut short" in said[0], done.stderr
    assert "UserWarning" not in done.stderr and "rhn/" not in done.stderr


def test_a_checkpoint_of_nan_weights_does_not_load_as_a_model(tmp_path):
    from rhn.train.records import load_checkpoint, save_checkpoint

    out = tmp_path / "r"
    train(tiny(steps=2, eval_every=1, out=str(out)))
    path = out / "checkpoint.pt"
    state = load_checkpoint(path)
    for value in state["model"].values():
        value.fill_(float("nan"))
    save_checkpoint(path, state)
    with pytest.raises(ValueError, match="not finite .*NaN or inf"):
        load_model(out)


def test_a_resumed_sweep_that_holds_every_run_is_written_complete(tmp_path):
    """A record holding every run but ``complete: false`` (its last write
    lost) was reported written on ``--resume`` and stayed incomplete."""
    import json

    from rhn.experiments import load_sweep, sweep

    path = tmp_path / "s.json"
    sweep(tiny(steps=2, eval_every=1), {"model": ["rhn", "gru"]}, [0], out=path)
    record = json.loads(path.read_text())
    record["complete"] = False
    path.write_text(json.dumps(record))
    again = sweep(
        tiny(steps=2, eval_every=1),
        {"model": ["rhn", "gru"]},
        [0],
        out=path,
        resume=True,
    )
    assert again["complete"] and load_sweep(path)["complete"]
    assert len(load_sweep(path)["runs"]) == 2


def test_a_task_of_meta_tensors_is_one_line():
    def generate(batch_size, seq_len, seed=0, generator=None, **kwargs):
        return (
            torch.empty(seq_len, batch_size, 2, device="meta"),
            torch.empty(batch_size, device="meta"),
        )

    task = _two_inputs("meta", generate)
    with pytest.raises(ValueError, match="meta device"):
        train(tiny(task=task, steps=2, eval_every=1))


def test_two_loggers_of_one_file_in_one_process_are_told_so(tmp_path):
    from rhn.train import CSVLogger

    log = tmp_path / "t.csv"
    with pytest.raises(ValueError, match="in use by another .* in this process") as e:
        train(
            tiny(steps=2, eval_every=1),
            loggers=[CSVLogger(log), CSVLogger(tmp_path / "." / "t.csv")],
        )
    assert "delete" not in str(e.value)  # no lock to delete: its own process


def test_runs_md_states_the_fingerprints_sample():
    import re
    from pathlib import Path

    from rhn.train.config import FINGERPRINT_SAMPLE

    text = (Path(__file__).resolve().parents[1] / "RUNS.md").read_text()
    said = re.search(r"fingerprinted by\s+(\d+) sequences", text)
    assert said and int(said.group(1)) == FINGERPRINT_SAMPLE


def test_a_stash_holding_the_folders_checkpoint_is_never_called_deletable(
    tmp_path, capsys
):
    """A kill between two moves of --overwrite leaves the checkpoint in the
    stash and metrics.json in the folder: the advice was first "delete it
    once you no longer need that run", then "move it back"."""
    from tiny_runs import CLI

    from rhn.__main__ import main

    out = tmp_path / "half"
    train(tiny(steps=2, eval_every=1, out=str(out)))
    stash = out / ".rhn-replaced-0123456789ab"
    stash.mkdir()
    (out / "checkpoint.pt").rename(stash / "checkpoint.pt")
    capsys.readouterr()
    assert main(["train", "--resume", str(out)]) == 2
    err = capsys.readouterr().err
    assert "delete it" not in err and "move checkpoint.pt" in err, err
    assert err.count("\n") == 1
    assert CLI  # the tiny options, unused: the resume keeps the run's own


# --- the second hostile round of this session (cases C1-C68) -----------------


def test_a_sweep_over_an_own_task_writes_its_record(tmp_path):
    """C8: a grid of a built-in and an own task trained its first run, then
    failed to write the record ("Task is not JSON serializable")."""
    from rhn.experiments import load_sweep, select, sweep

    own = _own_task("mine", torch.randn(40, 6, 2), torch.randn(40), "mse", 1)
    path = tmp_path / "s.json"
    sweep(tiny(steps=2, eval_every=1), {"task": ["adding", own]}, [0], out=path)
    record = load_sweep(path)
    assert record["call"]["grid"] == {"task": ["adding", "mine"]}
    assert [r["setting"]["task"] for r in record["runs"]] == ["adding", "mine"]
    assert len(select(record, task="mine")) == 1


def test_two_tasks_of_one_name_in_a_grid_are_refused(tmp_path):
    """C7: two tensor_tasks of the default name made one group of mixed runs."""
    from rhn.experiments import sweep

    a = tensor_task(torch.randn(40, 6, 2), torch.randn(40), batch_first=True)
    b = tensor_task(torch.randn(40, 6, 2), torch.randn(40) * 100, batch_first=True)
    with pytest.raises(ValueError, match="tasks named 'tensors'"):
        sweep(tiny(steps=2, eval_every=1, seq_len=6), {"task": [a, b]}, [0])


def test_early_stopping_judges_divergence_by_the_model_it_returns(tmp_path):
    """C6: with patience the metrics' test_loss was the best evaluation's but
    ``diverged`` came from the last, which a huge learning rate had blown up."""
    config = tiny(
        steps=30, eval_every=1, patience=100, lr=3.0, clip=0.0, lr_schedule="constant"
    )
    result = train(config)
    assert result.metrics["test_loss"] == min(result.history["test_loss"])
    worst = max(result.history["test_loss"])
    assert worst > 10 * result.metrics["baseline"]  # it did blow up later
    assert result.metrics["diverged"] is False  # but the model returned did not


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("lr_schedule", "linear", "lr_schedule must be one of"),
        ("clip", -1, "clip and weight_decay must be >= 0"),
        ("patience", -1, "patience must be an int >= 0"),
        ("steps", 0, "steps must be an int >= 1"),
        ("seed", -3, "seed must be an int >= 0, got -3"),
    ],
)
def test_a_field_set_after_the_config_is_checked_by_train(field, value, words):
    """C68/C69: a field changed on the config object skipped every check."""
    config = tiny(steps=2, eval_every=1)
    setattr(config, field, value)
    with pytest.raises(ValueError, match=words):
        train(config)


def test_a_changed_file_of_training_batches_is_refused(tmp_path):
    """C1: a task whose batches (generator path) and held-out sets (seed
    path) come from two files: the training file changed unseen."""
    train_rows = torch.randn(500, 6, 2, generator=torch.Generator().manual_seed(0))
    test_rows = torch.randn(100, 6, 2, generator=torch.Generator().manual_seed(1))

    def two_files(rows_train):
        def generate(batch_size, seq_len, seed=0, generator=None, **kwargs):
            rows = rows_train if generator is not None else test_rows
            g = generator or torch.Generator().manual_seed(seed)
            x = rows[torch.randint(0, len(rows), (batch_size,), generator=g)]
            return x.transpose(0, 1), x[:, :, 0].sum(1)

        return _two_inputs("files", generate)

    config = tiny(
        task=two_files(train_rows), steps=2, eval_every=1, out=str(tmp_path / "r")
    )
    train(config)
    more = dataclasses.replace(config, task=two_files(train_rows * 3), steps=4)
    with pytest.raises(ValueError, match="other data"):
        train(more, resume=tmp_path / "r")


@pytest.mark.parametrize(
    "labels, words",
    [
        (torch.full((50,), -100), "class label -100"),
        (torch.arange(50) % 4 - 1, "class label -1"),
        ((torch.arange(50) % 4).int(), "torch.int32 .*torch.long"),
    ],
)
def test_class_labels_the_loss_cannot_take_are_one_line(labels, words):
    """C66, C67, C34: ignore_index labels, negative labels, int32 labels."""
    task = _own_task("classes", torch.randn(50, 6, 2), labels, "cross_entropy", 4)
    with pytest.raises(ValueError, match=words):
        train(tiny(task=task, steps=2, eval_every=1))


def test_tensor_task_takes_int32_labels():
    x = torch.randn(60, 6, 2)
    labels = (torch.arange(60) % 3).int()
    result = train(
        tiny(
            task=tensor_task(x, labels, batch_first=True),
            seq_len=6,
            steps=2,
            eval_every=1,
        )
    )
    assert result.metrics["valid_accuracy"] is not None


def test_a_learning_rate_that_overflows_adam_is_refused_up_front():
    """C2: --lr 4e37 passed the check, then Adam overflowed with a traceback."""
    from rhn.train import TrainConfig

    with pytest.raises(ValueError, match="lr must be at most"):
        TrainConfig(lr=4e37)


def test_a_task_of_sparse_tensors_is_one_line():
    """C31: sparse inputs gave a traceback from the fingerprint code."""

    def generate(batch_size, seq_len, seed=0, generator=None, **kwargs):
        g = generator or torch.Generator().manual_seed(seed)
        x = torch.randn(seq_len, batch_size, 2, generator=g)
        return x.to_sparse(), x[:, :, 0].sum(0)

    task = _two_inputs("sparse", generate)
    with pytest.raises(ValueError, match="sparse"):
        train(tiny(task=task, steps=2, eval_every=1))


def test_the_record_helpers_read_a_loss_stored_as_null():
    """C10: a NaN or infinite loss is null in a record; the helpers raised."""
    import math

    from rhn.experiments import eval_curve, steps_to_reach

    run = {"history": {"eval_step": [1, 2, 3], "test_loss": [None, 0.5, 0.001]}}
    assert steps_to_reach(run, 0.01) == 3
    steps, losses = eval_curve(run)
    assert steps == [1, 2, 3] and math.isnan(losses[0]) and losses[2] == 0.001


def test_an_overwrite_stopped_before_its_first_checkpoint_puts_the_run_back(
    tmp_path,
):
    """C51: Ctrl-C on an --overwrite before its first checkpoint wrote the new
    run's checkpoint, which deleted the finished run it was replacing."""
    from tiny_runs import interrupt_at

    from rhn.train import TrainingInterrupted

    out, config = _finished(tmp_path)
    before = contents(out)
    again = dataclasses.replace(config, seed=1, steps=50, checkpoint_every=0)
    with pytest.raises(TrainingInterrupted) as caught:
        train(again, overwrite=True, callback=interrupt_at(3))
    assert caught.value.checkpoint is None
    assert "is back in place" in " ".join(caught.value.__notes__)
    assert _without_kept(contents(out)) == before


def test_select_takes_a_model_in_any_case_and_a_task_object(tmp_path):
    """C9: select(record, model="RHN") found nothing, although a config takes
    "RHN" for "rhn"."""
    from rhn.experiments import select, sweep

    own = _own_task("mine", torch.randn(40, 6, 2), torch.randn(40), "mse", 1)
    record = sweep(tiny(steps=2, eval_every=1), {"task": ["adding", own]}, [0])
    assert len(select(record, model="RHN")) == 2
    assert len(select(record, task=own)) == 1


def test_a_held_out_mask_that_keeps_nothing_is_refused():
    """C36: a held-out mask False everywhere scored 0.0, a perfect model."""

    def generate(batch_size, seq_len, seed=0, generator=None, **kwargs):
        g = generator or torch.Generator().manual_seed(seed)
        x = torch.randn(seq_len, batch_size, 2, generator=g)
        keep = torch.ones(seq_len, batch_size, dtype=torch.bool)
        if generator is None:  # the held-out set
            keep[:] = False
        return x, x[:, :, 0], keep

    task = _two_inputs("masked", generate, readout="all")
    with pytest.raises(ValueError, match="keeps no target"):
        train(tiny(task=task, steps=2, eval_every=1))
