"""Hostile but realistic inputs get clear errors, on every path (issue 13).

One test per class of fault, run over every function where the fault can
reach: non-finite matrices, empty batches, values that overflow the
parameter dtype, non-floating dtypes, unknown devices, seeds out of range,
and options of torch.nn that would break the package's state contract.
"""

import subprocess
import sys
import textwrap

import pytest
import torch

import rhn
from rhn import analysis, gradflow, plots, tasks

MODEL_KWARGS = {"rhn": {"depth": 2}, "dtrnn": {"depth": 2}}
NAMES = ["rhn", "dtrnn", "rnn", "lstm", "gru"]


def build(name, **kwargs):
    return rhn.build_model(name, 3, 4, **{**MODEL_KWARGS.get(name, {}), **kwargs})


# --- non-finite matrices never reach LAPACK -------------------------------------


SPECTRAL = {
    "eigenvalues": analysis.eigenvalues,
    "spectral_radius": analysis.spectral_radius,
    "max_singular_value": analysis.max_singular_value,
    "gershgorin_discs": analysis.gershgorin_discs,
    "plot_spectrum": plots.plot_spectrum,
}


@pytest.mark.parametrize("name", sorted(SPECTRAL))
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_spectral_functions_refuse_non_finite_matrices(name, bad, dtype):
    J = torch.eye(4, dtype=dtype)
    J[1, 2] = bad
    with pytest.raises(ValueError, match=r"J must be finite, got 1 NaN or infinite"):
        SPECTRAL[name](J)


