"""Hostile round 15, the cases left open by the session that found them.

Each test fails on the code before its fix: two ``train`` calls in threads
mixed their random numbers; a callback's ``os.chdir`` split a run in two
folders; time-first loader batches of ``(B, K)`` targets became per-step
targets of other sequences; a resume with fewer steps than its schedule was
recorded as a shorter run than the one it trained; two parameter budgets of
one hidden size made two "settings" of one run; data that overflow (or
vanish in) float32 were accepted; an own task with held-out splits could
draw its training batches from Python's ``random``.
"""

import os
import random
import threading

import pytest
import torch
from tiny_runs import tiny

from rhn.owntasks import loader_task, tensor_task
from rhn.tasks import Task
from rhn.train import train


def test_a_second_thread_cannot_train_while_one_does():
    """C49: the two runs shared torch's global generator and timing decided
    their numbers; now the second is refused in one line."""
    started, release = threading.Event(), threading.Event()

    def hold(event):
        started.set()
        release.wait(timeout=30)

    errors = []

    def first():
        train(tiny(steps=2), callback=hold)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert started.wait(timeout=60)
        with pytest.raises(RuntimeError, match="already running in another thread"):
            train(tiny(steps=2))
    except BaseException as err:  # noqa: BLE001 (reported after the join)
        errors.append(err)
    finally:
        release.set()
        thread.join(timeout=60)
    if errors:
        raise errors[0]
    train(tiny(steps=2))  # and once the first is done, a run goes ahead


def test_a_callback_in_the_same_thread_may_train_again():
    inner = []

    def nested(event):
        if event["step"] == 1 and not inner:
            inner.append(train(tiny(steps=1)).metrics["steps"])

    train(tiny(steps=2), callback=nested)
    assert inner == [1]


def test_a_callback_that_changes_directory_does_not_split_the_run(
    tmp_path, monkeypatch
):
    """C64: out was read relative to the working directory at every save."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()

    def wander(event):
        if event["step"] == 2:
            os.chdir(tmp_path / "elsewhere")

    result = train(tiny(steps=4, out="run", checkpoint_every=1), callback=wander)
    assert result.metrics["steps"] == 4
    assert (tmp_path / "run" / "metrics.json").is_file()
    assert not (tmp_path / "run" / "run.lock").exists()
    assert not (tmp_path / "elsewhere" / "run").exists()


def _time_first(T, B, K, batches=3):
    """Loader batches (T, B, 1) of sequences whose inputs are their number n
    and whose K targets are 10 n, 10 n + 1, ...: a mix-up shows."""
    out = []
    for i in range(batches):
        n = torch.arange(B, dtype=torch.float32) + B * i
        x = n.view(1, B, 1).expand(T, B, 1).clone()
        y = 10 * n.view(B, 1) + torch.arange(K, dtype=torch.float32)
        out.append((x, y))
    return out


def test_time_first_loader_targets_that_could_be_either_are_refused():
    """C44: (T, B, I) inputs with (B, K) targets and T = B = K were read as
    one target per step, concatenated across sequences."""
    with pytest.raises(ValueError, match="pass readout='all' or readout='last'"):
        loader_task(_time_first(4, 4, 4), batch_first=False)


def test_time_first_loader_targets_follow_the_readout_given():
    task = loader_task(_time_first(4, 4, 4), batch_first=False, readout="last")
    assert (task.readout, task.output_size) == ("last", 4)
    x, y = task.generate(64, seed=0)[:2]
    assert y.shape == (64, 4)
    n = x[0, :, 0]  # each drawn sequence's number
    torch.testing.assert_close(y, 10 * n[:, None] + torch.arange(4.0))
    per_step = loader_task(_time_first(4, 4, 4), batch_first=False, readout="all")
    assert per_step.readout == "all"


def test_time_first_loader_targets_per_sequence_are_kept_when_clear():
    task = loader_task(_time_first(5, 4, 3), batch_first=False)
    assert (task.readout, task.output_size) == ("last", 3)


def test_a_resume_below_the_schedules_length_is_refused(tmp_path):
    """C15: the run followed its first start's cosine schedule while the
    record named the shorter run."""
    out = tmp_path / "run"
    config = tiny(steps=6, eval_every=3, out=str(out))
    stop = {"at": 3}
    train(config, callback=lambda e: e["step"] >= stop["at"])
    with pytest.raises(ValueError, match="below the 6 steps of the run's cosine"):
        train(tiny(steps=4, eval_every=3, out=str(out)), resume=out)
    longer = train(tiny(steps=9, eval_every=3, out=str(out)), resume=out)
    assert longer.metrics["steps"] == 9
    constant = tmp_path / "constant"
    config = tiny(steps=6, eval_every=3, out=str(constant), lr_schedule="constant")
    train(config, callback=lambda e: e["step"] >= 3)
    shorter = tiny(steps=4, eval_every=3, out=str(constant), lr_schedule="constant")
    assert train(shorter, resume=constant).metrics["steps"] == 4


def test_a_resume_hint_does_not_send_the_command_line_to_itself(tmp_path):
    """C14: the hint told a user of --resume to use --resume."""
    out = tmp_path / "run"
    train(tiny(steps=2, out=str(out)))
    with pytest.raises(ValueError) as caught:
        train(tiny(steps=2, seq_len=7, out=str(out)), resume=out)
    assert "leave them off the command line" in str(caught.value)


def test_two_parameter_budgets_of_one_hidden_size_are_one_run(tmp_path):
    """C55: num_params 100 and 101 both gave hidden size 4: two "settings"."""
    from rhn.experiments import sweep

    base = tiny(hidden_size=None, num_params=100)
    with pytest.raises(ValueError, match="make the same run"):
        sweep(base, {"num_params": [100, 101]}, [0])


@pytest.mark.parametrize(
    "scale_x, scale_y, words",
    [
        (1e39, 1.0, "inputs overflow float32"),
        (1.0, 1e39, "targets overflow float32"),
        (1.0, 1e-50, "targets must vary in float32"),
    ],
)
def test_data_beyond_float32_are_refused_when_the_task_is_made(scale_x, scale_y, words):
    """C41, C42: finite in float64, infinite or constant in the float32 the
    run trains in; the error came at the first step and named no cause."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(20, 5, 1, generator=g, dtype=torch.float64) * scale_x
    y = torch.randn(20, generator=g, dtype=torch.float64) * scale_y
    with pytest.raises(ValueError, match=words):
        tensor_task(x, y, batch_first=True)
    tensor_task(x / scale_x, y / scale_y, batch_first=True)  # in range: fine


def _python_random_task():
    g = torch.Generator().manual_seed(123)
    X = torch.randn(5, 300, 1, generator=g)
    Y = X.sum(0).squeeze(-1)

    def generate(
        n, T=None, *, seed=0, generator=None, device=None, dtype=None, split="train"
    ):  # noqa: E501
        if split == "train":  # ignores its generator: Python's random
            index = torch.tensor([random.randrange(0, 200) for _ in range(n)])
            return X[:, index], Y[index]
        return X[:, 200:], Y[200:]

    return Task(
        name="pyrand",
        generate=generate,
        input_size=1,
        output_size=1,
        loss="mse",
        readout="last",
        baseline=lambda T: float(Y[200:].var()),
        held_out=("valid", None),
    )


def test_an_own_task_with_splits_must_draw_batches_from_its_generator():
    """C60: the check of where batches come from skipped every task with
    held-out splits; two runs of one seed differed and neither resumed."""
    config = tiny(task=_python_random_task(), seq_len=5)
    with pytest.raises(ValueError, match="must draw every random number"):
        train(config)
