"""Hostile round 7 (issue 32): what a fresh hostile tester found.

Each test is one case: rows a kill left in the log past the checkpoint (and
an older checkpoint put back), a run folder copied with ``cp -r``,
``--overwrite`` of files rhn never wrote, a full disk while the log closes,
a loss that became infinite on the command line, and a sweep with a diverged
run.
"""

import csv
import errno
import json
import shutil

import pytest
import tiny_runs  # noqa: E402
import torch
from tiny_runs import CLI, contents, one_error_line, rows  # noqa: E402, F401

from rhn.__main__ import main
from rhn.train import CSVLogger, TrainConfig, load_checkpoint, records, train
from rhn.train import run as train_run

# the shared tiny run (tests/tiny_runs.py), with one more step
TINY = {**tiny_runs.TINY, "steps": 4}


def tiny(**overrides):
    return TrainConfig.for_task("adding", **{**TINY, **overrides})


def superseded(log):
    found = sorted(log.parent.glob(f"{log.name}.superseded-*.csv"))
    assert len(found) == 1, found
    return rows(found[0])


# --- 1. rows past the checkpoint are superseded, not doubled --------------------


def test_rows_a_kill_left_past_the_checkpoint_move_out_of_the_log(tmp_path, capsys):
    out, log = tmp_path / "run", tmp_path / "log.csv"
    train(tiny(out=str(out), log_csv=str(log)))  # checkpoint at step 4
    written = rows(log)
    run_id = written[0]["run"]
    # a SIGKILL after step 7: rows 5-7 logged, no checkpoint past step 4
    extra = [{**written[-1], "step": str(s), "seconds": "9.0"} for s in (5, 6, 7)]
    with open(log, "a", newline="") as f:
        csv.DictWriter(f, list(written[0]), lineterminator="\n").writerows(extra)
    capsys.readouterr()
    train(tiny(out=str(out), log_csv=str(log), steps=6), resume=out)
    steps = [int(r["step"]) for r in rows(log)]
    assert steps == list(range(1, 7)), steps  # each step once
    assert {r["run"] for r in rows(log)} == {run_id}
    moved = superseded(log)  # nothing lost
    assert [(r["step"], r["seconds"]) for r in moved] == [
        (r["step"], r["seconds"]) for r in extra
    ]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "moved 3 rows" in err and "steps 5-7" in err


def test_an_older_checkpoint_put_back_supersedes_the_rows_after_it(tmp_path):
    out, log = tmp_path / "run", tmp_path / "log.csv"
    train(tiny(out=str(out), log_csv=str(log), steps=2))
    older = (out / "checkpoint.pt").read_bytes()
    train(tiny(out=str(out), log_csv=str(log), steps=4), resume=out)
    first = rows(log)
    (out / "checkpoint.pt").write_bytes(older)  # put back: step 2
    train(tiny(out=str(out), log_csv=str(log), steps=4), resume=out)
    steps = [int(r["step"]) for r in rows(log)]
    assert steps == [1, 2, 3, 4], steps
    assert superseded(log) == [r for r in first if int(r["step"]) > 2]


def test_rows_of_the_run_up_to_the_checkpoint_stay(tmp_path):
    out, log = tmp_path / "run", tmp_path / "log.csv"
    train(tiny(out=str(out), log_csv=str(log)))
    train(tiny(out=str(out), log_csv=str(log), steps=6), resume=out)
    assert [int(r["step"]) for r in rows(log)] == list(range(1, 7))
    assert not list(tmp_path.glob("log.csv.superseded-*"))


# --- 2. a copied run folder is a run of its own ---------------------------------


def test_a_copied_run_folder_gets_its_own_id(tmp_path):
    r1, log = tmp_path / "r1", tmp_path / "log.csv"
    train(tiny(out=str(r1), log_csv=str(log)))
    original = json.loads((r1 / "run.json").read_text())["run_id"]
    shutil.copytree(r1, tmp_path / "cpy")
    cpy = tmp_path / "cpy"
    # the copy appending to r1's log would mix two runs under one id: refused
    with pytest.raises(ValueError, match="log_csv: .*holds rows of another run"):
        train(tiny(out=str(cpy), log_csv=str(log), steps=6), resume=cpy)
    other = tmp_path / "cpy.csv"
    train(tiny(out=str(cpy), log_csv=str(other), steps=6), resume=cpy)
    marker = json.loads((cpy / "run.json").read_text())
    assert marker["run_id"] != original
    assert marker["parent"]["run_id"] == original
    assert marker["parent"]["step"] == 4
    assert load_checkpoint(cpy)["run_id"] == marker["run_id"]
    assert {r["run"] for r in rows(other)} == {marker["run_id"]}
    # the original goes on under its own id, into its own log
    train(tiny(out=str(r1), log_csv=str(log), steps=6), resume=r1)
    assert json.loads((r1 / "run.json").read_text())["run_id"] == original
    assert {r["run"] for r in rows(log)} == {original}
    # and the copy, resumed again, keeps the id it got
    train(tiny(out=str(cpy), log_csv=str(other), steps=8), resume=cpy)
    assert json.loads((cpy / "run.json").read_text())["run_id"] == marker["run_id"]


# --- 3. --overwrite replaces only rhn's own files -------------------------------


