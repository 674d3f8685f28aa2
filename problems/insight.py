"""A problem's insight: why its technique matters, measured (``insight.toml`` in the problem's folder).

Optional. It names a realistic size at which the technique's effect is visible, a naive baseline written in
the folder (``baseline.py``: full-batch ``value_and_grad``, the block without ``jax.checkpoint``, the Python
loop), more programs to set beside them if useful, what to sweep, and the charts to draw with a one-line
takeaway each. ``grader/cost/measure.py`` measures the programs (``python -m grader cost``); the Cost tab draws them.
See ``_template/insight.toml`` for an annotated example.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

METRICS = {
    "peak_bytes": "peak memory (bytes)",
    "temp_bytes": "temporary memory (bytes)",
    "argument_bytes": "argument memory (bytes)",
    "output_bytes": "output memory (bytes)",
    "residual_bytes": "saved for the backward pass (bytes)",
    "flops": "FLOPs",
    "flops_lowered": "FLOPs as JAX wrote the program (before XLA's passes)",
    "bytes_accessed": "bytes accessed",
    "transcendentals": "transcendental operations",
    "hlo_instructions": "instructions in the compiled program",
    "jaxpr_eqns": "equations in the traced program",
}
"""What a chart may plot (a field of each measured program) and its axis label."""

KEYS = {"summary", "size", "small", "shapes", "reference", "baseline", "compare", "sweep", "charts", "residuals", "tpu"}
PLATFORMS = ("cpu", "tpu")
"""What a program or a chart may be limited to (``targets = ["tpu"]``): this machine, or a TPU target."""


@dataclass(frozen=True)
class InsightProgram:
    """A program of the problem folder measured beside the learner's."""

    name: str
    """Its label in the JSON and the charts: ``reference``, ``baseline`` or a ``[[compare]]`` entry's name."""
    file: str
    """The file in the problem's folder that defines the entry function."""
    title: str
    """How a chart's legend names it (``full batch``, ``no checkpoint``)."""
    targets: tuple[str, ...] = PLATFORMS
    """Where it is measured: a stack of blocks compiled only for the TPU, say (``targets = ["tpu"]``)."""


@dataclass(frozen=True)
class Sweep:
    """One size varied over several values, each program of ``programs`` measured at each value."""

    size: str
    """The name (in ``[size]``) that varies."""
    name: str
    """What the JSON and the chart call it: the argument's name when it is one (``num_microbatches``)."""
    values: tuple[int, ...] = ()
    """Explicit values, or empty for ``divisors_of``."""
    small_values: tuple[int, ...] = ()
    """Explicit values at the small (test) size, when ``values`` are given."""
    divisors_of: str = ""
    """Every divisor of this size (up to ``max``) instead of explicit values."""
    max: int = 0
    programs: tuple[str, ...] = ("learner", "reference")
    """Which programs are measured at every point; the others once, at the declared size."""

    def points(self, sizes: dict[str, int], small: bool = False) -> list[int]:
        """The swept values at these sizes (divisors are of the size given, so a small size has its own)."""
        if self.values:
            return list(self.small_values if small and self.small_values else self.values)
        n = sizes[self.divisors_of]
        return [d for d in range(1, n + 1) if n % d == 0 and (not self.max or d <= self.max)]


@dataclass(frozen=True)
class Chart:
    metric: str
    """A key of ``METRICS``."""
    over: str
    """``sweep``: a line per program against the swept size; ``programs``: a bar per program."""
    title: str
    takeaway: str
    """The one line shown under the chart, written for this problem."""
    targets: tuple[str, ...] = PLATFORMS
    """Where the chart is drawn (``["tpu"]``: only for a TPU target's figures)."""
    tpu_takeaway: str = ""
    """The line under it for a TPU target's figures, when they say something else."""


