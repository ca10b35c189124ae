"""Hostile round 3 (issue 32): nothing lost, no silent wrong result, one line.

Each test is a case a hostile user tried: a resume that would move a run's
folder back, two sweeps into one file, names and paths too long, a full disk,
``--overwrite`` over a folder it cannot write, lock takeovers interleaved, a
restarted container, own tasks that misbehave, and non-finite records.
"""

import errno
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import pytest
import torch

from rhn import experiments
from rhn.__main__ import main
from rhn.experiments import sweep
from rhn.owntasks import tensor_task
from rhn.tasks import Task, get_task
from rhn.train import TrainConfig, load_checkpoint, load_model, records, train

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


# --- own tasks: silent wrong results ----------------------------------------------


def sine_task(name="sine", shape=lambda y: y, scale=1.0, baseline=0.5):
    def generate(
        num_samples,
        seq_len,
        *,
        seed=0,
        generator=None,
        device=None,
        dtype=torch.float32,
        **_,
    ):
        g = generator if generator is not None else torch.Generator().manual_seed(seed)
        x = torch.randn(seq_len, num_samples, 1, generator=g)
        return x.to(device, dtype), shape(scale * x[-1, :, 0]).to(device, dtype)

    return Task(
        name=name,
        generate=generate,
        input_size=1,
        output_size=1,
        loss="mse",
        readout="last",
        baseline=lambda seq_len: baseline,
    )


def own(task, **overrides):
    return TrainConfig(task=task, **{**TINY, **overrides})


def test_own_targets_that_would_broadcast_in_the_loss_are_refused():
    task = sine_task(shape=lambda y: y[:, None])  # (B, 1) instead of (B,)
    with pytest.raises(
        ValueError, match=r"targets have shape \(16, 1\), expected \(16,\)"
    ):
        train(own(task, steps=2))


@pytest.mark.parametrize(
    "make_other",
    [
        lambda: sine_task(scale=3.0),  # a generated task: same name, other numbers
        None,  # a tensor data set: same default name "tensors", other data
    ],
)
def test_a_resume_on_other_data_of_the_same_name_is_refused(tmp_path, make_other):
    if make_other is None:
        g = torch.Generator().manual_seed(0)
        x = torch.randn(6, 40, 1, generator=g)
        task, other = tensor_task(x, x[-1, :, 0]), tensor_task(x, 2 * x[-1, :, 0])
        assert task.name == other.name == "tensors"
    else:
        task, other = sine_task(), make_other()
    out = tmp_path / "run"
    train(own(task, steps=2, out=str(out)))
    with pytest.raises(ValueError, match="task_fingerprint.*other data"):
        train(own(other, steps=4, out=str(out)), resume=out)
    # the same data resumes, and the record keeps its fingerprint
    assert train(own(task, steps=4, out=str(out)), resume=out).metrics["steps"] == 4
    config = json.loads((out / "metrics.json").read_text())["config"]
    assert config["task_fingerprint"] == own(task).to_dict()["task_fingerprint"]


