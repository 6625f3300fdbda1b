"""How a long step shows its progress: a bar (``tqdm.auto``: a text bar in a terminal, a
widget in a notebook) and one line per milestone for logs, where a bar does not show.

The steps call :func:`progress_bar` through this module (imported as ``bars``:
``bars.progress_bar(...)``), so a test can watch every bar by replacing it here."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "progress_bar", "say_on_stderr"]

# what a step says at each milestone (default: say_on_stderr)
Progress = Callable[[str], None]


def progress_bar(total: float | None, desc: str, unit: str = "B") -> Any:
    """A progress bar for one long step: tqdm.auto (a widget in a notebook, text on stderr
    in a terminal); ``unit="B"`` shows bytes as MB/GB."""
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit == "B",
        unit_divisor=1024 if unit == "B" else 1000,
        file=sys.stderr,
        dynamic_ncols=True,
        mininterval=0.5,
    )


def say_on_stderr(message: str) -> None:
    """A milestone as one line on stderr, prefixed with ``sqlnb:``."""
    print(f"sqlnb: {message}", file=sys.stderr, flush=True)
