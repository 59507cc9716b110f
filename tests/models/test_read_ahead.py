"""A stub's first request read ahead into the embedded model's cache: the same greedy answer, read sooner.

The real 0.5B model on a function whose prompt carries its module's context (more than one of llama.cpp's
512-token batches), built as the loop builds its first attempt (`loop.first_request`).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

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
