"""The `pycapsule` command line: dispatches to `pycapsule.commands.<name>`, where each subcommand declares
its options (`register`) next to the code that uses them (`run`).

Only the chosen subcommand's module is imported, so `pycapsule check` does not pay for the language
server or the model runtime, and `pycapsule --help` lists the subcommands from their one-line summaries.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Collection, Sequence
from typing import NoReturn

from pycapsule import __version__
from pycapsule.commands import SUMMARIES
from pycapsule.commands.options import Subcommands
from pycapsule.exit_codes import ExitCode, table_text


class CommandLineError(Exception):
    """What argparse would print before exiting 2; raised instead, so --json can answer in JSON."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser, self.message = parser, message


SEE_THE_TABLE = "exit codes: one table for every command; `pycapsule --help` lists it."
"""A subcommand's help points to the table instead of repeating it."""

BROKEN_PIPE = 141
"""The exit code when the reader of stdout went away (`pycapsule config | head`): 128 + SIGPIPE, as the
Unix tools that die of that signal end."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        kwargs.setdefault("epilog", SEE_THE_TABLE)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(self, message)


COMMANDS = tuple(SUMMARIES)
"""The subcommands, each a module of `pycapsule.commands`, in the order `pycapsule --help` lists them."""


def build_parser(declared: Collection[str] = COMMANDS) -> argparse.ArgumentParser:
    """The command line. Each subcommand in `declared` has its module declare its options; the others
    are named only (enough to say which subcommands exist), so their modules are not imported."""
    parser = _Parser(
        prog="pycapsule",
        description="Fill Python functions from their doctests with a code model, debugged in a sandbox.",
        epilog=table_text(),
    )
    parser.add_argument("--version", action="version", version=f"pycapsule {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        if name not in declared:
            commands.add_parser(name, help=SUMMARIES[name])
        elif name == "serve":
            _register_serve(commands)
        else:
            importlib.import_module(f"pycapsule.commands.{name}").register(commands)
    return parser


def _register_serve(commands: Subcommands) -> None:
    commands.add_parser("serve", help=SUMMARIES["serve"]).add_argument(
        "--stdio", action="store_true", help="accepted for editor clients; stdio is the only transport"
    )


def _declared(words: list[str]) -> Collection[str]:
    """The subcommands whose options this command line needs: the one it names first (the top level has
    no positional before it, and its options end the run); none for the top-level help (it shows only the
    summaries), `--version` (an editor runs it before every start) or a usage error."""
    return [words[0]] if words and words[0] in COMMANDS else []


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command; a reader that stops reading (`| head`) ends it quietly, for every command."""
    try:
        try:
            return _main(argv)
        finally:  # what is still buffered goes out now, while a broken pipe can be caught
            if not sys.stdout.closed:  # `serve` ends with its stdio closed
                sys.stdout.flush()
    except BrokenPipeError:
        # what the reader did not take is not wanted: no traceback, and no second error at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    wants_json = "--json" in words[: words.index("--")] if "--" in words else "--json" in words
    try:
        args = build_parser(_declared(words)).parse_args(words)
    except CommandLineError as error:
        return _usage_error(error, _command_named(words), wants_json)
    module = importlib.import_module(f"pycapsule.commands.{args.command}")
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        print("pycapsule: interrupted", file=sys.stderr)
        if wants_json:
            from pycapsule.commands.output import CommandError, print_document

            stopped = CommandError("interrupted", kind="interrupted", code=ExitCode.INTERRUPTED)
            return print_document(args.command, ExitCode.INTERRUPTED, stopped)
        return ExitCode.INTERRUPTED


def _command_named(words: list[str]) -> str | None:
    """The subcommand the words name, if any (the first word that is one)."""
    return next((word for word in words if word in COMMANDS), None)


def _usage_error(error: CommandLineError, command: str | None, wants_json: bool) -> int:
    if wants_json:
        from pycapsule.commands.output import UsageError, print_document

        return print_document(command, ExitCode.USAGE, UsageError(error.message))
    error.parser.print_usage(sys.stderr)
    print(f"{error.parser.prog}: error: {error.message}", file=sys.stderr)
    return ExitCode.USAGE


if __name__ == "__main__":
    sys.exit(main())
