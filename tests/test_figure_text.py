"""tools/figure_text.py: the smallest text and script of a chapter's figures."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rhn import plots  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location(
        "figure_text", ROOT / "tools" / "figure_text.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _output(png: bytes, meta: dict) -> dict:
    data = {"image/png": base64.b64encode(png).decode()}
    return {
        "output_type": "display_data",
        "data": data,
        "metadata": {"image/png": meta},
    }


def _notebook(tmp_path: Path, outputs: dict[str, dict]) -> Path:
    cells = [
        {
            "cell_type": "code",
            "metadata": {"mystnb": {"figure": {"name": name}}},
            "outputs": [out],
            "source": "",
        }
        for name, out in outputs.items()
    ]
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    return path


def _log_axis(size=(6.0, 3.0), ticks=None):
    """A figure of the book's style with a log axis, its tick labels at
    ``ticks`` points (the style's when ``None``)."""
    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=size, layout="constrained")
        ax.semilogy([0, 40], [1e-12, 1e3], label="RNN")
        ax.set_xlabel("lag $n$")
        ax.legend()
        if ticks is not None:
            ax.tick_params(labelsize=ticks)
        out = plots.figure_png_for_phone(fig)
        plt.close(fig)
    return out


def test_an_exponent_at_the_old_size_is_reported(tool, tmp_path, capsys):
    """Tick labels of 9 pt (the book's before) on a log axis: their text is
    12.5 px on the laptop, but the exponent of 10^{-12} is 6.3 pt, 8.75 px."""
    png, meta = _log_axis(ticks=9)
    assert plots.smallest_text_px(png, meta["width"]) > 12  # the text reads
    path = _notebook(tmp_path, {"fig-old": _output(png, meta)})
    assert tool.main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "fig-old laptop" in out and "smallest text 12.5 px" in out
    assert re.search(r"scripts 8\.[78] px   < script < 9 px", out), out


def test_the_style_passes_on_the_laptop_and_in_the_phone_drawing(
    tool, tmp_path, capsys
):
    png, meta = _log_axis()
    assert plots.NARROW_KEY in meta  # 600 px wide: a phone gets its own drawing
    path = _notebook(tmp_path, {"fig-new": _output(png, meta)})
    assert tool.main([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[2] for line in lines] == ["laptop:", "phone:"], lines
    assert all("<" not in line for line in lines), lines


def test_a_phone_drawing_with_small_scripts_is_reported(tool, tmp_path, capsys):
    png, meta = _log_axis()
    small, small_meta = _log_axis(size=(3.4, 2.6), ticks=9)  # its own width: 8.75
    meta[plots.NARROW_KEY] = {
        "png": base64.b64encode(small).decode(),
        "width": small_meta["width"],
    }
    path = _notebook(tmp_path, {"fig-phone": _output(png, meta)})
    assert tool.main([str(path)]) == 1
    assert "phone: " in (out := capsys.readouterr().out) and "script < 9 px" in out


def test_a_figure_without_the_script_record_is_reported(tool, tmp_path, capsys):
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    png, meta = _log_axis()
    image = Image.open(io.BytesIO(png))
    bare = io.BytesIO()
    pnginfo = PngInfo()  # the text size only, as PNGs made before recorded
    pnginfo.add_text(plots.SMALLEST_TEXT_KEY, image.text[plots.SMALLEST_TEXT_KEY])
    image.save(bare, format="PNG", pnginfo=pnginfo, dpi=image.info["dpi"])
    path = _notebook(tmp_path, {"fig-bare": _output(bare.getvalue(), {})})
    assert tool.main([str(path)]) == 1
    assert "no recorded script size" in capsys.readouterr().out
