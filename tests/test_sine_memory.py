"""rhn.tasks.sine_memory: long memory under noise (the chapter "When to use an RHN")."""

from __future__ import annotations

import math

import pytest
import torch

import rhn.results
from rhn import tasks


def test_shapes_classes_and_determinism():
    x, y = tasks.sine_memory(200, 40, seed=3)
    assert x.shape == (40, 200, 1) and x.dtype == torch.float32
    assert y.shape == (200,) and y.dtype == torch.int64
    assert set(y.tolist()) == {0, 1, 2, 3}
    x2, y2 = tasks.sine_memory(200, 40, seed=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    x3, _ = tasks.sine_memory(200, 40, seed=4)
    assert not torch.equal(x, x3)
    g = torch.Generator().manual_seed(3)
    assert torch.equal(tasks.sine_memory(200, 40, generator=g)[0], x)


def test_the_signal_is_the_sine_of_its_class_then_silence():
    """Without noise the first S steps are sin(2 pi (k+1) t / (2S)), the rest 0,
    computed here a second way, in float64."""
    S = 10
    x, y = tasks.sine_memory(64, 30, noise=0.0, seed=1, dtype=torch.float64)
    t = torch.arange(S, dtype=torch.float64)[:, None]
    expected = torch.sin(math.pi * (y[None].double() + 1) * t / S)  # (S, B)
    torch.testing.assert_close(x[:S, :, 0], expected)
    assert (x[S:] == 0).all()
    # random phases: the same frequency, a shifted start
    xp, yp = tasks.sine_memory(64, 30, noise=0.0, seed=1, random_phase=True)
    assert torch.equal(yp, y) and not torch.allclose(xp[:S], x[:S].float())
    assert (xp[S:] == 0).all()


def test_noise_has_its_standard_deviation_and_carries_no_class():
    x, y = tasks.sine_memory(4000, 60, noise=0.5, seed=0)
    tail = x[10:, :, 0]  # (50, B): pure noise
    assert tail.std().item() == pytest.approx(0.5, rel=0.02)
    means = torch.stack([tail[:, y == k].mean() for k in range(4)])
    assert means.abs().max().item() < 0.02


def test_baseline_and_the_nearest_mean_classifier():
    """ln K for a guess; and the class is readable from the first S steps: the
    nearest of the K noiseless sines is right in about 99.8 % of sequences."""
    assert tasks.sine_memory_baseline() == pytest.approx(math.log(4))
    assert tasks.sine_memory_baseline(6) == pytest.approx(math.log(6))
    x, y = tasks.sine_memory(5000, 10, seed=2, dtype=torch.float64)
    t = torch.arange(10, dtype=torch.float64)
    means = torch.stack([torch.sin(math.pi * (k + 1) * t / 10) for k in range(4)])
    guess = torch.cdist(x[:, :, 0].T, means).argmin(1)
    assert (guess == y).double().mean().item() > 0.99
    task = tasks.get_task("sine_memory")
    assert task.baseline(60) == pytest.approx(math.log(4))
    assert (task.input_size, task.output_size, task.readout) == (1, 4, "last")


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"num_samples": 0}, ValueError, ["num_samples", ">= 1", "0"]),
        ({"seq_len": 5}, ValueError, ["seq_len", ">= 10", "5"]),
        ({"seq_len": 20.0}, TypeError, ["seq_len", "float"]),
        ({"signal_len": 2}, ValueError, ["signal_len", ">= 3", "2"]),
        ({"num_classes": 10}, ValueError, ["num_classes", "signal_len", "10"]),
        ({"num_classes": 1}, ValueError, ["num_classes", ">= 2", "1"]),
        ({"noise": -0.1}, ValueError, ["noise", ">= 0", "-0.1"]),
        ({"noise": "a"}, TypeError, ["noise", "str"]),
        ({"random_phase": 1}, TypeError, ["random_phase", "bool"]),
        ({"seed": -1}, ValueError, ["seed", "-1"]),
        ({"dtype": torch.long}, TypeError, ["dtype", "floating"]),
    ],
)
def test_errors_name_the_argument(kwargs, error, words):
    args = {"num_samples": 4, "seq_len": 20, **kwargs}
    with pytest.raises(error) as info:
        tasks.sine_memory(**args)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    with pytest.raises(ValueError, match="num_classes"):
        tasks.sine_memory_baseline(1)


def test_trains_through_the_package_trainer():
    """The registered task runs through rhn.train and reports an accuracy."""
    from rhn.train import TrainConfig, train

    config = TrainConfig(
        task="sine_memory",
        seq_len=15,
        hidden_size=8,
        steps=3,
        eval_every=3,
        eval_samples=50,
        progress=False,
        device="cpu",
    )
    result = train(config)
    assert 0.0 <= result.history["test_accuracy"][-1] <= 1.0
    assert result.metrics["baseline"] == pytest.approx(math.log(4))


def test_a_study_record_grows_by_a_model_and_keeps_what_it_had():
    from rhn.studies import memory

    tiny = dict(lrs=(1e-2,), search_seeds=(9,), steps=2, eval_every=2, seq_len=12)
    first = memory.run([0], models={"GRU": ("gru", {})}, **tiny)
    more = memory.run([0], models={"RNN": ("rnn", {})}, **tiny)
    grown = memory.extend(first, more, note="why")
    assert list(grown["settings"]["models"]) == ["GRU", "RNN"]
    assert grown["runs"][:1] == first["runs"] and grown["runs"][1:] == more["runs"]
    assert grown["search"] == first["search"] + more["search"]
    assert grown["chosen_lr"] == {"GRU": 1e-2, "RNN": 1e-2}
    assert grown["extended"][0]["models"] == ["RNN"]
    assert grown["extended"][0]["note"] == "why"
    assert "extended" not in first  # the first record is not changed in place
    with pytest.raises(ValueError, match="more: repeats the models"):
        memory.extend(first, first, note="")
    longer = memory.run([0], models={"RNN": ("rnn", {})}, **{**tiny, "steps": 4})
    with pytest.raises(ValueError, match=r"other settings \(steps\)"):
        memory.extend(first, longer, note="")


def test_the_shipped_record_holds_the_carry_matched_lstm():
    record = rhn.results.load("sine_memory.json")
    (added,) = record["extended"]
    assert added["models"] == ["LSTM $b_f$=2.28"]
    runs = [r for r in record["runs"] if r["model"] == "LSTM $b_f$=2.28"]
    assert sorted(r["seed"] for r in runs) == record["settings"]["seeds"]
