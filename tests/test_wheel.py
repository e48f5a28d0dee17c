"""The built wheel, as a student gets it: installed with no extra in a fresh virtual environment it
runs the tour, writes reports and names the extra a command lacks in one line; it ships the course,
which ``lgcheckpoint course`` copies out (keeping a student's edits) and opens in JupyterLab."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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


def install(bin_: Path, *what, cwd: Path, env: dict, timeout: int = 600) -> None:
    """Our uv installs into the fresh environment (made without a pip of its own): the same files
    ``pip install`` puts there, in a few seconds instead of most of a minute, and nothing is
    compiled up front (Python compiles what a command imports, as it goes)."""
    run([sys.executable, "-m", "uv", "pip", "install", "-q", "--python", bin_ / "python", *what],
        cwd, env, timeout)


def student_env() -> dict:
    """A student's shell: not our PYTHONPATH or venv, and Python writes bytecode as it imports."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def wheel_in_new_venv(work: Path, env: dict, extras: str = "") -> tuple[Path, Path]:
    """The wheel built from a copy of the sources (no stale build/), installed (with ``extras``,
    e.g. "[docs]") into a new virtual environment under ``work``: its bin folder, the wheel.
    ``env`` gets the bin folder first on its PATH."""
    src = work / "src"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", ".ipynb_checkpoints")
    for name in SHIPPED:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=skip)
        else:
            src.mkdir(exist_ok=True)
            shutil.copy(ROOT / name, src / name)
    run([sys.executable, "-m", "uv", "build", "-q", "--wheel", "-o", work / "dist", src], work, env)
    (wheel,) = (work / "dist").glob("lgcheckpoint-*.whl")
    run([sys.executable, "-m", "venv", "--without-pip", work / "venv"], work, env)
    bin_ = work / "venv" / "bin"
    env["PATH"] = f"{bin_}{os.pathsep}{env['PATH']}"
    install(bin_, f"{wheel}{extras}", cwd=work, env=env, timeout=900)
    where = run([bin_ / "python", "-c", "import lgcheckpoint; print(lgcheckpoint.__file__)"],
                work, env).stdout
    assert str(bin_.parent) in where, f"the test must use the installed wheel, not {where}"
    return bin_, wheel


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> tuple[Path, dict, Path]:
    """The wheel installed with no extra into a new virtual environment: its bin folder, a
    student's process env, the wheel."""
    work = tmp_path_factory.mktemp("packaging")
    env = student_env()
    bin_, wheel = wheel_in_new_venv(work, env)
    (work / "run").mkdir()
    return bin_, env, wheel


def test_the_plain_install_runs_the_tour_and_writes_reports(fresh):
    bin_, env, _ = fresh
    cwd = bin_.parent.parent / "run"
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
    no_studio = subprocess.run([bin_ / "lgcheckpoint", "studio", "travel_planner", "--db", "s.db"],
                               cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert no_studio.returncode == 2 and "lgcheckpoint[studio]" in no_studio.stderr
    assert len(no_studio.stderr.strip().splitlines()) == 1, no_studio.stderr


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
    install(bin_, f"{wheel}[viz]", "ipykernel", "nbclient", cwd=cwd, env=env)
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
    assert main(["course", "", "--no-lab"]) == 2  # not the current folder by accident
    assert "empty name" in capsys.readouterr().err
    # a folder that cannot be made (even by root: its parent is a file) is one line, no traceback
    assert main(["course", str(tmp_path / "f.txt" / "c"), "--no-lab"]) == 2
    assert "cannot copy the course" in capsys.readouterr().err


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
