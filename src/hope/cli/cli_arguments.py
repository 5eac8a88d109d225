"""Argument types shared by the ``hope`` subcommands."""

from __future__ import annotations

import argparse


def positive_int(value: str) -> int:
    """An argparse type: an integer of at least 1, or a usage error saying so."""
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number
