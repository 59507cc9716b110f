"""A `PATH::QUALNAME` the file does not define (issue 49 item 5): `check` and `generate` say it in the same
words, naming the functions most likely meant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.projects.cli import pycapsule

MODULE = '''def area(r):
    """
    >>> area(1)
    3
    """


class Shapes:
    def square(self, side):
        """
        >>> Shapes().square(2)
        4
        """
'''


@pytest.mark.parametrize(("name", "hint"), [
    ("aera", "; did you mean 'area'?"),
    ("square", "; did you mean 'Shapes.square'?"),
    ("Shapes.sqaure", "; did you mean 'Shapes.square'?"),
    ("volume", " (its functions: area, Shapes.square"),
])
def test_check_and_generate_name_a_missing_function_alike_with_what_was_meant(
        tmp_path: Path, project: Path, fake: FakeOpenAI, name: str, hint: str) -> None:
    module = project / "shapes.py"
    module.write_text(MODULE)
    sentence = f"there is no function named '{name}' in {module}{hint}"
    said = {}
    for command in ("check", "generate"):
        done = pycapsule(command, f"{module}::{name}", home=tmp_path, model_url=fake.base_url)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        [line] = done.stderr.splitlines()
        said[command] = line.partition(": ")[2]
        as_json = pycapsule(command, f"{module}::{name}", "--json", home=tmp_path, model_url=fake.base_url)
        error = json.loads(as_json.stdout)["error"]
        assert error["kind"] == "usage" and error["message"].startswith(sentence), error
    assert said["check"].rstrip(".") == said["generate"].rstrip("."), said
    assert said["check"].startswith(sentence), said
    assert fake.chat_requests == []
