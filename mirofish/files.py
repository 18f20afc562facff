"""Reading a file we are given: the one rule for every input file (no file read without bounds).

A path a user names — a prompt file, a config file (``--config``), a sweep file, a fork's
``--interventions`` file, the tokenizer ``MIROFISH_TOKENIZER`` names, a reply-cache entry — may
name anything: ``/dev/zero`` (never ends), ``/dev/urandom``, a FIFO nothing writes to (an
``open`` that blocks forever, deaf to Ctrl-C), a folder, or a file far larger than any file of
its kind. :func:`read_bounded` reads it under one rule:

1. open with ``O_NONBLOCK`` (a FIFO cannot block the open) and ``O_NOCTTY``;
2. ``fstat`` the descriptor that was opened (not the path: it may have been swapped since);
3. refuse what is not a regular file — "… is a FIFO, not a file" (a device, a folder, a socket);
4. refuse a file whose size is over the kind's limit, naming the limit;
5. read at most ``limit + 1`` bytes (a file that grows while read is refused too).

A refusal is a :class:`FileRefused` (a ``ValueError``) whose message is one line; each caller
turns it into its own error class (``ConfigError``, ``PromptError``, the sweep's ``SpecError``,
``InterventionError``, ``TokenizerError``), so the command line prints one line and exits 2.

The limits, by kind (each far above any real file of the kind):

* :data:`CONFIG_LIMIT` — config, sweep and interventions files: 4 MB (a few kB in practice);
* :data:`PROMPT_LIMIT` — prompt files: 4 MB (the bundled fish prompt is about 5 kB);
* :data:`TOKENIZER_LIMIT` — a ``tokenizer.json``: 64 MB (the largest common ones, with vocabularies
  of a quarter of a million tokens, are about 35 MB);
* :data:`REPLY_CACHE_LIMIT` — a reply-cache entry: 8 MB (a reply is at most ``brain.max_reply_bytes``,
  256 kB by default; an entry over the limit is a cache miss, not an error).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

CONFIG_LIMIT = 4_000_000
PROMPT_LIMIT = 4_000_000
TOKENIZER_LIMIT = 64_000_000
REPLY_CACHE_LIMIT = 8_000_000

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


class FileRefused(ValueError):
    """A file that is not read: missing, not a regular file, over its limit, or unreadable (one line).
    ``missing`` says the path names nothing (a caller may keep its own words for that)."""

    def __init__(self, message: str, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def _mb(n: int) -> str:
    return f"{n / 1_000_000:g} MB"


def _shown(path: str | os.PathLike[str], what: str) -> str:
    text = os.fspath(path)
    if isinstance(text, bytes):  # pragma: no cover — bytes paths are not used
        text = text.decode(errors="replace")
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)  # one line, whatever the name holds
    if len(text) > 200:
        text = text[:200] + "…"
    return f"{what} {text}"


def what_it_is(mode: int) -> str:
    """``a folder``, ``a FIFO``, ``a device``, ``a socket`` — or ``not a regular file``."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def not_a_file(path: str | os.PathLike[str]) -> str | None:
    """None for a regular file (or a link to one); else what the path is, for a one-line refusal:
    ``not found``, or :func:`what_it_is` (``a FIFO`` …) — an existing FIFO is not "not found"."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as exc:
        return f"not readable ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else what_it_is(mode)


def read_bounded(path: str | os.PathLike[str], limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them. ``what`` names the kind
    in the message (``"config file"``). Raises :class:`FileRefused` (one line) for a missing file,
    a folder, a FIFO, a device or a socket, a file over ``limit`` bytes, or a read that fails."""
    shown = _shown(path, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileRefused(f"{shown}: no such file", missing=True) from None
    except IsADirectoryError:
        raise FileRefused(f"{shown} is a folder, not a file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        if isinstance(exc, OSError) and exc.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing
            raise FileRefused(f"{shown} is not a file") from None
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise FileRefused(f"{shown}: cannot be read ({reason})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(f"{shown} is {what_it_is(st.st_mode)}, not a file")
        if st.st_size > limit:
            raise FileRefused(f"{shown} is {st.st_size:,} bytes, over the {_mb(limit)} limit")
        chunks = []
        left = limit + 1
        while left > 0:
            piece = os.read(fd, min(left, 1 << 20))
            if not piece:
                break
            chunks.append(piece)
            left -= len(piece)
        data = b"".join(chunks)
    except OSError as exc:
        raise FileRefused(f"{shown}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileRefused(f"{shown} is over the {_mb(limit)} limit")
    return data


def read_text_bounded(path: str | os.PathLike[str], limit: int, what: str = "file") -> str:
    """:func:`read_bounded` as UTF-8 text; a file that is not UTF-8 is a :class:`FileRefused` too.
    A byte-order mark at its start (Windows' Notepad writes one) is not part of the text."""
    data = read_bounded(path, limit, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileRefused(f"{_shown(path, what)} is not UTF-8 text (byte {exc.start})") from None


__all__ = ["CONFIG_LIMIT", "PROMPT_LIMIT", "REPLY_CACHE_LIMIT", "TOKENIZER_LIMIT", "FileRefused", "not_a_file",
           "read_bounded", "read_text_bounded", "what_it_is"]


def read_toml_bounded(path: str | os.PathLike[str], limit: int, what: str,
                      error: type[Exception]) -> dict[str, Any]:
    """A TOML file read by the one rule (:func:`read_text_bounded`) and parsed; every problem is
    ``error`` with one line: not found, refused, not valid TOML, nested too deeply. ``what``
    names the kind ("config file", "sweep file")."""
    import tomllib

    try:
        text = read_text_bounded(path, limit, what)
    except FileRefused as exc:
        raise error(f"{what} not found: {path}" if exc.missing else str(exc)) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} {path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise error(f"{what} {path} is nested too deeply") from None
