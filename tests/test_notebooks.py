"""Chapters are committed as clean notebooks: the build makes the outputs."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def test_there_are_chapters():
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name}: a code cell has outputs"
            assert cell.get("execution_count") is None, f"{path.name}: executed cell"


def test_every_chapter_is_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text()
    for path in NOTEBOOKS:
        assert f"book/{path.stem}" in toc, f"{path.name} is not in _toc.yml"


def test_chapter_9_fetches_its_results_when_opened_alone(tmp_path, monkeypatch):
    """Colab has the notebook only: the page downloads book/results/NAME itself.

    The cell that loads the first sweep runs in an empty directory, with the
    download replaced by a copy of the committed file; the address must be the
    raw file of the repository that _config.yml names.
    """
    import shutil
    import urllib.request

    import yaml

    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    raw = repo.replace("https://github.com/", "https://raw.githubusercontent.com/")
    fetched = []

    def fake_download(url, path):
        prefix = f"{raw}/main/book/results/"
        assert url.startswith(prefix), url
        shutil.copy(ROOT / "book" / "results" / url.removeprefix(prefix), path)
        fetched.append(url)

    monkeypatch.setattr(urllib.request, "urlretrieve", fake_download)
    monkeypatch.chdir(tmp_path)
    cells = json.loads((ROOT / "book" / "09_training.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    imports = next(s for s in code if "from rhn.experiments import" in s)
    loader = next(s for s in code if "def load_result" in s)
    namespace: dict = {}
    exec(compile(imports, "imports", "exec"), namespace)
    exec(compile(loader, "load_result", "exec"), namespace)
    assert fetched == [f"{raw}/main/book/results/09_adding_models.json"]
    assert len(namespace["models"]["runs"]) == 15
    assert (tmp_path / "results" / "09_adding_models.json").exists()
    assert [p.name for p in (tmp_path / "results").iterdir()] == [
        "09_adding_models.json"
    ]  # no partial download left behind
    fetched.clear()
    namespace["load_result"]("09_adding_models.json")  # now found, not fetched
    assert fetched == []
