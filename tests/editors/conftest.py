from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.editors.scenario import model_replies
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def model_server() -> Iterator[FakeOpenAI]:
    """The scripted model, on 127.0.0.1, answering the scenario's two replies in order."""
    with FakeOpenAI() as server:
        server.queue(*model_replies())
        yield server
