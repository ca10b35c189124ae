"""Bach chorales: the shipped file, the loader, the loss, the baseline, audio."""

import math

import numpy as np
import pytest
import torch

from rhn import chorales


@pytest.fixture(scope="module")
def splits():
    return {s: chorales.load(s) for s in (*chorales.SPLITS, "all")}


def test_shipped_data_facts(splits):
    train, valid, test, full = (splits[s] for s in ("train", "valid", "test", "all"))
    assert (len(train), len(valid), len(test)) == (210, 69, 69)
    assert len(full) == 348
    # the splits are disjoint and cover every chorale
    names = [set(s.names) for s in (train, valid, test)]
    assert set.union(*names) == set(full.names) and sum(map(len, names)) == 348
    # every Riemenschneider number 1..371 belongs to exactly one chorale
    numbers = sorted(n for ns in full.riemenschneider for n in ns)
    assert numbers == list(range(1, 372))
    assert full.num_pitches == chorales.HIGHEST - chorales.LOWEST + 1 == 46
    for r in full.rolls:
        assert r.dtype == torch.float32 and set(r.unique().tolist()) <= {0.0, 1.0}
    # the range is the one that occurs: both end columns are used
    used = torch.cat(full.rolls).amax(0)
    assert used[0] == 1 and used[-1] == 1
    # four voices sound at most 4 pitches per frame (5 in the one 5-voice chorale)
    per_frame = torch.cat(full.rolls).sum(1)
    assert per_frame.max() <= 5 and (per_frame == 4).float().mean() > 0.8
    # no two chorales are the same music
    keys = {tuple(r.flatten().tolist()) for r in full.rolls}
    assert len(keys) == len(full)


def test_split_rule(splits):
    full = splits["all"]
    order = sorted(range(len(full)), key=lambda i: full.riemenschneider[i][0])
    assert order == list(range(len(full)))  # stored in Riemenschneider order
    for i, name in enumerate(full.names):
        expected = "test" if i % 5 == 4 else "valid" if i % 5 == 3 else "train"
        assert name in splits[expected].names


def test_pad_and_next_step():
    a = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    b = torch.tensor([[0.0, 1.0]])
    roll, mask = chorales.pad([a, b])
    assert roll.shape == (3, 2, 2) and mask.tolist() == [
        [True, True],
        [True, False],
        [True, False],
    ]
    assert torch.equal(roll[:, 0], a) and torch.equal(roll[0, 1], b[0])
    assert roll[1:, 1].abs().sum() == 0
    x, y, m = chorales.next_step(roll, mask)
    assert torch.equal(y, roll) and torch.equal(m, mask)
    assert x[0].abs().sum() == 0 and torch.equal(x[1:], roll[:-1])


def test_frame_nll_is_the_sum_of_bernoulli_nlls_per_frame():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(5, 3, 4, generator=g, dtype=torch.float64)
    targets = (torch.rand(5, 3, 4, generator=g) < 0.3).double()
    mask = torch.rand(5, 3, generator=g) < 0.7
    p = torch.sigmoid(logits)
    # an independent computation: log-probability of each frame
    log_lik = (targets * p.log() + (1 - targets) * (1 - p).log()).sum(-1)  # (T, B)
    expected = -log_lik[mask].sum() / mask.sum()
    got = chorales.frame_nll(logits, targets, mask)
    torch.testing.assert_close(got, expected)
    total = chorales.frame_nll(logits, targets, mask, reduction="sum")
    torch.testing.assert_close(total, -log_lik[mask].sum())
    # padding does not matter, whatever the logits there
    logits2 = logits.clone()
    logits2[~mask] = 1e3
    torch.testing.assert_close(chorales.frame_nll(logits2, targets, mask), got)


def test_baseline_is_the_nll_of_the_training_frequencies(splits):
    train, test = splits["train"], splits["test"]
    frames = torch.cat(train.rolls).double()
    f = (frames.sum(0) + 1) / (frames.shape[0] + 2)
    torch.testing.assert_close(chorales.pitch_frequencies(train), f)
    y = torch.cat(test.rolls).double()
    by_hand = -(y * f.log() + (1 - y) * (1 - f).log()).sum(1).mean().item()
    assert chorales.baseline_nll(test, train) == pytest.approx(by_hand, rel=1e-12)
    # on the training split, the smoothed frequencies are within 1e-3 nats of
    # the maximum-likelihood constant predictor n_p / N (0 log 0 = 0)
    base = chorales.baseline_nll(train, train)
    q = frames.mean(0)
    ml = (
        -(
            torch.xlogy(frames, q.expand_as(frames))
            + torch.xlogy(1 - frames, (1 - q).expand_as(frames))
        )
        .sum(1)
        .mean()
        .item()
    )
    assert 0.0 <= base - ml < 1e-3
    assert 5.0 < chorales.baseline_nll(test) < 20.0


