"""Every third-party import is declared where it is used, and the built wheel works for a student:
installed with no extra it runs the tour and writes reports; it ships the course."""

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "lgcheckpoint"
IMPORT_TO_DIST = {
    "psycopg_pool": "psycopg-pool",
    "traitlets": "ipywidgets",
}  # import name -> distribution
OPTIONAL_PARTS = {  # package part -> the extra that brings its dependencies
    "viz": "viz",
    "checkpoint/postgres": "postgres",
    "checkpoint/sqlite/aio.py": "sqlite",
    "course_pictures.py": "viz",  # the course's matplotlib pictures
}


def third_party_imports(path: Path, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {
        n
        for n in names
        if n not in sys.stdlib_module_names and n not in {"lgcheckpoint", "__future__"}
    }


def declared(extra: str | None) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + (project["optional-dependencies"][extra] if extra else [])
    return {r.split("[")[0].split(">")[0].split("=")[0].split(";")[0].strip().lower() for r in reqs}


def part_of(path: Path) -> str | None:
    rel = path.relative_to(PKG).as_posix()
    return next((extra for part, extra in OPTIONAL_PARTS.items() if rel.startswith(part)), None)


def test_core_modules_import_only_declared_dependencies_at_top_level():
    problems = []
    for path in sorted(PKG.rglob("*.py")):
        extra = part_of(path)
        allowed = declared(extra)
        # optional libraries (numpy, a viewer's widgets) may be imported lazily inside functions
        for name in third_party_imports(path, top_level_only=True):
            if IMPORT_TO_DIST.get(name, name).replace("_", "-").lower() not in allowed:
                problems.append(
                    f"{path.relative_to(ROOT)} imports {name}, not declared for {extra or 'core'}"
                )
    assert not problems, "\n".join(problems)


def test_the_package_never_imports_langgraph():
    users = [
        p.relative_to(ROOT).as_posix()
        for p in PKG.rglob("*.py")
        if {"langgraph", "langchain_core"} & third_party_imports(p, top_level_only=False)
    ]
    assert not users, f"LangGraph is a test dependency only; imported by {users}"


# --- the built wheel in a fresh virtual environment, as a student installs it -----------------

SHIPPED = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "lgcheckpoint", "notebooks"]
CHAPTER_RUN = "12_inspect_langgraph_db.ipynb"  # reads data/, so it proves the data shipped too


