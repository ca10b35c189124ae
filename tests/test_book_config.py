"""The book's reader-facing conventions hold for every chapter and page.

Checked without building the book (builds are slow; the strict build in
`make test` is the other half): the Colab set-up cell, exercises with worked
solutions, citations that resolve, unique labels, the notation table, the API
reference, the bibliography, the Pages workflow and the configuration that
puts Colab and download buttons on every chapter page.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
CHAPTERS = sorted(BOOK.glob("[0-9][0-9]*.ipynb"))
PAGES = sorted(BOOK.glob("*.md"))
REPO_URL = CONFIG["repository"]["url"]

# Chapter file stem -> the label its first cell must define (CONVENTIONS.md).
CHAPTER_LABELS = {
    "01_introduction": "ch-introduction",
    "02_recurrent_shapes": "ch-shapes",
    "03_bptt": "ch-bptt",
    "04_gershgorin": "ch-gershgorin",
    "05_highway": "ch-highway",
    "06_rhn_cell": "ch-rhn-cell",
    "07_rhn_jacobian": "ch-rhn-jacobian",
    "08_gradient_flow": "ch-gradient-flow",
    "09_gradient_training": "ch-gradient-training",
    "10_optimisation_study": "ch-optimisation-study",
    "11_training": "ch-training",
    "15_making_it_fast": "ch-fast",
    "16_fast_on_a_gpu": "ch-fast-gpu",
    "17_disc_bounds": "ch-disc-bounds",
    "12_chorales": "ch-chorales",
    "14_playground": "ch-playground",
    "13_when_to_use": "ch-when",
}

# The second cell of every chapter, tagged remove-cell. It installs rhn from the
# repository only when it is missing (Colab), pins the reader-facing packages
# at their installed versions (so Colab's torch, numpy and ipywidgets stay),
# prints pip's messages when it fails, says when a restart is needed, and picks
# the GPU when there is one. tools/colab.py runs it for real, offline.
SETUP_CELL = r"""
# Set-up: use the installed rhn, or install it from the book's repository (as on
# Colab) without changing torch, numpy, matplotlib, IPython or the widget
# packages: a constraints file pins them at the versions installed.
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile


def installed():  # {name: version} of the installed packages, as imports see them
    dists = reversed([*importlib.metadata.distributions()])
    return {str(d.name).lower(): d.version for d in dists}


if importlib.util.find_spec("rhn") is None:
    before = installed()
    keep = ["torch", "numpy", "matplotlib", "ipython", "ipykernel", "ipywidgets",
            "widgetsnbextension", "anywidget", "tqdm"]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as pins:
        pins.write("".join(f"{p}=={before[p]}\n" for p in keep if p in before))
    # RHN_SOURCE installs from elsewhere, e.g. git+file:///path/to/a/clone
    source = os.environ.get("RHN_SOURCE", "git+https://github.com/rhn-book/rhn-book")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-c", pins.name,
                          f"rhn[widgets] @ {source}"], capture_output=True, text=True)
    os.unlink(pins.name)
    if pip.returncode != 0:  # Colab would show only the exit status
        print(pip.stdout + pip.stderr)
        raise RuntimeError("pip could not install rhn: its messages are printed above")
    importlib.invalidate_caches()
    changed = sorted(p for p, v in installed().items() if before.get(p, v) != v)
    if changed:
        print(f"pip changed {', '.join(changed)}, which this session may have loaded "
              "already: restart the session (Colab: Runtime > Restart session) "
              "and run the notebook again.")