def test_batches_visit_every_chorale_once_per_pass(splits):
    valid = splits["valid"]
    g = torch.Generator().manual_seed(0)
    it = chorales.batches(valid, 16, generator=g)
    frames = 0
    for _ in range(math.ceil(len(valid) / 16)):
        x, y, m = next(it)
        assert x.shape == y.shape and m.shape == x.shape[:2]
        frames += int(m.sum())
    assert frames == valid.num_frames


def test_sample_continuation_shapes_and_determinism():
    from rhn.train import SequenceModel

    torch.manual_seed(0)
    model = SequenceModel(__import__("rhn").GRU(46, 8), 46, readout="all")
    prime = chorales.load("test").rolls[0][:8]
    a = chorales.sample_continuation(
        model, prime, 5, generator=torch.Generator().manual_seed(1)
    )
    b = chorales.sample_continuation(
        model, prime, 5, generator=torch.Generator().manual_seed(1)
    )
    assert a.shape == (5, 46) and torch.equal(a, b)
    assert set(a.unique().tolist()) <= {0.0, 1.0}
    # the continuation is drawn from the model's own next-step probabilities:
    # with the head's bias at +/-30 every pitch is certain
    with torch.no_grad():
        model.head.weight.zero_()
        model.head.bias.fill_(-30.0)
        model.head.bias[[0, 5]] = 30.0
    c = chorales.sample_continuation(model, prime, 3)
    assert c.sum(0).tolist() == [3.0 if p in (0, 5) else 0.0 for p in range(46)]


def test_synthesize_plays_the_right_pitch_for_the_right_time():
    roll = np.zeros((4, 46))
    roll[1:3, 69 - chorales.LOWEST] = 1  # A4 for two frames
    audio = chorales.synthesize(roll, rate=8000, seconds_per_step=0.25)
    assert audio.shape == (8000,) and audio.dtype == np.float32
    assert np.abs(audio).max() == pytest.approx(1.0)
    assert np.abs(audio[:2000]).max() == 0 and np.abs(audio[6000:]).max() == 0
    spectrum = np.abs(np.fft.rfft(audio))
    assert np.argmax(spectrum) * 8000 / len(audio) == pytest.approx(440.0, abs=1.0)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="split"):
        chorales.load("dev")
    with pytest.raises(ValueError, match="rolls"):
        chorales.pad([])
    with pytest.raises(ValueError, match="mask"):
        chorales.frame_nll(torch.zeros(2, 3, 4), torch.zeros(2, 3, 4), torch.ones(3))
    with pytest.raises(TypeError, match="logits"):
        chorales.frame_nll(torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, 4))


def test_regeneration_reproduces_the_shipped_file(tmp_path):
    pytest.importorskip("music21")
    # a prefix of the collection (parsing all of it takes a minute or two)
    data = chorales.build(limit=12)
    path = chorales.save(data, tmp_path / "chorales.npz")
    part = chorales.load("all", path=path)
    shipped = chorales.load("all")
    n = len(part)
    assert n >= 10
    assert part.names == shipped.names[:n]
    for a, b in zip(part.rolls, shipped.rolls[:n], strict=True):
        assert torch.equal(a, b)
    assert part.riemenschneider == tuple(
        tuple(x for x in ns if x <= 12) for ns in shipped.riemenschneider[:n]
    )


# ------------------------------------------------------- the training hook


