"""pycapsule: a self-debugging code generator for Python, as a language server and a CLI."""

__version__ = "0.1.0"
