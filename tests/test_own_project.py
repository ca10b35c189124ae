"""rhn in a project of your own: tensor_task's layouts, outputs and masks, the
documented config, one meaning of num_params, and the CSV logger."""

import csv
import dataclasses
import inspect
import json
import pydoc
import re

import pytest
import torch
from torch import nn

import rhn
from rhn import count_parameters
from rhn.owntasks import tensor_task
from rhn.train import (
    CSVLogger,
    Logger,
    SequenceModel,
    TrainConfig,
    make_model,
    train,
)

T, N = 12, 200


def _data(seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(T, N, 1, generator=g)  # (T, N, I)
    return x, x[..., 0]


def _quick(task, **kw):
    return TrainConfig(
        task=task,
        hidden_size=8,
        steps=kw.pop("steps", 6),
        eval_every=kw.pop("eval_every", 3),
        progress=False,
        device="cpu",
        **kw,
    )


def _first_loss_by_hand(config, reduce):
    """The loss of the first training batch at the initial weights, recomputed
    outside the trainer from the same seeds (weights: config.seed; batches:
    2 * config.seed)."""
    torch.manual_seed(config.seed)
    model = make_model(config)
    batch = config.task.generate(
        config.batch_size, generator=torch.Generator().manual_seed(2 * config.seed)
    )
    with torch.no_grad():
        return reduce(model(batch[0]), *batch[1:])


# -- tensor_task: batch_first, (N, K) targets, a mask, seq_len -------------------


def test_batch_first_data_is_the_same_task_as_time_first():
    x, y = _data()
    steps = x.cumsum(0)[..., 0]  # (T, N): one target per step
    for targets, bf_targets, readout in ((y[-1], y[-1], None), (steps, steps.T, "all")):
        time_first = tensor_task(x, targets)
        # (N, T) floats could also be K = T outputs per sequence: readout says
        batch_first = tensor_task(
            x.transpose(0, 1), bf_targets, batch_first=True, readout=readout
        )
        assert batch_first.fingerprint == time_first.fingerprint
        assert batch_first.readout == time_first.readout
        xb, yb = batch_first.generate(5, seed=3)
        xt, yt = time_first.generate(5, seed=3)
        assert xb.shape == (T, 5, 1)  # batches are time-first, as the models take
        torch.testing.assert_close((xb, yb), (xt, yt))
    # class labels per step cannot be K outputs: no readout needed
    labels = (steps > 0).long()
    task = tensor_task(x.transpose(0, 1), labels.T, batch_first=True)
    assert (task.readout, task.output_size) == ("all", 2)


def test_time_first_data_given_batch_first_is_refused_by_shape():
    x, y = _data()
    with pytest.raises(ValueError, match=r"targets must have shape \(N,\) = \(12,\)"):
        tensor_task(x, y[-1], batch_first=True)  # x read as N = 12 sequences


def test_targets_with_k_outputs_train_with_their_own_baseline():
    x, _ = _data()
    y = torch.stack([x[:3].sum(0)[:, 0], x[:2].sum(0)[:, 0], x[0, :, 0]], 1)
    task = tensor_task(x, y, name="k3")  # (N, K): three outputs per sequence
    assert (task.output_size, task.readout) == (3, "last")
    train_y, test_y = y[:160].double(), y[160:].double()  # the last 20 % held out
    expected = ((test_y - train_y.mean(0)) ** 2).mean()  # one mean per output
    assert task.baseline(0) == pytest.approx(float(expected), rel=1e-12)
    config = _quick(task)
    result = train(config)
    assert result.model(x[:, :4]).shape == (4, 3)
    by_hand = _first_loss_by_hand(config, lambda p, t: ((p - t) ** 2).mean())
    assert result.history["train_loss"][0] == pytest.approx(float(by_hand), rel=1e-5)
    # K = 1 is the same as no last axis
    assert tensor_task(x, y[:, :1]).fingerprint == tensor_task(x, y[:, 0]).fingerprint


def test_a_mask_leaves_warm_up_steps_out_of_loss_and_baseline():
    x, _ = _data()
    targets = x[..., 0] + x[..., 0].roll(1, 0)  # (T, N); step 0 has no past
    targets[0] = float("nan")  # a left-out target is never read
    mask = torch.arange(T) >= 1
    task = tensor_task(x, targets, mask=mask, name="sum2")
    xb, yb, mb = task.generate(7, seed=1)
    assert mb.shape == (T, 7) and not mb[0].any() and mb[1:].all()
    kept_train = targets[1:, :160].double()
    kept_test = targets[1:, 160:].double()
    expected = ((kept_test - kept_train.mean()) ** 2).mean()
    assert task.baseline(0) == pytest.approx(float(expected), rel=1e-12)
    config = _quick(task)
    result = train(config)
    assert all(map(torch.isfinite, map(torch.tensor, result.history["train_loss"])))

    def masked(p, t, m):
        return ((p - t) ** 2)[m].mean()

    by_hand = _first_loss_by_hand(config, masked)
    assert result.history["train_loss"][0] == pytest.approx(float(by_hand), rel=1e-5)
    # the held-out loss too counts only the kept steps
    model = result.model
    xv, yv, mv = task.generate(0, split="valid")
    with torch.no_grad():
        valid = ((model(xv) - yv) ** 2)[mv].mean()
    assert result.metrics["valid_loss"] == pytest.approx(float(valid), rel=1e-5)


def test_a_per_sequence_mask_for_classes_per_step():
    x, _ = _data()
    labels = (x[..., 0] > 0).long()  # (T, N)
    mask = torch.rand(T, N, generator=torch.Generator().manual_seed(1)) < 0.5
    task = tensor_task(x.transpose(0, 1), labels.T, mask=mask.T, batch_first=True)
    config = _quick(task)
    result = train(config)

    def masked(p, t, m):
        return nn.functional.cross_entropy(p[m], t[m])

    by_hand = _first_loss_by_hand(config, masked)
    assert result.history["train_loss"][0] == pytest.approx(float(by_hand), rel=1e-5)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"mask": torch.ones(T, dtype=torch.int64)}, TypeError, "mask must be a bool"),
        ({"mask": torch.ones(5, dtype=torch.bool)}, ValueError, "mask must have shape"),
        ({"mask": torch.zeros(T, dtype=torch.bool)}, ValueError, "False everywhere"),
        (
            {"targets": "last", "mask": torch.ones(T, dtype=torch.bool)},
            ValueError,
            "mask is for targets per step",
        ),
        (
            {"mask": torch.ones(T, N, dtype=torch.bool), "valid": "no mask"},
            ValueError,
            "needs its own",
        ),
        ({"targets": "square"}, ValueError, "pass readout="),
        ({"targets": "k classes"}, ValueError, "regression"),
        ({"targets": "nan kept"}, ValueError, "NaN"),
        ({"batch_first": "yes"}, TypeError, "batch_first must be a bool"),
        ({"defaults": {"seq_len": 5}}, ValueError, "seq_len is the data's length"),
    ],
)
def test_tensor_task_refuses_with_one_line_naming_the_argument(kwargs, error, words):
    x, y = _data()
    targets = {
        "last": y[-1],
        "square": torch.randn(T, T),
        "k classes": torch.zeros(N, 3, dtype=torch.long),
        "nan kept": torch.full((T, N), float("nan")),
    }.get(kwargs.pop("targets", None), x.cumsum(0)[..., 0])
    if kwargs.get("valid") == "no mask":
        kwargs["valid"] = (x, x.cumsum(0)[..., 0])
    if targets.shape == (T, T):  # (T, N) or (N, K) with T = N = K
        x = torch.randn(T, T, 1)
    with pytest.raises(error, match=words) as caught:
        tensor_task(x, targets, **kwargs)
    assert "\n" not in str(caught.value)


