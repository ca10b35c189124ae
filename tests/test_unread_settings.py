"""A depth or transform bias given for a model that does not read it warns:
``TrainConfig(model="gru", depth=3)`` trains a GRU, as without the depth.
Not an error: every recorded config holds both fields for every model, and
a resume or ``load_model`` passes them back."""

import dataclasses
import warnings

import pytest

from rhn.train import TrainConfig
from rhn.train.records import filled_config


@pytest.mark.parametrize(
    ("model", "field", "value", "readers"),
    [
        ("gru", "depth", 3, "'rhn' or 'dtrnn'"),
        ("lstm", "transform_bias", -4.0, "'rhn'"),
        ("dtrnn", "transform_bias", -1.0, "'rhn'"),
    ],
)
def test_a_setting_the_model_does_not_read_warns(model, field, value, readers):
    match = f"{field}={value} does nothing for model='{model}': only model={readers}"
    with pytest.warns(UserWarning, match=match):
        TrainConfig(model=model, progress=False, **{field: value})


def test_defaults_and_recorded_configs_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TrainConfig(model="gru", progress=False)
        TrainConfig(model="dtrnn", depth=3, progress=False)  # a dtrnn reads it
        TrainConfig(model="gru", depth=2, progress=False)  # the default
        # the chorales task's own depth (4) comes back from a record
        chorales = TrainConfig.for_task("chorales", model="gru", progress=False)
        fields = {f.name for f in dataclasses.fields(TrainConfig)}
        saved = filled_config(chorales.to_dict())
        TrainConfig(**{k: v for k, v in saved.items() if k in fields})
