import sys

try:
    from .cli import main  # Ctrl-C while this imports is one line too
except KeyboardInterrupt:
    print("mirofish: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
