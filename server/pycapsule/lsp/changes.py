"""Awaiting the editor's next change to a document (`didChange`): how the server learns that an
edit it sent was applied, or that the text moved on, when the editor's answer says nothing or never comes."""

from __future__ import annotations

import asyncio


class ChangeSignal:
    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Event] = {}

    def changed(self, uri: str) -> None:
        """Called after the workspace has taken a `didChange`."""
        event = self._waiting.pop(uri, None)
        if event is not None:
            event.set()

    def next_change(self, uri: str) -> asyncio.Event:
        """An event set by the next change of `uri` (the same event for every waiter until then)."""
        return self._waiting.setdefault(uri, asyncio.Event())

    async def wait(self, uri: str, seconds: float) -> bool:
        """True when `uri` changed within `seconds`."""
        try:
            await asyncio.wait_for(self.next_change(uri).wait(), max(seconds, 0))
        except TimeoutError:
            return False
        return True
