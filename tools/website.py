"""Build the course website offline: ``python tools/website.py [OUT] [--api-only]``
(default build/site).

Sphinx reads the repository (docs/site/conf.py says which files) and renders every notebook from
its stored outputs; ``-W`` turns any warning into a failed build, ``--keep-going`` lists them all
first, ``-E`` rereads every file (a cached page would hide its warnings). ``--api-only`` builds
just the API reference (and the reading path it links to), the part that reads the installed
package, in a third of the time. tests/test_website.py builds the whole site with the Python of a
fresh environment holding the wheel and its docs extra.
Why Sphinx and what the site holds: docs/website.md.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


FRONT_PAGE = "docs/site/index.html"  # where Sphinx writes the root document (docs/site/index.md)
API_PAGE = "docs/site/api.html"
# the API reference alone: it is the root document, and the one page it links to is read too (a
# partial build by design, so that page being in no table of contents is no warning; ref.python
# is docs/site/conf.py's own, which -D replaces)
API_ONLY = ["-D", "root_doc=docs/site/api",
            "-D", "include_patterns=docs/site/api.md,docs/reading-path.md",
            "-D", "suppress_warnings=ref.python,toc.not_included"]


def build(out: Path, api_only: bool = False) -> int:
    """Run sphinx-build into ``out``; return its exit code (0: built with no warning)."""
    code = subprocess.call([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q",
                            "-b", "html", "-c", ROOT / "docs" / "site", "-d", out / ".doctrees",
                            *(API_ONLY if api_only else []), ROOT, out])
    if code == 0:  # out/index.html opens the front page
        page = API_PAGE if api_only else FRONT_PAGE
        (out / "index.html").write_text(
            f'<!doctype html><meta http-equiv="refresh" content="0; url={page}">'
            f'<a href="{page}">lgcheckpoint</a>')
    return code


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--api-only"]
    if len(args) > 1 or args and args[0].startswith("-"):
        sys.exit("usage: python tools/website.py [OUT] [--api-only]")
    target = Path(args[0]) if args else ROOT / "build" / "site"
    code = build(target.resolve(), api_only="--api-only" in sys.argv[1:])
    if code == 0:
        print(f"website built: {target / 'index.html'}")
    sys.exit(code)
