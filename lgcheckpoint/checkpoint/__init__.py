"""Checkpoints and the savers that store them. Read base.py first, then memory.py."""
