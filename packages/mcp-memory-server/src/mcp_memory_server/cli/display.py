"""What the CLI shows people: tables on a terminal, progress bars on stderr.

``rich`` is imported inside these functions only: every command module imports this module, and ``serve``'s path
to the ``initialize`` reply must not pay for rich (a test measures what ``serve`` imports).

On a terminal, tables are drawn with rich; piped or redirected, commands print their rows as plain
lines (one per row), the same whatever the terminal's width. Scripts should read ``--json``. Progress goes to stderr: a rich bar on a terminal, a few plain lines
otherwise, and nothing at all with ``--json`` unless stderr is a terminal (the bar then vanishes when
done): stdout only ever carries the command's result.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

import click

# Plain progress lines when stderr is not a terminal: at most one per this many seconds (and the last).
PLAIN_PROGRESS_SECONDS = 2.0


def is_terminal(stream: IO[Any] | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def stdout_is_terminal() -> bool:
    return is_terminal(sys.stdout)


def stderr_is_terminal() -> bool:
    return is_terminal(sys.stderr)


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    wide: int | None = None,
    right: Sequence[int] = (),
) -> None:
    """Draw ``rows`` under ``headers`` on stdout as a rich table, for a terminal (commands print
    plain lines instead when stdout is not one). The ``wide`` column (the content) takes the room
    left and is cut with an ellipsis; no other column ever wraps (ids stay whole, to copy); the
    ``right`` columns are right-aligned."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # expand: rich only gives the ``wide`` column the room left (and keeps the others whole) in a
    # table as wide as the terminal; a narrower one squeezes every column, ids first.
    drawn = Table(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", expand=wide is not None
    )
    for index, header in enumerate(headers):
        if index == wide:
            drawn.add_column(header, overflow="ellipsis", no_wrap=True, ratio=1)
        else:
            drawn.add_column(header, no_wrap=True, justify="right" if index in right else "left")
    for row in rows:
        drawn.add_row(*(Text(str(cell)) for cell in row))  # Text: a memory's "[b]" is not markup
    Console(highlight=False).print(drawn)


ProgressFn = Callable[[int, int], None]


@contextmanager
def progress(label: str, *, quiet: bool = False) -> Iterator[ProgressFn]:
    """A progress reporter on stderr, ``report(done, total)``: a rich bar on a terminal; else a plain
    ``label: done/total`` line every few seconds and when done (none at 0); nothing with ``quiet``
    (``--json``) unless stderr is a terminal."""
    if stderr_is_terminal():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=quiet,
        ) as bar:
            task = bar.add_task(label, total=None)

            def draw(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            yield draw
        return
    if quiet:
        yield lambda done, total: None
        return
    last = [time.monotonic(), -1]  # when the last line was written (or we started), at what count

    def write(done: int, total: int) -> None:
        now = time.monotonic()
        if done == 0 or done == last[1] or (done < total and now - last[0] < PLAIN_PROGRESS_SECONDS):
            return
        last[:] = [now, done]
        click.echo(f"{label}: {done}/{total}", err=True)

    yield write
