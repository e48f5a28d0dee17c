"""Build the course website offline: ``python tools/website.py [OUT]`` (default build/site).

Sphinx reads the repository (docs/site/conf.py says which files) and renders every notebook from
its stored outputs; ``-W`` turns any warning into a failed build, ``--keep-going`` lists them all
first, ``-E`` rereads every file (a cached page would hide its warnings). Why Sphinx and what the
site holds: docs/website.md.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


FRONT_PAGE = "docs/site/index.html"  # where Sphinx writes the root document (docs/site/index.md)


def build(out: Path) -> int:
    """Run sphinx-build into ``out``; return its exit code (0: built with no warning)."""
    code = subprocess.call([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q",
                            "-b", "html", "-c", ROOT / "docs" / "site", "-d", out / ".doctrees",
                            ROOT, out])
    if code == 0:  # out/index.html opens the front page
        (out / "index.html").write_text(
            f'<!doctype html><meta http-equiv="refresh" content="0; url={FRONT_PAGE}">'
            f'<a href="{FRONT_PAGE}">lgcheckpoint</a>')
    return code


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "site"
    code = build(target.resolve())
    if code == 0:
        print(f"website built: {target / 'index.html'}")
    sys.exit(code)
