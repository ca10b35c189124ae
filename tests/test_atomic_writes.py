"""Every file the package writes is whole or absent, whatever kills it (issue 21).

The writer (:mod:`rhn._io`) writes through symlinks, refuses device nodes and
other non-regular files, and checks the directory up front; a process killed
in the middle of any of its writes leaves the previous file (or none).
"""

import dataclasses
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from rhn import _io
from rhn.__main__ import main
from rhn.experiments import load_sweep
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


def test_a_write_goes_through_a_symlink_to_its_target(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    _io.write_json(link, {"new": 1})
    assert link.is_symlink() and os.readlink(link) == str(real)  # still a link
    assert json.loads(real.read_text()) == {"new": 1}  # the target has the data
    chain = tmp_path / "chain.json"  # a link to a link
    chain.symlink_to(link)
    _io.write_text(chain, "third")
    assert chain.is_symlink() and link.is_symlink() and real.read_text() == "third"


def test_a_dangling_symlink_is_written_at_its_target(tmp_path):
    from rhn import _cli

    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "later.json")
    _cli.writable_file("--out", link)  # the up-front check creates nothing
    assert link.is_symlink() and not (tmp_path / "later.json").exists()
    _io.write_text(link, "x")
    assert link.is_symlink() and (tmp_path / "later.json").read_text() == "x"


def test_the_old_files_permissions_are_kept(tmp_path):
    path = tmp_path / "shared.json"
    path.write_text("{}")
    path.chmod(0o640)
    _io.write_json(path, [1])
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    fresh = _io.write_json(tmp_path / "fresh.json", [2])
    assert (
        stat.S_IMODE(fresh.stat().st_mode) & 0o600 == 0o600
    )  # not mkstemp's 0600 only
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("kind", ["devnull", "fifo", "directory"])
def test_non_regular_files_are_refused_and_left_alone(tmp_path, kind):
    if kind == "devnull":
        path = Path(os.devnull)
    elif kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    else:
        path = tmp_path / "dir"
        path.mkdir()
    before = os.stat(path).st_mode
    with pytest.raises(ValueError, match="must be a regular file") as info:
        _io.write_text(path, "x", name="--out")
    assert "--out" in str(info.value) and str(path) in str(info.value)
    assert os.stat(path).st_mode == before  # not replaced by a regular file


def test_a_symlink_to_a_device_is_refused(tmp_path):
    link = tmp_path / "null.json"
    link.symlink_to(os.devnull)
    with pytest.raises(ValueError, match="character device"):
        _io.check_writable(link, "out")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_cli_outputs_refuse_dev_null(tmp_path, capfd):
    cases = [
        ["bench", "--out", os.devnull, "--overwrite", "--models", "rhn-loop"],
        ["sweep", "--seeds", "0", "--steps", "2", "--out", os.devnull, "--overwrite"],
        ["optstudy", "--out", os.devnull, "--overwrite"],
    ]
    for argv in cases:
        assert main(argv) == 2, argv
        out, err = capfd.readouterr()
        assert err.count("\n") == 1 and "regular file" in err, (argv, err)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory where no file can be created, holding a writable file.

    Root ignores permission bits, so as root the directory is made immutable
    (``chattr +i``) instead.
    """
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "metrics.json").write_text("{}")
    (locked / "metrics.json").chmod(0o666)  # the file itself can be written
    if os.geteuid() == 0:
        done = subprocess.run(["chattr", "+i", str(locked)], capture_output=True)
        if done.returncode != 0:
            pytest.skip("root, and chattr +i does not work here")
        undo = ["chattr", "-i", str(locked)]
    else:
        locked.chmod(0o555)
        undo = None
    try:
        yield locked
    finally:
        if undo:
            subprocess.run(undo, check=True)
        locked.chmod(0o755)


def test_a_directory_that_cannot_be_written_is_found_up_front(read_only_dir, capfd):
    """The file may be writable while its directory is not: the temporary file
    could then never be created, so the check must look at the directory."""
    target = read_only_dir / "metrics.json"
    with pytest.raises(ValueError, match="out must be in a directory that can be") as e:
        _io.check_writable(target, "out")
    assert str(read_only_dir) in str(e.value)
    argv = ["sweep", "--seeds", "0", "--steps", "2", "--no-progress"]
    assert main([*argv, "--out", str(target), "--overwrite"]) == 2  # before training
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "directory that can be written" in err
    assert target.read_text() == "{}"


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc")
def test_a_read_only_file_system_is_found_up_front():
    with pytest.raises(ValueError, match="directory that can be written"):
        _io.check_writable("/proc/rhn-metrics.json", "out")
    with pytest.raises(ValueError, match="out must be a directory that can be written"):
        train(TrainConfig(**TINY, steps=1, out="/proc/rhn-run"))


def test_a_failing_fill_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "keep.json"
    path.write_text("old")

    def half_then_fail(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        _io.atomic_write(path, half_then_fail)
    assert path.read_text() == "old" and sorted(tmp_path.iterdir()) == [path]


# --- killed at every write -------------------------------------------------------

# The child process below runs one scenario with rhn._io's file opener wrapped:
# the KILL_AT-th file it opens gets half of its first write, then the process
# kills itself with SIGKILL (no handler, no clean-up: as a power cut would).
_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from rhn import _io

    kill_at, opened = int(sys.argv[1]), [0]
    real_fdopen = _io._fdopen

    class Dying:
        def __init__(self, f):
            self.f = f
        def write(self, data):
            self.f.write(bytes(data)[: max(1, len(data) // 2)])
            self.f.flush()
            os.fsync(self.f.fileno())
            os.kill(os.getpid(), signal.SIGKILL)
        def __getattr__(self, name):
            return getattr(self.f, name)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return self.f.__exit__(*exc)

    def fdopen(fd):
        opened[0] += 1
        f = real_fdopen(fd)
        return Dying(f) if opened[0] == kill_at else f

    _io._fdopen = fdopen
    scenario = sys.argv[2]
    if scenario == "train":
        from rhn.train import TrainConfig, train
        config = TrainConfig(seq_len=6, hidden_size=8, depth=2, batch_size=16,
                             eval_samples=64, progress=False, device="cpu",
                             steps=8, eval_every=2, checkpoint_every=2, out=sys.argv[3])
        train(config, resume=sys.argv[3])
    elif scenario == "sweep":
        from rhn.experiments import sweep
        from rhn.train import TrainConfig
        base = TrainConfig(seq_len=6, hidden_size=8, steps=2, eval_every=2,
                           eval_samples=16, progress=False, device="cpu")
        sweep(base, {}, [0, 1], out=sys.argv[3], overwrite=True)
    elif scenario == "chorales":
        from rhn import chorales
        chorales.save(chorales.data._read(None), sys.argv[3])
    print("finished")
    """
)


