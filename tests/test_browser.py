"""A real browser test of the viewers: JupyterLab on 127.0.0.1, tests/browser/viewers.ipynb opened in
headless Debian chromium through Playwright, run all, then check that the static lineage SVG, the
version table, the matrix image and the widgets rendered, that the player's slider, a click on the
lineage and a HITL button round-trip to the kernel, and save test-artifacts/viewers.png."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
HERE = Path(__file__).parent
ARTIFACT = HERE.parent / "test-artifacts" / "viewers.png"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TOKEN = "lgc-browser-test"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server with its own config/data/runtime dirs; yields its base URL."""
    if not Path(CHROMIUM).exists():
        reason = "NO CHROMIUM at /usr/bin/chromium: apt-get install chromium (never `playwright install`)"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    shutil.copy(HERE / "browser" / "viewers.ipynb", root / "viewers.ipynb")
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)  # no news or update toasts over the screenshot
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env = dict(os.environ, **{name: str(home / name.lower()) for name in (
        "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR",
        "MPLCONFIGDIR", "JUPYTERLAB_WORKSPACES_DIR")}, JUPYTERLAB_SETTINGS_DIR=str(home / "settings"))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    port = free_port()
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}",
         f"--ServerApp.root_dir={root}", "--ServerApp.allow_root=True",
         "--LabApp.expose_app_in_browser=True", "--LabApp.extension_manager=readonly",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("JupyterLab did not start: " + (tmp_path / "server.log").read_text()[-2000:])
        yield url
    finally:
        try:
            urllib.request.urlopen(urllib.request.Request(f"{url}/api/shutdown?token={TOKEN}",
                                                          method="POST"), timeout=5)
        except OSError:
            pass
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.terminate()
            server.wait(timeout=10)
        log.close()


def test_viewers_in_jupyterlab(lab):
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 2400})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{lab}/lab/tree/viewers.ipynb?reset&token={TOKEN}")
            page.wait_for_function("() => window.jupyterapp?.shell.currentWidget?.sessionContext"
                                   "?.session?.kernel?.status === 'idle'", timeout=30000)
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            for selector in [
                ".jp-RenderedSVG :is(svg, img)",  # static lineage (JupyterLab shows SVG as <img>)
                ".lgc-svg svg g.node",  # the clickable lineage widget
                "table.lgc-table td.changed",  # the version table, changed cells marked
                ".jp-RenderedImage img",  # the versions_seen matrix PNG
                ".lgc-player .noUi-handle",  # the player's slider
                ".lgc-frame:has-text('frame 4/4')",
                ".lgc-hitl button:has-text('approve')",
                ".lgc-storage-view table",
            ]:
                page.wait_for_selector(selector, timeout=20000, state="attached")
            # slider -> kernel -> new frame
            handle = page.locator(".lgc-player .noUi-handle").first
            handle.focus()
            page.keyboard.press("ArrowLeft")
            page.wait_for_selector(".lgc-frame:has-text('frame 3/4')", timeout=10000)
            # click a checkpoint in the lineage widget -> Python -> details
            page.locator(".lgc-svg g.node:has(title:text-is('c1'))").first.click()
            page.wait_for_selector(".lgc-details:has-text('c1: step 0, source loop')", timeout=10000)
            # HITL: approve -> Command(resume=...) -> status line and a refreshed lineage
            page.locator(".lgc-hitl button:has-text('approve')").first.click()
            page.wait_for_selector(".lgc-hitl-status:has-text('resumed with')", timeout=15000)
            page.wait_for_selector(".lgc-hitl .lgc-svg g.node:has(title:text-is('c4'))", timeout=10000)
            page.locator(".lgc-hitl").first.scroll_into_view_if_needed()
            ARTIFACT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACT), full_page=True)
            assert errors == [], errors
        finally:
            browser.close()
    assert time.monotonic() - started < 60
