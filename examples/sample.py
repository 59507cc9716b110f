"""A sample module for pycapsule: three stubs with doctests, for the model to fill.

    pycapsule generate examples/sample.py             # every stub, a diff on stdout
    pycapsule generate examples/sample.py::run_length  # one function
"""

from __future__ import annotations


def is_palindrome(text: str) -> bool:
    """True if text reads the same forwards and backwards, ignoring case, spaces and punctuation.

    >>> is_palindrome("A man, a plan, a canal: Panama!")
    True
    >>> is_palindrome("Hello, World")
    False
    """


def run_length(text: str) -> list[tuple[str, int]]:
    """Compress runs of the same character into (character, count) pairs.

    >>> run_length("aaabccdddd")
    [('a', 3), ('b', 1), ('c', 2), ('d', 4)]
    >>> run_length("")
    []
    """


class Temperature:
    def __init__(self, celsius: float) -> None:
        self.celsius = celsius

    def fahrenheit(self) -> float:
        """This temperature in degrees Fahrenheit.

        >>> Temperature(100).fahrenheit()
        212.0
        >>> Temperature(-40).fahrenheit()
        -40.0
        """
