"""Which model to ask when the user names none: never one that cannot chat.

An endpoint lists every model its key may use, and on the hosted OpenAI API most of them cannot answer a
chat request (images, speech, transcription, embeddings, moderation, realtime audio); which one comes first
is not documented. So the listed ids that name such a model are passed over, and on api.openai.com a
documented default chat model that writes code well at a modest price is asked when the key may use it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit

HOSTED_OPENAI_DEFAULT = "gpt-4.1-mini"
"""The model asked on api.openai.com when none is named (`--model` / PYCAPSULE_MODEL change it)."""

_NOT_CHAT = re.compile(
    r"dall-e|gpt-image|(?:^|[-_/])image|tts|whisper|audio|speech|transcri|embed|moderation|realtime|sora"
    r"|^(?:davinci|babbage)-002$|search-api|computer-use",
    re.IGNORECASE,
)


def can_chat(model_id: str) -> bool:
    """False for an id that names a model for images, audio, speech, embeddings, moderation or realtime."""
    return _NOT_CHAT.search(model_id) is None


def is_hosted_openai(base_url: str | None) -> bool:
    """None is the `openai` client's default endpoint, api.openai.com."""
    return base_url is None or (urlsplit(base_url).hostname or "").lower() == "api.openai.com"


def choose_model(listed: Sequence[str], base_url: str | None) -> str | None:
    """The model to ask among those the endpoint lists (None: none of them can chat)."""
    chat = [model for model in listed if can_chat(model)]
    if is_hosted_openai(base_url) and HOSTED_OPENAI_DEFAULT in chat:
        return HOSTED_OPENAI_DEFAULT
    return chat[0] if chat else None


def unnamed_model(base_url: str | None) -> str:
    """What a run asks when no model is named, for the line that says which model answers."""
    if is_hosted_openai(base_url):
        return f"model {HOSTED_OPENAI_DEFAULT}, the default there"
    return "the endpoint's first chat model"
