"""Builds MiroFish's compiled tick, ``mirofish/_tick.c`` (everything else is in pyproject.toml).

The extension is optional: without a C compiler the install still succeeds and the numpy
tick runs (``mirofish/kernel.py``). ``-ffp-contract=off`` keeps the compiler from fusing a
multiply and an add, so steering's floats follow the numpy code operation by operation.

When the compiler takes ``-fopenmp`` (gcc, clang with libomp), large tanks (4,096 fish and
more) split steering's and the after-tick's per-fish loops over the machine's cores; each
fish's results are its own, so the world is the same with or without it (tests/test_kernel.py).
``MIROFISH_OPENMP=0`` builds without it.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

FLAGS = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off", "-fwrapv"]


def openmp_flags() -> list[str]:
    """``["-fopenmp"]`` when this machine's C compiler builds and links an OpenMP program, else []."""
    if sys.platform == "win32" or os.environ.get("MIROFISH_OPENMP", "1") == "0":
        return []
    cc = (sysconfig.get_config_var("CC") or "cc").split()
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp.c")
        with open(src, "w") as fh:
            fh.write("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        try:
            done = subprocess.run([*cc, "-fopenmp", src, "-o", os.path.join(tmp, "omp")], capture_output=True)
        except OSError:
            return []
    return ["-fopenmp"] if done.returncode == 0 else []


def numpy_include() -> list[str]:
    """numpy's headers: ``_tick.c`` reads numpy arrays through numpy's C API (pyproject.toml's
    build requirements bring numpy). Without them the extension does not build (it is optional)
    and the numpy tick runs."""
    try:
        import numpy
    except ImportError:
        return []
    return [numpy.get_include()]


class BuildWithAssets(build_py):
    """An installed package carries ``assets/`` (the defaults, presets, prompts, examples) inside
    it, as ``mirofish/assets`` (``config.ASSETS`` looks there first); an editable install reads
    the checkout's own folder."""

    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):
            here = os.path.dirname(os.path.abspath(__file__))
            shutil.copytree(os.path.join(here, "assets"), os.path.join(self.build_lib, "mirofish", "assets"),
                            dirs_exist_ok=True)


OMP = openmp_flags()
setup(ext_modules=[Extension("mirofish._tick", ["mirofish/_tick.c"], extra_compile_args=FLAGS + OMP,
                             extra_link_args=OMP, include_dirs=numpy_include(), optional=True)],
      cmdclass={"build_py": BuildWithAssets})
