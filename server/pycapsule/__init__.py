"""pycapsule: a self-debugging code generator for Python, as a language server and a CLI."""

# The one version of the Python package: pyproject.toml reads it from here (setuptools' dynamic `attr`,
# without importing), vscode-client/package.json repeats it and CHANGELOG.md heads its section with it;
# tests/packaging/test_version.py fails when they disagree. A release bumps it (docs/release.md).
__version__ = "0.1.0"
