"""The studio page in a real browser: ``lgcheckpoint studio travel_planner --db file`` (Voilà)
opened in headless Debian chromium through Playwright. The page needs the token the command
prints. Step twice, set a breakpoint by clicking a node, run into the interrupt (its question
and the edit label measured for WCAG AA contrast), double-click approve, fork an old checkpoint
with an edited value and continue; check the lineage and the tables (they fit or scroll) after
each. The Dark page then runs into the next interrupt and is measured and shot with it pending.
Screenshots go to test-artifacts/. The SQLite file is then read directly: the page wrote what
it showed; after SIGTERM no -wal/-shm file is left beside it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.browser_checks import assert_contrast, assert_tables_fit_or_scroll, keep_screenshot
from tests.test_browser import ARGS, CHROMIUM, free_port

pytestmark = pytest.mark.browser
ARTIFACTS = Path(__file__).parent.parent / "test-artifacts"


@pytest.fixture
def studio_page(tmp_path):
    """``lgcheckpoint studio`` serving the travel planner on a SQLite file; yields its url (with
    the token it printed), the db, the bare url and ``stop()`` (SIGTERM, as a service manager)."""
    if not Path(CHROMIUM).exists():
        reason = "NO CHROMIUM at /usr/bin/chromium: apt-get install chromium"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    home, db, port = tmp_path / "home", tmp_path / "trip.sqlite", free_port()
    env = dict(os.environ, **{name: str(home / name.lower()) for name in (
        "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR",
        "MPLCONFIGDIR")})
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    log = open(tmp_path / "studio.log", "w")  # noqa: SIM115 - closed after the server stops
    server = subprocess.Popen(
        [sys.executable, "-m", "lgcheckpoint", "studio", "travel_planner", "--db", str(db),
         "--thread", "demo", "--port", str(port), "--no-browser"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    bare = f"http://127.0.0.1:{port}/"

    def stop():
        if server.returncode is None:
            server.send_signal(signal.SIGTERM)  # the command passes it on to Voilà
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=10)

    try:
        for _ in range(600):  # Voilà starts in 2-30 s on a busy machine
            printed = re.search(r"lgcheckpoint studio: (http://\S+)",
                                (tmp_path / "studio.log").read_text())
            try:
                if printed:
                    urllib.request.urlopen(printed.group(1), timeout=60)
                    break
            except OSError:
                pass
            if server.poll() is not None:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the studio page did not start: " + (tmp_path / "studio.log").read_text())
        assert server.poll() is None, (tmp_path / "studio.log").read_text()
        yield SimpleNamespace(url=printed.group(1), db=db, bare=bare, stop=stop)
    finally:
        stop()
        log.close()


def test_the_studio_page_steps_breaks_answers_and_forks(studio_page):
    from playwright.sync_api import sync_playwright

    url, db = studio_page.url, studio_page.db
    assert "?token=" in url  # printed with the token, as Jupyter does
    refused = urllib.request.urlopen(studio_page.bare, timeout=60)  # without it: a login page
    assert "/login" in refused.url and b"lgc-studio" not in refused.read()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url, timeout=120000)
            page.wait_for_selector(".lgc-studio .lgc-topology svg g.node", timeout=120000)
            assert page.locator(".jp-InputArea, .jp-Cell-inputWrapper").count() == 0  # no code
            status = page.locator(".lgc-status")
            lineage = ".lgc-lineage svg g.node"

            def wait_status(text: str):
                page.wait_for_selector(f".lgc-status:has-text({text!r})", timeout=60000)

            def wait_count(selector: str, count: int):  # fails with a timeout if it never is
                page.wait_for_function("([s, n]) => document.querySelectorAll(s).length === n",
                                       arg=[selector, count], timeout=30000)

            page.locator("button.lgc-step").click()
            wait_status("head c1 (step 0)")
            page.locator("button.lgc-step").click()
            wait_status("head c2 (step 1), next: check_weather, find_hotels")
            wait_count(lineage, 3)
            page.wait_for_selector(".lgc-frame:has-text('draft_plan wrote plan')", timeout=30000)
            wait_count(".lgc-seen td.fires", 2)  # the two next nodes' rows

            page.locator(".lgc-topology g.node:has(title:text-is('book'))").click()  # breakpoint
            page.wait_for_selector(".lgc-break-before.mod-active:has-text('before book')",
                                   timeout=30000)
            page.locator("button.lgc-run").click()
            wait_status("waits for an answer")
            page.wait_for_selector(".lgc-interrupts:has-text('Approve this plan?')", timeout=30000)
            edit = page.locator(".lgc-edit input")
            assert edit.input_value() == ""  # not prefilled with the question
            assert edit.bounding_box()["width"] >= 400, edit.bounding_box()
            ARTIFACTS.mkdir(exist_ok=True)
            keep_screenshot(page, ARTIFACTS / "studio-interrupt-light.png", full_page=True)
            assert_contrast(page, [".lgc-question", ".lgc-edit .widget-label"])
            assert_tables_fit_or_scroll(page, ".lgc-studio table.lgc-table")
            page.locator(".lgc-interrupts button.lgc-approve").dblclick()  # a double click
            wait_status("next: book (breakpoint)")
            wait_count(".lgc-interrupts button", 0)
            page.wait_for_timeout(1000)  # the second click reaches the kernel too
            assert "refused" not in status.inner_text()  # the first click's result stays shown
            assert "next: book (breakpoint)" in status.inner_text()
            wait_count(lineage, 5)
            wait_count(".lgc-versions tbody tr", 5)

            # time travel: the checkpoint where the plan was drafted, forked with 5 days
            page.locator(".lgc-lineage g.node:has(title:text-is('c2'))").click()
            page.wait_for_selector(".lgc-frame:has-text('c2 · step 1 · loop')", timeout=30000)
            values = page.locator(".lgc-fork-values textarea")
            assert '"days": 3' in values.input_value()
            values.fill('{"days": 5, "plan": "5-day trip to Kyoto"}')
            page.locator(".lgc-fork-as select").select_option("draft_plan")
            page.locator("button.lgc-fork").click()
            wait_status("forked c2: head c5 (step 2), next: check_weather, find_hotels")
            page.wait_for_selector(".lgc-lineage text:text-is('branch 1')", timeout=30000)
            page.keyboard.press("s")  # continue the fork, by key
            wait_status("head c6 (step 3)")
            wait_count(lineage, 7)
            wait_count(".lgc-versions tbody tr", 7)
            page.wait_for_selector(".lgc-frame:has-text('check_weather wrote notes')",
                                   timeout=30000)
            assert "refused" not in status.inner_text()
            assert_tables_fit_or_scroll(page, ".lgc-studio table.lgc-table")
            keep_screenshot(page, ARTIFACTS / "studio-light.png", full_page=True)
            history = read_history(db)
            assert len(history) == 7 and history["c5"].source == "update"
            assert history["c5"].parent == "c2" and history["c6"].values["days"] == 5

            dark = browser.new_page(viewport={"width": 1500, "height": 1900})
            dark.goto(url + "&theme=dark", timeout=120000)  # the same page, JupyterLab Dark
            dark.wait_for_selector(".lgc-lineage svg g.node:has(title:text-is('c6'))",
                                   timeout=120000)
            assert dark.evaluate("document.body.dataset.jpThemeLight") == "false"
            dark.locator("button.lgc-run").click()  # on to the fork's own question
            dark.wait_for_selector(".lgc-interrupts:has-text('Approve this plan?')",
                                   timeout=60000)
            dark.wait_for_timeout(500)
            keep_screenshot(dark, ARTIFACTS / "studio-dark.png", full_page=True)
            assert_contrast(dark, [".lgc-question", ".lgc-edit .widget-label", ".lgc-status"])
            assert_tables_fit_or_scroll(dark, ".lgc-studio table.lgc-table")
            assert errors == [], errors
            history = read_history(db)  # the dark page's run stopped in review: c6 asks
            assert len(history) == 7 and history.head.interrupts
            studio_page.stop()  # with the pages still open: their kernels hold the saver
        finally:
            browser.close()
    left = sorted(p.name for p in db.parent.iterdir() if p.name in (db.name + "-wal",
                                                                    db.name + "-shm"))
    assert left == [], f"SIGTERM left {left}: the page's kernel did not close its saver"
    assert shutil.which("chromium") or Path(CHROMIUM).exists()


def read_history(db: Path):
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver
    from lgcheckpoint.viz import load_history

    with SqliteSaver.from_conn_string(str(db)) as saver:
        return load_history(saver, {"configurable": {"thread_id": "demo"}})
