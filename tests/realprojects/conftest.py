"""Fixtures of the real-project tests: the scripted model server."""

from tests.fakes.openai_server import openai_server  # noqa: F401 (a fixture)