def test_float32_nan_matrix_gives_an_error_not_a_crash():
    """float32 NaN used to kill the interpreter inside LAPACK: run it apart."""
    script = textwrap.dedent(
        """
        import matplotlib
        matplotlib.use("Agg")
        import torch
        from rhn import analysis, plots
        J = torch.full((6, 6), float("nan"))  # float32, as from a diverged model
        for f in (analysis.eigenvalues, analysis.spectral_radius,
                  analysis.max_singular_value, plots.plot_spectrum):
            try:
                f(J)
            except ValueError as err:
                print("ValueError:", err)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4
    assert all("J must be finite, got 36 NaN" in line for line in lines)


def test_a_batch_of_non_finite_matrices_is_refused():
    J = torch.eye(3).repeat(5, 1, 1)
    J[4, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="J must be finite"):
        analysis.spectral_radius(J)


# --- batch size 0: one clear error on every path ------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_empty_batch_is_refused_by_every_model(name):
    model = build(name)
    with pytest.raises(
        ValueError, match="x must hold at least one sequence, got batch size 0"
    ):
        model(torch.ones(5, 0, 3))
    with pytest.raises(ValueError, match="batch size 0"):
        build(name, batch_first=True)(torch.ones(0, 5, 3))


@pytest.mark.parametrize("impl", ["fast", "loop"])
def test_empty_batch_is_refused_by_both_rhn_paths(impl):
    model = rhn.RHN(3, 4, depth=2, impl=impl)
    with pytest.raises(ValueError, match="batch size 0"):
        model(torch.ones(5, 0, 3))


def test_empty_batch_is_refused_by_gradflow():
    with pytest.raises(ValueError, match="batch size 0"):
        gradflow.gradient_norms(rhn.RHN(3, 4, depth=2), torch.ones(5, 0, 3))
    layers = [rhn.Highway(4), rhn.Highway(4)]
    with pytest.raises(ValueError, match="batch size 0"):
        gradflow.layer_gradient_norms(layers, torch.ones(0, 4))


# --- values that overflow the parameter dtype ---------------------------------


@pytest.mark.parametrize(
    "make, word",
    [
        (lambda: rhn.RHN(3, 4, depth=2, transform_bias=1e39), "transform_bias"),
        (lambda: rhn.RHNCell(3, 4, depth=2, transform_bias=-1e39), "transform_bias"),
        (lambda: rhn.RHN(3, 4, depth=2, init_scale=1e300), "init_scale"),
        (
            lambda: rhn.build_model("dtrnn", 3, 4, depth=2, init_scale=1e300),
            "init_scale",
        ),
        (
            lambda: rhn.RHN(3, 4, depth=2, transform_bias=7e4, dtype=torch.float16),
            "torch.float16",
        ),
        (lambda: rhn.Highway(4, transform_bias=1e39), "transform_bias"),
        (lambda: rhn.LSTM(3, 4, forget_bias=1e39), "forget_bias"),
        (lambda: rhn.train.TrainConfig(model="lstm", forget_bias=-1e39), "forget_bias"),
        (lambda: rhn.train.TrainConfig(transform_bias=1e39), "transform_bias"),
    ],
)
def test_values_that_overflow_the_dtype_are_refused(make, word):
    with pytest.raises(ValueError, match="must fit in the parameters' dtype") as info:
        make()
    assert word in str(info.value)


def test_large_values_that_fit_are_kept():
    model = rhn.RHN(3, 4, depth=2, transform_bias=1e39, dtype=torch.float64)
    assert model.cells[0].bias_hh_d0[4].item() == 1e39


# --- dtype and device -----------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, "float32"])
def test_non_floating_dtype_is_refused(name, dtype):
    with pytest.raises(TypeError, match="dtype must be a floating-point torch.dtype"):
        build(name, dtype=dtype)


def test_non_floating_dtype_is_refused_elsewhere():
    with pytest.raises(TypeError, match="dtype"):
        rhn.Highway(4, dtype=torch.int32)
    with pytest.raises(TypeError, match="dtype"):
        gradflow.projection(4, dtype=torch.int32)


@pytest.mark.parametrize("name", NAMES)
def test_unknown_device_is_refused(name):
    with pytest.raises(ValueError, match="device must be a device torch knows") as info:
        build(name, device="tpu")
    assert "'tpu'" in str(info.value)
    with pytest.raises(TypeError, match="device"):
        build(name, device=0.5)


def test_unknown_device_is_refused_elsewhere():
    for call in (
        lambda: rhn.Highway(4, device="gpu"),
        lambda: tasks.adding_problem(4, 10, device="gpu"),
        lambda: tasks.copy_memory(4, 10, device="cuda:x"),
        lambda: gradflow.projection(4, device="gpu"),
        lambda: rhn.train.TrainConfig(device="tpu"),
        lambda: rhn.train.resolve_device("tpu:9"),
    ):
        with pytest.raises(ValueError, match="device"):
            call()


def test_device_names_are_case_insensitive():
    assert rhn.RHN(3, 4, depth=2, device="CPU").cells[0].weight_ih.device.type == "cpu"
    assert rhn.train.TrainConfig(device="CPU").device == "cpu"
    assert rhn.train.TrainConfig(device="Auto").device == "auto"
    assert rhn.train.resolve_device("CPU") == torch.device("cpu")


# --- seeds ----------------------------------------------------------------------


def test_torch_generators_wrap_seeds_modulo_2_32():
    """Why seeds are limited: 0 and 2**32 give the same numbers on the CPU."""
    a = torch.rand(5, generator=torch.Generator().manual_seed(0))
    b = torch.rand(5, generator=torch.Generator().manual_seed(2**32))
    assert torch.equal(a, b)


@pytest.mark.parametrize("seed", [2**32, 2**64, -1])
def test_task_seeds_out_of_range_are_refused(seed):
    for name in ("adding", "copy", "temporal_order"):
        task = tasks.get_task(name)
        with pytest.raises(ValueError, match="seed"):
            task.generate(2, 12, seed=seed)
    with pytest.raises(ValueError, match="seed"):
        gradflow.projection(4, seed=seed)
    with pytest.raises(ValueError, match="seed"):
        gradflow.gradient_norms(rhn.RHN(3, 4, depth=2), torch.ones(5, 1, 3), seed=seed)


def test_largest_task_seed_is_accepted():
    x, _ = tasks.adding_problem(2, 10, seed=2**32 - 1)
    y, _ = tasks.adding_problem(2, 10, seed=2**32 - 2)
    assert not torch.equal(x, y)


def test_train_seeds_stop_where_the_test_stream_would_wrap():
    """The held-out set uses seed 2 * seed + 1, so seeds stop at 2**31."""
    rhn.train.TrainConfig(seed=2**31 - 1)
    with pytest.raises(ValueError, match=r"seed must be an int in \[0, 2147483648\)"):
        rhn.train.TrainConfig(seed=2**31)


# --- options of torch.nn that break the state contract -------------------------


@pytest.mark.parametrize("name", ["rnn", "lstm", "gru"])
def test_bidirectional_baselines_are_refused_at_construction(name):
    with pytest.raises(ValueError, match="bidirectional must be False") as info:
        build(name, bidirectional=True)
    assert f"torch.nn.{name.upper()}" in str(info.value)
    model = build(name, bidirectional=False)  # the default, spelled out, is fine
    out, state = model(torch.ones(5, 2, 3))
    model(torch.ones(5, 2, 3), state)  # the returned state feeds back


def test_projected_lstm_is_refused_at_construction():
    with pytest.raises(ValueError, match="proj_size must be 0"):
        rhn.LSTM(3, 8, proj_size=2)
    rhn.LSTM(3, 8, proj_size=0)


# --- names are case-insensitive in the API as in the CLI -----------------------


def test_names_are_case_insensitive_in_the_api():
    assert isinstance(rhn.build_model("LSTM", 3, 4), rhn.LSTM)
    config = rhn.train.TrainConfig(model="GRU", task="Adding", lr_schedule="Constant")
    assert (config.model, config.task, config.lr_schedule) == (
        "gru",
        "adding",
        "constant",
    )


def test_sweep_grid_names_are_case_insensitive_like_train():
    # "LSTM" was kept as given, so the rule "forget_bias is swept for the LSTM
    # only" did not see an LSTM: its forget_bias=1 runs were silently dropped.
    from rhn.experiments import sweep
    from rhn.train import TrainConfig

    base = TrainConfig.for_task(
        "adding", seq_len=4, hidden_size=3, steps=1, batch_size=2,
        eval_samples=4, progress=False, device="cpu",
    )  # fmt: skip
    record = sweep(base, {"model": ["LSTM", "GRU"], "forget_bias": [None, 1.0]}, [0])
    settings = [run["setting"] for run in record["runs"]]
    assert settings == [
        {"model": "lstm", "forget_bias": None},
        {"model": "lstm", "forget_bias": 1.0},
        {"model": "gru"},
    ]
    with pytest.raises(ValueError, match="repeats"):
        sweep(base, {"model": ["rhn", "RHN"]}, [0])


def test_a_model_too_large_to_allocate_is_one_line_naming_its_size():
    with pytest.raises(MemoryError, match=r"hidden_size=1000000000000.*smaller hidden"):
        rhn.RHN(3, 10**12)


def test_a_size_torch_cannot_even_count_is_the_same_one_line(monkeypatch):
    # torch 2.11 (Colab's) refuses 10**12 x 2 * 10**12 floats with this message
    # before it asks the allocator (seen on a GPU machine with torch 2.11)
    def empty(*size, **kwargs):
        raise RuntimeError(
            "Storage size calculation overflowed with sizes=[2000000000000, "
            "1000000000000]"
        )

    monkeypatch.setattr(torch, "empty", empty)
    with pytest.raises(MemoryError, match=r"hidden_size=1000000000000.*smaller hidden"):
        rhn.RHN(3, 10**12)


@pytest.mark.parametrize("kw", [{}, {"depth": 3, "num_layers": 2, "coupled": False}])
def test_torch_export_traces_the_loop_and_matches_the_fast_path(kw):
    # export (torch's way to serialise a model) traces plain operations: the
    # fast path writes into buffers, which an exported graph cannot replay
    torch.manual_seed(0)
    model = rhn.RHN(3, 8, **kw).eval()
    x = torch.randn(5, 2, 3)
    exported = torch.export.export(model, (x,))
    got, want = exported.module()(x), model(x)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])
