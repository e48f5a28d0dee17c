"""A real browser test of the viewers, in JupyterLab's light and Dark themes.

tests/browser/viewers.ipynb is first executed by nbclient and saved unsigned, as a student gets a
committed chapter. JupyterLab (127.0.0.1) opens it in headless Debian chromium through Playwright,
once: every check that depends on the theme is made in both themes, switched in the open page by
JupyterLab's own theme command, so both cost one server, one chromium and one render and run:
- before running anything (untrusted), every viewer must show as a PNG (no SVG/HTML is rendered),
  in both themes;
- then run all (once): the static lineage SVG, the version table, the matrix image and the widgets
  render; the player's slider, a click on the lineage and a HITL button round-trip to the kernel;
- readability is measured, not assumed, in both themes: every text in an output has WCAG contrast
  >= 4.5 against its effective background and is >= 12 px; every text in a drawing has contrast
  >= 4.5 against the shape it sits on; every picture is shown large enough that its smallest text
  (10 pt at 100 dpi, 13.9 px) stays >= 12 px (JupyterLab scales a picture wider than the output
  area).
A second test (its own server, so the two run on parallel workers) opens every course chapter
untrusted as committed, with no kernel (04 and 12, which show viewers, freshly executed by
nbclient), once each: it gets the same readability checks in the theme the page is in, then in
the other (chapters alternate the order, so no switch goes back), and must show a picture.
Screenshots (with `pytest --screenshots`, and where a check fails): test-artifacts/
viewers-{light,dark}.png, viewers-untrusted-{light,dark}.png and <chapter>-{light,dark}.png.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from lgcheckpoint.viz import palette
from tests import browser_checks
from tests.browser_checks import THEMES, keep_screenshot, switch_theme, themes_in_order

pytestmark = pytest.mark.browser
HERE = Path(__file__).parent
ARTIFACTS = HERE.parent / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TOKEN = "lgc-browser-test"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
# code cells of viewers.ipynb that display a viewer: opened untrusted, each must show a picture
# (a PNG, or a table: JupyterLab shows untrusted HTML sanitized, inline colours kept); the
# HITLPanel widget has no static picture yet, so 7 of the 8
VIEWER_CELLS = 7
MIN_CONTRAST, MIN_FONT_PX = 4.5, 12
# a picture may be scaled down only so far that its smallest text (palette.SMALL_PT at
# palette.DPI, 13.9 px) still reaches MIN_FONT_PX, the bound every HTML text meets
MIN_SCALE = MIN_FONT_PX / (palette.SMALL_PT * palette.DPI / 72)

# Runs in the page: WCAG contrast of every output text against its effective background,
# of every drawing's text against its shape, and the scale at which each picture is shown.
READABILITY_JS = """
() => {
  const parse = (c) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c || "");
    if (!m) return null;
    const p = m[1].split(",").map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const lum = ({r, g, b}) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const contrast = (a, b) => {
    const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0.5) return c;
    }
    return {r: 255, g: 255, b: 255, a: 1};
  };
  const texts = [], drawings = [], pictures = [];
  for (const root of document.querySelectorAll(".jp-OutputArea-output")) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const el = walker.currentNode.parentElement;
      const text = walker.currentNode.textContent.trim();
      if (!text || !el || el.closest("svg")) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      const style = getComputedStyle(el);
      texts.push({text: text.slice(0, 40), size: parseFloat(style.fontSize),
                  ratio: contrast(parse(style.color), background(el)),
                  where: el.closest("[class*=lgc], .jp-OutputArea-output").className});
    }
    for (const g of root.querySelectorAll("svg g.node, svg g.graph")) {
      const shape = g.querySelector(":scope > polygon, :scope > path, :scope > ellipse");
      const fill = shape && parse(getComputedStyle(shape).fill);
      for (const t of g.querySelectorAll(":scope > text")) {
        const fg = parse(getComputedStyle(t).fill);
        if (!fill || !fg) continue;
        drawings.push({text: t.textContent.slice(0, 40), ratio: contrast(fg, fill)});
      }
    }
    for (const img of root.querySelectorAll("img")) {
      pictures.push({kind: img.src.slice(5, 18), natural: img.naturalWidth,
                     shown: img.getBoundingClientRect().width});
    }
  }
  return {texts, drawings, pictures};
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def executed_notebook(tmp_path_factory) -> Path:
    """viewers.ipynb run by nbclient and saved unsigned: what opening a committed chapter is."""
    import nbformat
    from nbclient import NotebookClient

    def execute(folder: Path) -> None:
        nb = nbformat.read(HERE / "browser" / "viewers.ipynb", as_version=4)
        NotebookClient(nb, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(folder)}}).execute()
        nbformat.write(nb, folder / "viewers.ipynb")

    folder = tmp_path_factory.mktemp("executed-viewers")
    execute(folder)
    return folder / "viewers.ipynb"


