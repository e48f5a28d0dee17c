"""The examples people read first must run: the package docstring and the README's example."""

import doctest
import re
from pathlib import Path

import lgcheckpoint

README = Path(__file__).resolve().parent.parent / "README.md"


def test_package_docstring_example_runs():
    result = doctest.testmod(lgcheckpoint, verbose=False)
    assert result.attempted >= 10 and result.failed == 0


def test_readme_example_interrupts_and_resumes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the example writes posts.sqlite in the working directory
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "('approve',)"
    assert (tmp_path / "posts.sqlite").exists()
