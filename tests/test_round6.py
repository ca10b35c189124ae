"""Hostile round 6 (issue 32, "Nothing lost"): what a fresh hostile tester found.

Each test is one case: ``bench`` and ``optstudy`` writing over a run's files
or another writer's record, a run folder whose files are symlinks or hard
links into another run, a log that is stdout, a full disk while logging, an
error in the user's own code mid-run, ``--overwrite`` failing before the new
run's first checkpoint, and five unclear messages.
"""

import csv
import dataclasses
import json
import os
import sys
import warnings

import pytest
import torch
from tiny_runs import CLI, SWEEP, TINY, contents, one_error_line, rows, tiny  # noqa: E402, F401

from rhn import owntasks
from rhn.__main__ import main
from rhn.owntasks import tensor_task
from rhn.train import CSVLogger, Logger, TrainConfig, load_checkpoint, records, train

# --- 1. bench and optstudy never replace a run's files ----------------------------


@pytest.mark.parametrize("command", ["bench", "optstudy"])
@pytest.mark.parametrize("name", ["checkpoint.pt", "metrics.json", "run.json"])
def test_bench_and_optstudy_never_replace_a_file_of_a_run(
    tmp_path, monkeypatch, capsys, command, name
):
    run = tmp_path / "A"
    train(tiny(out=str(run)))
    before = contents(run)
    monkeypatch.chdir(tmp_path)
    assert main([command, "--out", f"A/{name}", "--overwrite"]) == 2
    err = one_error_line(capsys)
    assert "--out: " in err and name in err and "file of the run folder" in err
    assert f"a {'study' if command == 'optstudy' else command} never" in err
    assert contents(run) == before


# --- 2. each writer overwrites only a record of its own kind ----------------------


