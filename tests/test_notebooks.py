"""Chapters are committed as clean notebooks: the build makes the outputs."""

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import rhn.results

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


# What the chapters ask for: rhn.results.load("X"), load_sweep("X"),
# rhn.results.names("pattern")
_CALLS = r"""(results\.load|load_sweep|results\.names)\(\s*"([^"]+)"\s*\)"""


def _chapter_requests() -> dict[str, list[tuple[str, str]]]:
    requests = {}
    for nb in sorted((ROOT / "book").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code = "\n".join(
            "".join(c["source"]) for c in cells if c["cell_type"] == "code"
        )
        found = [(m.group(1), m.group(2)) for m in re.finditer(_CALLS, code)]
        if found:
            requests[nb.name] = found
    return requests


def test_no_chapter_reads_results_from_the_repository_or_the_network():
    for nb in sorted((ROOT / "book").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code = "\n".join(
            "".join(c["source"]) for c in cells if c["cell_type"] == "code"
        )
        for needle in ("urlopen", "urlretrieve", "githubusercontent", '"results/',
                       "book/results", '"benchmarks', "../benchmarks"):  # fmt: skip
            assert needle not in code, f"{nb.name} reads {needle!r}"
    requests = _chapter_requests()
    chapters = {"06_rhn_cell.ipynb", "09_gradient_training.ipynb", "11_training.ipynb"}
    assert chapters | {"15_making_it_fast.ipynb", "12_chorales.ipynb"} <= set(requests)


def test_chapters_find_their_records_in_the_built_wheel_from_an_empty_dir(tmp_path):
    """A chapter opened alone (Colab) reads its records from the installed rhn.

    The package is built into a wheel from a copy of its sources (what pip
    installs from the repository), unpacked as an installed package, and every
    record a chapter asks for is loaded from an empty working directory in a
    fresh interpreter that sees that package only.
    """
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "rhn", src / "rhn", ignore=shutil.ignore_patterns("__pycache__")
    )
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "-w", str(wheels), str(src)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (wheel,) = wheels.glob("rhn-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    shipped = sorted(p.name for p in (site / "rhn" / "_data" / "results").iterdir())
    assert shipped == rhn.results.names()  # every record is in the wheel
    empty = tmp_path / "alone"
    empty.mkdir()
    requests = _chapter_requests()
    script = (
        "import json, sys, rhn, rhn.results\n"
        "from rhn.experiments import load_sweep\n"
        "assert rhn.__file__.startswith(sys.argv[1]), rhn.__file__\n"
        "calls = {'results.load': rhn.results.load, 'load_sweep': load_sweep,\n"
        "         'results.names': rhn.results.names}\n"
        "for call, name in json.loads(sys.argv[2]):\n"
        "    calls[call](name)\n"
        "print('ok', len(json.loads(sys.argv[2])))\n"
    )
    flat = [r for rs in requests.values() for r in rs]
    done = subprocess.run(
        [sys.executable, "-c", script, str(site), json.dumps(flat)],
        cwd=empty, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", str(len(flat))]
    assert list(empty.iterdir()) == []  # nothing written next to the chapter
