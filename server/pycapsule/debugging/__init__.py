"""Deterministic modules that do what a model does badly: extraction, example calls, signatures, errors."""
