"""Builds MiroFish's compiled tick, ``mirofish/_tick.c`` (everything else is in pyproject.toml).

The extension is optional: without a C compiler the install still succeeds and the numpy
tick runs (``mirofish/kernel.py``). ``-ffp-contract=off`` keeps the compiler from fusing a
multiply and an add, so steering's floats follow the numpy code operation by operation.
"""

import sys

from setuptools import Extension, setup

FLAGS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off", "-fwrapv"]

setup(ext_modules=[Extension("mirofish._tick", ["mirofish/_tick.c"], extra_compile_args=FLAGS, optional=True)])
