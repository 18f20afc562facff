#!/usr/bin/env python3
"""MiroFish entry point: ``python run.py`` starts the live aquarium; ``--help`` lists commands."""

import sys

if __name__ == "__main__":
    try:
        from mirofish.cli import main  # Ctrl-C while this imports is one line too
    except KeyboardInterrupt:
        print("mirofish: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(main())
