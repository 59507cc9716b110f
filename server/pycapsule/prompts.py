"""The prompts: the messages the programmer agent sends the model to generate, fix and restart a function.

Their wording is part of a bench run's identity (bench/identity.py renders them into its fingerprint).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pycapsule.debugging.source_text import leading_whitespace, normalize_newlines

if TYPE_CHECKING:
    from pycapsule.capsule import Capsule
    from pycapsule.model_reply import Message

# No system message: the model's chat template then supplies its own default, as its authors evaluated it.
# Our former instructions there ("expert programmer, keep the signature, one code block, no tests") cost
# the embedded 0.5B model 7 HumanEval tasks at the first attempt (docs/results/system-prompt-ab).
SYSTEM_PROMPT: str | None = None
_DEFINITION_LINE = re.compile(r"^\s*(?:async\s+def|def|class)\s", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")


def code_fence(text: str) -> str:
    """A backtick fence that no line of `text` can close (CommonMark): longer than any run of backticks in
    it, and at least three. A docstring may hold fenced examples of its own."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(code: str) -> str:
    """`code` (no trailing newline) in a Python code block its content cannot close."""
    fence = code_fence(code)
    return f"{fence}python\n{code}\n{fence}"


def function_head(capsule: Capsule) -> str:
    """Decorators, signature and docstring as the user wrote them (no trailing newline)."""
    return capsule.module_source[capsule.header_start: capsule.body_start].rstrip()


def function_task(capsule: Capsule) -> str:
    """The target as the user wrote it, without its body: decorators, signature and docstring."""
    head = function_head(capsule)
    if capsule.docstring is None:
        return f"{head}\n{capsule.indent}...\n" if head.endswith(":") else f"{head}\n"
    return f"{head}\n"


def _task_message(capsule: Capsule, context: str | None) -> str:
    where = ""
    if "." in capsule.qualname:
        owner = capsule.qualname.rsplit(".", 1)[0]
        where = f" (it is `{capsule.qualname}`, defined inside `{owner}`)"
    code = function_task(capsule).removesuffix("\n")
    task = f"{_documentation(capsule)}Complete this Python function{where}:\n{fenced(code)}\n"
    context = (context or "").strip()
    if not context:
        return task
    if context_goes_first(context):
        return ("The function below can use these names from its module (they exist already; do not repeat "
                f"them):\n{fenced(context)}\n\n{task}")
    return f"{task}\nIt can use these names from its module (they exist already; do not repeat them):\n" \
           f"{fenced(context)}\n"


def _documentation(capsule: Capsule) -> str:
    """The function's examples in the project's documentation (`doc_examples`), which it must pass too, as
    the task's own ('' when it has none); before the task, so that the request still ends with the
    function."""
    from pycapsule.doc_examples import doc_examples, prompt_text

    docs = doc_examples(capsule.path, capsule.qualname, source=capsule.module_source)
    text = prompt_text(docs).rstrip("\n")
    if not text:
        return ""
    fence = code_fence(text)
    return (f"The project's documentation shows `{capsule.name}` in use; these examples must pass too:\n"
            f"{fence}pycon\n{text}\n{fence}\n\n")


def context_goes_first(context: str) -> bool:
    """A context that shows functions or classes goes before the task, so the prompt ends with the target
    rather than with a neighbour the model would complete instead (docs/results/realcode/context-first)."""
    return _DEFINITION_LINE.search(context) is not None


def generate_messages(capsule: Capsule, context: str | None) -> list[Message]:
    system: list[Message] = [{"role": "system", "content": SYSTEM_PROMPT}] if SYSTEM_PROMPT else []
    return [*system, {"role": "user", "content": _task_message(capsule, context)}]


def repeat_note(failure: str) -> str:
    """The sentence for the request after an answer that repeated code already tried (`failure`: how
    that code failed, one line)."""
    return f"Your last answer repeated code that already failed ({failure}); try a different approach."


def restart_messages(capsule: Capsule, context: str | None, failures: Sequence[str],
                     repeated: str | None = None) -> list[Message]:
    """A fresh conversation: the task, plus how earlier attempts failed (one line each) but not their code,
    which a small model would copy; `repeated`: the last answer repeated code that failed this way."""
    messages = generate_messages(capsule, context)
    lead = "Earlier attempts failed like this; write a different solution:"
    messages[-1]["content"] += _earlier(failures, lead)
    if repeated:
        messages[-1]["content"] += f"\n{repeat_note(repeated)}\n"
    return messages