def test_a_resumed_sweep_records_the_torch_that_trained_each_run(tmp_path, monkeypatch):
    out = tmp_path / "s.json"
    real = experiments.train
    calls = []

    def stop_at_second(config, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(config, **kwargs)

    monkeypatch.setattr(experiments, "train", stop_at_second)
    with pytest.raises(KeyboardInterrupt):
        sweep(tiny(steps=2), {}, [0, 1], out=out)
    monkeypatch.setattr(experiments, "train", real)
    monkeypatch.setattr(torch, "__version__", "9.9.9")  # upgraded in between
    record = sweep(tiny(steps=2), {}, [0, 1], out=out, resume=True)
    versions = [run["environment"]["torch_version"] for run in record["runs"]]
    assert versions[0] != "9.9.9" and versions[1] == "9.9.9"


def strict_load(path):
    def refuse(word):
        raise ValueError(f"not strict JSON: {word}")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_non_finite_numbers_are_written_as_null_with_the_reason(tmp_path, monkeypatch):
    from rhn.train import run as run_module

    monkeypatch.setattr(
        run_module, "evaluate", lambda *a, **k: {"test_loss": float("inf")}
    )
    out = tmp_path / "run"
    result = train(tiny(steps=2, out=str(out)))
    assert result.metrics["test_loss"] == float("inf")  # in Python, as computed
    record = strict_load(out / "metrics.json")
    assert record["test_loss"] is None and record["diverged"] is True
    assert record["non_finite"]["test_loss"] == "inf"
    assert record["non_finite"]["history.test_loss[0]"] == "inf"
    sweep(tiny(steps=2), {}, [0], out=tmp_path / "s.json")
    runs = strict_load(tmp_path / "s.json")
    assert runs["runs"][0]["metrics"]["test_loss"] is None
    assert runs["non_finite"]["runs[0].metrics.test_loss"] == "inf"


# --- --task runs only a function that returns a Task --------------------------------

BAD_MODULES = {
    "broken.py": "def make(:\n",
    "raises.py": "def make():\n    raise RuntimeError('no data here')\n",
    "exits.py": "import sys\nsys.exit(3)\n",
    "notask.py": "def make():\n    return 42\n",
    "needs.py": "def make(path):\n    return None\n",
}


@pytest.mark.parametrize(
    "spec, words",
    [
        ("sys:exit", "expected a Python function returning an rhn.tasks.Task"),
        ("os:fork", "expected a Python function"),
        ("rhn.__main__:main", "expected a Python function"),
        ("rhn._cli:one_line", "expected a Python function"),
        ("collections:OrderedDict", "expected a Python function"),
        ("broken:make", "syntax error"),
        ("raises:make", "calling make\\(\\) raised RuntimeError: no data here"),
        ("exits:make", "importing 'exits' raised SystemExit"),
        ("notask:make", "to return an rhn.tasks.Task, got a int"),
        ("needs:make", "needs the argument 'path'"),
    ],
)
def test_task_runs_only_a_function_that_returns_a_task(
    tmp_path, monkeypatch, capsys, spec, words
):
    for name, text in BAD_MODULES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        code = main(["train", "--task", spec, *CLI_TINY, "--out", str(tmp_path / "r")])
    finally:
        for name in BAD_MODULES:
            sys.modules.pop(name[:-3], None)
    assert code == 2
    err = one_error_line(capsys)
    assert f"--task {spec}" in err
    assert re.search(words, err), err
    assert not (tmp_path / "r" / "checkpoint.pt").exists()


def test_task_help_says_it_imports_and_calls_the_function(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "imports the module" in " ".join(capsys.readouterr().out.split())


# --- one line, naming the option or the task ---------------------------------------


def test_nan_targets_name_the_task_not_its_repr():
    task = sine_task(shape=lambda y: y * float("nan"))
    with pytest.raises(ValueError) as err:
        train(own(task, steps=2))
    assert "task 'sine'" in str(err.value) and "NaN or infinite targets" in str(
        err.value
    )
    assert "Task(" not in str(err.value) and "\n" not in str(err.value)


def test_constant_targets(capsys):
    x = torch.randn(5, 30, 1)
    with pytest.raises(
        ValueError, match="targets must vary, got every target equal to 2"
    ):
        tensor_task(x, torch.full((30,), 2.0))
    # a task of one's own whose baseline is 0: a run, no ZeroDivisionError
    result = train(own(sine_task(baseline=0.0), steps=2))
    assert result.metrics["diverged"] is False


def test_the_progress_bar_names_an_own_task_by_its_name(capsys):
    train(own(sine_task(), steps=2, progress=True))
    err = capsys.readouterr().err
    assert "rhn on sine" in err and "Task(" not in err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--eval-samples", str(10**10)], "eval_samples must fit in memory"),
        (["--weight-decay", "1e308"], "weight_decay must be at most"),
    ],
)
def test_sizes_and_numbers_that_cannot_work_are_one_line(tmp_path, capsys, argv, words):
    code = main(["train", *CLI_TINY, *argv, "--out", str(tmp_path / "r")])
    assert code == 2
    assert words in one_error_line(capsys)


# --- damaged checkpoints ------------------------------------------------------------


