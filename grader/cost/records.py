"""Typed records of a cost measurement (``grader/cost/measure.py``): what the CLI prints and the Cost tab draws."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

CPU_NOTE = ("These are XLA's figures for this server's CPU. An accelerator's compiler lays memory out and fuses "
            "operations differently, so its figures differ: where the TPU extra is installed, a TPU target "
            "shows that compiler's own plan.")


@dataclass
class Residual:
    """A value saved by the forward pass for the backward pass to read."""

    name: str
    """``output of tanh``, ``params['w2']`` (an input), ``output of reshape (one step's slice)``."""
    kind: str
    """``intermediate`` (computed by the forward pass), ``argument``, ``input`` or ``constant``."""
    shape: list[int]
    dtype: str
    bytes: int
    line: int | None = None
    """The line of the program's code that computed it, when known."""
    code: str = ""
    """That line's text."""
    scope: str = ""
    """Where the backward pass that reads it runs: ``""`` (the function itself), ``inside `lax.scan` (per
    step)``, ... A residual inside a loop is one step's, alive once per step."""
    primitive: str | None = None


@dataclass
class ProgramCost:
    """One program compiled at one size: XLA's memory and cost analyses, and its saved residuals."""

    label: str
    """``learner``, ``reference``, ``baseline``, a compared program's name, or a sweep point such as
    ``learner@num_microbatches=8``."""
    program: str
    """Which code: ``learner``, ``reference``, ``baseline`` or a compared program's name."""
    title: str
    """How a legend names the program (``your code``, ``full batch``)."""
    at: dict[str, int] = field(default_factory=dict)
    """The swept size's value for a sweep point (``{"num_microbatches": 8}``); empty at the declared size."""
    ok: bool = True
    error: str = ""
    """Why this program could not be measured (it raised while traced, say)."""
    traceback: str = ""
    peak_bytes: int | None = None
    """XLA's peak memory for the program (``peak_memory_in_bytes``): on a TPU, what the compiler plans to
    hold at once, arguments and outputs included; where temporaries live in its scheduled buffers (``temp_bytes``
    can read 0 there), this is the figure that moves."""
    temp_bytes: int | None = None
    """XLA's temporary buffers: what the program allocates beyond its arguments and outputs."""
    argument_bytes: int | None = None
    output_bytes: int | None = None
    alias_bytes: int | None = None
    flops: float | None = None
    """XLA's FLOP count with every loop body counted as many times as the loop runs."""
    flops_xla: float | None = None
    """XLA's own FLOP count, which visits each loop body once."""
    flops_lowered: float | None = None
    """XLA's FLOP count of the program as JAX lowered it, before XLA's optimisations (each loop body once):
    a checkpoint's recomputation shows here even where the CPU compiler merges it away."""
    bytes_accessed: float | None = None
    """XLA's bytes accessed, loops counted like ``flops``."""
    bytes_accessed_xla: float | None = None
    transcendentals: float | None = None
    loops: list[dict[str, Any]] = field(default_factory=list)
    """Each loop of the compiled program: ``trip_count`` and its body's FLOPs (once)."""
    cost_note: str = ""
    hlo_instructions: int | None = None
    """Instructions in the optimised, compiled program (all its computations)."""
    jaxpr_eqns: int | None = None
    """Equations in the traced program, nested ones included."""
    compile_s: float | None = None
    """Seconds XLA took to compile it, on a shared machine: a rough figure."""
    checkpointed: bool = False
    """The traced program holds a ``jax.checkpoint``."""
    has_backward: bool | None = None
    """The traced program has a backward (transposed) pass; None where residuals were not looked for. A
    program without one (forward-mode ``jacfwd``, say) saves nothing for a backward pass."""
    residual_count: int | None = None
    """How many residuals (``residuals`` lists at most the first 200)."""
    residual_bytes: int | None = None
    """Bytes saved for the backward pass (``residuals`` summed); None where not measured."""
    residuals: list[Residual] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.residual_bytes is None:
            for key in ("residual_bytes", "residuals", "residual_count", "has_backward"):
                out.pop(key)
        return out


@dataclass
class CostReport:
    """A learner's program measured beside the problem's reference, baseline and sweep."""

    problem: str
    file: str
    size: dict[str, int]
    """The declared size, by name (``{"B": 4096, "D": 512, ...}``)."""
    shapes: dict[str, Any] = field(default_factory=dict)
    """Each argument's shape at that size (an int argument's value)."""
    target: str = "cpu"
    """What the programs were compiled for: ``cpu`` (this machine) or a TPU (``tpu-v5e``, ...), see
    ``grader/cost/targets.py``; the first key of the JSON."""
    ok: bool = True
    error: str = ""
    """Set when the learner's program could not be measured at the declared size; the tab shows it."""
    error_kind: str = ""
    """``learner`` (the code raised, timed out, ran out of memory), ``submission`` (syntax error, no entry
    function), ``grader`` (ours, never the learner's fault), ``no_insight``, ``unknown_target`` or
    ``missing_extra`` (a TPU target without libtpu installed)."""
    traceback: str = ""
    summary: str = ""
    programs: list[ProgramCost] = field(default_factory=list)
    sweep_name: str = ""
    """The swept size's name (``num_microbatches``), or empty."""
    sweep: list[dict[str, Any]] = field(default_factory=list)
    """The learner's program at each sweep point: ``{sweep_name: n, "label": ..., "temp_bytes": ..., ...}``."""
    charts: list[dict[str, str]] = field(default_factory=list)
    """The problem's charts: ``metric``, ``over`` (``sweep`` or ``programs``), ``title``, ``takeaway``."""
    note: str = CPU_NOTE
    elapsed_s: float = 0.0
    jobs: list[dict[str, Any]] = field(default_factory=list)
    """Each pool job this measurement ran (``trusted``: the problem's own programs, absent when remembered
    from an earlier measurement; ``learner``): its programs, wall and CPU seconds, peak memory, limit hit."""

    def program(self, label: str) -> ProgramCost | None:
        return next((p for p in self.programs if p.label == label), None)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["programs"] = [p.to_json() for p in self.programs]
        return {"target": out.pop("target"), **out}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "CostReport":
        """The report ``to_json`` gave (a grading worker's, through the queue)."""
        programs = []
        for p in data.get("programs", []):
            p = dict(p)
            p["residuals"] = [Residual(**r) for r in p.get("residuals", [])]
            programs.append(ProgramCost(**p))
        return cls(**dict(data, programs=programs))
