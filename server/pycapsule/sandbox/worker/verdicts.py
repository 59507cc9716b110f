"""Verdicts, in the worker, outside the job: the docstrings parsed, and every reported example judged
with doctest's checker (plus pytest's flags)."""

import doctest
import os
import re

from .text import MESSAGE_CAP, clip

FAILURES_CAP = 50


class Checker(doctest.OutputChecker):
    """doctest's checker plus pytest's own flags ALLOW_UNICODE, ALLOW_BYTES and NUMBER."""

    _UNICODE = re.compile(r"(\W|^)[uU]([rR]?[\'\"])")
    _BYTES = re.compile(r"(\W|^)[bB]([rR]?[\'\"])")
    _NUMBER = re.compile(r"""
        (?P<number>(?P<mantissa>(?P<integer1>[+-]?\\d*)\\.(?P<fraction>\\d+)|(?P<integer2>[+-]?\\d+)\\.)
        (?:[Ee](?P<exponent1>[+-]?\\d+))?|(?P<integer3>[+-]?\\d+)(?:[Ee](?P<exponent2>[+-]?\\d+)))""",
                         re.VERBOSE)

    def check_output(self, want, got, optionflags):
        if super().check_output(want, got, optionflags):
            return True
        if optionflags & ALLOW_UNICODE:
            want, got = self._UNICODE.sub(r"\1\2", want), self._UNICODE.sub(r"\1\2", got)
        if optionflags & ALLOW_BYTES:
            want, got = self._BYTES.sub(r"\1\2", want), self._BYTES.sub(r"\1\2", got)
        if optionflags & NUMBER:
            got = self._numbers_as_written(want, got)
        return super().check_output(want, got, optionflags)

    def _numbers_as_written(self, want, got):
        """Each number of `got` that equals the one written in `want` to its precision is replaced by it."""
        wants = list(self._NUMBER.finditer(want))
        gots = list(self._NUMBER.finditer(got))
        if len(wants) != len(gots):
            return got
        shift = 0
        for w, g in zip(wants, gots, strict=True):
            fraction = w.group("fraction")
            exponent = w.group("exponent1") or w.group("exponent2")
            precision = 0 if fraction is None else len(fraction)
            if exponent is not None:
                precision -= int(exponent)
            try:
                close = abs(float(w.group()) - float(g.group())) <= 10 ** -precision / 2 + 1e-12
            except ValueError:
                close = False
            if close:
                got = got[:g.start() + shift] + w.group() + got[g.end() + shift:]
                shift += len(w.group()) - (g.end() - g.start())
        return got


ALLOW_UNICODE = doctest.register_optionflag("ALLOW_UNICODE")
ALLOW_BYTES = doctest.register_optionflag("ALLOW_BYTES")
NUMBER = doctest.register_optionflag("NUMBER")


def option_bits(names):
    bits = 0
    for name in names or ():
        bits |= doctest.OPTIONFLAGS_BY_NAME.get(str(name).strip().upper(), 0)
    return bits


class Prepared:
    """One docstring parsed by the worker: the examples to run (SKIP ones left out) and their flags.

    A documentation file's (`document`) runs its examples up to the last of `judged` (lines of '>>>'); only
    those count, the earlier ones set up its namespace unjudged."""

    def __init__(self, qualname, docstring, line, lookup, job_flags, path, error=None, document=None,
                 judged=()):
        self.qualname, self.lookup, self.line, self.document = qualname, lookup, line, document
        self.examples, self.flags, self.counted, self.skipped, self.parse_error = [], [], [], 0, error
        self.has_examples = False
        if error:
            return
        try:
            test = doctest.DocTestParser().get_doctest(docstring, {}, qualname, document or path, line - 1)
        except ValueError as exc:
            what = document or f"the docstring of {qualname} (line {line})"
            self.parse_error = f"{what} is not valid doctest: {clip(str(exc), MESSAGE_CAP)}"
            return
        self.has_examples = bool(test.examples)
        judged = set(judged) if document is not None else None
        last = max(judged, default=0) if judged is not None else None
        for example in test.examples:
            counts = judged is None or line + example.lineno in judged
            if last is not None and line + example.lineno > last:
                break
            flags = job_flags
            for flag, on in example.options.items():
                flags = flags | flag if on else flags & ~flag
            if flags & doctest.SKIP:
                self.skipped += counts
                continue
            self.examples.append(example)
            self.flags.append(flags)
            self.counted.append(counts)


