"""Ship the course in the wheel: the chapters and their data (notebooks/, without the sources in
notebooks/src) become lgcheckpoint/course_notebooks, which ``lgcheckpoint course`` copies out.
Everything else about the package is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithCourse(build_py):
    """build_py, then the course beside the modules (an editable install reads notebooks/)."""

    def run(self):
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "lgcheckpoint" / "course_notebooks"
        shutil.rmtree(target, ignore_errors=True)  # a stale build never ships an old chapter
        shutil.copytree("notebooks", target, ignore=shutil.ignore_patterns(
            "src", ".ipynb_checkpoints", "*.sqlite-wal", "*.sqlite-shm", "__pycache__"))


setup(cmdclass={"build_py": BuildWithCourse})
