"""A one-line progress display on a terminal's stderr: messages, messages
per second, matched and unknown, and (when the input's size is known) the
share read and the time left; redrawn a few times a second. The standard
library is enough: one carriage-return line, drawn once per batch at most."""
from __future__ import annotations

import time
from typing import Callable, TextIO

REFRESH = 0.25   # seconds between redraws


class Progress:
    """Draws only when ``stream`` is a terminal; otherwise every method is a
    no-op, so a pipe or a log file never gets a progress line."""

    def __init__(self, stream: TextIO) -> None:
        try:
            self.enabled = stream.isatty()
        except (AttributeError, ValueError):
            self.enabled = False
        self.stream = stream
        self.start = time.perf_counter()
        self.next_draw = self.start + REFRESH
        self.width = 0
        self.fraction: Callable[[], float | None] | None = None
        """How much of the input has been read, 0 to 1 (None: unknown); asked
        only when the line is drawn."""

    def update(self, messages: int, matched: int, unknown: int) -> None:
        """Called once a batch: redraws when the refresh interval has passed."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now < self.next_draw:
            return
        self.next_draw = now + REFRESH
        rate = messages / (now - self.start)
        line = (f"{messages:>12,} messages  {rate:>10,.0f} msgs/s  matched {matched:,}  "
                f"unknown {unknown:,}")
        done = self.fraction() if self.fraction is not None else None
        if done is not None and 0 < done <= 1:
            left = (now - self.start) * (1 - done) / done
            line += f"  {done:>4.0%}  {clock(left)} left"
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = len(line)

    def clear(self) -> None:
        """Remove the line (before other output on the same terminal)."""
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def clock(seconds: float) -> str:
    """``m:ss`` or ``h:mm:ss``."""
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