def prepare(job, path):
    """The job's doctest items as the worker runs them; items that need no run are left out of the job."""
    flags = option_bits(job.get("optionflags"))
    prepared = []
    for item in job.get("doctests") or []:
        document = item.get("document")
        entry = Prepared(str(item.get("qualname")), str(item.get("docstring", "")), int(item.get("line", 1)),
                         bool(item.get("lookup")), flags, path, item.get("error"),
                         str(document) if document is not None else None,
                         [int(line) for line in item.get("judged") or ()])
        if job.get("whole_module") and entry.parse_error is None and not entry.has_examples:
            continue  # a whole module: a docstring without examples is no test (as doctest and pytest)
        prepared.append(entry)
    return prepared, flags


class Verdicts:
    """Drives the job one command at a time and judges every example here, outside the job's process.

    The job learns of an example only when it is sent, after the previous one has ended, and each command
    carries a fresh token its answer must repeat: an answer written ahead of time, out of order or in
    another shape ends the job as tampered. What an example printed is what the worker read from the job's
    example pipe between sending it and its answer (`got`), never what the job says it printed."""

    def __init__(self, prepared, job_flags, path, whole_module=False):
        self.prepared, self.job_flags, self.path = list(prepared), job_flags, path
        self.whole_module = whole_module
        self.checker = Checker()
        self.functions, self.module_error, self.memory = [], None, False
        self.imported = self.done = False
        self.lines_run = []  # the module's lines the examples ran, when the job traced them
        self.tampered = None
        self.running = None  # [item index, example number]: sent, not answered
        self._plan = self._commands()
        self._awaited = None  # (op, token) of the command sent last

    def accept(self, message, got=lambda: ""):
        """Take one message of the job; the next command to send, or None. `got` reads what the job's
        example pipe holds (called only for an example's answer)."""
        if self.tampered or self.done:
            self.tampered = self.tampered or "the job wrote into the runner's report channel"
            return None
        if not isinstance(message, dict):
            return self._tamper()
        if not self.imported:
            if set(message) == {"imported"} and message["imported"] is True:
                self.imported = True
                return self._send(next(self._plan))
            if "import_error" in message and isinstance(message["import_error"], dict):
                self.module_error = message["import_error"]
                self.memory = bool(message.get("memory"))
                self.done = True
                return None
            return self._tamper()
        op, token = self._awaited
        if message.get("token") != token or not self._shaped(op, message):
            return self._tamper()
        if op == "example":
            message = {**message, "got": got()}
        try:
            return self._send(self._plan.send(message))
        except StopIteration:
            self.done = True
            self.lines_run = message.get("lines", [])
            return None

    def _send(self, command):
        token = os.urandom(12).hex()
        self._awaited = (command["op"], token)
        return {**command, "token": token}

    def _tamper(self):
        self.tampered = "the job wrote into the runner's report channel"
        return None

    def _shaped(self, op, message):
        keys = set(message) - {"token"}
        if op == "item":
            index = message.get("item", message.get("absent"))
            return keys in ({"item"}, {"absent"}) and index == self._index
        if op == "example":
            return ("out" in keys and keys <= {"out", "exception", "exc_msg", "display_hook_changed"}
                    and message["out"] == self.running
                    and (message.get("exception") is None or isinstance(message.get("exception"), dict)))
        if op == "extras":
            return keys == {"extras"} and isinstance(message["extras"], list) and all(
                isinstance(extra, dict) for extra in message["extras"])
        lines = message.get("lines", [])
        return (keys <= {"done", "lines"} and message["done"] is True and isinstance(lines, list)
                and all(isinstance(line, int) for line in lines))

    def _commands(self):
        """The commands in the one order the job must answer them; each `yield` receives the answer."""
        self._index, asked_for_extras = 0, not self.whole_module
        while True:
            if self._index == len(self.prepared):
                if asked_for_extras:
                    break
                asked_for_extras = True
                answer = yield {"op": "extras"}
                for extra in answer["extras"]:
                    self.prepared.append(Prepared(str(extra.get("qualname")), str(extra.get("docstring")), 1,
                                                  False, self.job_flags, self.path))
                continue
            entry = self.prepared[self._index]
            answer = yield {"op": "item", "index": self._index, "qualname": entry.qualname,
                            "lookup": entry.lookup, "fresh": entry.document is not None}
            if "absent" in answer and not entry.lookup:
                self._tamper()
                return
            if "item" in answer:
                report = {"qualname": entry.qualname, "attempted": 0, "failed": 0, "failures": [],
                          "skipped": entry.skipped, "parse_error": entry.parse_error}
                for number, example in enumerate(entry.examples):
                    self.running = [self._index, number]
                    answer = yield {"op": "example", "index": self._index, "number": number,
                                    "qualname": entry.qualname, "source": example.source}
                    if entry.counted[number]:
                        self._judge(entry, number, report, answer)
                    self.running = None
                self._add(report, entry.document)
            self._index += 1
        yield {"op": "end"}

    def _add(self, report, document):
        """A docstring's report; a documentation file's is added to its function's (one report each)."""
        if document is None:
            self.functions.append(report)
            return
        report["documents"], report["documented"] = [document], report["attempted"]
        into = next((f for f in reversed(self.functions) if f["qualname"] == report["qualname"]), None)
        if into is None:
            self.functions.append(report)
            return
        for key in ("attempted", "failed", "skipped", "documented"):
            into[key] = into.get(key, 0) + report[key]
        into["documents"] = [*into.get("documents", []), document]
        into["failures"] = (into["failures"] + report["failures"])[:FAILURES_CAP]
        into["parse_error"] = into["parse_error"] or report["parse_error"]

    def _judge(self, entry, number, report, answer):
        example, flags = entry.examples[number], entry.flags[number]
        got, exception = answer["got"], answer.get("exception")
        report["attempted"] += 1
        if exception is not None and exception.get("type") == "MemoryError":
            self.memory = True
        note = None
        if answer.get("display_hook_changed"):
            note = ("the body changes the interpreter's display hook (sys.displayhook), which decides what "
                    "every later example shows: not counted as passed")
        if note or not self._passes(example, flags, got, exception, answer.get("exc_msg")):
            report["failed"] += 1
            if len(report["failures"]) < FAILURES_CAP:
                report["failures"].append({
                    "qualname": entry.qualname,
                    "source": clip(example.source.rstrip("\n")),
                    "line": entry.line + example.lineno,
                    "expected": clip(example.want),
                    "got": clip(got) if exception is None else "",
                    "exception": exception,
                    "note": note,
                    "document": entry.document,
                })

    def _passes(self, example, flags, got, exception, exc_msg):
        if exception is None:
            return self.checker.check_output(example.want, got, flags)
        if example.exc_msg is None or not isinstance(exc_msg, str):
            return False
        if self.checker.check_output(example.exc_msg, exc_msg, flags):
            return True
        if flags & doctest.IGNORE_EXCEPTION_DETAIL:
            strip = doctest._strip_exception_details
            return self.checker.check_output(strip(example.exc_msg), strip(exc_msg), flags)
        return False

    def progress(self):
        """The example running when the job stopped, for a timeout's detail."""
        if self.running is None:
            return None
        index, number = self.running
        entry = self.prepared[index]
        example = entry.examples[number]
        return {"qualname": entry.qualname, "line": entry.line + example.lineno,
                "source": clip(example.source.rstrip("\n"), 200), "document": entry.document}

    def finished_functions(self):
        return list(self.functions)
