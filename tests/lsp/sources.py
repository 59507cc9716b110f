"""Python modules the tests open, and model replies for them."""

ADD_STUB = '''import math


def add(a, b):
    """Add two numbers.

    >>> add(1, 2)
    3
    >>> add(-1, 1)
    0
    """
    ...


def double(x):
    """Twice x.

    >>> double(2)
    4
    """
    return x * 2
'''

ADD_RIGHT = '```python\ndef add(a, b):\n    """Add two numbers."""\n    return a + b\n```'
ADD_WRONG = '```python\ndef add(a, b):\n    """Add two numbers."""\n    return a + b + 1\n```'

BROKEN_DOUBLE = '''def double(x):
    """Twice x.

    >>> double(2)
    4
    >>> double(0)
    0
    """
    return x * 3
'''

DOUBLE_RIGHT = "```python\ndef double(x):\n    return x * 2\n```"

SYNTAX_ERROR = '''def add(a, b):
    """Add.

    >>> add(1, 2)
    3
    """
    return (a +
'''

NO_DOCTESTS = """def plain(x):
    return x
"""