CHAPTERS = ["04_versions_seen", "12_inspect_langgraph_db"]  # course chapters that show viewers
# every chapter as committed: what a student opening a fresh clone sees before running anything
COURSE = sorted(p.stem for p in (HERE.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def executed_chapters(tmp_path_factory) -> Path:
    """Course chapters that show viewers, run by nbclient in a copy of notebooks/ (their data
    files beside them) and saved unsigned, as they will be committed."""
    import nbformat
    from nbclient import NotebookClient

    def execute(course: Path) -> None:
        folder = course / "notebooks"
        shutil.copytree(HERE.parent / "notebooks", folder)
        for name in CHAPTERS:
            path = folder / f"{name}.ipynb"
            nb = nbformat.read(path, as_version=4)
            NotebookClient(nb, timeout=120, kernel_name="python3",
                           resources={"metadata": {"path": str(folder)}}).execute()
            nbformat.write(nb, path)

    course = tmp_path_factory.mktemp("executed-course")
    execute(course)
    return course / "notebooks"


@pytest.fixture
def lab(tmp_path, executed_notebook):
    """A JupyterLab server (starting in the light theme) with its own config/data/runtime dirs;
    yields its base URL."""
    yield from jupyterlab(tmp_path, {"viewers": executed_notebook})


@pytest.fixture
def course_lab(tmp_path, executed_chapters):
    """The same with every chapter (the two that show viewers as freshly run, the rest as
    committed), opened without starting a kernel: stored outputs show the same without one, and
    21 idle kernels would only load the machine."""
    chapters = {name: (executed_chapters if name in CHAPTERS else HERE.parent / "notebooks")
                / f"{name}.ipynb" for name in COURSE}
    no_kernel = "--LabApp.notebook_starts_kernel=False"
    yield from jupyterlab(tmp_path, chapters, no_kernel)


def jupyterlab(tmp_path, notebooks: dict[str, Path], *options):
    """JupyterLab serving ``notebooks`` (name -> file, copied) in the light theme; yields its
    base URL (skips, or fails under CI, without chromium)."""
    if not Path(CHROMIUM).exists():
        reason = ("NO CHROMIUM at /usr/bin/chromium: apt-get install chromium "
                  "(never `playwright install`)")
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    root = tmp_path / "root"
    root.mkdir()
    for name, path in notebooks.items():
        shutil.copy(path, root / f"{name}.ipynb")
    with running_lab(root, tmp_path / "home", *options) as url:
        yield url


@contextmanager
def running_lab(root: Path, home: Path, *options: str, theme: str = "light"):
    """JupyterLab on 127.0.0.1 serving ``root``, starting in ``theme`` (a page switches it with
    tests.browser_checks.switch_theme), with its own config/data/runtime dirs under ``home``;
    yields its base URL (the token is TOKEN) and shuts it down after."""
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)  # no news or update toasts over the screenshot
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    (settings / "themes.jupyterlab-settings").write_text(
        json.dumps({"theme": THEMES[theme]}))
    env = dict(os.environ, **{name: str(home / name.lower()) for name in (
        "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR",
        "MPLCONFIGDIR", "JUPYTERLAB_WORKSPACES_DIR")},
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    port = free_port()
    log = open(home / "server.log", "w")  # noqa: SIM115 - closed in the finally below
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={TOKEN}",
         f"--ServerApp.root_dir={root}", "--ServerApp.allow_root=True",
         "--LabApp.expose_app_in_browser=True", "--LabApp.extension_manager=readonly",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", *options],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # a loaded 2-core machine can take a minute
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    log_text = (home / "server.log").read_text()[-2000:]
                    pytest.fail(f"JupyterLab did not start: {log_text}")
                time.sleep(0.2)
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


def open_notebook(page, lab_url: str, name: str = "viewers") -> None:
    page.goto(f"{lab_url}/lab/tree/{name}.ipynb?reset&token={TOKEN}")
    page.wait_for_function("() => window.jupyterapp?.shell.currentWidget?.sessionContext"
                           "?.session?.kernel?.status === 'idle'", timeout=90000)


def check_untrusted(page, theme: str) -> None:
    """Opened before running: the stored outputs are untrusted; each viewer must show its PNG
    (checked in ``theme``, switched to first)."""
    switch_theme(page, theme)
    shot = ARTIFACTS / f"viewers-untrusted-{theme}.png"
    try:
        page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output"
                               f" :is(img, table)').length >= {VIEWER_CELLS}", timeout=30000)
    except Exception:
        keep_screenshot(page, shot, failed=True, full_page=True)  # what was shown instead
        raise
    keep_screenshot(page, shot, full_page=True)
    assert page.locator(".jp-RenderedSVG").count() == 0  # JupyterLab renders no untrusted SVG
    assert_readable(page.evaluate(READABILITY_JS), min_pictures=5, where=f"untrusted, {theme}")


def assert_readable(found: dict, min_pictures: int, where: str) -> None:
    """Contrast and size of every text, and the scale of every picture, as measured in the page
    (``where``: the page and theme measured, named in a failure)."""
    texts, drawings, pictures = found["texts"], found["drawings"], found["pictures"]
    low = [t for t in texts if t["ratio"] < MIN_CONTRAST or t["size"] < MIN_FONT_PX]
    assert texts and not low, (where, low[:10])
    faint = [d for d in drawings if d["ratio"] < MIN_CONTRAST]
    assert not faint, (where, faint[:10])
    shrunk = [p for p in pictures if p["natural"] and p["shown"] < MIN_SCALE * p["natural"]]
    assert len(pictures) >= min_pictures and not shrunk, (where, len(pictures), shrunk)
    worst = min(t["ratio"] for t in texts)
    print(f"readability ({where}): {len(texts)} texts (lowest contrast {worst:.1f}), "
          f"{len(drawings)} drawing texts, {len(pictures)} pictures, none shrunk")


def test_viewers_in_jupyterlab(lab):
    """One page in both themes: untrusted in each, run all, the round trips to the kernel once,
    then readability and a screenshot in each (the theme switched in the page)."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    started = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 6400})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            open_notebook(page, lab)
            themes = themes_in_order(page)  # the page's theme (light), then the other
            for theme in themes:
                check_untrusted(page, theme)
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
            page.wait_for_selector(".lgc-details:has-text('c1: step 0, source loop')",
                                   timeout=10000)
            # HITL: approve -> Command(resume=...) -> status line and a refreshed lineage
            page.locator(".lgc-hitl button:has-text('approve')").first.click()
            page.wait_for_selector(".lgc-hitl-status:has-text('resumed with')", timeout=15000)
            page.wait_for_selector(".lgc-hitl .lgc-svg g.node:has(title:text-is('c4'))",
                                   timeout=10000)
            page.wait_for_timeout(500)  # images decode
            for theme in reversed(themes):  # the page's theme now first: no switch back
                switch_theme(page, theme)
                keep_screenshot(page, ARTIFACTS / f"viewers-{theme}.png", full_page=True)
                assert_readable(page.evaluate(READABILITY_JS), min_pictures=3,
                                where=f"run, {theme}")
            assert errors == [], errors
        finally:
            browser.close()
    print(f"browser test (both themes): {time.monotonic() - started:.1f} s")


# in the running JupyterLab (one page load for all chapters): close every tab, wait until no
# notebook is left in the page, open the next one, with no kernel (nothing runs in this test,
# and 22 kernels started for nothing cost the run about 7 CPU-seconds)
OPEN_ALONE = """
async (path) => {
  const app = window.jupyterapp;
  await app.commands.execute("application:close-all");
  while (document.querySelector(".jp-Notebook")) await new Promise((r) => setTimeout(r, 50));
  const widget = await app.commands.execute(
    "docmanager:open", {path, kernelPreference: {shouldStart: false, canStart: false}});
  await widget.context.ready;
}
"""


# the open notebook is drawn: every cell attached (JupyterLab adds them in batches), every output
# of its model shown, its fonts loaded and every picture decoded (so its shown size is final)
RENDERED = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const notebook = panel && panel.content, cells = notebook?.model?.cells;
  if (!cells || notebook.widgets.length !== cells.length) return false;
  let outputs = 0;
  for (let i = 0; i < cells.length; i++) outputs += cells.get(i).outputs?.length ?? 0;
  return panel.node.querySelectorAll('.jp-OutputArea-child').length >= outputs
    && document.fonts.status === 'loaded'
    && [...panel.node.querySelectorAll('img')].every((img) => img.complete && img.naturalWidth > 0);
}"""


def test_every_chapter_reads_well_in_jupyterlab(course_lab):
    """Every chapter opened once in one page and checked in both themes: in the page's theme,
    then switched to the other (so chapters alternate the order and no switch goes back)."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    started = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            # every cell of a chapter is measured at either height (JupyterLab attaches them all:
            # the same texts, pictures and contrasts were measured at 1600 and 6400 px); the short
            # page costs a fifth less CPU, the tall one shows a whole chapter in a screenshot
            tall = 6400 if browser_checks.SCREENSHOTS else 1600
            page = browser.new_page(viewport={"width": 1280, "height": tall})
            page.goto(f"{course_lab}/lab?reset&token={TOKEN}")
            page.wait_for_function("() => window.jupyterapp", timeout=90000)
            page.evaluate("async () => { await window.jupyterapp.restored; }")
            for name in COURSE:  # a chapter as a student opens it: untrusted, not yet run
                page.evaluate(OPEN_ALONE, f"{name}.ipynb")
                page.wait_for_selector(".jp-RenderedImage img", timeout=60000)
                for theme in themes_in_order(page):
                    switch_theme(page, theme)
                    page.wait_for_function(RENDERED, timeout=30000)
                    shot = ARTIFACTS / f"{name}-{theme}.png"
                    try:
                        assert_readable(page.evaluate(READABILITY_JS), min_pictures=1,
                                        where=f"{name}, {theme}")
                    except AssertionError:
                        keep_screenshot(page, shot, failed=True, full_page=True)
                        raise
                    keep_screenshot(page, shot, full_page=True)
        finally:
            browser.close()
    print(f"browser test, chapters (both themes): {time.monotonic() - started:.1f} s")