def test_seq_len_is_the_data_length_and_another_is_refused():
    x, y = _data()
    task = tensor_task(x, y[-1], name="ends")
    assert TrainConfig(task=task).seq_len == T  # no longer 100, silently
    with pytest.raises(ValueError, match=r"seq_len: task 'ends' holds .* T = 12"):
        train(_quick(task, seq_len=T + 1))


# -- help(): the config's fields and the models' forward ------------------------


def _documented_fields(cls):
    doc = inspect.getdoc(cls)
    section = doc.split("Attributes:\n", 1)[1]
    return dict(re.findall(r"^    (\w+): (\S.*)$", section, re.M))


def test_every_trainconfig_field_is_documented_in_help():
    documented = _documented_fields(TrainConfig)
    fields = [f.name for f in dataclasses.fields(TrainConfig)]
    assert sorted(documented) == sorted(fields)  # a new field needs its meaning
    shown = pydoc.render_doc(TrainConfig, renderer=pydoc.plaintext)
    for name, meaning in documented.items():
        assert f"{name}: {meaning}" in shown


MODULES = [
    getattr(rhn, name)
    for name in rhn.__all__
    if isinstance(getattr(rhn, name), type)
    and issubclass(getattr(rhn, name), nn.Module)
] + [SequenceModel]


@pytest.mark.parametrize("cls", MODULES, ids=lambda c: c.__name__)
def test_help_of_forward_is_the_models_own(cls):
    shown = pydoc.render_doc(cls.forward, renderer=pydoc.plaintext)
    assert "Should be overridden" not in shown
    assert "shape" in inspect.getdoc(cls.forward) or "(" in inspect.getdoc(cls.forward)


# -- num_params: one meaning -----------------------------------------------------