import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
if DEVICE.type == "cpu" and "google.colab" in sys.modules:
    print("No GPU: running on the CPU (fine for this book). For a GPU in Colab: "
          "Runtime > Change runtime type > GPU, then run all cells again.")""".lstrip(
    "\n"
)
KEEP = ["torch", "numpy", "matplotlib", "ipython", "ipykernel", "ipywidgets"]
KEEP += ["widgetsnbextension", "anywidget", "tqdm"]


REQUIRED_KEYS = {
    "zilly2017recurrent",
    "srivastava2015highway",
    "srivastava2015training",
    "hochreiter1997long",
    "cho2014learning",
    "pascanu2013difficulty",
    "pascanu2013construct",
    "gal2016theoretically",
    "le2015simple",
    "arjovsky2016unitary",
    "gershgorin1931",
}


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def markdown(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text()
    cells = load(path)["cells"]
    return "\n\n".join(source(c) for c in cells if c["cell_type"] == "markdown")


def bib_keys() -> list[str]:
    text = (ROOT / "references.bib").read_text()
    return re.findall(r"^@\w+\s*\{\s*([^,\s]+)\s*,", text, flags=re.M)


def cited_keys(text: str) -> set[str]:
    keys = set()
    for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", text):
        keys.update(k.strip() for k in group.split(","))
    return keys


def chapter_id(path: Path) -> str:
    return path.stem


# --- configuration: repository, launch and download buttons, extensions ------


def test_repository_url_is_set_once_and_agrees():
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", REPO_URL), REPO_URL
    assert REPO_URL in (ROOT / "README.md").read_text()
    assert CONFIG["repository"]["branch"] == "main"
    owner, repo = REPO_URL.removeprefix("https://github.com/").split("/")
    assert CONFIG["html"]["baseurl"] == f"https://{owner}.github.io/{repo}/"


def test_every_chapter_page_gets_colab_and_download_buttons():
    assert CONFIG["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    theme = CONFIG["sphinx"]["config"]["html_theme_options"]
    assert theme["use_download_button"] is True
    assert CONFIG["html"]["use_repository_button"] is True
    # sphinx.config is merged into the theme options made from launch_buttons
    # and repository, not swapped for them
    assert CONFIG["sphinx"]["recursive_update"] is True
    assert "launch_buttons" not in theme and "repository_url" not in theme


def test_strict_executed_build_and_offline_extensions():
    assert CONFIG["execute"]["execute_notebooks"] == "force"
    assert CONFIG["execute"]["allow_errors"] is False
    extensions = CONFIG["sphinx"]["extra_extensions"]
    assert {"sphinx.ext.autodoc", "sphinx.ext.napoleon"} <= set(extensions)
    # the build runs offline: nothing that fetches inventories
    assert not any("intersphinx" in e for e in extensions)
    assert "intersphinx_mapping" not in CONFIG["sphinx"]["config"]
    for bib in CONFIG["bibtex_bibfiles"]:
        assert (ROOT / bib).is_file()
    book = re.search(r"^book:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)
    assert book and re.search(r"jupyter-book build \. -W", book.group(1))


def toc_files() -> list[str]:
    files = [TOC["root"]]
    for part in TOC["parts"]:
        files += [c["file"] for c in part.get("chapters") or []]
    return files


def test_toc_has_the_back_matter_and_every_entry_exists():
    files = toc_files()
    for page in ("book/notation", "book/api", "book/bibliography"):
        assert page in files
    assert files[-1] == "book/bibliography"
    for f in files:
        assert any((ROOT / f).with_suffix(s).is_file() for s in (".md", ".ipynb")), f


def test_landing_page_says_how_to_use_the_book():
    text = (BOOK / "index.md").read_text()
    assert "(how-to-use)=" in text
    for words in ("Colab", "make book", "jupyter lab", "GPU", "download"):
        assert words in text, words
    assert CONFIG["html"]["baseurl"] in text and REPO_URL in text


# --- the set-up cell: Colab installs rhn, keeps its torch, uses the GPU -------


def test_pyproject_keeps_an_installed_torch():
    """pip only replaces torch if the requirement excludes the installed one."""
    text = (ROOT / "pyproject.toml").read_text()
    (spec,) = re.findall(r'"torch([^"]*)"', text)
    assert re.fullmatch(r">=\s*[\d.]+", spec), f"torch{spec} is not a lower bound"


@pytest.mark.parametrize("path", CHAPTERS, ids=chapter_id)
def test_first_code_cell_is_the_setup_cell(path):
    cells = load(path)["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code, f"{path.name} has no code cell"
    first = code[0]
    assert first is cells[1], f"{path.name}: the set-up cell must be the second cell"
    assert "remove-cell" in first["metadata"].get("tags", [])
    text = source(first).strip()
    urls = re.findall(r"git\+(\S+?)\"", text)
    assert urls == [REPO_URL], f"{path.name} installs from {urls}, not {REPO_URL}"
    for flag in ("-U", "--upgrade", "--force-reinstall"):
        assert flag not in text.split(), f"{path.name}: {flag} would replace torch"
    assert text == SETUP_CELL, (
        f"{path.name}: the set-up cell differs from the canonical one in "
        "tests/test_book_config.py (copy it exactly)"
    )


class FakeDist:
    def __init__(self, name, version):
        self.name, self.version = name, version


def run_setup_cell(
    monkeypatch,
    *,
    have_rhn: bool,
    colab: bool,
    cuda: bool,
    pip_fails: bool = False,
    pip_changes: dict | None = None,
):
    """Execute the canonical cell with pip, CUDA and Colab faked.

    Returns the pip calls, each ``(command, keyword arguments, constraints
    file's text)``, and the cell's DEVICE. ``pip_changes`` ({name: version})
    is what the fake pip installs.
    """
    import importlib.metadata
    import importlib.util

    import torch

    calls = []
    real_find_spec = importlib.util.find_spec
    dists = [FakeDist(d.name, d.version) for d in importlib.metadata.distributions()]

    def find_spec(name, *args, **kwargs):
        if name == "rhn" and not have_rhn:
            return None
        return real_find_spec(name, *args, **kwargs)

    def pip(cmd, **kwargs):
        constraints = Path(cmd[cmd.index("-c") + 1]).read_text()
        calls.append((cmd, kwargs, constraints))
        for name, version in (pip_changes or {}).items():
            dists.insert(0, FakeDist(name, version))  # first on sys.path
        if pip_fails:
            return subprocess.CompletedProcess(cmd, 1, "", "ERROR: no rhn here\n")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: list(dists))
    monkeypatch.setattr(subprocess, "run", pip)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    if colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    namespace: dict = {}
    exec(SETUP_CELL, namespace)
    return calls, namespace["DEVICE"]


def test_setup_cell_installs_rhn_only_when_missing(monkeypatch, capsys):
    import importlib.metadata

    monkeypatch.delenv("RHN_SOURCE", raising=False)
    calls, device = run_setup_cell(monkeypatch, have_rhn=True, colab=False, cuda=False)
    assert calls == [] and device.type == "cpu"
    assert capsys.readouterr().out == ""

    calls, _ = run_setup_cell(monkeypatch, have_rhn=False, colab=True, cuda=True)
    ((cmd, kwargs, constraints),) = calls
    assert cmd[:5] == [sys.executable, "-m", "pip", "install", "-q"]
    assert cmd[5] == "-c" and cmd[7:] == [f"rhn[widgets] @ git+{REPO_URL}"]
    assert not Path(cmd[6]).exists()  # the constraints file is removed
    assert kwargs == {"capture_output": True, "text": True}
    # every reader-facing package installed here is pinned at its version
    pinned = dict(line.split("==") for line in constraints.splitlines())
    for name in KEEP:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            assert name not in pinned
        else:
            assert pinned[name] == version, name
    assert pinned["torch"] == importlib.metadata.version("torch")
    assert capsys.readouterr().out == ""  # a quiet install says nothing


def test_setup_cell_installs_from_rhn_source(monkeypatch):
    monkeypatch.setenv("RHN_SOURCE", "git+file:///somewhere/rhn-clone")
    calls, _ = run_setup_cell(monkeypatch, have_rhn=False, colab=True, cuda=False)
    assert calls[0][0][-1] == "rhn[widgets] @ git+file:///somewhere/rhn-clone"


def test_setup_cell_shows_pips_messages_when_it_fails(monkeypatch, capsys):
    with pytest.raises(RuntimeError, match="pip could not install rhn"):
        run_setup_cell(
            monkeypatch, have_rhn=False, colab=True, cuda=False, pip_fails=True
        )
    assert "ERROR: no rhn here" in capsys.readouterr().out


def test_setup_cell_says_when_a_restart_is_needed(monkeypatch, capsys):
    import importlib.metadata

    numpy = importlib.metadata.version("numpy")
    # a new package needs no restart; a changed version of one may have been
    # imported in the old version already
    run_setup_cell(
        monkeypatch, have_rhn=False, colab=False, cuda=False,
        pip_changes={"rhn": "0.1.0", "a-package-new-here": "0.1"},
    )  # fmt: skip
    assert capsys.readouterr().out == ""
    run_setup_cell(
        monkeypatch, have_rhn=False, colab=False, cuda=False,
        pip_changes={"rhn": "0.1.0", "numpy": numpy + ".post1"},
    )  # fmt: skip
    out = capsys.readouterr().out
    assert "pip changed numpy" in out and "Runtime > Restart session" in out


def test_setup_cell_uses_the_gpu_and_hints_only_on_colab(monkeypatch, capsys):
    _, device = run_setup_cell(monkeypatch, have_rhn=True, colab=True, cuda=True)
    assert device.type == "cuda" and capsys.readouterr().out == ""
    _, device = run_setup_cell(monkeypatch, have_rhn=True, colab=True, cuda=False)
    assert device.type == "cpu"
    assert "Runtime > Change runtime type > GPU" in capsys.readouterr().out
    run_setup_cell(monkeypatch, have_rhn=True, colab=False, cuda=False)
    assert capsys.readouterr().out == ""  # no Colab hint in local Jupyter


# --- chapter structure: label, exercises, solutions, further reading ---------


@pytest.mark.parametrize("path", CHAPTERS, ids=chapter_id)
def test_chapter_starts_with_its_label_and_title(path):
    first = source(load(path)["cells"][0]).strip().splitlines()
    label = CHAPTER_LABELS.get(path.stem)
    assert label, f"{path.name} is not a known chapter file name"
    assert first[0] == f"({label})=", f"{path.name} must start with ({label})="
    assert first[1].startswith("# "), f"{path.name}: a '# Title' follows the label"


# the chapters that train, draw or measure RHNs of more than one setting open
# with a box naming the RHNs on the page (depth, bias) and why they differ
# from the package's defaults
RHN_ON_PAGE = [p for p in CHAPTERS if 7 <= int(p.stem[:2]) <= 14]


@pytest.mark.parametrize("path", RHN_ON_PAGE, ids=chapter_id)
def test_chapter_names_the_rhns_on_its_page(path):
    opening = source(load(path)["cells"][0])
    box = re.search(
        r"```\{admonition\} The RHNs on this page\n:class: rhn-on-page\n(.*?)\n```",
        opening,
        re.S,
    )
    assert box, f"{path.name}: the first cell holds the 'The RHNs on this page' box"
    assert "$D" in box.group(1) and "b_T" in box.group(1), box.group(1)


def sections(path: Path) -> tuple[list[tuple[dict, str]], list[tuple[dict, str]]]:
    """(cell, text) pieces of the Exercises and of the Further reading section.

    Markdown cells are split at their level-2 headings, so a section may start
    or end inside a cell.
    """
    pieces = []
    for cell in load(path)["cells"]:
        if cell["cell_type"] == "markdown":
            parts = re.split(r"(?m)^(?=## )", source(cell))
            pieces += [(cell, p) for p in parts if p.strip()]
        else:
            pieces.append((cell, source(cell)))
    heads = {
        i: text.splitlines()[0][3:].strip()
        for i, (cell, text) in enumerate(pieces)
        if cell["cell_type"] == "markdown" and text.startswith("## ")
    }
    ex = [i for i, title in heads.items() if title == "Exercises"]
    fr = [i for i, title in heads.items() if title == "Further reading"]
    assert len(ex) == 1, f"{path.name} needs exactly one '## Exercises' section"
    assert len(fr) == 1, f"{path.name} needs exactly one '## Further reading'"
    assert ex[0] < fr[0], f"{path.name}: Further reading comes after Exercises"
    later = [title for i, title in heads.items() if i > ex[0] and i != fr[0]]
    assert not later, f"{path.name}: sections {later} after Exercises"
    return pieces[ex[0] : fr[0]], pieces[fr[0] :]


@pytest.mark.parametrize("path", CHAPTERS, ids=chapter_id)
def test_chapter_ends_with_exercises_and_worked_solutions(path):
    exercises, _ = sections(path)
    text = "\n".join(t for c, t in exercises if c["cell_type"] == "markdown")
    solutions = re.findall(
        r"```+\{admonition\}\s*Solution[^\n]*\n:class: dropdown", text
    )
    n_solutions = text.count("{admonition} Solution")
    assert len(solutions) == n_solutions, f"{path.name}: a Solution is not collapsed"
    assert 2 <= n_solutions <= 4, f"{path.name}: {n_solutions} solutions, want 2-4"


@pytest.mark.parametrize("path", CHAPTERS, ids=chapter_id)
def test_code_solutions_are_hidden_and_check_their_answer(path):
    exercises, reading = sections(path)
    code = [c for c, _ in exercises + reading if c["cell_type"] == "code"]
    for cell in code:
        tags = cell["metadata"].get("tags", [])
        assert "hide-cell" in tags, (
            f"{path.name}, cell {cell.get('id')}: code solution not tagged hide-cell"
        )
        # IPython magics and shell escapes are not Python: read them as `pass`
        code_text = re.sub(r"(?m)^\s*[%!].*$", "pass", source(cell))
        tree = ast.parse(code_text)
        last = tree.body[-1]
        # the last statement checks the answer: an assert, an assert_close-style
        # call, or a loop / block whose body does
        checks = any(
            isinstance(node, ast.Assert)
            or (isinstance(node, ast.Call) and "assert" in ast.unparse(node.func))
            for node in ast.walk(last)
        )
        assert checks, (
            f"{path.name}, cell {cell.get('id')}: a code solution must end with an "
            f"assert, not `{ast.unparse(last).splitlines()[0]}`"
        )


@pytest.mark.parametrize("path", CHAPTERS, ids=chapter_id)
def test_chapter_cites_its_sources(path):
    text = markdown(path)
    _, reading = sections(path)
    reading_text = "\n".join(t for c, t in reading if c["cell_type"] == "markdown")
    assert cited_keys(reading_text), f"{path.name}: Further reading cites nothing"
    body = text.split("## Exercises")[0]
    assert cited_keys(body), f"{path.name}: the chapter text cites nothing"


AUTHOR_YEAR = re.compile(
    r"\b[A-Z][\w'-]+(?: et al\.| and [A-Z][\w'-]+),? \(?(?:19|20)\d\d\b"
)


@pytest.mark.parametrize("path", CHAPTERS + PAGES, ids=chapter_id)
def test_references_are_citations_not_plain_text(path):
    text = re.sub(r"\{cite(?::\w+)?\}`[^`]+`", "", markdown(path))
    plain = AUTHOR_YEAR.findall(text) and AUTHOR_YEAR.search(text).group(0)
    assert not plain, f"{path.name}: cite with {{cite:t}}/{{cite:p}}, not '{plain}'"


def test_every_cited_key_is_in_the_bibliography():
    keys = set(bib_keys())
    for path in CHAPTERS + PAGES:
        missing = cited_keys(markdown(path)) - keys
        assert not missing, f"{path.name} cites {missing}, not in references.bib"


def labels(path: Path) -> list[str]:
    text = markdown(path)
    # a figure made by a code cell is named in the cell's metadata
    figures = []
    if path.suffix == ".ipynb":
        for cell in load(path)["cells"]:
            name = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            if name.get("name"):
                figures.append(name["name"])
    return (
        re.findall(r"^\((\S+)\)=\s*$", text, re.M)
        + re.findall(r"^\$\$\s*\((eq-[\w-]+)\)\s*$", text, re.M)
        + figures
    )


def test_labels_are_unique_and_references_resolve():
    seen: dict[str, str] = {}
    for path in CHAPTERS + PAGES:
        for label in labels(path):
            assert label not in seen, f"{label} in {path.name} and {seen[label]}"
            seen[label] = path.name
    # a chapter that is still being written is a known target too: the strict
    # build, which sees only the chapters in _toc.yml, checks those links
    known = set(seen) | set(CHAPTER_LABELS.values())
    for path in CHAPTERS + PAGES:
        text = markdown(path)
        for role, target in re.findall(r"\{(ref|eq|numref)\}`([^`]+)`", text):
            target = re.sub(r"^.*<(.+)>$", r"\1", target)
            assert target in known, f"{path.name}: {{{role}}}`{target}` is undefined"


def test_a_ref_without_text_points_to_a_heading():
    """{ref}`label` borrows a title: a label on a box or a paragraph has none,
    and only the build (minutes later) would say so."""
    texts = {path: markdown(path) for path in CHAPTERS + PAGES}
    untitled: dict[str, str] = {}
    for path, text in texts.items():
        lines = text.splitlines()
        for i, line in enumerate(lines):
            match = re.match(r"^\((\S+)\)=\s*$", line)  # as labels() reads them
            if match:
                following = next((x for x in lines[i + 1 :] if x.strip()), "")
                # a heading, or a captioned figure or table, gives a title
                if not re.match(r"#|[`:]{3,}\{(figure|table|list-table)\}", following):
                    untitled[match.group(1)] = path.name
    for path, text in texts.items():
        for target in re.findall(r"\{ref\}`([^`<]+)`", text):
            assert target not in untitled, (
                f"{path.name}: {{ref}}`{target}` needs its own text "
                f"({{ref}}`text <{target}>`): the label in {untitled[target]} "
                "is not on a heading"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=chapter_id)
def test_equation_labels_carry_a_prefix(path):
    for label in re.findall(r"^\$\$\s*\((\S+)\)\s*$", markdown(path), re.M):
        assert label.startswith("eq-"), f"{path.name}: equation label {label}"


# --- back matter: bibliography, notation, API reference -----------------------


def test_bibliography_entries():
    keys = bib_keys()
    assert len(keys) == len(set(keys)), "duplicate keys in references.bib"
    assert REQUIRED_KEYS <= set(keys), REQUIRED_KEYS - set(keys)
    entries = re.split(r"^@", (ROOT / "references.bib").read_text(), flags=re.M)[1:]
    for entry in entries:
        for field in ("title", "author", "year"):
            assert re.search(rf"^\s*{field}\s*=", entry, re.M), (field, entry[:40])
    assert "```{bibliography}" in (BOOK / "bibliography.md").read_text()


def test_notation_page_has_every_symbol_of_the_package():
    import rhn

    symbols = re.findall(r"^``(\w+)``\s", rhn.__doc__, re.M)
    assert {"T", "B", "I", "H", "D", "N"} <= set(symbols)
    table = (BOOK / "notation.md").read_text()
    for symbol in symbols:
        assert re.search(rf"^\| \${symbol}\$ \| `{symbol}`", table, re.M), symbol
    assert "``L``" in rhn.__doc__ and "| $L$ |" in table


def automodules(text: str) -> dict[str, bool]:
    """Modules documented in book/api.md -> whether with their members."""
    found = re.findall(r"\.\. automodule:: ([\w.]+)\n((?:[ \t]+:[\w-]+:.*\n)*)", text)
    return {name: ":members:" in options for name, options in found}


def test_api_reference_documents_every_public_module():
    import rhn

    text = (BOOK / "api.md").read_text()
    documented = automodules(text)
    names = re.findall(r"\.\. automodule:: ([\w.]+)", text)
    assert len(names) == len(set(names)), f"a module is documented twice: {names}"
    modules = {f"rhn.{p.stem}" for p in (ROOT / "rhn").glob("*.py") if p.stem[0] != "_"}
    assert documented.get("rhn") is True, "document rhn's own API with :members:"
    missing = modules - set(documented)
    assert not missing, f"add to book/api.md: {sorted(missing)}"
    # rhn's public names are documented once, as rhn.<name>: a module whose
    # members are listed too must not export them through rhn.__all__
    for name in rhn.__all__:
        home = getattr(getattr(rhn, name), "__module__", None)
        assert not documented.get(home), f"rhn.{name} would be documented twice"


def test_strict_build_checks_links_to_package_objects():
    config = CONFIG["sphinx"]["config"]
    assert config["nitpicky"] is True
    for _, pattern in config["nitpick_ignore_regex"]:
        assert not re.fullmatch(pattern, "rhn.RHN"), "rhn links must stay checked"


# --- publishing: the GitHub Actions workflow ----------------------------------


def test_pages_workflow():
    wf = yaml.safe_load((ROOT / ".github/workflows/book.yml").read_text())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as True
    assert on["push"]["branches"] == ["main"] and "workflow_dispatch" in on
    assert wf["permissions"]["pages"] == "write"
    assert wf["permissions"]["id-token"] == "write"
    assert wf["concurrency"]["group"]
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    uses = [s.get("uses", "") for s in build["steps"]]
    assert any(u.startswith("actions/checkout@") for u in uses)
    (python,) = [s for s in build["steps"] if "setup-python" in s.get("uses", "")]
    assert str(python["with"]["python-version"]) == "3.11"
    runs = [s["run"] for s in build["steps"] if "run" in s]
    assert "make book" in runs, "the workflow builds the book as `make book` does"
    targets = re.findall(r"^(\w+):", (ROOT / "Makefile").read_text(), re.M)
    for run in runs:
        for target in re.findall(r"make (\w+)", run):
            assert target in targets, f"no Makefile target {target}"
    (upload,) = [
        s for s in build["steps"] if "upload-pages-artifact" in s.get("uses", "")
    ]
    assert upload["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build"
    assert deploy["environment"]["name"] == "github-pages"
    assert any("actions/deploy-pages@" in s.get("uses", "") for s in deploy["steps"])


# --- the built site, when a build is present (make book) ----------------------

HTML = ROOT / "_build" / "html"


@pytest.mark.parametrize("path", CHAPTERS, ids=chapter_id)
def test_built_chapter_page_has_colab_and_download_links(path):
    page = HTML / "book" / f"{path.stem}.html"
    if not page.is_file():
        pytest.skip("chapter not built here; `make book` builds it")
    html = page.read_text()
    owner_repo = REPO_URL.removeprefix("https://github.com/")
    branch = CONFIG["repository"]["branch"]
    colab = (
        f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/"
        f"book/{path.stem}.ipynb"
    )
    assert colab in html
    assert f"_sources/book/{path.stem}.ipynb" in html  # the download button


def test_built_site_has_a_search_index():
    if not (HTML / "index.html").is_file():
        pytest.skip("book not built here; `make book` builds it")
    index = (HTML / "searchindex.js").read_text()
    assert "rhncell" in index.lower()
