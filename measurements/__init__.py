"""Measurement tools for pycapsule's hot paths, kept out of the shipped package: `python3 -m measurements`
(see measurements/README.md)."""
