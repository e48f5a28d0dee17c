"""Measurements the browser tests take in the page: the WCAG contrast of chosen texts against
the colours they are rendered on, and whether a table fits its output or scrolls (never cut).
And the switch between JupyterLab's light and Dark themes in an open page, so that one page (one
server, one chromium, one notebook render or kernel run) is measured in both. And the
screenshots a person looks at, kept when the run asks for them."""

from __future__ import annotations

MIN_CONTRAST = 4.5  # WCAG AA for body text
# `pytest --screenshots` (tests/conftest.py) sets this: every page the browser tests check is then
# kept as a PNG in test-artifacts/ to look at; without it they are taken only where a check fails
SCREENSHOTS = False
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}

# ([theme name, is light]) -> the theme is applied and shown: JupyterLab names it on <body> once
# its stylesheet has loaded, has shown its shell again (it hides it while swapping stylesheets)
# and removed its splash screen (a grey veil that fades out over the page, 200 ms), and the
# page's paper colour (--jp-layout-color0) resolves light or dark as the theme is
THEME_SHOWN_JS = """
([name, light]) => {
  const body = document.body;
  if (body.dataset.jpThemeName !== name || window.jupyterapp.shell.isHidden
      || document.getElementById("jupyterlab-splash")) return false;
  const probe = document.createElement("div");
  probe.style.color = "var(--jp-layout-color0)";
  body.appendChild(probe);
  const [r, g, b] = getComputedStyle(probe).color.match(/[\\d.]+/g).map(Number);
  probe.remove();
  return (0.2126 * r + 0.7152 * g + 0.0722 * b > 128) === light;
}
"""

# (selectors) -> every visible text inside them, with its contrast against its effective background
CONTRAST_JS = """
(selectors) => {
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
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0.5) return c;
    }
    return {r: 255, g: 255, b: 255, a: 1};
  };
  const found = [];
  for (const selector of selectors) {
    for (const root of document.querySelectorAll(selector)) {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      while (walker.nextNode()) {
        const el = walker.currentNode.parentElement, text = walker.currentNode.textContent.trim();
        if (!text || !el || el.getBoundingClientRect().width === 0) continue;
        const fg = parse(getComputedStyle(el).color), bg = background(el);
        const [hi, lo] = [lum(fg), lum(bg)].sort((x, y) => y - x);
        found.push({selector, text: text.slice(0, 50), ratio: (hi + 0.05) / (lo + 0.05),
                    color: getComputedStyle(el).color, background: `rgb(${bg.r},${bg.g},${bg.b})`});
      }
    }
  }
  return found;
}
"""

# (selector) -> for each table: is its left edge cut, does it fit, or does its box scroll visibly
TABLES_JS = """
(selector) => [...document.querySelectorAll(selector)].map((table) => {
  const box = table.closest(".lgc-scroll") || table.parentElement;
  const area = box.closest(".jp-OutputArea-output, .lgc-paper, .jp-Cell") || document.body;
  const [t, b, a] = [table, box, area].map((e) => e.getBoundingClientRect());
  const overflow = getComputedStyle(box).overflowX;
  return {table: table.className, width: Math.round(t.width), box: Math.round(b.width),
          cutLeft: t.left < b.left - 1, fits: t.right <= b.right + 1,
          scrolls: ["auto", "scroll"].includes(overflow) && box.scrollWidth > box.clientWidth,
          boxInside: b.left >= a.left - 1 && b.right <= a.right + 1};
})
"""


def assert_contrast(page, selectors: list[str], least: int = 1) -> list[dict]:
    """Every text inside ``selectors`` reaches WCAG AA against what it is drawn on."""
    found = page.evaluate(CONTRAST_JS, selectors)
    for selector in selectors:
        assert sum(f["selector"] == selector for f in found) >= least, (selector, found)
    low = [f for f in found if f["ratio"] < MIN_CONTRAST]
    assert not low, low
    return found


def assert_tables_fit_or_scroll(page, selector: str) -> list[dict]:
    """No table is cut: each fits its box or its box scrolls, and the box stays in its output."""
    tables = page.evaluate(TABLES_JS, selector)
    assert tables, f"no table matches {selector}"
    bad = [t for t in tables if t["cutLeft"] or not (t["fits"] or t["scrolls"])
           or not t["boxInside"]]
    assert not bad, bad
    return tables


def themes_in_order(page) -> list[str]:
    """Both themes, the page's current one first: checking both then takes one switch."""
    page.wait_for_function("() => document.body.dataset.jpThemeName", timeout=30000)
    current = page.evaluate("() => document.body.dataset.jpThemeName")
    return sorted(THEMES, key=lambda theme: THEMES[theme] != current)


def switch_theme(page, theme: str) -> None:
    """Switch the open JupyterLab to ``theme`` ("light" or "dark"; nothing to do if it is on)
    and return once the theme is drawn: its stylesheet applied, the shell shown and laid out."""
    name = THEMES[theme]
    page.evaluate("async (name) => { if (document.body.dataset.jpThemeName !== name) await"
                  " window.jupyterapp.commands.execute('apputils:change-theme', {theme: name}); }",
                  name)
    page.wait_for_function(THEME_SHOWN_JS, arg=[name, theme == "light"], timeout=30000,
                           polling=100)
    # two frames: JupyterLab re-fits the shown shell in one, the browser lays it out by the next
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def keep_screenshot(target, path, failed: bool = False, **options) -> None:
    """Save a screenshot of a page or an element to ``path`` when the run asked for them, or when
    a check just ``failed``: a full page costs about a third of a CPU second, and only a person
    reads it (the checks read the page itself)."""
    if SCREENSHOTS or failed:
        path.parent.mkdir(exist_ok=True)
        target.screenshot(path=str(path), **options)