@dataclass(frozen=True)
class Insight:
    summary: str
    sizes: dict[str, int]
    """The realistic size, by name (``B = 4096``)."""
    small: dict[str, int]
    """Overrides of ``sizes`` small enough for the tests, which must still show the effect."""
    shapes: dict[str, Any]
    """Each argument of the entry function in terms of the names: a list (an array's shape), a dict of
    lists (a dict of arrays) or a name or int (an int argument)."""
    programs: tuple[InsightProgram, ...]
    """The reference, the baseline, then any ``[[compare]]`` programs."""
    sweep: Sweep | None
    charts: tuple[Chart, ...]
    residuals: bool = False
    """List the residuals saved for the backward pass of every program (always done for a checkpointed one)."""
    tpu_summary: str = ""
    """What the TPU compiler's plan shows for this technique, or that it shows nothing (``[tpu] summary``)."""
    tpu_all_devices: bool = False
    """The programs build a mesh of ``jax.devices()``: on a TPU target they get every chip of the topology
    (``[tpu] all_devices = true``; the figures are then each chip's)."""
    folder: Path = field(default=Path("."), repr=False)

    def programs_for(self, platform: str) -> tuple[InsightProgram, ...]:
        return tuple(p for p in self.programs if platform in p.targets)

    def charts_for(self, platform: str) -> tuple[Chart, ...]:
        return tuple(c for c in self.charts if platform in c.targets)

    def chart_for(self, chart: Chart, platform: str) -> dict[str, str]:
        """The chart as a report carries it: ``metric``, ``over``, ``title``, ``takeaway`` for this platform."""
        takeaway = chart.tpu_takeaway if platform == "tpu" and chart.tpu_takeaway else chart.takeaway
        return {"metric": chart.metric, "over": chart.over, "title": chart.title, "takeaway": takeaway}

    def summary_for(self, platform: str) -> str:
        if platform == "tpu" and self.tpu_summary:
            return f"{self.summary} On the TPU: {self.tpu_summary}"
        return self.summary

    def sizes_for(self, small: bool = False, **overrides: int) -> dict[str, int]:
        sizes = dict(self.sizes, **(self.small if small else {}))
        sizes.update(overrides)
        return sizes

    def shapes_at(self, sizes: dict[str, int]) -> dict[str, Any]:
        """Each argument's shape (or number) at these sizes: a list of names and ints is an array's shape, a
        dict (or a list of dicts and lists) a pytree of them, a name or number a number."""
        def dim(d: Any) -> int:
            if not isinstance(d, str):
                return int(d)
            name, offset = _offset(d)
            return int(sizes[name]) + offset

        def walk(shape: Any) -> Any:
            if isinstance(shape, dict):
                return {k: walk(v) for k, v in shape.items()}
            if isinstance(shape, list):
                if all(isinstance(d, (str, int)) for d in shape):
                    return [dim(d) for d in shape]
                return [walk(v) for v in shape]
            return dim(shape)
        return {arg: walk(shape) for arg, shape in self.shapes.items()}

    def code(self, name: str) -> str:
        program = next(p for p in self.programs if p.name == name)
        return (self.folder / program.file).read_text()