def test_task_generate_marks_padding_in_the_targets():
    from rhn.tasks import TASKS

    task = TASKS["chorales"]
    assert task.held_out == ("valid", "test") and task.loss == "frame_nll"
    x, y = task.generate(8, 100, seed=3)
    x2, y2 = task.generate(8, 100, generator=torch.Generator().manual_seed(3))
    assert torch.equal(x, x2) and torch.equal(y, y2)
    assert x.shape == y.shape and x.shape[1:] == (8, 46)
    mask = y[..., 0] >= 0
    # padding is -1 in every pitch, real frames are 0/1, inputs are shifted
    assert set(y[~mask].unique().tolist()) <= {-1.0}
    assert set(y[mask].unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(x[1:][mask[1:]], y[:-1][mask[1:]])
    assert x[0].abs().sum() == 0
    # the validation split comes whole, in its stored order
    xv, yv = task.generate(8, 100, split="valid")
    valid = chorales.load("valid")
    assert yv.shape[1] == len(valid)
    assert int((yv[..., 0] >= 0).sum()) == valid.num_frames
    torch.testing.assert_close(
        chorales.task_loss(torch.zeros_like(yv), yv),
        chorales.frame_nll(torch.zeros_like(yv), *valid.padded()),
    )
    with pytest.raises(ValueError, match="num_samples"):
        task.generate(1000, 100)


def test_untrained_model_predicts_like_the_baseline():
    from rhn.train import TrainConfig, make_model

    config = TrainConfig.for_task("chorales", hidden_size=8, device="cpu")
    model = make_model(config)
    valid = chorales.load("valid")
    x, y, m = chorales.next_step(*valid.padded())
    with torch.no_grad():
        nll = chorales.frame_nll(model(x), y, m).item()
    assert nll == pytest.approx(chorales.baseline_nll(valid), rel=1e-5)


def test_early_stopping_keeps_the_best_weights_and_scores_the_test_split():
    from rhn.train import TrainConfig, train

    config = TrainConfig.for_task(
        "chorales",
        hidden_size=4,
        model="gru",
        steps=40,
        eval_every=1,
        patience=2,
        lr=0.3,  # a step size that overshoots, so the validation loss turns up
        batch_size=4,
        progress=False,
        device="cpu",
    )
    result = train(config)
    h, m = result.history, result.metrics
    best = min(range(len(h["test_loss"])), key=h["test_loss"].__getitem__)
    assert m["valid_loss"] == h["test_loss"][best]
    # the history names what the evaluations scored: the validation split
    assert h["valid_loss"] == h["test_loss"] and len(h["valid_loss"]) == len(
        h["eval_step"]
    )
    assert m["best_step"] == h["eval_step"][best]
    # it stopped two evaluations after the best one
    assert m["steps"] < 40 and h["eval_step"][-1] == m["best_step"] + 2
    # the returned model is the best one, and test_loss is its test-split NLL
    valid, test = chorales.load("valid"), chorales.load("test")
    with torch.no_grad():
        for split, key in ((valid, "valid_loss"), (test, "test_loss")):
            x, y, mask = chorales.next_step(*split.padded())
            nll = chorales.frame_nll(result.model(x), y, mask).item()
            assert nll == pytest.approx(m[key], rel=1e-5)
    assert m["baseline"] == pytest.approx(chorales.baseline_nll(test))


def test_only_tasks_on_a_data_set_record_valid_loss():
    from rhn.train import TrainConfig, train

    small = dict(hidden_size=4, steps=2, eval_every=1, progress=False, device="cpu")
    adding = train(TrainConfig.for_task("adding", eval_samples=8, **small))
    assert "valid_loss" not in adding.history
    music = train(TrainConfig.for_task("chorales", batch_size=2, **small))
    assert len(music.history["valid_loss"]) == 2


def test_a_diverged_run_does_not_report_its_validation_loss_as_test_loss(
    tmp_path, monkeypatch
):
    import json

    from rhn.train import TrainConfig, train

    real = chorales.task_loss
    calls = []

    def breaks_at_the_third_training_step(prediction, targets):
        loss = real(prediction, targets)
        if prediction.requires_grad:  # training, not an evaluation
            calls.append(1)
            if len(calls) == 3:
                return loss * float("nan")
        return loss

    monkeypatch.setattr(chorales, "task_loss", breaks_at_the_third_training_step)
    config = TrainConfig.for_task(
        "chorales",
        hidden_size=4,
        batch_size=2,
        steps=5,
        eval_every=1,
        progress=False,
        device="cpu",
        out=str(tmp_path),
    )
    with pytest.raises(FloatingPointError, match="step 3"):
        train(config)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["diverged"] is True and metrics["test_loss"] is None
    assert metrics["valid_loss"] == metrics["history"]["valid_loss"][-1]


def test_a_batch_larger_than_the_training_split_names_the_batch_size():
    from rhn.train import TrainConfig, train

    config = TrainConfig.for_task(
        "chorales", hidden_size=4, batch_size=500, progress=False, device="cpu"
    )
    with pytest.raises(ValueError, match="batch size.*210.*got 500"):
        train(config)


def test_dropout_reaches_the_rhn_and_is_checked():
    from rhn.train import TrainConfig, make_model

    core = make_model(
        TrainConfig.for_task("chorales", hidden_size=8, dropout=0.2, device="cpu")
    ).core
    assert core.input_dropout == core.state_dropout == core.output_dropout == 0.2
    with pytest.raises(ValueError, match="dropout"):
        TrainConfig.for_task("chorales", dropout=1.5)
    with pytest.raises(ValueError, match="patience"):
        TrainConfig.for_task("chorales", patience=-1)


def test_command_line_train_writes_test_loss_and_baseline(tmp_path, capsys):
    import json

    from rhn.__main__ import main

    out = tmp_path / "run"
    argv = ["train", "--task", "chorales", "--model", "dtrnn", "--hidden-size", "4"]
    argv += ["--steps", "3", "--eval-every", "1", "--no-progress", "--device", "cpu"]
    assert main([*argv, "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["task"] == "chorales" and metrics["config"]["patience"] == 6
    assert metrics["baseline"] == pytest.approx(
        chorales.baseline_nll(chorales.load("test"))
    )
    assert 0 < metrics["test_loss"] and (out / "checkpoint.pt").exists()
    history = metrics["history"]
    assert history["valid_loss"] == history["test_loss"]
    assert metrics["valid_loss"] == min(history["valid_loss"])
    # the printed summary shows the validation loss that chose the weights
    printed = json.loads(capsys.readouterr().out.split("\nwrote")[0])
    assert printed["valid_loss"] == metrics["valid_loss"]
    assert printed["best_step"] == metrics["best_step"]


def test_command_line_data_rebuilds_a_prefix(tmp_path, capsys):
    pytest.importorskip("music21")
    from rhn.__main__ import main

    path = tmp_path / "c.npz"
    assert (
        main(["data", "chorales", "--limit", "3", "--no-progress", "--out", str(path)])
        == 0
    )
    assert "3 chorales" in capsys.readouterr().out
    part = chorales.load("all", path=path)
    assert part.names == chorales.load("all").names[:3]


def test_resuming_an_early_stopping_run_reproduces_it(tmp_path):
    from rhn.train import TrainConfig, load_checkpoint, train

    def config(out):
        return TrainConfig.for_task(
            "chorales",
            model="gru",
            hidden_size=4,
            steps=6,
            eval_every=1,
            patience=10,
            batch_size=4,
            progress=False,
            device="cpu",
            out=str(out),
        )

    whole = train(config(tmp_path / "whole"))
    # stop after 3 steps, then resume from the checkpoint to the end
    train(config(tmp_path / "part"), callback=lambda event: event["step"] >= 3)
    saved = load_checkpoint(tmp_path / "part" / "checkpoint.pt")
    assert saved["step"] == 3 and saved["best"]["step"] <= 3
    # a checkpoint from before the history had valid_loss still resumes whole
    del saved["history"]["valid_loss"]
    torch.save(saved, tmp_path / "part" / "checkpoint.pt")
    resumed = train(
        config(tmp_path / "part"), resume=tmp_path / "part" / "checkpoint.pt"
    )
    assert resumed.history["test_loss"] == whole.history["test_loss"]
    assert resumed.history["valid_loss"] == whole.history["valid_loss"]
    assert resumed.metrics["test_loss"] == whole.metrics["test_loss"]
    assert resumed.metrics["best_step"] == whole.metrics["best_step"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--limit", "3"], "--limit needs --out"),
        (["--limit", "0", "--out", "x.npz"], "--limit must be an int >= 1, got 0"),
        (["--out", "."], "--out must be a file name"),
        (["--out", "missing/c.npz"], "--out must be in an existing directory"),
    ],
)
def test_command_line_data_refuses_bad_values_before_parsing(
    argv, message, tmp_path, monkeypatch, capsys
):
    from rhn.__main__ import main

    monkeypatch.chdir(tmp_path)
    shipped = chorales._data_path().read_bytes()
    assert main(["data", "chorales", "--no-progress", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("python -m rhn data: error: ")
    assert message in err
    assert chorales._data_path().read_bytes() == shipped  # never touched
