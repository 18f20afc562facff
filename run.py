#!/usr/bin/env python3
"""MiroFish entry point: ``python run.py`` starts the live aquarium; ``--help`` lists commands.
The same as ``python -m mirofish`` (mirofish/__main__.py: also one line for Ctrl-C while it
imports, or for a Python MiroFish was not installed into)."""

import runpy

if __name__ == "__main__":
    runpy.run_module("mirofish", run_name="__main__")
