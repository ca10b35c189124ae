"""A run owns its folder; resume checks the whole config; runs can be extended;
sweeps survive diverged runs (issue 21, and issue 22's --resume to more steps).
"""

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import rhn.experiments as ex
from rhn.__main__ import main
from rhn.experiments import load_sweep, sweep
from rhn.train import TrainConfig, load_checkpoint, train

ROOT = Path(__file__).resolve().parents[1]
TINY = {
    "seq_len": 6,
    "hidden_size": 8,
    "depth": 2,
    "batch_size": 16,
    "eval_samples": 64,
    "progress": False,
    "device": "cpu",
}
CLI_TINY = ["--seq-len", "6", "--hidden-size", "8", "--depth", "2", "--batch-size"]
CLI_TINY += ["16", "--eval-samples", "64", "--device", "cpu", "--no-progress"]


def tiny(**overrides):
    return TrainConfig(**{**TINY, **overrides})


# --- the folder belongs to one run ---------------------------------------------


def test_the_api_refuses_a_folder_holding_another_run(tmp_path):
    out = tmp_path / "run"
    first = train(tiny(steps=2, out=str(out)))
    before = (out / "metrics.json").read_bytes()
    with pytest.raises(ValueError, match="already holds a run") as info:
        train(tiny(steps=2, seed=1, out=str(out)))
    assert "overwrite=True" in str(info.value) and "resume=" in str(info.value)
    assert (out / "metrics.json").read_bytes() == before
    second = train(tiny(steps=2, seed=1, out=str(out)), overwrite=True)
    record = json.loads((out / "metrics.json").read_text())
    assert record["config"]["seed"] == 1
    assert first.history != second.history
    marker = json.loads((out / "run.json").read_text())
    assert marker["run_id"] == record["run"]["id"] == load_checkpoint(out)["run_id"]
    assert not (out / "run.lock").exists()


