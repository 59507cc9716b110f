"""Untrusted text in Markdown renders as exactly that text, in a code span or as prose, whatever backticks,
brackets, HTML or line ends it holds; in a plain message it never matches VS Code's notification links."""

from __future__ import annotations

import html

import pytest
from markdown_it import MarkdownIt
from pycapsule.lsp.markup import code_span, markdown_text, no_links, one_line

from tests.lsp.test_hover import VSCODE_LINK

HOSTILE = [
    "a` [x](command:workbench.action.quit) `b",
    "`starts and ends with backticks`",
    "``` a fence ```",
    " padded ",
    "line one\n# a heading\r\n- a list\r> a quote",
    "<img src=x onerror=alert(1)> &amp; ![i](https://example.com/i.png)",
    "**bold** _em_ [ref]: https://example.com \\`",
    "https://example.com www.example.com user@example.com",
]


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize("text", HOSTILE)
def test_a_code_span_shows_the_text_verbatim_on_one_line(text: str) -> None:
    assert rendered(code_span(text)) == f"<p><code>{html.escape(one_line(text), quote=True)}</code></p>\n"


@pytest.mark.parametrize("text", [t.strip() for t in HOSTILE])
def test_escaped_text_shows_the_text_verbatim_on_one_line(text: str) -> None:
    assert rendered(markdown_text(text)) == f"<p>{html.escape(one_line(text), quote=True)}</p>\n"


@pytest.mark.parametrize("text", ["[a](command:x)", "[a](COMMAND:x \"t\")", "[[a](command:x)](https://y)",
                                  "see [doc](https://example.com) and [f](file:///etc/passwd)"])
def test_a_plain_message_holds_no_notification_link(text: str) -> None:
    assert VSCODE_LINK.search(text) and not VSCODE_LINK.search(no_links(text))
