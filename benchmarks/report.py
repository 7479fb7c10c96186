"""What every benchmark script shares: writing its section of docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path


def write_section(path: Path, body: str, name: str) -> None:
    """Replace the ``name`` section of ``path`` (between ``<!-- name:start -->`` and ``<!-- name:end -->``),
    keeping everything else; append it when the markers are missing."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    section = f"{start}\n{body}\n{end}"
    text = path.read_text() if path.exists() else ""
    if start in text and end in text:
        text = text[: text.index(start)] + section + text[text.index(end) + len(end) :]
    else:
        text = (text.rstrip() + "\n\n" if text.strip() else "") + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