def test_each_writer_overwrites_only_its_own_kind(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", *SWEEP, "--out", "sweep.json"]) == 0
    capsys.readouterr()
    before = (tmp_path / "sweep.json").read_bytes()
    for command in ("optstudy", "bench"):
        assert main([command, "--out", "sweep.json", "--overwrite"]) == 2
        err = one_error_line(capsys)
        assert "is not a" in err and "it is a sweep record" in err
        assert (tmp_path / "sweep.json").read_bytes() == before
    study = {"format": 1, "complete": True, "settings": {}, "runs": []}
    (tmp_path / "study.json").write_text(json.dumps(study))
    assert main(["sweep", *SWEEP, "--out", "study.json", "--overwrite"]) == 2
    assert "not a sweep record" in one_error_line(capsys)
    assert json.loads((tmp_path / "study.json").read_text()) == study
    # its own kind is replaced
    records.check_record_out(tmp_path / "study.json", True, kind="study")
    bench = {"meta": {}, "results": []}
    (tmp_path / "b.json").write_text(json.dumps(bench))
    records.check_record_out(tmp_path / "b.json", True, kind="bench")
    with pytest.raises(ValueError, match="is not a study record.*benchmark record"):
        records.check_record_out(tmp_path / "b.json", True, kind="study")


# --- 3. a run folder's files are its own: no symlinks -----------------------------


def test_a_symlinked_checkpoint_is_refused_after_its_run(tmp_path, monkeypatch, capsys):
    train(tiny(out=str(tmp_path / "r1")))
    before = contents(tmp_path / "r1")
    (tmp_path / "symck").mkdir()
    (tmp_path / "symck" / "checkpoint.pt").symlink_to("../r1/checkpoint.pt")
    monkeypatch.chdir(tmp_path)
    argv = ["train", "--resume", "symck", "--steps", "5", "--out", "symck"]
    assert main(argv) == 2
    err = one_error_line(capsys)
    assert "out: " in err and "checkpoint.pt" in err and "symlink" in err
    assert contents(tmp_path / "r1") == before
    assert load_checkpoint(tmp_path / "r1")["step"] == 3


def test_a_symlinked_checkpoint_is_refused_while_its_run_trains(tmp_path):
    la, lb = tmp_path / "LA", tmp_path / "LB"
    refused = []

    def second(event):
        if event["step"] == 2:
            lb.mkdir()
            (lb / "checkpoint.pt").symlink_to("../LA/checkpoint.pt")
            try:
                train(tiny(out=str(lb), steps=6), resume=lb)
            except ValueError as err:
                refused.append(str(err))

    train(tiny(out=str(la), steps=4, checkpoint_every=1), callback=second)
    assert len(refused) == 1 and "symlink" in refused[0]
    assert refused[0].startswith("out: ")
    state = load_checkpoint(la)
    assert state["step"] == 4 == json.loads((la / "metrics.json").read_text())["steps"]
    assert not (lb / "metrics.json").exists()


@pytest.mark.parametrize("name", ["metrics.json", "run.json"])
def test_a_symlinked_record_is_refused(tmp_path, name):
    train(tiny(out=str(tmp_path / "A")))
    before = contents(tmp_path / "A")
    (tmp_path / "B").mkdir()
    (tmp_path / "B" / name).symlink_to(f"../A/{name}")
    with pytest.raises(ValueError, match=f"out: .*{name}.* is a symlink"):
        train(tiny(out=str(tmp_path / "B")), overwrite=True)
    assert contents(tmp_path / "A") == before


# --- 4. a log is never this process's stdout --------------------------------------


def test_a_log_that_is_stdout_is_refused(tmp_path):
    printed = tmp_path / "printed.txt"
    with open(printed, "w") as f:
        saved = os.dup(sys.stdout.fileno())
        os.dup2(f.fileno(), sys.stdout.fileno())
        try:
            with pytest.raises(ValueError, match="log_csv: .*stdout") as err:
                train(tiny(log_csv="/dev/stdout"))
        finally:
            os.dup2(saved, sys.stdout.fileno())
            os.close(saved)
    assert "\n" not in str(err.value)
    assert printed.read_text() == ""


def test_a_log_that_is_a_terminal_or_device_is_refused(tmp_path):
    with pytest.raises(ValueError, match="log_csv: .*character device"):
        train(tiny(log_csv=os.devnull))


# --- 5. a full disk while logging -------------------------------------------------


class _FullDisk:
    """The log's file on a disk that fills half way through a row."""

    def __init__(self, file):
        self.file = file

    def write(self, text):
        self.file.write(text[: len(text) // 2])
        self.file.flush()
        raise OSError(28, "No space left on device")

    def flush(self):
        self.file.flush()


def _full_disk_at(monkeypatch, step):
    """The disk fills while the log's row of ``step`` is written."""
    real_log = CSVLogger.log

    def full(self, row):
        if row["step"] == step:
            self._file, real = _FullDisk(self._file), self._file
            self._writer = csv.writer(self._file, lineterminator="\n")
            try:
                real_log(self, row)
            finally:
                self._file = real
        real_log(self, row)

    monkeypatch.setattr(CSVLogger, "log", full)


def test_a_full_disk_while_logging_is_one_line_and_resumes(tmp_path, monkeypatch):
    out, log = tmp_path / "A", tmp_path / "A.csv"
    real_log = CSVLogger.log

    _full_disk_at(monkeypatch, 3)
    with pytest.raises(ValueError) as err:
        train(tiny(out=str(out), log_csv=str(log), steps=5))
    message = str(err.value)
    assert message.startswith("log_csv: ") and "A.csv" in message
    assert "No space left" in message and "\n" not in message
    # step 3 was trained before its row failed: the checkpoint is of step 3
    assert any("checkpoint of step 3" in n for n in err.value.__notes__)
    assert "row of step 3" in message
    monkeypatch.setattr(CSVLogger, "log", real_log)
    assert not log.read_text().endswith("\n")  # the row cut short
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train(tiny(out=str(out), log_csv=str(log), steps=5), resume=out)
    assert any("cut short" in str(w.message) for w in caught)
    # the row cut short is gone, and the resume wrote step 3's row again from
    # the checkpoint (it left a gap that a later resume refused: round 14)
    assert [r["step"] for r in rows(log)] == ["1", "2", "3", "4", "5"]
    assert len({r["run"] for r in rows(log)}) == 1


# --- 6. a hard-linked copy of a run ------------------------------------------------


def test_resuming_a_hard_linked_copy_is_refused(tmp_path, monkeypatch, capsys):
    ha = tmp_path / "hA"
    train(tiny(out=str(ha), log_csv=str(ha / "log.csv")))
    before = contents(ha)
    hb = tmp_path / "hB"
    hb.mkdir()
    for path in ha.iterdir():  # cp -al hA hB
        os.link(path, hb / path.name)
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--resume", "hB", "--steps", "5"]) == 2
    err = one_error_line(capsys)
    assert "hard link" in err and ("out: " in err or "log_csv: " in err)
    assert contents(ha) == before
    os.unlink(hb / "log.csv")  # the log its own: the folder's files still are not
    assert main(["train", "--resume", "hB", "--steps", "5", "--log-csv", "B.csv"]) == 2
    err = one_error_line(capsys)
    assert "out: " in err and "hard link" in err
    assert contents(ha) == before


# --- 7. an error in the user's code keeps the steps done ---------------------------


class Breaks(Logger):
    def __init__(self, at):
        self.at = at

    def log(self, row):
        if row["step"] == self.at:
            raise RuntimeError("the user's logger broke")


class BreaksAtStart(Breaks):
    def __init__(self):
        super().__init__(None)

    def start(self, info):
        raise RuntimeError("the user's logger broke before the first step")


def test_an_error_in_a_logger_checkpoints_the_last_step(tmp_path):
    out = tmp_path / "A"
    with pytest.raises(RuntimeError, match="logger broke") as err:
        train(tiny(out=str(out), steps=6), loggers=[Breaks(4)])
    assert any("checkpoint of step 4" in n for n in err.value.__notes__)
    assert load_checkpoint(out)["step"] == 4
    # and it resumes to the run that never broke
    resumed = train(tiny(out=str(out), steps=6), resume=out)
    straight = train(tiny(out=str(tmp_path / "B"), steps=6))
    assert resumed.history["train_loss"] == straight.history["train_loss"]


def test_an_error_in_a_tasks_generate_keeps_the_steps_before(tmp_path):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 40, 2, generator=g)
    task = tensor_task(x, x[-1, :, 0].clone(), name="breaks")
    calls = []
    generate = task.generate

    def broken(*args, **kwargs):
        if kwargs.get("generator") is not None:
            calls.append(1)
            if len(calls) == 4:
                raise RuntimeError("the task's data went away")
        return generate(*args, **kwargs)

    config = TrainConfig.for_task(task, **{**TINY, "steps": 6, "out": str(tmp_path)})
    with pytest.raises(RuntimeError, match="went away") as err:
        train(
            dataclasses.replace(config, task=dataclasses.replace(task, generate=broken))
        )
    assert any("checkpoint of step 3" in n for n in err.value.__notes__)
    assert load_checkpoint(tmp_path)["step"] == 3
    resumed = train(config, resume=tmp_path)
    straight = train(dataclasses.replace(config, out=None))
    assert resumed.history["train_loss"] == straight.history["train_loss"]


def test_the_cli_says_where_the_steps_went(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _full_disk_at(monkeypatch, 2)
    assert main(["train", *CLI, "--out", "A", "--log-csv", "A.csv"]) == 2
    err = one_error_line(capsys)
    assert "log_csv: " in err and "checkpoint of step 2" in err
    assert load_checkpoint(tmp_path / "A")["step"] == 2


def test_overwrite_puts_the_old_run_back_if_the_new_one_fails(tmp_path):
    out = tmp_path / "A"
    train(tiny(out=str(out)))
    before = contents(out)
    with pytest.raises(RuntimeError, match="logger broke") as err:
        train(tiny(out=str(out), steps=5), overwrite=True, loggers=[BreaksAtStart()])
    assert any("back in place" in n for n in err.value.__notes__)
    assert contents(out) == before
    assert not [p for p in out.iterdir() if p.name.startswith(".rhn-replaced")]
    # once the new run has its first checkpoint, the old run is gone
    train(tiny(out=str(out), steps=5), overwrite=True)
    assert load_checkpoint(out)["step"] == 5
    assert not [p for p in out.iterdir() if p.name.startswith(".rhn-replaced")]


# --- 8. unclear errors, each one line naming its cause ----------------------------


def test_single_class_targets_say_so():
    x = torch.randn(6, 40, 2)
    with pytest.raises(ValueError, match="targets hold one class only"):
        tensor_task(x, torch.zeros(40, dtype=torch.long))


def test_a_generator_as_inputs_says_so():
    x = torch.randn(6, 40, 2)
    with pytest.raises(TypeError, match="inputs must be a tensor, got a generator"):
        tensor_task((t for t in x), torch.zeros(40))


def test_a_loss_overflowing_on_huge_data_names_the_scale():
    x = torch.randn(6, 40, 2) * 1e30
    task = tensor_task(x, x[-1, :, 0].clone(), name="huge")
    config = TrainConfig.for_task(task, **{**TINY, "seq_len": 6})
    with pytest.raises(FloatingPointError, match="data's scale is huge") as err:
        train(config)
    assert "inputs up to" in str(err.value) and "targets up to" in str(err.value)


def test_grid_lists_only_fields_a_sweep_varies(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", *SWEEP, "--grid", "depht=1,2", "--out", "s.json"]) == 2
    err = one_error_line(capsys)
    listed = err.split("(", 1)[1].split(")", 1)[0].split(", ")
    assert "depth" in listed
    for refused in ("seed", "out", "checkpoint_every", "progress", "log_csv"):
        assert refused not in listed
    assert main(["sweep", *SWEEP, "--grid", "log_csv=a,b", "--out", "s.json"]) == 2
    assert "a sweep can vary" in one_error_line(capsys)


def test_a_task_function_with_arguments_quotes_them(tmp_path, monkeypatch):
    (tmp_path / "needy.py").write_text("def make(a, b):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="needs the arguments 'a', 'b'"):
        owntasks.task_from_spec("needy:make")
