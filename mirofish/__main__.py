import sys

from . import catch_interrupts

catch_interrupts()
try:
    from .cli import main  # Ctrl-C while this imports is one line too
except KeyboardInterrupt:
    print("mirofish: interrupted", file=sys.stderr)
    sys.exit(130)
except ModuleNotFoundError as exc:  # a Python MiroFish was not installed into
    print(f"mirofish: {exc.name} is not installed for this Python ({sys.executable}); run MiroFish with the one "
          f"it was installed into, e.g. .venv/bin/python run.py (or pip install -e .)", file=sys.stderr)
    sys.exit(2)

sys.exit(main())
