"""Hostile round 3 (issue 32): nothing lost, no silent wrong result, one line.

Each test is a case a hostile user tried: a resume that would move a run's
folder back, two sweeps into one file, names and paths too long, a full disk,
``--overwrite`` over a folder it cannot write, lock takeovers interleaved, a
restarted container, own tasks that misbehave, and non-finite records.
"""

import dataclasses
import errno
import json
import os
import shutil
import subprocess
import sys
import warnings

import pytest
import torch

from rhn import _io, experiments
from rhn.__main__ import main
from rhn.experiments import sweep
from rhn.train import TrainConfig, load_checkpoint, records, train

TINY = {
    "seq_len": 6,
    "hidden_size": 8,
    "depth": 2,
    "transform_bias": 0.0,
    "lr": 2e-2,
    "batch_size": 16,
    "eval_samples": 64,
    "eval_every": 2,
    "progress": False,
    "device": "cpu",
}
CLI_TINY = ["--seq-len", "6", "--hidden-size", "8", "--depth", "2", "--batch-size"]
CLI_TINY += ["16", "--eval-samples", "64", "--device", "cpu", "--no-progress"]


def tiny(**overrides):
    return TrainConfig.for_task("adding", **{**TINY, **overrides})


def one_error_line(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def dead_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# --- data loss ------------------------------------------------------------------


def test_resuming_an_older_copy_of_the_checkpoint_never_moves_the_folder_back(
    tmp_path,
):
    out = tmp_path / "run"
    train(tiny(steps=2, out=str(out)))
    old = tmp_path / "old.pt"
    shutil.copy(out / "checkpoint.pt", old)
    train(tiny(steps=6, out=str(out)), resume=out)  # the run goes on to step 6
    with pytest.raises(ValueError, match=r"at step 2, behind the run .* \(step 6\)"):
        train(tiny(steps=8, out=str(out)), resume=old)
    assert load_checkpoint(out)["step"] == 6
    assert json.loads((out / "metrics.json").read_text())["steps"] == 6
    # the folder's own checkpoint, and a copy that is not behind, still resume
    shutil.copy(out / "checkpoint.pt", old)
    assert train(tiny(steps=8, out=str(out)), resume=old).metrics["steps"] == 8


def test_a_sweep_holds_a_lock_on_its_out_file(tmp_path):
    out = tmp_path / "s.json"
    other = records.FolderLock(
        tmp_path, path=experiments.lock_path(out), holder="sweep"
    ).acquire()
    try:
        with pytest.raises(ValueError, match="in use by another sweep"):
            sweep(tiny(steps=2), {}, [0], out=out)
    finally:
        other.release()
    assert not out.exists()
    sweep(tiny(steps=2), {}, [0], out=out)  # free again; the lock is released
    assert not experiments.lock_path(out).exists()


def test_a_sweep_name_too_long_for_the_temporary_file_fails_before_training(
    tmp_path, monkeypatch, capsys
):
    def no_training(config, **kwargs):
        raise AssertionError("trained before refusing the name")

    monkeypatch.setattr(experiments, "train", no_training)
    out = tmp_path / ("s" * 245 + ".json")  # 250 characters: its own name fits
    code = main(["sweep", *CLI_TINY, "--steps", "2", "--seeds", "0", "--out", str(out)])
    assert code == 2
    assert "too long for this file system" in one_error_line(capsys)


def test_a_path_longer_than_path_max_is_one_line(tmp_path, capsys):
    long = tmp_path.joinpath(*["d" * 200] * 25)  # 5000 characters
    assert main(["train", *CLI_TINY, "--steps", "2", "--out", str(long)]) == 2
    assert "too long for this system" in one_error_line(capsys)
    json_out = str(long) + ".json"
    assert main(["sweep", *CLI_TINY, "--seeds", "0", "--out", json_out]) == 2
    assert "too long" in one_error_line(capsys)


def test_overwrite_deletes_nothing_when_the_new_run_could_not_be_written(tmp_path):
    out = tmp_path / "run"
    train(tiny(steps=2, out=str(out)))
    (out / "metrics.json").unlink()
    (out / "metrics.json").mkdir()
    with pytest.raises(ValueError, match="metrics.json.*directory"):
        train(tiny(steps=4, out=str(out)), overwrite=True)
    assert load_checkpoint(out)["step"] == 2  # the old run is still there


@pytest.mark.parametrize(
    "failure",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        RuntimeError(
            "[enforce fail at inline_container.cc:783] . PytorchStreamWriter failed "
            "writing file data/3: file write failed"
        ),
    ],
)
def test_a_full_disk_is_one_line_and_keeps_the_last_checkpoint(
    tmp_path, monkeypatch, failure
):
    out = tmp_path / "run"
    train(tiny(steps=2, out=str(out)))
    before = (out / "checkpoint.pt").read_bytes()

    def full(obj, f, *args, **kwargs):
        f.write(b"partial")
        raise failure

    monkeypatch.setattr(records.torch, "save", full)
    with pytest.raises(ValueError, match="out: .*(no space left|disk is full)") as err:
        train(tiny(steps=4, out=str(out)), resume=out)
    assert "\n" not in str(err.value)
    assert (out / "checkpoint.pt").read_bytes() == before
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]


def _stale_lock(path, **info):
    path.write_text(json.dumps({"host": os.uname().nodename, **info}))


def test_taking_over_a_stale_lock_is_atomic(tmp_path):
    """Two processes find the same stale lock; the steps interleaved, the one
    that removes it second must not remove the first one's fresh lock."""
    lock_file = tmp_path / records.LOCK_NAME
    _stale_lock(lock_file, pid=dead_pid(), started="long ago")
    first, second = records.FolderLock(tmp_path), records.FolderLock(tmp_path)
    real_read = first._read

    def read_then_let_the_other_in():
        info = real_read()  # the stale lock, read by the first...
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            second.acquire()  # ...then the second takes it over
        first._read = real_read
        return info

    first._read = read_then_let_the_other_in
    with pytest.raises(ValueError, match="in use by another run"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            first.acquire()
    assert second.held and not first.held
    assert json.loads(lock_file.read_text())["token"] == second.info["token"]
    second.release()


def test_a_lock_of_a_reused_pid_is_stale_so_a_restarted_container_resumes(tmp_path):
    """The trainer is pid 1 again after a restart: same pid, another process."""
    me = records.FolderLock(tmp_path).info
    lock_file = tmp_path / records.LOCK_NAME
    _stale_lock(
        lock_file,
        pid=os.getpid(),  # alive, as pid 1 is in the restarted container
        boot_id=me["boot_id"],
        process_start=str(int(me["process_start"] or 0) + 1),  # but started later
    )
    with pytest.warns(UserWarning, match="stale lock"):
        lock = records.FolderLock(tmp_path).acquire()
    lock.release()
    # the lock of a live process (same pid and start time) is refused
    _stale_lock(lock_file, pid=os.getpid(), process_start=me["process_start"])
    with pytest.raises(ValueError, match="in use by another run"):
        records.FolderLock(tmp_path).acquire()
    # another boot: whatever the pid, not this process
    _stale_lock(lock_file, pid=os.getpid(), boot_id="another-boot")
    with pytest.warns(UserWarning, match="stale lock"):
        records.FolderLock(tmp_path).acquire().release()
