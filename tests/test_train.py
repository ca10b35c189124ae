"""The training loop, its checkpoints and guards, and the command line."""

import json
import subprocess
import sys

import pytest
import torch

import rhn
from rhn import tasks
from rhn.__main__ import main
from rhn.train import (
    SequenceModel,
    TrainConfig,
    load_checkpoint,
    make_model,
    resolve_device,
    train,
)

TINY = {
    "seq_len": 6,
    "hidden_size": 16,
    "depth": 2,
    "transform_bias": 0.0,
    "lr": 2e-2,
    "batch_size": 32,
    "eval_samples": 256,
    "progress": False,
    "device": "cpu",
}


def tiny(task="adding", **overrides):
    return TrainConfig.for_task(task, **{**TINY, **overrides})


def test_a_tiny_run_lowers_the_loss():
    result = train(tiny(steps=200, eval_every=50))
    losses = result.history["test_loss"]
    assert result.history["eval_step"] == [50, 100, 150, 200]
    assert losses[-1] < 0.5 * losses[0]
    assert result.metrics["test_loss"] == losses[-1]
    assert result.metrics["test_loss"] < 0.2 * tasks.adding_baseline()
    assert result.metrics["baseline"] == tasks.adding_baseline()
    assert len(result.history["train_loss"]) == 200


@pytest.mark.parametrize("name", ["copy", "temporal_order"])
def test_classification_tasks_train(name):
    seq_len = 4 if name == "copy" else 10
    result = train(tiny(name, seq_len=seq_len, steps=3, eval_every=3))
    assert result.metrics["baseline"] == tasks.get_task(name).baseline(seq_len)
    assert 0 < result.metrics["test_loss"] < 10
    if name == "temporal_order":
        assert 0 <= result.metrics["test_accuracy"] <= 1


def test_same_seed_same_run_and_global_rng_untouched_by_data():
    a = train(tiny(steps=5, eval_every=5))
    b = train(tiny(steps=5, eval_every=5))
    c = train(tiny(steps=5, eval_every=5, seed=1))
    assert a.history == b.history
    assert a.history["train_loss"] != c.history["train_loss"]