@pytest.mark.parametrize("name", ["metrics.json", "checkpoint.pt"])
def test_overwrite_refuses_files_rhn_never_wrote(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "A"
    mine.mkdir()
    if name == "metrics.json":
        (mine / name).write_text('{"accuracy": 0.93, "notes": "mine"}')
    else:
        torch.save({"weights": torch.ones(3)}, mine / name)
    before = contents(mine)
    assert main(["train", *CLI, "--out", "A", "--overwrite"]) == 2
    err = one_error_line(capsys)
    assert name in err and "not a" in err and "rhn wrote" in err
    assert contents(mine) == before
    assert not list(mine.glob(".rhn-replaced-*"))


def test_a_folder_with_only_metrics_suggests_no_missing_checkpoint(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "A"]) == 0
    (tmp_path / "A" / "checkpoint.pt").unlink()
    capsys.readouterr()
    assert main(["train", *CLI, "--out", "A"]) == 2
    err = one_error_line(capsys)
    assert "--resume" not in err and "no checkpoint.pt" in err
    assert main(["train", *CLI, "--out", "A", "--overwrite"]) == 0  # rhn's own


# --- 4. one line, not tracebacks ------------------------------------------------


class _FullDisk:
    """The log's file, whose close meets a full disk."""

    def __init__(self, file):
        self._real = file

    def __getattr__(self, name):
        return getattr(self._real, name)

    def close(self):
        self._real.close()
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_while_the_log_closes_is_one_line(tmp_path, monkeypatch, capsys):
    start = CSVLogger.start

    def full(self, info):
        start(self, info)
        self._file = _FullDisk(self._file)

    monkeypatch.setattr(CSVLogger, "start", full)
    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "A", "--log-csv", "log.csv"]) == 2
    err = one_error_line(capsys)
    assert "log_csv: cannot write 'log.csv'" in err and "No space left" in err
    assert not (tmp_path / ".log.csv.rhn-lock").exists()  # the lock let go


def test_a_loss_that_became_infinite_is_one_line_and_status_1(
    tmp_path, monkeypatch, capsys
):
    def blown(self):
        raise FloatingPointError("the training loss became inf at step 1")

    monkeypatch.setattr(train_run._Run, "train_step", blown)
    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "A"]) == 1
    err = one_error_line(capsys)
    assert "the run diverged: the training loss became inf at step 1" in err


# --- 6. a sweep with a diverged run exits 1, as train does ----------------------


def test_a_sweep_with_a_diverged_run_exits_1(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(train_run, "DIVERGED_FACTOR", 0.0)  # every run too high
    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "A"]) == 1
    assert main(["sweep", *CLI[2:], "--seeds", "0,1", "--out", "s.json"]) == 1
    record = json.loads((tmp_path / "s.json").read_text())
    assert len(record["runs"]) == 2  # every run ran
    assert all(r["metrics"]["diverged"] for r in record["runs"])
    assert "2 of 2 runs diverged" in capsys.readouterr().err


# --- 5. an --overwrite killed midway: the old run comes back --------------------


def _killed_overwrite(folder):
    """What a SIGKILL during --overwrite leaves: the old run moved aside, the
    new run's claim (run.json), no checkpoint."""
    aside = records._set_aside(folder, "0123456789abcdef")
    (folder / "run.json").write_text('{"run_id": "0123456789abcdef"}')
    return aside


def test_a_killed_overwrite_puts_the_old_run_back(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "A"]) == 0
    before = contents(tmp_path / "A")
    aside = _killed_overwrite(tmp_path / "A")
    capsys.readouterr()
    assert main(["train", *CLI, "--out", "A"]) == 2  # the old run is back: refused
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "put back the run" in err[0] and aside.name in err[0]
    assert "already holds a run" in err[1]
    assert contents(tmp_path / "A") == before and not aside.exists()
    assert main(["train", *CLI, "--out", "A", "--resume", "A", "--steps", "5"]) == 0


def test_a_stash_beside_a_newer_checkpoint_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "A"]) == 0
    # killed after the new run's first checkpoint, before the old run went
    with monkeypatch.context() as m:
        m.setattr(records, "drop_aside", lambda lock: None)
        assert main(["train", *CLI, "--out", "A", "--overwrite", "--seed", "1"]) == 0
    (aside,) = (tmp_path / "A").glob(".rhn-replaced-*")
    capsys.readouterr()
    assert main(["train", "--resume", "A", "--steps", "5"]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "out:" in line]
    assert len(err) == 1 and aside.name in err[0] and "interrupted" in err[0]
    assert aside.is_dir()  # never deleted for the user


# --- 7. clear errors ------------------------------------------------------------


def test_a_garbage_lock_is_named_unreadable(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "run.lock").write_text("garbage\x00")
    assert main(["train", *CLI, "--out", "A"]) == 2
    err = one_error_line(capsys)
    assert "unreadable" in err and "rm A/run.lock" in err and "pid None" not in err


def test_memory_advice_names_seq_len(monkeypatch):
    from rhn.train import model as train_model

    monkeypatch.setattr(train_model, "_available_bytes", lambda device: 2**30)
    with pytest.raises(ValueError, match=r"too large .*--seq-len$"):
        train(tiny(seq_len=10**9))


def test_tensor_task_reports_the_shape_passed():
    from rhn.owntasks import tensor_task

    with pytest.raises(ValueError, match=r"\(N, T, I\) = \(0, 5, 2\)"):
        tensor_task(torch.zeros(0, 5, 2), torch.zeros(0, 5), batch_first=True)
    with pytest.raises(ValueError, match=r"\(T, N, I\) = \(5, 0, 2\)"):
        tensor_task(torch.zeros(5, 0, 2), torch.zeros(5, 0))
