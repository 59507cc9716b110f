"""Sandboxes that run untrusted doctests: one interface, several backends."""
