"""A prompt read into the embedded model's cache before it is asked, without changing the answer.

llama.cpp reads a prompt in batches of `PROMPT_BATCH` tokens counted from its first token, and an answer's
rounding depends on where those batches split: a prefix reused from the cache at any other point changes
greedy answers (docs/results/prompt-cache). So a prompt is read ahead only in its whole batches,
each from where the batch before ended, starting at token 0 with the cache off; the request itself, asking
for the cache, then reads the rest (under one batch) as one batch, exactly as a fresh read does. The
answer is the same byte for byte (`python3 -m measurements read_ahead` counts it), and the request's first
token comes that much sooner (~13 s of a 1,400-token prompt for the 1.5B model on two cores).

`PromptReader` talks to llama.cpp's own endpoints (`/apply-template`, `/tokenize`, `/completion`) and
remembers which tokens the server's one slot holds from its reads. The request checks the server's own
count before any token is read (`llama_endpoint`): if another request took the slot meanwhile, it is asked
again without the cache.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from pycapsule.embedded_model.serve import PROMPT_BATCH


class ReadAheadError(Exception):
    """The server could not read ahead (it stopped, refused, or answered another shape)."""


def whole_batches(tokens: int) -> int:
    """How many of a prompt's `tokens` can be read ahead: its whole batches, short of its last token."""
    return PROMPT_BATCH * ((tokens - 1) // PROMPT_BATCH) if tokens > 0 else 0


class PromptReader:
    """Reads prompts ahead into the embedded model's cache (the server at `base_url`, its `/v1` address)."""

    def __init__(self, base_url: str, timeout: float) -> None:
        self._root = base_url.rstrip("/").removesuffix("/v1")
        self._timeout = timeout
        self._lock = threading.Lock()
        self._held: tuple[int, ...] = ()
        """Tokens the slot holds from this reader's reads, in whole batches from token 0."""

    def tokens(self, messages: Sequence[dict[str, str]]) -> list[int]:
        """The prompt's tokens as the server's chat endpoint makes them (a last assistant message is the
        start of the answer, as there)."""
        prompt = self._post("/apply-template", {"messages": list(messages)}).get("prompt")
        if not isinstance(prompt, str):
            raise ReadAheadError("the model server rendered no prompt")
        tokens = self._post("/tokenize", {"content": prompt, "add_special": True, "parse_special": True})
        found = tokens.get("tokens")
        if not isinstance(found, list) or not all(isinstance(token, int) for token in found):
            raise ReadAheadError("the model server gave no tokens")
        return found

    def read(self, messages: Sequence[dict[str, str]], stop: Callable[[], bool],
             turn: threading.Semaphore | None = None) -> int:
        """Reads the prompt's whole batches not yet held, one request per batch, each holding `turn` (the
        client's one request at a time); stops between two batches when `stop()` says so or the turn is
        taken. Returns how many of its tokens are held."""
        tokens = self.tokens(messages)
        wanted = whole_batches(len(tokens))
        done = self.held_for(tokens)
        while done < wanted:
            if stop() or (turn is not None and not turn.acquire(blocking=False)):
                break
            end = done + PROMPT_BATCH
            try:  # from token 0 with the cache off: the server reads it all, whatever it held
                timings = self._post("/completion", {"prompt": tokens[:end], "n_predict": 0,
                                                     "cache_prompt": done > 0}).get("timings", {})
            finally:
                if turn is not None:
                    turn.release()
            if timings.get("cache_n") != done or timings.get("prompt_n") != PROMPT_BATCH:
                # the slot did not hold just what this reader read (another request took it, or it
                # holds more of this prompt than whole batches): read again from token 0
                self.forget()
                if done == 0:
                    raise ReadAheadError("the model server did not read the prompt as asked")
                done = 0
                continue
            done = end
            with self._lock:
                self._held = tuple(tokens[:done])
        return done

    def held_for(self, tokens: Sequence[int]) -> int:
        """How many of `tokens` a request may take from the cache: as many of their whole batches as this
        reader read (the server then reads the rest in batches from a batch's end, as a fresh read does)."""
        with self._lock:
            held = self._held
        limit = min(whole_batches(len(tokens)), len(held))
        same = next((at for at in range(limit) if tokens[at] != held[at]), limit)
        return PROMPT_BATCH * (same // PROMPT_BATCH)

    @property
    def holds(self) -> bool:
        with self._lock:
            return bool(self._held)

    def forget(self) -> None:
        """The slot was used for something else: nothing read ahead is known to be there."""
        with self._lock:
            self._held = ()

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(self._root + path, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                answer = json.loads(response.read())
        except (OSError, ValueError) as error:  # URLError, HTTPError, timeouts, bad JSON
            raise ReadAheadError(f"the model server did not read ahead ({error})") from None
        if not isinstance(answer, dict):
            raise ReadAheadError("the model server answered in another shape")
        return answer