def _damage_optimizer(state):
    moments = state["optimizer"]["state"][0]
    moments["exp_avg"] = torch.zeros(3, 3)


def _damage_scheduler(state):
    del state["scheduler"]["lr_lambdas"]


@pytest.mark.parametrize(
    "damage, words",
    [
        (_damage_optimizer, "optimizer state cannot be restored"),
        (lambda s: s.update(torch_rng=torch.zeros(3)), "random state"),
        (lambda s: s.update(batch_generator="x"), "batch generator state"),
        (_damage_scheduler, "scheduler state.*lr_lambdas"),
        (lambda s: s.update(step="forty"), "damaged"),
        (lambda s: s.update(history=None), "its history"),
    ],
)
def test_a_damaged_checkpoint_is_one_line_naming_the_file(
    tmp_path, capsys, damage, words
):
    out = tmp_path / "run"
    assert main(["train", *CLI_TINY, "--steps", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    state = torch.load(out / "checkpoint.pt", weights_only=True)
    damage(state)
    bad = tmp_path / "bad.pt"
    torch.save(state, bad)
    code = main(
        [
            "train",
            *CLI_TINY,
            "--steps",
            "4",
            "--resume",
            str(bad),
            "--out",
            str(tmp_path / "other"),
        ]
    )
    assert code == 2
    err = one_error_line(capsys)
    assert re.search(words, err), err
    assert "resume" in err


# --- your own project ---------------------------------------------------------------


def test_load_model_returns_the_trained_model_ready_for_inference(tmp_path):
    out = tmp_path / "run"
    result = train(tiny(steps=4, out=str(out)))
    model = load_model(out)
    assert not model.training
    x, _ = get_task("adding").generate(5, 6, seed=3)
    with torch.no_grad():
        torch.testing.assert_close(model(x), result.model(x))
    # an own task: by object (its data checked) or not at all (the checkpoint
    # keeps the sizes; tests/test_load_back.py)
    g = torch.Generator().manual_seed(0)
    xs = torch.randn(6, 40, 1, generator=g)
    task = tensor_task(xs, xs.sum(0)[:, 0], name="sum")
    own_out = tmp_path / "own"
    trained = train(own(task, steps=4, out=str(own_out))).model
    torch.testing.assert_close(load_model(own_out, task)(xs), trained(xs))
    torch.testing.assert_close(load_model(own_out)(xs), trained(xs))
    other = tensor_task(xs, 2 * xs.sum(0)[:, 0], name="sum")
    with pytest.raises(ValueError, match="other data"):
        load_model(own_out, other)


def test_load_model_of_a_patient_run_gives_the_best_weights(tmp_path):
    out = tmp_path / "run"
    result = train(tiny(steps=8, eval_every=1, patience=2, out=str(out)))
    x, _ = get_task("adding").generate(5, 6, seed=3)
    with torch.no_grad():
        torch.testing.assert_close(load_model(out)(x), result.model(x))


def test_forget_bias_with_an_rhn_is_refused():
    with pytest.raises(ValueError, match="forget_bias is an LSTM setting.*'rhn'"):
        TrainConfig(model="rhn", forget_bias=1.0)
    assert TrainConfig(model="lstm", forget_bias=1.0).forget_bias == 1.0


def test_resume_of_a_directory_alone_continues_with_the_recorded_options(
    tmp_path, capsys
):
    out = tmp_path / "run"
    argv = ["train", "--task", "temporal_order", *CLI_TINY, "--num-params", "300"]
    argv = [a for a in argv if a not in ("--hidden-size", "8")]
    argv[argv.index("--seq-len") + 1] = "10"
    assert main([*argv, "--steps", "2", "--eval-every", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", str(out), "--steps", "4"]) == 0
    record = json.loads((out / "metrics.json").read_text())
    assert record["steps"] == 4 and record["task"] == "temporal_order"
    assert record["config"]["num_params"] == 300
    # an option given that would change the numbers is still refused
    assert main(["train", "--resume", str(out), "--steps", "6", "--lr", "0.1"]) == 2
    assert "lr: 0.005 -> 0.1" in one_error_line(capsys)
