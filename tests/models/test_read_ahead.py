"""A stub's first request read ahead into the embedded model's cache: the same greedy answer, read sooner.

The real 0.5B model on a function whose prompt carries its module's context (more than one of llama.cpp's
512-token batches), built as the loop builds its first attempt (`loop.first_request`).
"""

from __future__ import annotations

import asyncio
import os
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pycapsule.lsp.protocol import GENERATE_TITLE

MODULE_HEAD = Path(textwrap.__file__).read_text()
STUB = '''

def shorten_each(lines, width):
    """Shorten every line to fit in `width` columns, as `shorten` does.

    >>> shorten_each(["Hello  world!", "a b"], 8)
    ['Hello', 'a b']
    """
'''


def first_request_of(tmp_path: Path, programmer: object) -> list[dict[str, str]]:
    from pycapsule.capsule import capsule_by_qualname
    from pycapsule.config import Settings
    from pycapsule.context import module_context
    from pycapsule.loop import first_request

    module = tmp_path / "wrapping.py"
    module.write_text(MODULE_HEAD + STUB)
    capsule = capsule_by_qualname(module.read_text(), "shorten_each", module)
    return first_request(capsule, programmer=programmer, settings=Settings(),  # type: ignore[arg-type]
                         context=module_context(capsule))


@pytest.mark.model
@pytest.mark.timeout(900)
def test_a_prompt_read_ahead_gives_the_same_greedy_answer_and_survives_another_client(tmp_path: Path) -> None:
    from pycapsule.config import Settings
    from pycapsule.embedded_model.endpoint import start_local_endpoint
    from pycapsule.model_client import ModelSettings, Programmer

    settings = Settings(max_tokens=96)
    with start_local_endpoint("0.5b") as endpoint:
        def client() -> Programmer:
            return Programmer(ModelSettings.from_settings(
                settings, base_url=endpoint.base_url, model=endpoint.model, one_at_a_time=True, local=True))

        programmer, another = client(), client()
        messages = first_request_of(tmp_path, programmer)
        fresh = programmer.complete(messages)
        held = programmer.read_ahead(messages)
        read_ahead = programmer.complete(messages)

        assert programmer.read_ahead(messages) == held  # still held: nothing read again
        another.complete([{"role": "user", "content": "Say hi."}])  # another process takes the slot
        after_another = programmer.complete(messages)

    assert held >= 512 and held % 512 == 0 and held < fresh.usage.prompt_tokens, (held, fresh.usage)
    assert fresh.usage.cached_tokens == 0
    assert read_ahead.usage.cached_tokens == held
    assert read_ahead.text == fresh.text
    # the request found the slot changed before reading a token and read its whole prompt instead
    assert after_another.usage.cached_tokens == 0
    assert after_another.text == fresh.text


STUBS = ['''

def shorten_each(lines, width):
    """Shorten every line to fit in `width` columns.

    >>> shorten_each(["Hello  world!"], 8)
    ['Hello']
    """
''', '''

def fill_each(paragraphs, width):
    """Fill every paragraph to `width` columns.

    >>> fill_each(["a b"], 8)
    ['a b']
    """
''', '''

def dedent_each(blocks):
    """Dedent every block.

    >>> dedent_each(["  a"])
    ['a']
    """
''']


def reading_messages(editor: Any) -> list[str]:
    """The progress lines of the runs so far that report reading the prompt."""
    return [report.message for reports in editor.client.progress_reports.values() for report in reports
            if getattr(report, "message", None) and "reading the prompt:" in report.message]


@pytest.mark.timeout(300)
async def test_the_editor_reads_a_stub_ahead_once_the_user_pauses_on_it_and_not_while_they_type(
        tiny_env: Path, runtime_dir: Path, tmp_path: Path) -> None:
    """The tiny random model (its answers are gibberish; the runs fail): what matters is what the run
    of a stub reads from the cache after the cursor rested on it, and after the user typed instead."""
    from pycapsule.lsp.read_ahead import PAUSE

    from tests.lsp.conftest import new_project
    from tests.lsp.editor import start_editor, stop_editor

    project = new_project(tmp_path / "project")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYCAPSULE_"))}
    env.update(PYCAPSULE_MODEL_DIR=str(tiny_env), PYCAPSULE_EMBEDDED_MODEL_SIZE="tiny",
               PYCAPSULE_RUNTIME_DIR=str(runtime_dir), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_DATA_HOME=str(tmp_path / "data"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    editor = await start_editor("visual-studio-code", project, env,
                                {"pycapsule": {"maxAttempts": 1, "maxTokens": 64, "projectTests": False}})
    try:
        uri = editor.open("wrapping.py", MODULE_HEAD + "".join(STUBS))

        def body_line(name: str) -> int:
            text = editor.text(uri)
            return text[:text.index(f"def {name}(")].count("\n") + 2

        async def generate(name: str) -> list[int]:
            """Runs "Generate & self-debug" on the stub `name`: the prompt tokens it took from the cache."""
            actions = await editor.code_actions(uri, body_line(name))
            [action] = [a for a in actions if a.title == GENERATE_TITLE]
            editor.client.progress_reports.clear()
            result = await editor.run(action.command)
            assert result["status"] in ("failed", "gave_up", "passed"), result
            return [int(found.replace(",", "")) for line in reading_messages(editor)
                    for found in re.findall(r"\(([\d,]+) from the cache\)", line)]

        assert await generate("shorten_each") == []  # the first run starts the model

        # the cursor rests on a stub, but the user types before the pause ends: nothing is read ahead
        await editor.code_actions(uri, body_line("fill_each"))
        editor.replace(uri, "import re\n", "import re  # typing\n")
        await asyncio.sleep(PAUSE + 3)
        assert await generate("fill_each") == []

        # the cursor rests on a stub and the user pauses: its run takes its prompt's batches from the cache
        await editor.code_actions(uri, body_line("dedent_each"))
        await asyncio.sleep(PAUSE + 3)
        cached = await generate("dedent_each")
        assert cached and all(count > 0 and count % 512 == 0 for count in cached), cached
    finally:
        await stop_editor(editor)
