"""The mixed-precision code path of rhn.train, run on the CPU.

``TrainConfig(amp=True)`` uses bfloat16 autocast on the CPU too, so that CI
runs what a GPU reader's training runs: the fast path under autocast, forward
and backward, the float32 loss, clipping, checkpoints; float16 with a
GradScaler (GPUs without bfloat16) is switched on by hand below.
"""

import pytest
import torch

from rhn import train as train_mod


def config(**kw):
    base = dict(
        task="adding",
        seq_len=12,
        hidden_size=16,
        depth=2,
        steps=30,
        batch_size=16,
        eval_every=15,
        eval_samples=64,
        device="cpu",
        progress=False,
        lr=1e-2,
    )
    return train_mod.TrainConfig(**{**base, **kw})


@pytest.mark.parametrize("model", ["rhn", "lstm"])
def test_bfloat16_training_runs_and_tracks_float32(model):
    low = train_mod.train(config(model=model, amp=True))
    full = train_mod.train(config(model=model, amp=False))  # the same seed
    a, b = low.history["train_loss"], full.history["train_loss"]
    assert len(a) == len(b) == 30 and all(map(torch.isfinite, torch.tensor(a)))
    assert a != b  # autocast really ran
    # the first losses agree to bfloat16 rounding; training moves both alike
    assert a[0] == pytest.approx(b[0], rel=4 * torch.finfo(torch.bfloat16).eps)
    assert a[-1] < a[0] and b[-1] < b[0]
    assert low.history["test_loss"][-1] == pytest.approx(
        full.history["test_loss"][-1], rel=0.2
    )


def test_bfloat16_uses_the_fast_path_in_low_precision(monkeypatch):
    # the model's forward under the run's autocast: products in bfloat16
    from rhn import fast

    seen = []
    real = fast.autocast_dtype

    def spy(device_type, dtype):
        seen.append(real(device_type, dtype))
        return seen[-1]

    monkeypatch.setattr(fast, "autocast_dtype", spy)
    train_mod.train(config(steps=2, eval_every=2, amp=True))
    assert seen and set(seen) == {torch.bfloat16}


def test_float16_with_grad_scaler_on_the_cpu(monkeypatch, tmp_path):
    # the path of GPUs without bfloat16: float16 autocast and a GradScaler
    # (the CPU has both), including the scaler's state in the checkpoint
    def setup(self):
        self.use_amp = True
        self.amp_dtype = torch.float16
        self.scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)

    monkeypatch.setattr(train_mod.run._Run, "_setup_precision", setup)
    result = train_mod.train(config(steps=20, eval_every=10, out=str(tmp_path)))
    losses = torch.tensor(result.history["train_loss"])
    assert torch.isfinite(losses).all() and losses[-1] < losses[0]
    saved = train_mod.load_checkpoint(tmp_path / train_mod.CHECKPOINT_NAME)
    assert saved["scaler"]["scale"] > 0


# --- cuda_graph=True: the training step of rhn.graphs.GraphedStep ------------


def test_cuda_graph_needs_a_torch_whose_scheduler_fills_the_lr(monkeypatch):
    # see test_scheduler_changes_a_captured_tensor_learning_rate_in_place
    monkeypatch.setattr(torch, "__version__", "2.3.1+cu121")
    with pytest.raises(ValueError, match=r"cuda_graph=True needs torch >= 2.4"):
        train_mod.train(config(cuda_graph=True))


def test_cuda_graph_needs_cuda():
    with pytest.raises(ValueError, match="cuda_graph=True needs a CUDA device"):
        train_mod.train(config(cuda_graph=True))
    with pytest.raises(TypeError, match="cuda_graph"):
        config(cuda_graph="yes")


@pytest.mark.parametrize("amp", [False, True])
def test_cuda_graph_stand_in_trains_like_the_eager_step(monkeypatch, amp):
    # on the CPU the graphed step runs uncaptured (GraphedStep(capture=False)):
    # the same history bit for bit as the plain step, warm-up undone
    if amp:
        monkeypatch.setattr(
            train_mod.run._Run,
            "_setup_precision",
            lambda self: (
                setattr(self, "use_amp", True)
                or setattr(self, "amp_dtype", torch.bfloat16)
                or setattr(self, "scaler", torch.amp.GradScaler("cuda", enabled=False))
            ),
        )
    monkeypatch.setattr(train_mod.run._Run, "_check_cuda_graph", lambda self: None)
    graphed = train_mod.train(config(cuda_graph=True, steps=12, eval_every=6))
    eager = train_mod.train(config(steps=12, eval_every=6))
    assert graphed.history == eager.history