def _run_child(kill_at, scenario, path):
    return subprocess.run(
        [sys.executable, "-c", _CHILD, str(kill_at), scenario, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"},
    )


def _kill_at_every_write(scenario, path, check):
    """Kill the child at its 1st, 2nd, ... write until it finishes; after each
    kill ``check`` must find whole files. Returns the number of writes."""
    for kill_at in range(1, 30):
        done = _run_child(kill_at, scenario, path)
        if done.returncode == 0:
            assert "finished" in done.stdout
            return kill_at - 1
        assert done.returncode == -signal.SIGKILL, done.stderr
        check(kill_at)
    raise AssertionError("the scenario never finished")


def test_a_run_killed_at_any_write_keeps_a_whole_checkpoint_and_record(tmp_path):
    out = tmp_path / "run"
    config = TrainConfig(
        **TINY, steps=4, eval_every=2, checkpoint_every=2, out=str(out)
    )
    train(config)  # a finished run of 4 steps, extended to 8 by the child
    seen_steps = set()

    def check(kill_at):
        state = load_checkpoint(out)  # never half a file
        record = json.loads((out / "metrics.json").read_text())
        marker = json.loads((out / "run.json").read_text())
        assert record["run"]["id"] == marker["run_id"] == state["run_id"]
        assert record["steps"] in (4, 8) and state["step"] in (4, 6, 8)
        seen_steps.add(state["step"])
        leftovers = [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
        assert len(leftovers) <= 1  # the one being written when killed; no data lost

    writes = _kill_at_every_write("train", out, check)
    # marker, checkpoints at 6 and 8, metrics; each killed write was retried
    # by the next child, which took over the dead process's lock
    assert writes == 4 and seen_steps >= {4, 6}
    # the same extension, never killed, in this process
    calm = tmp_path / "calm"
    train(dataclasses.replace(config, out=str(calm)))
    whole = train(dataclasses.replace(config, out=str(calm), steps=8), resume=calm)
    state = load_checkpoint(out)
    assert state["step"] == 8 and state["history"] == whole.history
    assert not (out / "run.lock").exists()


def test_a_sweep_killed_at_any_write_keeps_its_finished_runs(tmp_path):
    out = tmp_path / "sweep.json"

    def check(kill_at):
        if kill_at == 1:
            assert not out.exists()  # killed in its first write: nothing yet
        else:
            assert len(load_sweep(out, allow_incomplete=True)["runs"]) == kill_at - 1

    assert _kill_at_every_write("sweep", out, check) == 2
    assert len(load_sweep(out)["runs"]) == 2


def test_a_killed_chorales_save_keeps_the_previous_file(tmp_path):
    from rhn import chorales

    out = tmp_path / "chorales.npz"
    old = {"rolls": np.zeros((1, 46), np.uint8), "lengths": np.array([1])}
    chorales.save({**chorales.data._read(None), **old}, out)
    before = out.read_bytes()

    def check(kill_at):
        assert out.read_bytes() == before  # the previous file, whole

    assert _kill_at_every_write("chorales", out, check) == 1
    assert len(chorales.load("all", path=out)) == len(chorales.load("all"))


def test_checkpoint_written_through_a_symlinked_run_folder(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    train(TrainConfig(**TINY, steps=2, out=str(tmp_path / "alias")))
    assert (real / "checkpoint.pt").is_file() and (real / "metrics.json").is_file()
    assert torch.load(real / "checkpoint.pt", weights_only=True)["step"] == 2
