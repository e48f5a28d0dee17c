"""The course website (tools/website.py), built as a student with the wheel would build it: the
wheel installed with the ``docs`` extra in a fresh virtual environment, so the API reference
documents the installed package (every module of the wheel imported). It builds offline with no
Sphinx warning, each chapter shows every picture its notebook stores, and in Chromium every
page's pictures load and no internal link (page or anchor) is broken."""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import json
import re
import shutil
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from website import FRONT_PAGE  # noqa: E402

from tests.test_wheel import run, student_env, wheel_in_new_venv  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The website, built once by the one command (any warning fails it) with the Python of a
    fresh environment holding the wheel and its docs extra."""
    work = tmp_path_factory.mktemp("website")
    env = student_env()
    bin_, _ = wheel_in_new_venv(work, env, "[docs]")
    run([bin_ / "python", ROOT / "tools" / "website.py", work / "site"], work, env, timeout=900)
    return work / "site"


def stored_pictures(notebook: Path) -> set[str]:
    """Digests of the PNGs a notebook's outputs store."""
    cells = json.loads(notebook.read_text())["cells"]
    return {hashlib.sha256(base64.b64decode(output["data"]["image/png"])).hexdigest()
            for cell in cells for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {})}


def test_every_chapter_shows_every_picture_its_notebook_stores(site):
    chapters = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert len(chapters) >= 21
    for notebook in chapters:
        page = site / "notebooks" / f"{notebook.stem}.html"
        sources = re.findall(r'<img[^>]+src="([^"]+)"', page.read_text())
        shown = {hashlib.sha256((page.parent / unquote(src)).read_bytes()).hexdigest()
                 for src in sources if not src.startswith(("data:", "http"))}
        missing = stored_pictures(notebook) - shown
        assert not missing, f"{page.name} lacks {len(missing)} of its notebook's pictures"


def test_the_site_has_the_reading_path_the_docs_and_an_api_reference(site):
    front = site / FRONT_PAGE
    linked = {(front.parent / href.split("#")[0]).resolve().relative_to(site).as_posix()
              for href in re.findall(r'href="([^":#][^"]*)"', front.read_text())}
    for page in ("reading-path", "differences", "measured", "langgraph-suite", "site/api"):
        assert f"docs/{page}.html" in linked, f"the front page does not link docs/{page}"
    api = (site / "docs" / "site" / "api.html").read_text()
    for documented in ("lgcheckpoint.graph.StateGraph", "lgcheckpoint.viz.lineage.LineageGraph",
                       "lgcheckpoint.checkpoint.sqlite.SqliteSaver"):
        assert f'id="{documented}"' in api, f"the API reference lacks {documented}"


def test_the_api_reference_documents_every_module_of_the_installed_wheel(site):
    """Each module of the source tree has its section, read from the installed wheel (a module
    the wheel lacks would fail to import, and -W would fail the build)."""
    api = (site / "docs" / "site" / "api.html").read_text()
    modules = [".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for p in (ROOT / "lgcheckpoint").rglob("*.py") if p.name != "__main__.py"]
    missing = [m for m in modules if f'id="module-{m}"' not in api]
    assert len(modules) > 100 and not missing, f"the API reference lacks {missing[:5]}"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site; the test's output stays its own."""

    def log_message(self, *args):
        pass


@pytest.mark.browser
def test_in_chromium_every_picture_loads_and_no_internal_link_is_broken(site):
    from playwright.sync_api import sync_playwright

    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}/"
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if "_static" not in p.parts and p != site / "index.html")
    ids, links, broken_pictures = {}, [], []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            tab = browser.new_page()
            tab.goto(base)  # index.html sends the reader on to the front page
            tab.wait_for_url(base + FRONT_PAGE)
            for page in pages:
                tab.goto(base + page, wait_until="load")
                found = tab.evaluate("""() => ({
                    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
                    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
                    pictures: [...document.images].map(
                        i => [i.src, i.complete && i.naturalWidth > 0]),
                })""")
                ids[page] = set(found["ids"])
                links += [(page, href) for href in found["links"] if href.startswith(base)]
                broken_pictures += [(page, src) for src, ok in found["pictures"] if not ok]
            browser.close()
    finally:
        server.shutdown()
    assert not broken_pictures, f"pictures that did not load: {broken_pictures[:5]}"
    broken = []
    for page, href in links:
        target, anchor = urldefrag(href)
        path = unquote(urlparse(target).path).lstrip("/") or "index.html"
        if path.endswith("/"):
            path += "index.html"
        if not (site / path).is_file():
            broken.append((page, href))
        elif anchor and path in ids and anchor not in ids[path]:
            broken.append((page, href))
    assert len(pages) > 30 and len(links) > 300
    assert not broken, f"{len(broken)} broken internal links, e.g. {broken[:5]}"
