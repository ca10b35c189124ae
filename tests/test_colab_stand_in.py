"""The pieces of tools/colab.py's Colab stand-in, checked without running it.

``make colab`` runs every chapter in the stand-in (minutes, and the package
index once to build its environment); these check that its network guard
refuses what leaves the machine, that its google.colab stand-in is what
anywidget expects, and how it judges a chapter's widgets.
"""

import importlib.util
import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "tools" / "colab_site"


def _colab_tool():
    spec = importlib.util.spec_from_file_location("colab_tool", ROOT / "tools/colab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _guarded(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    log = tmp_path / "network.log"
    env = {"PYTHONPATH": str(SITE), "RHN_OFFLINE_LOG": str(log), "PATH": "/usr/bin"}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )


def test_the_guard_refuses_other_hosts_and_logs_it(tmp_path):
    code = (
        "import socket, urllib.request\n"
        "for attempt in (lambda: socket.create_connection(('192.0.2.1', 80), 1),\n"
        "                lambda: socket.getaddrinfo('example.org', 443),\n"
        "                lambda: urllib.request.urlopen('https://example.org')):\n"
        "    try:\n"
        "        attempt()\n"
        "    except OSError as err:\n"
        "        print('refused:', err)\n"
    )
    done = _guarded(code, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and all(
        "no network in the Colab stand-in" in x for x in lines
    )
    logged = (tmp_path / "network.log").read_text().splitlines()
    assert len(logged) == 3  # caught by the code, still on record
    assert "192.0.2.1" in logged[0] and "example.org" in logged[1]


def test_the_guard_lets_this_machine_talk_to_itself(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    code = (
        "import socket\n"
        f"socket.create_connection(('127.0.0.1', {port}), 5).close()\n"
        f"socket.create_connection(('localhost', {port}), 5).close()\n"
        "print('ok')\n"
    )
    try:
        done = _guarded(code, tmp_path)
    finally:
        server.close()
    assert done.stdout.strip() == "ok", done.stderr
    assert not (tmp_path / "network.log").exists()


def test_the_google_colab_stand_in_is_what_anywidget_uses(tmp_path):
    pytest.importorskip("anywidget")
    calls = tmp_path / "calls.log"
    code = (
        "import sys, google.colab.output\n"
        "from anywidget import _util\n"
        "assert _util.in_colab()\n"
        "_util.enable_custom_widget_manager_once()\n"
        "print(_util.get_repr_metadata())\n"
    )
    env = {"PYTHONPATH": str(SITE), "RHN_COLAB_CALLS": str(calls), "PATH": "/usr/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "stand-in://colab-custom-widget-manager.js" in done.stdout
    assert calls.read_text().splitlines() == ["enable_custom_widget_manager"]


def _notebook(*outputs):
    cell = nbformat.v4.new_code_cell("w")
    cell.outputs = [nbformat.v4.new_output("display_data", data=d) for d in outputs]
    return nbformat.v4.new_notebook(cells=[cell])


def test_widget_outputs_are_judged_as_colab_shows_them(tmp_path):
    colab = _colab_tool()
    view = {"application/vnd.jupyter.widget-view+json": {"model_id": "1"}}
    calls = tmp_path / "calls.log"
    assert colab.check_widgets(_notebook({"text/plain": "x"}), calls) == []
    calls.write_text("enable_custom_widget_manager\n")
    assert colab.check_widgets(_notebook(view), calls) == []
    assert not calls.exists()  # read once per chapter
    problems = colab.check_widgets(_notebook(view), calls)
    assert problems == ["widgets shown without Colab's custom widget manager"]
    calls.write_text("enable_custom_widget_manager\n")
    problems = colab.check_widgets(_notebook({**view, "image/png": "iVBO"}), calls)
    assert problems == ["a widget's output carries a PNG in Colab"]


def test_the_versions_are_colabs_and_the_chapters_are_checked(capsys):
    colab = _colab_tool()
    assert colab.COLAB["ipywidgets"] == "7.7.1" and colab.COLAB["numpy"] == "2.1.3"
    assert colab.main(["--chapters", "99"]) == 2
    assert "no chapter" in capsys.readouterr().err
    versions = json.loads(json.dumps(colab.installed(Path(sys.executable))))
    assert versions["pytest"] == pytest.__version__  # as imports see them
