"""The `pycapsule` command line: one parser, each subcommand implemented in `pycapsule.commands.<name>`.

Subcommand modules are imported only when chosen, so `pycapsule check` does not pay for the
language server or the model runtime.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pycapsule import __version__


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="PATH[::QUALNAME]", help="a Python file, optionally ::Class.method")


def _json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")


def _backend(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        metavar="NAME",
        help="sandbox backend: bwrap, docker or unsafe-subprocess (default: the first that works here)",
    )


def _model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="model name at the endpoint (default: $PYCAPSULE_MODEL, or the embedded local model)",
    )


SIZES = ["0.5b", "1.5b"]
SIZE_HELP = "default: $PYCAPSULE_MODEL_SIZE or 1.5b"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pycapsule",
        description="Fill Python functions from their doctests with a code model, debugged in a sandbox.",
    )
    parser.add_argument("--version", action="version", version=f"pycapsule {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    commands.add_parser("serve", help="run the language server on stdio").add_argument(
        "--stdio", action="store_true", help="accepted for editor clients; stdio is the only transport"
    )

    generate = commands.add_parser("generate", help="fill a function's body until its doctests pass")
    _target(generate)
    generate.add_argument("--write", action="store_true", help="apply the change instead of printing a diff")
    generate.add_argument("--max-attempts", type=int, metavar="N", help="attempts per function (default 5)")
    _model(generate)
    _backend(generate)
    _json(generate)

    check = commands.add_parser("check", help="run doctests in the sandbox")
    _target(check)
    _backend(check)
    _json(check)

    bench = commands.add_parser("bench", help="run a benchmark dataset, direct or self-debugging")
    bench.add_argument(
        "dataset",
        choices=["humaneval", "humaneval-et", "humaneval-plus", "mbpp", "mbpp-et", "bigcodebench",
                 "realcode"],
    )
    bench.add_argument("--data", metavar="PATH", help="the dataset file (default: where it is known to be)")
    bench.add_argument("--mode", choices=["direct", "selfdebug"], default="selfdebug")
    bench.add_argument("--max-attempts", type=int, default=5, metavar="N")
    bench.add_argument("--limit", type=int, metavar="N", help="only the first N tasks")
    bench.add_argument("--workers", type=int, metavar="N", help="tasks at once (default: from the machine)")
    bench.add_argument("--out", metavar="DIR", help="where per-task results and the report go")
    _model(bench)
    _backend(bench)

    model = commands.add_parser("model", help="the embedded local model: install, list, serve, bench")
    model_commands = model.add_subparsers(dest="model_command", required=True, metavar="ACTION")
    install = model_commands.add_parser("install", help="download, join and verify a model file")
    install.add_argument("--size", choices=SIZES, help=SIZE_HELP)
    model_commands.add_parser("list", help="show installed models")
    serve = model_commands.add_parser("serve", help="serve a model on 127.0.0.1 (OpenAI-compatible)")
    serve.add_argument("--size", choices=SIZES, help=SIZE_HELP)
    serve.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on stdout)")
    model_bench = model_commands.add_parser("bench", help="tokens/s and time to first token")
    model_bench.add_argument("--size", choices=SIZES, action="append")

    sandbox = commands.add_parser("sandbox", help="sandbox backends: build the image, benchmark")
    sandbox_commands = sandbox.add_subparsers(dest="sandbox_command", required=True, metavar="ACTION")
    sandbox_commands.add_parser("build-image", help="build the Docker sandbox image without a registry")
    sandbox_bench = sandbox_commands.add_parser("bench", help="per-job latency, cold vs warm, per backend")
    sandbox_bench.add_argument("--backend", action="append", metavar="NAME")
    sandbox_bench.add_argument("--jobs", type=int, default=50, metavar="N")
    sandbox_commands.add_parser("doctor", help="say which backends work here and why not")

    loop = commands.add_parser("loop-bench", help="the self-debugging loop's own overhead per attempt")
    loop.add_argument("--attempts", type=int, default=50, metavar="N")
    _backend(loop)

    lsp_bench = commands.add_parser("lsp-bench", help="code-action / hover latency, save-to-diagnostics time")
    lsp_bench.add_argument("--lines", type=int, default=3000)
    lsp_bench.add_argument("--functions", type=int, default=50)
    _backend(lsp_bench)
    return parser


_MODULES = {
    "serve": "serve",
    "generate": "generate",
    "check": "check",
    "bench": "bench",
    "model": "model",
    "sandbox": "sandbox",
    "loop-bench": "loop_bench",
    "lsp-bench": "lsp_bench",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module = importlib.import_module(f"pycapsule.commands.{_MODULES[args.command]}")
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        print("pycapsule: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