def load_insight(folder: Path, arg_names: tuple[str, ...]) -> Insight | None:
    """The folder's ``insight.toml``, checked against the entry function's arguments, or None without one."""
    path = folder / "insight.toml"
    if not path.exists():
        return None
    meta = tomllib.loads(path.read_text())
    unknown = set(meta) - KEYS
    if unknown:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}")
    sizes = {k: int(v) for k, v in meta["size"].items()}
    small = {k: int(v) for k, v in meta.get("small", {}).items()}
    shapes = meta["shapes"]
    if set(shapes) != set(arg_names):
        raise ValueError(f"{path}: [shapes] must give every argument {list(arg_names)}, got {sorted(shapes)}")
    names = _names_in(shapes)
    if names - set(sizes) or set(small) - set(sizes):
        raise ValueError(f"{path}: sizes {sorted((names | set(small)) - set(sizes))} are not in [size]")
    reference = meta.get("reference", {})
    programs = [InsightProgram("reference", "reference.py", reference.get("title", "reference"))]
    baseline = meta["baseline"]
    programs.append(InsightProgram("baseline", baseline.get("file", "baseline.py"), baseline.get("title", "baseline")))
    for c in meta.get("compare", ()):
        if c["name"] in ("learner", "reference", "baseline") or "@" in c["name"]:
            raise ValueError(f"{path}: [[compare]] name {c['name']!r} is reserved")
        programs.append(InsightProgram(c["name"], c["file"], c.get("title", c["name"]),
                                       _targets(path, c.get("targets", PLATFORMS))))
    for p in programs:
        if not (folder / p.file).exists():
            raise ValueError(f"{path}: {p.file} is not in the folder")
    sweep = None
    if "sweep" in meta:
        s = meta["sweep"]
        sweep = Sweep(size=s["size"], name=s.get("name", s["size"]), values=tuple(int(v) for v in s.get("values", ())),
                      small_values=tuple(int(v) for v in s.get("small_values", ())),
                      divisors_of=s.get("divisors_of", ""), max=int(s.get("max", 0)),
                      programs=tuple(s.get("programs", ("learner", "reference"))))
        if sweep.size not in sizes or (not sweep.values and sweep.divisors_of not in sizes):
            raise ValueError(f"{path}: [sweep] needs a size of [size] and `values` or `divisors_of`")
        if set(sweep.programs) - {"learner"} - {p.name for p in programs}:
            raise ValueError(f"{path}: [sweep] programs {list(sweep.programs)} are not all declared")
    charts = tuple(Chart(metric=c["metric"], over=c.get("over", "programs"), title=c["title"],
                         takeaway=c["takeaway"], targets=_targets(path, c.get("targets", PLATFORMS)),
                         tpu_takeaway=c.get("tpu_takeaway", "")) for c in meta.get("charts", ()))
    for c in charts:
        if c.metric not in METRICS or c.over not in ("sweep", "programs") or (c.over == "sweep" and sweep is None):
            raise ValueError(f"{path}: chart {c.title!r}: metric must be one of {sorted(METRICS)} and `over` "
                             "`programs`, or `sweep` when there is a [sweep]")
    for platform in PLATFORMS:
        if not any(platform in c.targets for c in charts):
            raise ValueError(f"{path}: declare at least one [[charts]] with a takeaway drawn for the {platform}")
    tpu = meta.get("tpu", {})
    if set(tpu) - {"summary", "all_devices"} or not tpu.get("summary"):
        raise ValueError(f"{path}: [tpu] must say what the TPU's plan shows (`summary`; `all_devices` optional)")
    return Insight(summary=meta["summary"], sizes=sizes, small=small, shapes=shapes, programs=tuple(programs),
                   sweep=sweep, charts=charts, residuals=bool(meta.get("residuals", False)),
                   tpu_summary=tpu.get("summary", ""), tpu_all_devices=bool(tpu.get("all_devices", False)),
                   folder=folder)


def _targets(path: Path, targets: Any) -> tuple[str, ...]:
    if not targets or not set(targets) <= set(PLATFORMS):
        raise ValueError(f"{path}: `targets` must list some of {list(PLATFORMS)}, got {targets!r}")
    return tuple(targets)


def _names_in(shapes: Any) -> set[str]:
    """The size names a ``[shapes]`` table (or any part of it) uses."""
    if isinstance(shapes, dict):
        return set().union(*(_names_in(v) for v in shapes.values())) if shapes else set()
    if isinstance(shapes, list):
        return set().union(*(_names_in(v) for v in shapes)) if shapes else set()
    return {_offset(shapes)[0]} if isinstance(shapes, str) else set()


_OFFSET = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:([+-])\s*(\d+))?\s*$")


def _offset(dim: str) -> tuple[str, int]:
    """``"n + 1"`` -> ``("n", 1)``, ``"n"`` -> ``("n", 0)``: a dimension may be a size plus or minus a number
    (a target model's n + 1 rows for n drafted tokens), so that it follows the size when a sweep varies it."""
    m = _OFFSET.match(dim)
    if not m:
        raise ValueError(f"a dimension must be a size name, optionally plus or minus a number: {dim!r}")
    name, sign, k = m.groups()
    return name, (int(k) if sign == "+" else -int(k)) if sign else 0
