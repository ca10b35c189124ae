"""Your own data through the trainer (issue 22): a task defined outside the
package, and a plain tensor data set, get what the built-in tasks get."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from rhn.__main__ import main
from rhn.experiments import load_sweep, sweep
from rhn.owntasks import task_from_spec, tensor_task
from rhn.tasks import Task
from rhn.train import TrainConfig, TrainingInterrupted, load_checkpoint, train

ROOT = Path(__file__).resolve().parents[1]

# A user's module, written outside the package: a noisy sine to continue.
MODULE = textwrap.dedent(
    """
    import math
    import torch
    from rhn.tasks import Task

    def generate(num_samples, seq_len, *, seed=0, generator=None, device=None,
                 dtype=torch.float32):
        g = generator if generator is not None else torch.Generator().manual_seed(seed)
        phase = 2 * math.pi * torch.rand(num_samples, generator=g)
        t = torch.arange(seq_len + 1, dtype=torch.float64)[:, None]
        wave = torch.sin(0.3 * t + phase) + 0.1 * torch.randn(
            seq_len + 1, num_samples, generator=g, dtype=torch.float64)
        x = wave[:-1, :, None]
        return x.to(device, dtype), wave[-1].to(device, dtype)  # (T, B, 1), (B,)

    def make():
        return Task(name="sine", generate=generate, input_size=1, output_size=1,
                    loss="mse", readout="last", baseline=lambda seq_len: 0.51,
                    defaults={"seq_len": 12, "hidden_size": 8, "depth": 2,
                              "batch_size": 16, "eval_samples": 64})
    """
)
CLI = ["--steps", "6", "--eval-every", "3", "--device", "cpu", "--no-progress"]


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "mytask.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("mytask", None)


def test_a_task_defined_outside_the_package_trains_and_resumes_bit_for_bit(
    user_module, tmp_path
):
    task = task_from_spec("mytask:make")
    # on the CPU, where a resume is promised bit for bit (README); on a GPU the
    # trainer would pick CUDA
    config = TrainConfig.for_task(
        task, steps=8, eval_every=4, progress=False, device="cpu"
    )
    assert config.task is task and config.to_dict()["task"] == "sine"
    whole = train(config)
    out = tmp_path / "run"
    stopped = dataclasses_replace(config, out=str(out))
    with pytest.raises(TrainingInterrupted):  # Ctrl-C after step 3
        train(stopped, callback=ctrl_c_at(3))
    assert load_checkpoint(out)["step"] == 3
    resumed = train(stopped, resume=out)
    assert resumed.history == whole.history
    for p, q in zip(whole.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(p, q)
    record = json.loads((out / "metrics.json").read_text())
    assert record["task"] == "sine" and record["baseline"] == 0.51
    # early stopping, mixed precision and a sweep take it like any task
    patient = train(dataclasses_replace(config, patience=1, eval_every=1, steps=30))
    assert patient.metrics["best_step"] <= patient.metrics["steps"]
    amp = train(dataclasses_replace(config, amp=True))
    assert amp.history["train_loss"] != whole.history["train_loss"]  # bfloat16
    record = sweep(config, {"model": ["rhn", "gru"]}, [0], out=tmp_path / "s.json")
    assert [r["config"]["task"] for r in record["runs"]] == ["sine", "sine"]
    assert record["runs"][0]["history"] == whole.history  # the same run, seed 0


def ctrl_c_at(step):
    """A callback that sends this process SIGINT after ``step``, as Ctrl-C."""

    def callback(event):
        if event["step"] == step:
            os.kill(os.getpid(), signal.SIGINT)

    return callback


def dataclasses_replace(config, **changes):
    import dataclasses

    return dataclasses.replace(config, **changes)


def test_the_cli_trains_and_resumes_a_task_given_as_module_function(user_module):
    """In a fresh process, as a user would run it from their project folder."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    run = ["python", "-m", "rhn", "train", "--task", "mytask:make", *CLI]
    whole = subprocess.run(
        [sys.executable, *run[1:], "--out", "whole"],
        cwd=user_module,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert whole.returncode == 0, whole.stderr
    first = subprocess.run(
        [sys.executable, *run[1:], "--out", "part", "--steps", "3"],
        cwd=user_module,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert first.returncode == 0, first.stderr
    # extend the 3-step run to the 6 steps of the whole one: the schedule
    # differs (cosine over 3 steps), so compare with the API doing the same
    again = subprocess.run(
        [sys.executable, *run[1:], "--out", "part", "--resume", "part"],
        cwd=user_module,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    cli = json.loads((user_module / "part" / "metrics.json").read_text())
    task = task_from_spec("mytask:make")
    api_out = user_module / "api"
    config = TrainConfig.for_task(
        task, steps=3, eval_every=3, progress=False, device="cpu"
    )  # the device the CLI was given
    train(dataclasses_replace(config, out=str(api_out)))
    api = train(dataclasses_replace(config, out=str(api_out), steps=6), resume=api_out)
    assert cli["history"] == api.history
    assert cli["task"] == "sine" and len(cli["run"]["segments"]) == 2
    assert (
        json.loads((user_module / "whole" / "metrics.json").read_text())["steps"] == 6
    )


def test_cli_interrupt_prints_a_resume_command_with_the_task_spec(
    user_module, tmp_path, capsys, monkeypatch
):
    import rhn.train.run as run_mod

    real = run_mod._Run.train_step

    def interrupted_at_2(self):
        loss = real(self)
        if self.step == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return loss

    monkeypatch.setattr(run_mod._Run, "train_step", interrupted_at_2)
    out = tmp_path / "cli"
    args = ["train", "--task", "mytask:make", *CLI, "--out", str(out)]
    assert main(args) == 130
    command = capsys.readouterr().err.split("resume with: ")[1].strip()
    assert "--task mytask:make" in command
    monkeypatch.setattr(run_mod._Run, "train_step", real)
    assert main(command.split()[3:]) == 0
    assert json.loads((out / "metrics.json").read_text())["steps"] == 6


def test_a_sweep_from_the_cli_takes_the_task_spec(user_module, tmp_path):
    out = tmp_path / "s.json"
    argv = ["sweep", "--task", "mytask:make", *CLI, "--seeds", "0,1", "--out", str(out)]
    assert main(argv) == 0
    assert [r["config"]["task"] for r in load_sweep(out)["runs"]] == ["sine"] * 2


# --- a plain tensor data set ----------------------------------------------------


def _sum_data(n, seed, T=10):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(T, n, 2, generator=g)
    return x, x[:3, :, 0].sum(0)  # the sum of the first three values


def test_a_tensor_data_set_trains_with_held_out_splits_and_resumes(tmp_path):
    x, y = _sum_data(200, 0)
    task = tensor_task(x, y, valid=_sum_data(50, 1), test=_sum_data(50, 2), name="sum3")
    assert (task.loss, task.readout, task.held_out) == (
        "mse",
        "last",
        ("valid", "test"),
    )
    # the memoryless baseline: the training mean, scored on the test split
    mean = y.double().mean()
    expected = float(((_sum_data(50, 2)[1].double() - mean) ** 2).mean())
    assert task.baseline(0) == pytest.approx(expected, rel=1e-12)
    config = TrainConfig(task=task, hidden_size=16, depth=2, steps=200, eval_every=50)
    config = dataclasses_replace(config, progress=False, device="cpu", patience=2)
    whole = train(config)
    m = whole.metrics
    assert set(m) >= {"valid_loss", "test_loss", "best_step", "baseline"}
    assert m["test_loss"] < 0.5 * m["baseline"]  # it learned to use the past
    out = tmp_path / "run"
    part = dataclasses_replace(config, out=str(out))
    with pytest.raises(TrainingInterrupted):
        train(part, callback=ctrl_c_at(120))
    assert train(part, resume=out).history == whole.history


def test_a_tensor_classification_per_step(tmp_path):
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 3, (8, 40), generator=g)  # (T, N)
    x = torch.nn.functional.one_hot(labels, 3).float()
    task = tensor_task(x, labels)  # the last 20 % held out
    assert (task.loss, task.readout, task.output_size) == ("cross_entropy", "all", 3)
    counts = torch.bincount(labels[:, :32].reshape(-1), minlength=3).double() + 1
    logp = (counts / counts.sum()).log()
    assert task.baseline(0) == pytest.approx(float(-logp[labels[:, 32:]].mean()))
    config = TrainConfig(task=task, hidden_size=8, steps=4, eval_every=2)
    result = train(dataclasses_replace(config, progress=False, device="cpu"))
    assert result.history["eval_step"] == [2, 4]


def test_without_test_data_there_is_no_test_loss_not_a_copy_of_valid():
    x, y = _sum_data(100, 0)
    task = tensor_task(x, y, name="sum3")  # the last 20 % held out for validation
    assert task.held_out == ("valid", None)
    with pytest.raises(ValueError, match="split"):
        task.generate(1, split="test")
    # the baseline, with no test split, is scored on the validation split
    mean = y[:80].double().mean()
    expected = float(((y[80:].double() - mean) ** 2).mean())
    assert task.baseline(0) == pytest.approx(expected, rel=1e-12)
    config = TrainConfig(task=task, hidden_size=8, steps=4, eval_every=2)
    m = train(dataclasses_replace(config, progress=False, device="cpu")).metrics
    assert m["test_loss"] is None and m["valid_loss"] > 0
    assert "no test split" in m["test_loss_reason"]
    # the data and the fingerprint are those of the old default, test = valid,
    # so a run made before resumes
    old = tensor_task(x[:, :80], y[:80], valid=(x[:, 80:], y[80:]),
                      test=(x[:, 80:], y[80:]), name="sum3")  # fmt: skip
    assert old.fingerprint == task.fingerprint and old.held_out == ("valid", "test")


def test_test_fraction_holds_out_the_last_sequences_for_the_test(tmp_path):
    x, y = _sum_data(100, 0)
    task = tensor_task(x, y, valid_fraction=0.2, test_fraction=0.1, name="sum3")
    assert task.held_out == ("valid", "test")
    # in order: 70 to train, 20 to validate, the last 10 to test
    for split, part in (("valid", slice(70, 90)), ("test", slice(90, 100))):
        xs, ys = task.generate(1, split=split)
        assert torch.equal(xs, x[:, part]) and torch.equal(ys, y[part])
    same = tensor_task(x[:, :70], y[:70], valid=(x[:, 70:90], y[70:90]),
                       test=(x[:, 90:], y[90:]), name="sum3")  # fmt: skip
    assert same.fingerprint == task.fingerprint
    assert same.baseline(0) == task.baseline(0)
    config = TrainConfig(task=task, hidden_size=8, steps=4, eval_every=2)
    result = train(dataclasses_replace(config, progress=False, device="cpu"))
    m = result.metrics
    assert "test_loss_reason" not in m and m["test_loss"] != m["valid_loss"]
    with torch.no_grad():
        pred = result.model(x[:, 90:])
    expected = torch.nn.functional.mse_loss(pred.squeeze(-1), y[90:]).item()
    assert m["test_loss"] == pytest.approx(expected, rel=1e-5)
    # with a valid split given, test_fraction holds out of the training data
    task = tensor_task(x, y, valid=_sum_data(10, 1), test_fraction=0.25)
    assert torch.equal(task.generate(1, split="test")[0], x[:, 75:])


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"test_fraction": 0.1, "test": _sum_data(5, 1)}, "not both"),
        ({"test_fraction": -0.1}, "test_fraction must be in [0, 1)"),
        ({"test_fraction": 1.0}, "test_fraction must be in [0, 1)"),
        ({"test_fraction": 0.5, "valid_fraction": 0.5}, "with test_fraction=0.5"),
        ({"test_fraction": float("nan")}, "test_fraction must be finite"),
    ],
)
def test_test_fraction_refuses_with_one_line(kwargs, words):
    x, y = _sum_data(10, 0)
    with pytest.raises(ValueError) as info:
        tensor_task(x, y, **kwargs)
    assert words in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "args, error, words",
    [
        ((torch.zeros(5, 4), torch.zeros(4)), ValueError, "(T, N, I)"),
        ((torch.zeros(5, 4, 1), torch.zeros(3)), ValueError, "targets must have shape"),
        ((torch.zeros(5, 4, 1), torch.arange(4.0)), None, None),
        (
            (torch.zeros(5, 4, 1), torch.zeros(4), {"loss": "cross_entropy"}),
            TypeError,
            "class indices",
        ),
        ((torch.zeros(5, 1, 1), torch.zeros(1)), ValueError, "valid_fraction"),
        (
            (
                torch.zeros(5, 4, 1),
                torch.zeros(4),
                {"valid": (torch.zeros(5, 2, 3),) * 2},
            ),
            ValueError,
            "valid targets must have shape",
        ),
        (
            (torch.full((5, 4, 1), float("nan")), torch.zeros(4)),
            ValueError,
            "NaN",
        ),
    ],
)
def test_tensor_task_refuses_bad_data(args, error, words):
    kwargs = args[2] if len(args) > 2 else {}
    if error is None:
        assert isinstance(tensor_task(*args[:2], **kwargs), Task)
        return
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        tensor_task(*args[:2], **kwargs)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("nosuchmodule:make", "cannot import 'nosuchmodule'"),
        ("os:nosuchname", "has no 'nosuchname'"),
        ("os:getcwd", "expected a Python function returning an rhn.tasks.Task"),
        ("a:b:c", "module:function"),
        (":make", "module:function"),
    ],
)
def test_task_specs_that_cannot_work(spec, words):
    with pytest.raises((ValueError, TypeError), match=words):
        task_from_spec(spec)


def test_a_task_object_is_checked_when_made():
    good = {
        "name": "t",
        "generate": lambda *a, **k: None,
        "input_size": 1,
        "output_size": 1,
        "loss": "mse",
        "readout": "last",
        "baseline": lambda T: 1.0,
    }
    for field, value, words in [
        ("loss", "hinge", "Task.loss"),
        ("input_size", 0, "Task.input_size"),
        ("generate", 3, "Task.generate must be callable"),
        ("held_out", ("valid",), "Task.held_out"),
        ("name", "", "Task.name"),
    ]:
        with pytest.raises((ValueError, TypeError), match=words):
            Task(**{**good, field: value})
