#!/usr/bin/env python3
"""MiroFish entry point: ``python run.py`` starts the live aquarium; ``--help`` lists commands."""

import sys

from mirofish.cli import main

if __name__ == "__main__":
    sys.exit(main())