@pytest.mark.parametrize("tensor_lr", [True, False])
def test_a_resume_gives_the_learning_rate_back_in_the_runs_own_form(
    monkeypatch, tmp_path, tensor_lr
):
    # Seen on an H100 (torch 2.11): a run resumed with cuda_graph on drifted
    # from the uninterrupted one from its second resumed step (weights apart
    # by 0.01 after 12 steps), because Adam's load_state_dict put the
    # checkpoint's learning rate (a CPU tensor) into the param group and the
    # graph captured that one value while the schedule moved on. Resumed, the
    # rate is this run's own tensor (the one a graph reads), filled with the
    # saved rate; or a float, whatever the checkpoint holds. CPU stand-in: the
    # run is told to keep its rate in a tensor, as on CUDA.
    out = tmp_path / "run"
    train_mod.train(config(steps=4, eval_every=4, lr_schedule="cosine", out=str(out)))
    state = train_mod.load_checkpoint(out)
    saved = float(state["optimizer"]["param_groups"][0]["lr"])
    assert saved < config().lr  # the schedule moved it
    # each run is given a checkpoint of the other form, as one saved on
    # another device holds: a float for the tensor run, a tensor for the other
    state["optimizer"]["param_groups"][0]["lr"] = (
        saved if tensor_lr else torch.tensor(saved)
    )
    monkeypatch.setattr(train_mod.run._Run, "_lr_as_tensor", lambda self: tensor_lr)
    run = train_mod.run._Run(config(steps=8, eval_every=4, lr_schedule="cosine"))
    own = run.optimizer.param_groups[0]["lr"]
    run.restore(state)
    lr = run.optimizer.param_groups[0]["lr"]
    as_float32 = float(torch.tensor(saved))  # the rate a float32 tensor holds
    if tensor_lr:
        assert lr is own is run.lr_tensor and float(lr) == as_float32
    else:
        assert type(lr) is float and lr == as_float32


def test_the_graphed_step_with_dropout_draws_as_the_eager_one(monkeypatch, tmp_path):
    # the warm-up steps draw dropout masks no real step uses; the generator
    # goes back after them, so the graphed stand-in draws the eager run's
    # masks, and a resumed run (which warms up again) the uninterrupted one's
    monkeypatch.setattr(train_mod.run._Run, "_check_cuda_graph", lambda self: None)
    fields = {"task": "adding", "steps": 8, "eval_every": 4, "dropout": 0.3}
    graphed = train_mod.train(config(cuda_graph=True, **fields))
    eager = train_mod.train(config(**fields))
    assert graphed.history == eager.history
    out = tmp_path / "run"
    stopped = config(cuda_graph=True, out=str(out), **fields)
    train_mod.train(stopped, callback=lambda event: event["step"] == 3)
    resumed = train_mod.train(stopped, resume=out)
    # the same steps, losses and final score (the stop added an evaluation)
    for key in ("step", "train_loss"):
        assert resumed.history[key] == graphed.history[key]
    assert resumed.history["test_loss"][-1] == graphed.history["test_loss"][-1]


def test_scheduler_changes_a_captured_tensor_learning_rate_in_place():
    # With cuda_graph=True on CUDA, rhn.train gives Adam a tensor learning
    # rate (capturable=True) that the captured optimizer step reads from its
    # address. The LambdaLR schedule must therefore fill that very tensor: a
    # scheduler that put a new object into the param group instead would leave
    # the graph on the first rate, silently. (CPU stand-in: capturable off.)
    cfg = config(steps=10, lr_schedule="cosine")
    param = torch.nn.Parameter(torch.zeros(3))
    lr = torch.tensor(cfg.lr)
    opt = torch.optim.Adam([param], lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, train_mod.run._schedule(cfg, cfg.steps)
    )
    factor = train_mod.run._schedule(cfg, cfg.steps)
    for step in range(1, 6):
        param.grad = torch.ones(3)
        opt.step()
        sched.step()
        assert opt.param_groups[0]["lr"] is lr
        assert float(lr) == pytest.approx(cfg.lr * factor(step), rel=1e-6)
    assert float(lr) < cfg.lr  # the schedule really moved it


def _torch_lstm_runs_in_bfloat16_here():
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            torch.nn.LSTM(3, 5)(torch.randn(4, 2, 3))
    except RuntimeError:
        return False
    return True


def test_lstm_probe_tells_whether_this_cpu_runs_a_bfloat16_lstm():
    # oneDNN has no bfloat16 LSTM on CPUs without AVX-512; the probe that
    # rhn.LSTM asks must say what a real nn.LSTM does on this CPU
    from rhn import baselines

    here = _torch_lstm_runs_in_bfloat16_here()
    assert baselines._lstm_runs_in(torch.bfloat16) is here
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, (h, c) = rhn_lstm()(torch.randn(4, 2, 3))
    assert out.dtype == (torch.bfloat16 if here else torch.float32)
    assert torch.isfinite(out).all() and h.shape == c.shape == (1, 2, 5)


def test_lstm_falls_back_to_float32_where_bfloat16_fails(monkeypatch):
    # the fallback, forced: under CPU autocast the layer runs in float32 and
    # gives exactly what it gives with autocast off
    from rhn import baselines

    monkeypatch.setattr(baselines, "_lstm_runs_in", lambda low: False)
    model, x = rhn_lstm(), torch.randn(6, 2, 3)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = model(x)
    full = model(x)
    assert low[0].dtype == torch.float32
    assert torch.equal(low[0], full[0])
    assert all(torch.equal(a, b) for a, b in zip(low[1], full[1], strict=True))
    # autocast off, or a float64 model, never asks the probe
    monkeypatch.setattr(baselines, "_lstm_runs_in", lambda low: 1 / 0)
    model(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        rhn_lstm(dtype=torch.float64)(x.double())


def rhn_lstm(**kw):
    import rhn

    torch.manual_seed(0)
    return rhn.LSTM(3, 5, **kw)
