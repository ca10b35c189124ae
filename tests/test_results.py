"""The committed records travel with the package (rhn.results)."""

from pathlib import Path

import pytest

import rhn
import rhn.results
from rhn import experiments


def test_every_record_loads_and_is_a_json_object():
    names = rhn.results.names()
    assert "adding_models.json" in names and "results-cpu-amd-epyc.json" in names
    for name in names:
        record = rhn.results.load(name)
        assert isinstance(record, dict) and record, name
    # only JSON in the folder: pyproject's package data ships "_data/results/*.json"
    assert {p.name for p in rhn.results.folder().iterdir()} == set(names)


def test_names_filters_with_a_pattern():
    assert rhn.results.names("chorales_*.json") == [
        "chorales_depth.json",
        "chorales_dropout.json",
        "chorales_lstm_forget1.json",
        "chorales_models.json",
        "chorales_rhn_defaults.json",
        "chorales_rhn_matched.json",
    ]
    assert rhn.results.names("no-such-*.json") == []


def test_path_is_inside_the_package():
    p = rhn.results.path("optstudy.json")
    assert p.is_file() and p.parent == Path(rhn.__file__).parent / "_data" / "results"


def test_a_missing_record_names_itself_and_lists_the_shipped_ones():
    with pytest.raises(FileNotFoundError, match="'nope.json'.*optstudy.json"):
        rhn.results.load("nope.json")


@pytest.mark.parametrize("bad", ["results/optstudy.json", "../pyproject.toml", ""])
def test_a_path_instead_of_a_name_is_refused(bad):
    with pytest.raises(ValueError, match="file name"):
        rhn.results.path(bad)


def test_a_name_that_is_not_a_string_is_refused():
    with pytest.raises(TypeError, match="name"):
        rhn.results.path(Path("optstudy.json"))


def test_a_corrupt_record_names_the_file(tmp_path, monkeypatch):
    (tmp_path / "cut.json").write_text('{"runs": [1, 2')  # cut short
    (tmp_path / "list.json").write_text("[1, 2]")
    monkeypatch.setattr(rhn.results, "folder", lambda: tmp_path)
    with pytest.raises(ValueError, match=r"'cut.json'.*not valid JSON"):
        rhn.results.load("cut.json")
    with pytest.raises(ValueError, match=r"'list.json'.*holds a list"):
        rhn.results.load("list.json")


def test_load_sweep_takes_a_record_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing of the repository around
    record = experiments.load_sweep("adding_models.json")
    assert record == rhn.results.load("adding_models.json")
    assert len(record["runs"]) == 25  # five models, five seeds
    # a file of that name in the working directory comes first
    (tmp_path / "adding_models.json").write_text("{}")
    with pytest.raises(ValueError, match="not a sweep record"):
        experiments.load_sweep("adding_models.json")
    (tmp_path / "adding_models.json").write_text("{")
    with pytest.raises(ValueError, match="adding_models.json.*not valid JSON"):
        experiments.load_sweep("adding_models.json")
    with pytest.raises(FileNotFoundError, match="no record 'missing.json'"):
        experiments.load_sweep("missing.json")
