"""MkDocs hooks: the README as the site's home page, the generated reference pages, and links
that work both in the repository and on the site (mkdocs.yml names this file)."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from mirofish.reference import PAGES, page

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "index.md", content=(ROOT / "README.md").read_text(encoding="utf-8")))
    for name in PAGES:  # the committed copies (for reading in the repository) give way to a fresh one
        old = files.get_file_from_path(f"reference/{name}.md")
        if old is not None:
            files.remove(old)
        files.append(File.generated(config, f"reference/{name}.md", content=page(name) + "\n"))
    return files


def _repo_path(src_uri: str) -> str:
    """Where a page's Markdown lives in the repository (the home page is the README)."""
    return "README.md" if src_uri == "index.md" else f"docs/{src_uri}"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Links are written for the repository (docs/x.md from the README, ../README.md and
    ../bench/x.py from a page): point them at the site's pages, and show a link to a file
    outside the site as its path."""
    here = posixpath.dirname(_repo_path(page.file.src_uri))
    page_dir = posixpath.dirname(page.file.src_uri)

    def fix(m: re.Match[str]) -> str:
        bang, text, target = m.groups()
        if re.match(r"^[a-z]+:|^#", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        repo = posixpath.normpath(posixpath.join(here, path))
        if repo == "README.md":
            repo = "docs/index.md"
        if repo.startswith("docs/"):
            rel = posixpath.relpath(repo[len("docs/"):], page_dir or ".")
            return f"{bang}[{text}]({rel}{'#' + anchor if anchor else ''})"
        return f"{text} (`{repo}`)" if text and text != f"`{repo}`" else f"`{repo}`"

    return LINK.sub(fix, markdown)
