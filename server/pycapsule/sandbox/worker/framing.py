"""Frames of the worker protocol (4-byte big-endian length + JSON) on the worker's side."""

import json
import os
import struct

FRAME_HEADER = struct.Struct(">I")
_write = os.write  # bound at import, before any job: a job that replaces os.write does not reach it
MAX_INPUT_FRAME = 64 * 1024 * 1024


def read_frame(stream):
    header = stream.read(FRAME_HEADER.size)
    if len(header) < FRAME_HEADER.size:
        return None
    (size,) = FRAME_HEADER.unpack(header)
    if size > MAX_INPUT_FRAME:
        raise ValueError("frame too large")
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return json.loads(payload.decode("utf-8"))


def write_all(fd, data):
    """All of `data` to `fd`, however many writes that takes (raises OSError)."""
    view = memoryview(data)
    while view:
        view = view[_write(fd, view):]


def write_frame(fd, message):
    payload = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    write_all(fd, FRAME_HEADER.pack(len(payload)) + payload)