def test_resume_into_a_folder_of_another_run_is_refused(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    args = ["train", *CLI_TINY, "--steps", "4", "--eval-every", "2"]
    assert main([*args, "--out", str(a), "--checkpoint-every", "2"]) == 0
    assert main([*args, "--out", str(b), "--seed", "1"]) == 0
    b_before = {p.name: p.read_bytes() for p in b.iterdir()}
    capsys.readouterr()
    # continuing a's checkpoint into b would overwrite b's finished run
    status = main([*args, "--out", str(b), "--resume", str(a / "checkpoint.pt")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "another run than the checkpoint resumed" in err
    assert {p.name: p.read_bytes() for p in b.iterdir()} == b_before
    # a fresh folder may take a branch of a's run (a copy that goes on from
    # it): a run of its own, whose run.json names a as its parent
    c = tmp_path / "c"
    assert main([*args, "--out", str(c), "--resume", str(a / "checkpoint.pt")]) == 0
    markers = [json.loads((d / "run.json").read_text()) for d in (a, b, c)]
    ids = [m["run_id"] for m in markers]
    assert len(set(ids)) == 3 and markers[2]["parent"]["run_id"] == ids[0]


def test_a_second_writer_is_refused_with_the_first_ones_name(tmp_path):
    """Two processes with the same --out: the second stops at once, naming the
    first; the first finishes alone."""
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "rhn", "train", *CLI_TINY, "--out", str(out)]
    first = subprocess.Popen(
        [*argv, "--steps", "100000", "--eval-every", "100000"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "run.lock").exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        second = subprocess.run(
            [*argv, "--steps", "3"], env=env, capture_output=True, text=True
        )
        assert second.returncode == 2, second.stderr
        assert second.stderr.count("\n") == 1
        assert f"in use by another run (pid {first.pid} on host" in second.stderr
        assert socket.gethostname() in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=120)
    assert first.returncode == 143  # stopped by us, with its checkpoint
    assert load_checkpoint(out)["config"]["steps"] == 100000
    assert not (out / "run.lock").exists()


def _dead_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    lock = {"pid": _dead_pid(), "host": socket.gethostname(), "started": "then"}
    (out / "run.lock").write_text(json.dumps(lock))
    with pytest.warns(UserWarning, match="stale lock"):
        train(tiny(steps=2, out=str(out)))
    assert not (out / "run.lock").exists()


@pytest.mark.parametrize("holder", ["live-pid", "other-host", "garbled"])
def test_a_live_or_unknown_lock_is_refused(tmp_path, holder):
    out = tmp_path / "run"
    out.mkdir()
    lock = {"pid": os.getppid(), "host": socket.gethostname(), "started": "now"}
    if holder == "other-host":
        lock = {"pid": _dead_pid(), "host": "elsewhere.example", "started": "x"}
    text = "{not json" if holder == "garbled" else json.dumps(lock)
    (out / "run.lock").write_text(text)
    with pytest.raises(ValueError, match="in use by another run") as info:
        train(tiny(steps=2, out=str(out)))
    if holder != "garbled":
        assert f"pid {lock['pid']} on host {lock['host']}" in str(info.value)
    assert (out / "run.lock").read_text() == text  # another run's lock stays
    assert not (out / "checkpoint.pt").exists()


def test_a_run_that_fails_before_training_leaves_the_folder_free(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="too large"):
        train(tiny(steps=2, hidden_size=10**9, out=str(out)))
    assert not (out / "run.lock").exists()
    train(tiny(steps=2, out=str(out)))  # not "already holds a run"


# --- resume compares the whole config -------------------------------------------


def _old_checkpoint(tmp_path, drop):
    """A checkpoint as an older version wrote it: without the field ``drop``."""
    out = tmp_path / "old"
    train(tiny(steps=4, eval_every=2, out=str(out)), callback=lambda e: e["step"] == 2)
    state = load_checkpoint(out)
    del state["config"][drop]
    for key in ("run_id", "segments", "schedule_steps"):
        del state[key]
    torch.save(state, out / "checkpoint.pt")
    (out / "run.json").unlink()
    return out


def test_a_field_missing_from_an_old_checkpoint_counts_at_its_default(tmp_path):
    out = _old_checkpoint(tmp_path, "dropout")
    with pytest.raises(ValueError, match=r"dropout: 0\.0 -> 0\.25"):
        train(tiny(steps=4, eval_every=2, dropout=0.25, out=str(out)), resume=out)
    whole = train(tiny(steps=4, eval_every=2))
    resumed = train(tiny(steps=4, eval_every=2, out=str(out)), resume=out)
    assert resumed.history == whole.history
    record = json.loads((out / "metrics.json").read_text())
    assert record["run"]["segments"][0] == {"from_step": 0, "to_step": 2, "steps": 4}


def test_options_that_do_not_change_the_numbers_may_change(tmp_path):
    out = tmp_path / "run"
    config = tiny(steps=4, eval_every=2, out=str(out))
    train(config, callback=lambda e: e["step"] == 2)
    other = dataclasses.replace(config, progress=True, threads=2, checkpoint_every=1)
    assert (
        train(other, resume=out).history == train(tiny(steps=4, eval_every=2)).history
    )


def test_resume_with_other_weight_names_is_one_clear_error(tmp_path):
    out = tmp_path / "run"
    train(tiny(steps=2, out=str(out)))
    state = load_checkpoint(out)
    state["model"] = {k.replace("core.", "body."): v for k, v in state["model"].items()}
    torch.save(state, tmp_path / "renamed.pt")
    with pytest.raises(ValueError, match="do not fit the model") as info:
        train(tiny(steps=2), resume=tmp_path / "renamed.pt")
    assert "renamed.pt" in str(info.value) and "\n" not in str(info.value)


# --- extend a finished run -------------------------------------------------------


def test_resume_extends_a_finished_run_and_the_record_says_so(tmp_path, capsys):
    out = tmp_path / "run"
    config = tiny(steps=6, eval_every=3, out=str(out))
    short = train(config)
    longer = train(dataclasses.replace(config, steps=10), resume=out)
    h = longer.history
    assert h["step"] == list(range(1, 11)) and h["eval_step"] == [3, 6, 9, 10]
    assert h["train_loss"][:6] == short.history["train_loss"]  # the same first steps
    record = json.loads((out / "metrics.json").read_text())
    assert record["steps"] == 10 and record["run"]["schedule_steps"] == 6
    assert record["run"]["segments"] == [
        {"from_step": 0, "to_step": 6, "steps": 6},
        {"from_step": 6, "to_step": 10, "steps": 10},
    ]
    # the schedule keeps its length: the extra steps run at its final rate
    lr = []
    train(
        dataclasses.replace(config, steps=12, out=str(tmp_path / "copy")),
        resume=out,
        callback=lambda e: lr.append(e["lr"]),
    )
    assert lr == pytest.approx([config.lr / 10] * 2)
    with pytest.raises(ValueError, match="steps must be at least 10"):
        train(dataclasses.replace(config, steps=8), resume=out)
    # the same from the command line
    args = ["train", *CLI_TINY, "--eval-every", "3", "--out", str(tmp_path / "cli")]
    assert main([*args, "--steps", "6"]) == 0
    assert main([*args, "--steps", "10", "--resume", str(tmp_path / "cli")]) == 0
    cli = json.loads((tmp_path / "cli" / "metrics.json").read_text())
    assert cli["history"] == record["history"] and len(cli["run"]["segments"]) == 2


def test_an_interrupted_extension_resumes_bit_for_bit(tmp_path):
    out, calm = tmp_path / "run", tmp_path / "calm"
    for d in (out, calm):
        train(tiny(steps=4, eval_every=2, out=str(d)))
    whole = train(tiny(steps=9, eval_every=2, out=str(calm)), resume=calm)
    train(
        tiny(steps=9, eval_every=2, out=str(out)),
        resume=out,
        callback=lambda e: e["step"] == 6,
    )
    again = train(tiny(steps=9, eval_every=2, out=str(out)), resume=out)
    assert again.history == whole.history
    assert [s["to_step"] for s in load_checkpoint(out)["segments"]] == [4, 6, 9]


# --- sweeps -----------------------------------------------------------------------


def _poison_seed(real, bad_seed):
    def train_with_poison(config, **kwargs):
        def poison(event):
            if event["step"] == 1:
                with torch.no_grad():
                    next(event["model"].parameters()).fill_(float("nan"))

        return real(config, callback=poison if config.seed == bad_seed else None)

    return train_with_poison


def test_a_diverged_run_is_recorded_and_the_sweep_goes_on(tmp_path, capfd, monkeypatch):
    real = ex.train
    monkeypatch.setattr(ex, "train", _poison_seed(real, 1))
    out = tmp_path / "s.json"
    argv = ["sweep", "--seeds", "0,1,2", *CLI_TINY, "--steps", "3", "--out", str(out)]
    assert main(argv) == 1  # written, but some diverged
    err = capfd.readouterr().err
    assert "1 of them stopped by a NaN" in err and "DIVERGED" in err
    record = load_sweep(out)
    flags = [run["metrics"]["diverged"] for run in record["runs"]]
    assert flags == [False, True, False]
    bad = record["runs"][1]
    assert "step 2" in bad["metrics"]["error"] and bad["history"]["step"] == [1]
    assert ex.summarize(record)[0]["n"] == 3  # its loss counts as NaN

    # interrupted after the diverged run: resuming trains only the third
    calls = []

    def count(config, **kwargs):
        calls.append(config.seed)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return _poison_seed(real, 1)(config)

    monkeypatch.setattr(ex, "train", count)
    part = tmp_path / "part.json"
    with pytest.raises(KeyboardInterrupt):
        sweep(tiny(steps=3), {}, [0, 1, 2], out=part)
    assert len(load_sweep(part, allow_incomplete=True)["runs"]) == 2
    calls[:] = [None, None, None]  # past the interrupt
    sweep(tiny(steps=3), {}, [0, 1, 2], out=part, resume=True)
    assert calls[3:] == [2]  # the diverged seed 1 is not trained again


def test_every_grid_value_is_checked_before_the_first_run(tmp_path, capfd, monkeypatch):
    def no_training(config, **kwargs):
        raise AssertionError("a run trained before the grid was checked")

    monkeypatch.setattr(ex, "train", no_training)
    bad_device = "cuda:7" if torch.cuda.device_count() < 8 else "mps"
    cases = [
        (["--grid", f"device=cpu,{bad_device}"], "device"),
        (["--grid", "hidden_size=8,1000000000"], "too large"),
        (["--grid", "threads=1,99999"], "threads must be at most"),
    ]
    for grid, words in cases:
        argv = ["sweep", "--seeds", "0", *CLI_TINY, "--steps", "2", *grid]
        assert main([*argv, "--out", str(tmp_path / "s.json")]) == 2, grid
        err = capfd.readouterr().err
        assert err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "s.json").exists()


def test_a_sweep_resumes_with_other_progress_and_threads(tmp_path, monkeypatch):
    real, calls = ex.train, []

    def stop_second(config, **kwargs):
        calls.append(config.seed)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(config, **kwargs)

    monkeypatch.setattr(ex, "train", stop_second)
    out = tmp_path / "s.json"
    with pytest.raises(KeyboardInterrupt):
        sweep(tiny(steps=2), {}, [0, 1], out=out)
    with pytest.raises(ValueError, match=r"base\.lr: 0\.005 -> 0\.5"):
        sweep(tiny(steps=2, lr=0.5), {}, [0, 1], out=out, resume=True)
    resumed = sweep(
        tiny(steps=2, progress=True, threads=2), {}, [0, 1], out=out, resume=True
    )
    assert resumed["complete"] and calls == [0, 1, 1]
