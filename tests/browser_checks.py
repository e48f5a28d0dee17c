"""Measurements the browser tests take in the page: the WCAG contrast of chosen texts against
the colours they are rendered on, and whether a table fits its output or scrolls (never cut)."""

from __future__ import annotations

MIN_CONTRAST = 4.5  # WCAG AA for body text

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
