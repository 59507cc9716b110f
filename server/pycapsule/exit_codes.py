"""The exit codes of every `pycapsule` command: one table, so a script can tell the situations apart.

docs/generate.md lists the same table; a test keeps the two in step.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    MODEL_UNAVAILABLE = 3
    SANDBOX_UNAVAILABLE = 4
    PASSED_LOOSELY = 5
    INTERRUPTED = 130


MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "success: every target passed its doctests (or there was nothing to do)",
    ExitCode.FAILED: "the code is not right yet: a doctest failed, a target did not pass (gave up, not "
                     "verified, the model's answer was unusable), the file has a syntax error, or the "
                     "result could not be written",
    ExitCode.USAGE: "usage error: a bad option or option value, no such file, a file that cannot be "
                    "decoded, no such function, an unknown sandbox backend",
    ExitCode.MODEL_UNAVAILABLE: "the model could not be used: endpoint unreachable or refusing the key, "
                                "the embedded model could not start",
    ExitCode.SANDBOX_UNAVAILABLE: "no sandbox to run code in: the chosen or every backend does not work "
                                  "here (`pycapsule sandbox doctor` says why)",
    ExitCode.PASSED_LOOSELY: "written (or shown), but its examples and tests do not pin it down: too few of "
                             "its small changes fail them (`passed_loosely`; the output names the changes "
                             "they miss and suggests examples)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C); `generate --write` still writes the bodies that passed",
}


def table_text() -> str:
    """The table as the help's epilog shows it."""
    return "exit codes:\n" + "\n".join(f"  {int(code):<4} {meaning}" for code, meaning in MEANINGS.items())