def test_resume_equals_uninterrupted(tmp_path):
    config = tiny(steps=12, eval_every=4)
    full = train(config)

    def interrupt(event):
        return event["step"] == 6  # as if the run were stopped here

    first = tiny(steps=12, eval_every=4, out=str(tmp_path))
    part = train(first, callback=interrupt)
    assert part.history["step"][-1] == 6
    state = load_checkpoint(tmp_path / "checkpoint.pt")
    assert state["step"] == 6
    resumed = train(first, resume=tmp_path / "checkpoint.pt")
    assert resumed.history["step"] == list(range(1, 13))
    assert resumed.history["train_loss"] == full.history["train_loss"]
    # the early stop added an evaluation at step 6; the others are the same
    full_eval = dict(
        zip(full.history["eval_step"], full.history["test_loss"], strict=True)
    )
    for step, loss in zip(
        resumed.history["eval_step"], resumed.history["test_loss"], strict=True
    ):
        if step != 6:
            assert loss == full_eval[step]
    for p, q in zip(full.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(p, q)


def test_resume_refuses_a_different_config(tmp_path):
    train(tiny(steps=2, out=str(tmp_path)))
    with pytest.raises(ValueError, match="lr"):
        train(tiny(steps=2, lr=0.5), resume=tmp_path / "checkpoint.pt")


def test_nan_guard_names_the_step():
    def poison(event):
        if event["step"] == 3:
            with torch.no_grad():
                next(event["model"].parameters()).fill_(float("nan"))

    with pytest.raises(FloatingPointError, match="step 4"):
        train(tiny(steps=10), callback=poison)


def test_callback_sees_every_step_and_the_evaluations():
    events = []
    train(tiny(steps=6, eval_every=3), callback=events.append)
    assert [e["step"] for e in events] == [1, 2, 3, 4, 5, 6]
    assert [("test_loss" in e) for e in events] == [False, False, True] * 2


def test_stop_loss_stops_early():
    result = train(tiny(steps=50, eval_every=2, stop_loss=1e9))
    assert result.metrics["steps"] == 2


def test_sequence_model_shapes():
    core = rhn.RHN(3, 8, depth=2)
    x = torch.randn(7, 5, 3)  # (T, B, I)
    assert SequenceModel(core, 1)(x).shape == (5,)
    assert SequenceModel(core, 4)(x).shape == (5, 4)
    assert SequenceModel(core, 4, readout="all")(x).shape == (7, 5, 4)
    with pytest.raises(ValueError, match="readout"):
        SequenceModel(core, 4, readout="first")


@pytest.mark.parametrize("name", ["rnn", "lstm", "gru", "rhn", "dtrnn"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_sequence_model_steps_with_a_carried_state(name, batch_first):
    # one step at a time, carrying the returned state, gives what one call
    # over the whole sequence gives (float64: only round-off may differ)
    kw = {"depth": 2} if name in ("rhn", "dtrnn") else {}
    core = rhn.build_model(name, 3, 6, num_layers=2, **kw).double()
    model = SequenceModel(core, 4, readout="all", batch_first=batch_first)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(5, 2, 3, generator=gen, dtype=torch.float64)  # (T, B, I)
    if batch_first:
        x = x.transpose(0, 1)
    time = 1 if batch_first else 0
    whole, last = model(x, return_state=True)
    state, steps = None, []
    for x_t in x.split(1, dim=time):
        y_t, state = model(x_t, state, return_state=True)
        steps.append(y_t)
    torch.testing.assert_close(torch.cat(steps, dim=time), whole)
    torch.testing.assert_close(state, last)  # a tensor, or the LSTM's (h, c)
    # one sequence (T, I): a batch of 1 in the state, no batch axis in y
    one = x[:, 0] if not batch_first else x[0]
    y_one, s_one = model(one, return_state=True)
    y_half, s_half = model(one[:2], return_state=True)
    y_rest = model(one[2:], s_half)
    torch.testing.assert_close(torch.cat([y_half, y_rest]), y_one)
    with pytest.raises(TypeError, match="return_state must be True or False, got str"):
        model(x, return_state="yes")


def test_make_model_matches_a_parameter_budget():
    budget = 5000
    for name in ("rhn", "lstm", "rnn"):
        config = tiny(model=name, hidden_size=None, num_params=budget)
        model = make_model(config)
        assert abs(rhn.count_parameters(model.core) - budget) < 0.1 * budget
    assert make_model(tiny(model="rhn", depth=4)).core.depth == 4


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cuda", "mps", "cpu")
    with pytest.raises(ValueError, match="device"):
        resolve_device("tpu:9")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


@pytest.mark.parametrize(
    "overrides, error, words",
    [
        ({"task": "sorting"}, ValueError, ["task", "sorting"]),
        ({"model": "transformer"}, ValueError, ["model", "transformer"]),
        ({"steps": 0}, ValueError, ["steps", "0"]),
        ({"lr": -1.0}, ValueError, ["lr", "-1.0"]),
        ({"hidden_size": None}, ValueError, ["hidden_size", "num_params"]),
        ({"clip": -1.0}, ValueError, ["clip"]),
        ({"lr_schedule": "step"}, ValueError, ["lr_schedule", "cosine"]),
        ({"amp": "yes"}, TypeError, ["amp", "bool"]),
    ],
)
def test_config_errors(overrides, error, words):
    with pytest.raises(error) as info:
        TrainConfig(**overrides)
    for word in words:
        assert word in str(info.value)


def test_for_task_rejects_unknown_fields():
    with pytest.raises(TypeError, match="learning_rate"):
        TrainConfig.for_task("adding", learning_rate=0.1)


def test_cli_end_to_end(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "--task", "adding", "--seq-len", "6", "--model", "rhn"]
    args += ["--depth", "2", "--hidden-size", "8", "--steps", "20", "--seed", "0"]
    args += ["--eval-every", "10", "--eval-samples", "64", "--device", "cpu"]
    args += ["--out", str(out), "--no-progress"]
    assert main(args) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["baseline"] == pytest.approx(1 / 6)
    assert metrics["test_loss"] == metrics["history"]["test_loss"][-1]
    assert metrics["config"]["seq_len"] == 6 and metrics["steps"] == 20
    state = load_checkpoint(out / "checkpoint.pt")
    assert state["step"] == 20
    assert "test_loss" in capsys.readouterr().out
    # resuming a finished run changes nothing
    assert main([*args, "--resume", str(out / "checkpoint.pt")]) == 0
    again = json.loads((out / "metrics.json").read_text())
    assert again["history"]["train_loss"] == metrics["history"]["train_loss"]


def test_cli_errors(capsys):
    assert main(["train", "--steps", "0", "--no-progress"]) == 2
    assert "steps" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--model", "transformer"])
    with pytest.raises(SystemExit):
        main(["frobnicate"])


def test_python_m_rhn_help_lists_the_commands():
    done = subprocess.run(
        [sys.executable, "-m", "rhn", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert "train" in done.stdout and "bench" in done.stdout


def test_train_equals_a_plain_reference_loop():
    """train() computes exactly what a hand-written Adam loop computes."""
    import math

    import torch.nn.functional as F

    config = tiny(steps=9, eval_every=4, clip=0.5)
    result = train(config)

    task = tasks.get_task(config.task)
    torch.manual_seed(config.seed)
    model = make_model(config)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    batches = torch.Generator().manual_seed(2 * config.seed)
    x_test, y_test = task.generate(config.eval_samples, config.seq_len, seed=1)
    losses, test_losses = [], []
    for step in range(1, config.steps + 1):
        x, y = task.generate(config.batch_size, config.seq_len, generator=batches)
        loss = F.mse_loss(model(x).float(), y.float())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        opt.step()
        for group in opt.param_groups:  # the cosine schedule, from 1 to 1/10
            t = min(step, config.steps) / config.steps
            group["lr"] = config.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * t)))
        losses.append(loss.item())
        if step % config.eval_every == 0 or step == config.steps:
            with torch.no_grad():
                model.eval()
                test_losses.append(F.mse_loss(model(x_test), y_test).item())
                model.train()
    assert result.history["train_loss"] == losses
    assert result.history["eval_step"] == [4, 8, 9]
    assert result.history["test_loss"] == test_losses
    for p, q in zip(result.model.parameters(), model.parameters(), strict=True):
        assert torch.equal(p, q)
