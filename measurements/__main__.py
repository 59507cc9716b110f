"""`python3 -m measurements NAME [options]`: one measurement tool per hot path, each a module here that
declares its options (`add_arguments`) next to what it measures (`run`)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

TOOLS = {
    "sandbox": "per-job latency of a trivial doctest, warm vs cold, per sandbox backend",
    "model": "the embedded model through HTTP: time to first token, tokens/s",
    "loop": "the self-debugging loop's own overhead per attempt, against a bare sandbox run",
    "lsp": "code-action / hover latency and save-to-diagnostics time, through a real LSP client",
    "capsule": "reading and splicing capsules on a large module, as ratios to ast.parse",
    "answers": "what the answers are made of: the body kept, the repeated signature, the rest",
    "generate": "time to a passing body per answer_prefill value, every stub of a file, interleaved",
    "slots": "several answers at once from the embedded model's parallel slots, against one",
    "speculative": "speculative decoding (n-gram lookup, a draft model) against none: speed, same answers",
    "prompt_cache": "a sampled retry reading attempt 1's prompt from the cache, against reading it again",
    "read_ahead": "a stub's first request read ahead into the cache, against reading it fresh: same answer?",
    "prompt_size": "a stub's first request with less module context or the body only, against the shipped",
    "strength": "the mutation check of a passing body: seconds and mutants per body, against its examples",
    "answer_ends": "recorded answers replayed through the answer watch: what it ends, cuts and saves",
    "echo": "a first answer given the rest of the head it repeats, against writing it: speed, same answer?",
}
"""Each tool's module in `measurements`, with the line `--help` shows for it."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python3 -m measurements",
        description="Measure pycapsule's hot paths: medians, and ratios to a baseline timed in the same run.",
    )
    tools = parser.add_subparsers(dest="tool", required=True, metavar="TOOL")
    for name, summary in TOOLS.items():
        module = importlib.import_module(f"measurements.{name}")
        module.add_arguments(tools.add_parser(name, help=summary, description=module.__doc__,
                                              formatter_class=argparse.RawDescriptionHelpFormatter))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(importlib.import_module(f"measurements.{args.tool}").run(args))


if __name__ == "__main__":
    sys.exit(main())