def test_num_params_in_the_metrics_means_what_the_config_budgets():
    config = TrainConfig(
        hidden_size=None,
        num_params=500,
        steps=2,
        eval_every=2,
        seq_len=5,
        eval_samples=8,
        progress=False,
        device="cpu",
    )
    m = train(config).metrics
    core = rhn.RHN(2, m["hidden_size"])
    assert m["num_params"] == count_parameters(core)
    assert abs(m["num_params"] - 500) < 0.2 * 500
    assert m["num_params_total"] == m["num_params"] + m["hidden_size"] + 1


# -- the CSV logger --------------------------------------------------------------


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_csv_log_appends_on_resume_and_keeps_every_row(tmp_path):
    out, log = tmp_path / "run", tmp_path / "run" / "log.csv"
    config = dataclasses.replace(
        _quick("adding", steps=30, eval_every=10, seq_len=10),
        out=str(out),
        log_csv=str(log),
        checkpoint_every=10,
    )

    class Down(BaseException):  # the machine went down: no handler runs
        pass

    def crash(event):
        if event["step"] == 15:
            raise Down

    with pytest.raises(Down):
        train(config, callback=crash)  # rows 1-15 written, checkpoint at 10
    assert [r["step"] for r in _rows(log)] == [str(s) for s in range(1, 16)]
    whole = train(dataclasses.replace(config, out=None, log_csv=None))
    train(config, resume=out)
    rows = _rows(log)
    assert list(rows[0]) == [
        "segment",
        "step",
        "train_loss",
        "lr",
        "test_loss",
        "seconds",
        "run",
    ]
    run_id = json.loads((out / "run.json").read_text())["run_id"]
    assert {r["run"] for r in rows} == {run_id}  # every row names its run
    # rows 11-15, trained again, moved next to the log: none lost, none twice
    (side,) = out.glob("log.csv.superseded-*.csv")
    assert [int(r["step"]) for r in _rows(side)] == list(range(11, 16))
    assert [int(r["step"]) for r in rows] == list(range(1, 31))
    first = [r for r in rows + _rows(side) if r["segment"] == "0"]
    again = [r for r in rows if r["segment"] == "1"]
    assert sorted(int(r["step"]) for r in first) == list(range(1, 16))  # none lost
    assert [int(r["step"]) for r in again] == list(range(11, 31))
    # the resumed call trains exactly what one uninterrupted run trains
    assert [float(r["train_loss"]) for r in first[:10] + again] == whole.history[
        "train_loss"
    ]
    evals = [(int(r["step"]), float(r["test_loss"])) for r in again if r["test_loss"]]
    assert evals == list(
        zip(whole.history["eval_step"][1:], whole.history["test_loss"][1:], strict=True)
    )


def test_csv_log_of_another_run_is_refused_before_any_work(tmp_path):
    log = tmp_path / "log.csv"
    config = dataclasses.replace(_quick("adding", seq_len=10), log_csv=str(log))
    train(config)
    before = log.read_text()
    with pytest.raises(ValueError, match="already holds rows of a run"):
        train(dataclasses.replace(config, out=str(tmp_path / "run")))
    assert log.read_text() == before and not (tmp_path / "run").exists()
    # without out, overwrite replaces no run, so it never empties a log with
    # rows (they may be a run's that is resumed later): the file is deleted
    with pytest.raises(ValueError, match="overwrite without out replaces no run"):
        train(config, overwrite=True)
    assert log.read_text() == before
    log.unlink()
    train(config)
    assert len(_rows(log)) == config.steps


def test_the_cli_logs_and_a_bare_resume_keeps_logging(tmp_path, monkeypatch):
    from rhn.__main__ import main

    monkeypatch.chdir(tmp_path)
    common = [
        "--seq-len",
        "8",
        "--hidden-size",
        "8",
        "--eval-every",
        "2",
        "--no-progress",
        "--device",
        "cpu",
    ]
    assert (
        main(["train", *common, "--steps", "4", "--out", "r", "--log-csv", "r/log.csv"])
        == 0
    )
    assert main(["train", "--resume", "r", "--steps", "6"]) == 0
    rows = _rows(tmp_path / "r" / "log.csv")
    assert [(r["segment"], r["step"]) for r in rows] == [
        ("0", "1"),
        ("0", "2"),
        ("0", "3"),
        ("0", "4"),
        ("1", "5"),
        ("1", "6"),
    ]


def test_own_loggers_get_every_row_and_bad_ones_are_refused():
    class Keep(Logger):
        def __init__(self):
            self.rows, self.closed = [], False

        def log(self, row):
            self.rows.append(row)

        def close(self):
            self.closed = True

    keep = Keep()
    result = train(_quick("adding", seq_len=10), loggers=[keep])
    assert [r["step"] for r in keep.rows] == result.history["step"] and keep.closed
    assert [r["train_loss"] for r in keep.rows] == result.history["train_loss"]
    for bad, words in ((keep, "list of rhn.train.Logger"), ([print], r"loggers\[0\]")):
        with pytest.raises(TypeError, match=words):
            train(_quick("adding", seq_len=10), loggers=bad)
    with pytest.raises(TypeError, match="path must be a file path"):
        CSVLogger(3)