def _earlier(failures: Sequence[str], lead: str) -> str:
    """How earlier attempts failed, one line each under `lead` ('' when none did)."""
    if not failures:
        return ""
    listed = "\n".join(f"- {failure}" for failure in failures)
    return f"\n{lead}\n{listed}\n"


def fix_request(condensed_error: str, repeated: str | None = None) -> str:
    again = f"{repeat_note(repeated)}\n" if repeated else ""
    return (f"That function fails:\n{condensed_error.strip()}\n\n{again}Fix it. Reply with the whole "
            "corrected function in one ```python code block.")


def repair_messages(capsule: Capsule, context: str | None, current: str, condensed_error: str,
                    failures: Sequence[str] = (), repeated: str | None = None) -> list[Message]:
    """A repair of a function that has a body: the task, the function as it stands (`current`) and how it
    fails, asking for the smallest change; `failures`: how earlier repairs failed, one line each (their
    code is not shown: each attempt starts again from the body as it stands)."""
    messages = generate_messages(capsule, context)
    note = _earlier(failures, "Earlier changes failed like this; change it differently:")
    again = f"\n{repeat_note(repeated)}\n" if repeated else ""
    messages[-1]["content"] += (
        f"\n\nThis is the function as it stands in the project:\n{fenced(current.strip())}\n\nIt fails:\n"
        f"{condensed_error.strip()}\n{note}{again}\nMake the smallest change to the body that fixes this "
        "failure and keep the rest of it exactly as it is: other code and the project's tests rely on "
        "it. Reply with the whole corrected function in one ```python code block.")
    return messages


def fix_messages(capsule: Capsule, context: str | None, history_window: Sequence[tuple[str, str]],
                 last_code: str, condensed_error: str, repeated: str | None = None) -> list[Message]:
    """The task, then up to `history_window` earlier (code, condensed error) turns, then the last one;
    `repeated`: the answer to this very conversation repeated code that failed this way."""
    messages = generate_messages(capsule, context)
    turns = (*history_window, (last_code, condensed_error))
    for index, (code, error) in enumerate(turns):
        messages.append({"role": "assistant", "content": fenced(code.strip())})
        last = index == len(turns) - 1
        messages.append({"role": "user", "content": fix_request(error, repeated if last else None)})
    return messages


def keep_signature(capsule: Capsule) -> str:
    """The sentence that asks for the user's signature after an answer changed it: the whole def line(s),
    in a code block when they are several."""
    signature = _def_lines(capsule.header)
    if "\n" not in signature:
        return f"Keep this signature exactly: {signature}"
    return f"Keep this signature exactly:\n{fenced(signature)}"


def _def_lines(header: str) -> str:
    """A header's def line(s) through the colon, decorators left out, the def line's indentation removed."""
    lines = normalize_newlines(header).strip("\n").split("\n")
    row = 1
    try:
        # A decorator holds no `def` name token (in a string it is part of a string token).
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if token.type == tokenize.NAME and token.string == "def":
                row = token.start[0]
                break
    except (tokenize.TokenError, SyntaxError):
        pass
    indent = leading_whitespace(lines[row - 1])
    return "\n".join(line.removeprefix(indent) for line in lines[row - 1:])


def answer_prefix(capsule: Capsule) -> str:
    """The start of an answer the model is asked to continue (the `answer_prefill` setting): the opening of
    the code block and the function down to its docstring, so the model writes only the body."""
    return head_block(function_head(capsule))


def head_block(head: str) -> str:
    """A code block opened with the function's `head` (`function_head`) in it, for the model to go on from."""
    return f"{code_fence(head)}python\n{head}\n"


def prefilled(messages: list[Message], prefix: str) -> list[Message]:
    """`messages` with `prefix` as the start of the model's answer (an endpoint continues a final assistant
    message, as llama.cpp's server does)."""
    return [*messages, {"role": "assistant", "content": prefix}]


def whole_answer(prefix: str, text: str) -> str:
    """The answer to a prefilled request, prefix included. llama.cpp's server streams only what follows
    the prefix, which is the body: its first line is indented (and it returns the prefix too when not
    streaming); an endpoint that ignores the prefill answers afresh, with prose, a code block or code at
    column 0."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    if text.startswith(prefix) or not first[:1].isspace():
        return text
    return prefix + text