def run(cmd: list, cwd: Path, env: dict, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run a command of the fresh environment; its output is the failure message."""
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, timeout=timeout,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "Traceback" not in done.stderr, (
        f"{' '.join(map(str, cmd))} -> {done.returncode}\n"
        f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> tuple[Path, dict, Path]:
    """The wheel built from a copy of the sources (no stale build/), installed with no extra into a
    new virtual environment: its bin folder, a process env without our PYTHONPATH, the wheel."""
    work = tmp_path_factory.mktemp("packaging")
    src = work / "src"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", ".ipynb_checkpoints")
    for name in SHIPPED:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=skip)
        else:
            src.mkdir(exist_ok=True)
            shutil.copy(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", work / "dist", src],
        work, env)
    (wheel,) = (work / "dist").glob("lgcheckpoint-*.whl")
    run([sys.executable, "-m", "venv", work / "venv"], work, env)
    bin_ = work / "venv" / "bin"
    env["PATH"] = f"{bin_}{os.pathsep}{env['PATH']}"
    run([bin_ / "pip", "install", "-q", wheel], work, env)
    (work / "run").mkdir()
    return bin_, env, wheel


def test_the_plain_install_runs_the_tour_and_writes_reports(fresh):
    bin_, env, _ = fresh
    cwd = bin_.parent.parent / "run"
    where = run([bin_ / "python", "-c", "import lgcheckpoint; print(lgcheckpoint.__file__)"],
                cwd, env).stdout
    assert str(bin_.parent) in where, f"the test must use the installed wheel, not {where}"
    run([bin_ / "lgcheckpoint", "tour"], cwd, env)
    run([bin_ / "lgcheckpoint", "inspect", "lgcheckpoint-tour.sqlite", "--html", "inspect.html"],
        cwd, env)
    for report in ("lgcheckpoint-tour.html", "inspect.html"):
        page = (cwd / report).read_text()
        assert "<svg" in page and "data:image/png;base64," in page, f"{report} lacks a picture"
    # a Postgres database needs the driver, which an extra brings: one line says which
    no_driver = subprocess.run([bin_ / "lgcheckpoint", "inspect", "postgresql://127.0.0.1:1/x"],
                               cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert no_driver.returncode == 2 and no_driver.stderr.strip().splitlines() == [
        'lgcheckpoint: this needs psycopg: pip install "lgcheckpoint[postgres]"'], no_driver.stderr


def test_course_copies_the_shipped_chapters_and_one_runs_from_the_copy(fresh):
    bin_, env, wheel = fresh
    cwd = bin_.parent.parent / "run"
    refused = subprocess.run([bin_ / "lgcheckpoint", "course", "lab-course"], cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "lgcheckpoint[all]" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (cwd / "lab-course").exists()
    run([bin_ / "lgcheckpoint", "course", "my-course", "--no-lab"], cwd, env)
    course = cwd / "my-course"
    assert (course / "00_tour.ipynb").is_file() and (course / "data").is_dir()
    assert len(list(course.glob("*.ipynb"))) == len(list((ROOT / "notebooks").glob("*.ipynb")))
    # what a chapter needs to run in a kernel: the widgets extra and a kernel (not all of Jupyter)
    run([bin_ / "pip", "install", "-q", f"{wheel}[viz]", "ipykernel", "nbclient"], cwd, env)
    execute = ("import nbclient, nbformat, sys; nb = nbformat.read(sys.argv[1], 4); "
               "nbclient.NotebookClient(nb, timeout=300, kernel_name='python3', "
               "resources={'metadata': {'path': '.'}}).execute()")
    run([bin_ / "python", "-c", execute, CHAPTER_RUN], course, env)


def test_course_copy_keeps_a_students_edits(tmp_path, capsys):
    from lgcheckpoint.cli import main

    assert main(["course", str(tmp_path / "c"), "--no-lab"]) == 0
    assert main(["course", str(tmp_path / "c"), "--no-lab"]) == 0  # identical: nothing to do
    assert "nothing copied" in capsys.readouterr().out
    edited = tmp_path / "c" / "03_checkpoint_anatomy.ipynb"
    edited.write_text(edited.read_text().replace("versions", "my notes", 1))
    (tmp_path / "c" / "05_savers.ipynb").unlink()
    assert main(["course", str(tmp_path / "c"), "--no-lab"]) == 2
    err = capsys.readouterr().err
    assert "03_checkpoint_anatomy.ipynb" in err and "nothing was copied" in err
    assert "my notes" in edited.read_text() and not (tmp_path / "c" / "05_savers.ipynb").exists()
    (tmp_path / "f.txt").write_text("")
    assert main(["course", str(tmp_path / "f.txt"), "--no-lab"]) == 2
    assert "is a file" in capsys.readouterr().err


def test_course_opens_jupyterlab_on_chapter_00(tmp_path):
    """`lgcheckpoint course DIR` becomes JupyterLab serving DIR and opening chapter 00 (the port,
    token and browser come from Jupyter's own environment variables; root needs allow_root)."""
    import socket
    import time
    import urllib.request

    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "jupyter_server_config.py").write_text("c.ServerApp.allow_root = True\n")
    browser = tmp_path / "browser.sh"  # the "browser" keeps the page JupyterLab asks it to open
    browser.write_text(f'#!/bin/sh\ncat "${{1#file://}}" > {tmp_path}/opened.html\n')
    browser.chmod(0o755)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_PORT": str(port),
           "JUPYTER_TOKEN": "course-test", "BROWSER": str(browser), "PYTHONPATH": str(ROOT)}
    lab = subprocess.Popen([sys.executable, "-m", "lgcheckpoint", "course", "c"], cwd=tmp_path,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        opened = tmp_path / "opened.html"
        for _ in range(120):
            if opened.exists() and opened.stat().st_size or lab.poll() is not None:
                break
            time.sleep(0.5)
        assert lab.poll() is None, f"JupyterLab stopped: {lab.stderr.read()[-2000:]}"
        assert "lab/tree/00_tour.ipynb" in opened.read_text()
        url = f"http://127.0.0.1:{port}/api/contents/00_tour.ipynb?content=0&token=course-test"
        with urllib.request.urlopen(url, timeout=10) as served:
            assert json.load(served)["type"] == "notebook"
    finally:
        lab.terminate()
        lab.wait(timeout=30)
