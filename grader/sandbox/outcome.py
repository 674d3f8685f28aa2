"""The plain data in and out of one sandboxed run: the limits it runs under, and what came back."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grader.sandbox.bwrap import SCRATCH_BYTES


WORKER_LOST = ("The grading worker was lost while it had your code (the process grading it stopped). This is not your "
               "fault, and nothing was judged: please run again.")
"""What a run whose worker was lost to the grader's own failure says (never "your program crashed")."""

LOST_STATUS = "grader_lost"
"""The ``status`` of the answer the grader puts in place of a lost worker's: ``{"status": LOST_STATUS}``."""


@dataclass(frozen=True)
class Limits:
    """What one sandboxed run may use."""

    wall_s: float = 30.0
    """Wall-clock seconds of the run: from spawn for a cold child (start-up included), from job delivery
    for a pooled worker (see ``supervise``'s ``started``)."""
    memory_bytes: int = 2 << 30
    """Resident memory of the child's process group; above it the child is killed."""
    address_space_bytes: int = 8 << 30
    """RLIMIT_AS inside the child: large allocations fail there with MemoryError."""
    output_bytes: int = 1 << 20
    """stdout plus stderr; past this the child is killed (Output Limit Exceeded)."""
    shown_bytes: int = 20_000
    """How much of stdout and of stderr is kept for the report."""
    result_bytes: int = 8 << 20
    """The largest answer the parent reads from the child; a larger one is the ``answer`` limit."""
    result_values: int = 500_000
    """The most JSON values (numbers, strings, list items, object entries) the parent parses from the
    answer: bounds the memory an answer costs the server (about 100 bytes a value) whatever the child sends."""
    progress_bytes: int = 64 << 10
    """Bytes the child may send on the progress channel in all; past this it is killed (``progress``)."""
    file_size_bytes: int = 16 << 20
    open_files: int = 256
    threads: int = 512
    """RLIMIT_NPROC of a worker with a user of its own: its processes and threads together."""
    scratch_bytes: int = SCRATCH_BYTES
    """Bytes in the scratch folder; past this the child is killed (its files count as output)."""
    scratch_files: int = 2000
    """Files and folders in the scratch folder."""


@dataclass
class RunOutcome:
    """What came back from one sandboxed run."""

    result: dict[str, Any] | None
    """The child's JSON answer, or None if it gave none (killed, crashed, exited early, garbled, too large)."""
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    exit_code: int | None = None
    """The child's exit status; negative for a signal, as ``subprocess`` reports it."""
    limit: str | None = None
    """Why the parent stopped the child or refused its answer: ``time``, ``memory``, ``output`` (stdout and
    stderr), ``progress`` (the progress channel), ``disk`` (scratch folder) or ``answer`` (larger than
    ``result_bytes`` or ``result_values``)."""
    result_error: str | None = None
    """Why the answer could not be read, when there was something on the channel."""
    elapsed_s: float = 0.0
    peak_rss_bytes: int = 0
    cpu_s: float = 0.0
    """CPU seconds (user + system) of the child and its processes, from wait4 or sampled while it ran."""
    progress: str = ""
    """The last progress message the payload sent (e.g. ``Hidden 7 (case 10 of 17)``); learner code could have
    written it too, so it is text to show, never to act on."""
