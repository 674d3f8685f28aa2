"""The pipes from a sandboxed process, read with bounds: its output, its progress messages and its answer.

Nothing the child sends is trusted: output is capped, progress messages are cut and only the last one is
kept, and the answer is JSON only (never unpickled), bounded in bytes and in values before it is parsed, and
must carry the run's token.
"""
from __future__ import annotations

import json
import os
import re
import threading
from typing import Any

PROGRESS_CHARS = 160
"""The longest progress message kept."""
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


class CappedReader(threading.Thread):
    """Drains a pipe, keeping at most ``keep`` bytes and counting all of them; at the end of the pipe sets
    ``done`` and the ``wake`` event, if given."""

    def __init__(self, fd: int, keep: int, wake: threading.Event | None = None) -> None:
        super().__init__(daemon=True)
        self.fd, self.keep, self.wake = fd, keep, wake
        self.data = bytearray()
        self.total = 0
        self.done = False

    def run(self) -> None:
        try:
            while True:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    break
                self.total += len(chunk)
                room = self.keep - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
        except OSError:
            pass
        finally:
            os.close(self.fd)
            self.done = True
            if self.wake is not None:
                self.wake.set()


class ProgressReader(threading.Thread):
    """Drains the progress pipe: counts its bytes and keeps the last complete line, cut to
    ``PROGRESS_CHARS`` printable characters. ``version`` grows with each new message; ``done`` and ``wake``
    as for ``CappedReader``."""

    def __init__(self, fd: int, wake: threading.Event | None = None) -> None:
        super().__init__(daemon=True)
        self.fd, self.wake = fd, wake
        self.done = False
        self.total = 0
        self.last = ""
        self.version = 0
        self._partial = b""

    def run(self) -> None:
        try:
            while True:
                chunk = os.read(self.fd, 1 << 12)
                if not chunk:
                    break
                self.total += len(chunk)
                lines = (self._partial + chunk).split(b"\n")
                self._partial = lines.pop()[-4 * PROGRESS_CHARS:]
                for line in reversed(lines):
                    text = _printable(line)
                    if text:
                        self.last = text
                        self.version += 1
                        break
        except OSError:
            pass
        finally:
            os.close(self.fd)
            self.done = True
            if self.wake is not None:
                self.wake.set()


def _printable(raw: bytes) -> str:
    text = raw[: 4 * PROGRESS_CHARS].decode("utf-8", "replace")
    return " ".join("".join(c for c in text if c.isprintable()).split())[:PROGRESS_CHARS]


def count_values(raw: bytes) -> int:
    """An upper bound on the number of JSON values in ``raw``, exact enough to bound memory: each value
    but the first follows a comma or opens a container. Cheap when strings hold few commas or brackets;
    otherwise strings are taken out first."""
    structural = raw.count(b",") + raw.count(b"[") + raw.count(b"{")
    return structural + 1


def count_values_outside_strings(raw: bytes) -> int:
    stripped = _JSON_STRING.sub(b'""', raw)
    return count_values(stripped)


def read_answer(raw: bytes | bytearray, total: int, nonce: str, max_bytes: int,
                max_values: int) -> tuple[dict[str, Any] | None, str | None, bool]:
    """(answer, why it could not be read, whether it was over a bound), from the bytes kept of the result
    pipe (``raw``) and how many were sent in all (``total``). The answer must be a JSON object with a
    ``status`` and the run's ``nonce`` (removed from it)."""
    stripped = raw.lstrip(b"\n")  # the child's readiness byte, if a pool did not take it
    size = total - (len(raw) - len(stripped))
    raw = stripped
    if not raw:
        return None, None, False
    if size > max_bytes:
        return None, f"the answer was larger than {max_bytes >> 20} MiB", True
    if count_values(raw) > max_values and count_values_outside_strings(raw) > max_values:
        return None, f"the answer held more than {max_values:,} values", True
    try:
        result = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return None, f"the answer from the child was not valid JSON ({type(exc).__name__})", False
    if not isinstance(result, dict) or "status" not in result:
        return None, "the answer from the child had no status", False
    if result.pop("nonce", None) != nonce:
        return None, "the answer did not come from the grader's own code", False
    return result, None, False
