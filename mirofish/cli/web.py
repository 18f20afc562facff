"""``serve``: the tank (live, or a recording) in a browser (mirofish/web/server.py, docs/web.md)."""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any

from .common import UsageError, add_config_flags, int_at_least


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", help="a recording to serve (default: a live tank from the options below)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; any other needs "
                                                       "the steering token: MIROFISH_WEB_TOKEN, or one printed at "
                                                       "start)")
    p.add_argument("--port", type=int_at_least(0, 65535), default=8765, help="port (default 8765; 0: any free one)")
    p.add_argument("--speed", type=float, default=10.0, help="ticks a second of a live tank, or of a fork made from a "
                   "served recording's page (default 10; the recording itself plays at its page's speed)")
    p.add_argument("--fish", type=int_at_least(1), help="live: number of fish (default 60)")
    p.add_argument("--seed", type=int_at_least(0), help="live: random seed (default 7)")
    p.add_argument("--brain", metavar="BRAIN", help="live: who decides (instinct, llm, FILE.py:NAME …)")
    p.add_argument("--base-url", metavar="URL", help="live, llm: OpenAI-compatible server")
    p.add_argument("--model", metavar="NAME", help="live, llm: model name on that server")
    p.add_argument("--memory", metavar="MEMORY", help="live: the fish's memory (memory.kind)")
    add_config_flags(p)


def _live_config(args: argparse.Namespace) -> Any:
    from .aquarium import config_from

    for name in ("budget_tokens", "large_base_url", "large_model", "prompt"):
        setattr(args, name, None)
    args.speed_saved, args.speed = args.speed, None  # (config_from reads --speed as the window's multiplier)
    try:
        return config_from(args)
    finally:
        args.speed = args.speed_saved


def _port_free(host: str, port: int) -> None:
    """One line, exit 2, for an address or port this machine cannot listen on (port 0 too: the
    address is checked)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except (OSError, OverflowError, UnicodeError) as exc:
            hint = ("another program uses it? try --port 0" if port and not isinstance(exc, socket.gaierror)
                    else "is the address one of this machine's?")
            raise UsageError(f"mirofish serve: cannot listen on {host}:{port} "
                             f"({getattr(exc, 'strerror', None) or exc}); {hint}") from None


def run(args: argparse.Namespace) -> int:
    if not 0.1 <= args.speed <= 1000:
        raise UsageError("mirofish serve: --speed is ticks a second, 0.1 to 1000")
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError("mirofish serve: needs the optional extra web: pip install -e '.[web]'") from None
    from ..web.server import Host, make_token, serve

    if args.path is not None:
        if any(getattr(args, k) is not None for k in ("fish", "seed", "brain", "base_url", "model", "memory")) \
                or args.preset or args.config or args.overrides:
            raise UsageError("mirofish serve: a recording is served as it was recorded: no live options with REC")
        from ..session import ReplaySession

        session: Any = ReplaySession(args.path)
        live = False
    else:
        from ..session import LiveSession

        cfg = _live_config(args)
        if cfg.brain.kind == "llm" and cfg.engine.mode == "lockstep" and not args.path:
            # (a lockstep tank's tick 0 waits for the model server's warm-up: the page listens after it)
            print(f"mirofish serve: the page opens once the model server has answered its warm-up request (a "
                  f"lockstep tank's first tick waits for it, up to brain.warmup_timeout_s = "
                  f"{cfg.brain.warmup_timeout_s:g} s); --set engine.mode=realtime opens it at once, the fish swimming "
                  f"instinct plans until the model's first answers", file=sys.stderr, flush=True)
        session = LiveSession(cfg)
        live = True
    _port_free(args.host, args.port)
    token = make_token(args.host)
    host = Host(session, live, args.speed)

    def ready(port: int) -> None:
        where = f"http://{args.host if ':' not in args.host else '[' + args.host + ']'}:{port}/"
        print(f"mirofish serve: {'a live tank' if live else args.path} at {where}", file=sys.stderr, flush=True)
        if token is not None:
            print(f"mirofish serve: steering token {token} (shown this once; open the page with #token= and it "
                  f"to steer; watching needs none)", file=sys.stderr, flush=True)

    try:
        serve(host, args.host, args.port, token, ready)
    except KeyboardInterrupt:
        pass
    finally:
        session.close()
    return 0
