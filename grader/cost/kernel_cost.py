"""A Pallas problem's Cost tab: the kernel against the ``jnp`` version XLA fuses on its own, for a TPU v5e.

A problem with ``[tpu_compile]`` in its ``problem.toml`` and a ``baseline.py`` (the same entry function written
with ``jnp``) has this tab; ``[kernel_cost]`` names the baseline and says the takeaway. Each program gets four
figures at the realistic size, and the v5e's roofline from two of them (``kernel_model.roofline``):

- **HBM bytes** and **FLOPs**: for a kernel, counted from its grid and blocks (``kernel_model``: XLA's cost
  analysis counts nothing inside a Mosaic kernel), plus XLA's count of the rest of its program; for the ``jnp``
  version, XLA's cost analysis of the compiled program (``bytes accessed``, ``flops``);
- **planned peak**: XLA's memory analysis of the program compiled for one v5e chip (``peak_memory_in_bytes``).

The reference's and the baseline's figures are the same for every learner: ``python benchmarks/kernel_plans.py``
compiles them once and writes ``problems/<slug>/plans/kernel-tpu-v5e.json`` with the key of the code they are
for (``key``); ``tests/test_kernel_cost.py`` fails when the key no longer matches and recompiles them to
compare. The learner's kernel's figures come with their Submit: the compile record of the "Compiles for a TPU
v5e" row (``grader/verifier/tpu_compile.py``, trusted side) carries the model's count, ``Report.tpu``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.cost import kernel_model
from grader.cost.plans import versions
from problems import Problem

FILE = Path("plans") / "kernel-tpu-v5e.json"
TARGET = "tpu-v5e"


@dataclass
class Figures:
    """One program's row in the tab."""

    title: str
    hbm_bytes: float | None
    flops: float | None
    peak_bytes: int | None
    transcendentals: float | None = None
    how: str = ""
    """Where the bytes and FLOPs come from: ``counted from the grid and blocks`` or ``XLA's cost analysis``."""

    @property
    def roof(self) -> dict[str, Any] | None:
        if self.hbm_bytes is None or self.flops is None:
            return None
        return kernel_model.roofline(self.flops, self.hbm_bytes)


def declared(problem: Problem) -> bool:
    """Whether the problem has a kernel Cost tab: a Pallas compile size and a ``jnp`` baseline."""
    return bool(problem.tpu_compile) and (problem.folder / "baseline.py").exists()


def key(problem: Problem) -> str:
    """What the shipped figures depend on: the reference, the baseline, the size and the model's code."""
    text = json.dumps({"slug": problem.slug, "reference": problem.reference,
                       "baseline": (problem.folder / "baseline.py").read_text(), "size": problem.tpu_compile,
                       "model": Path(kernel_model.__file__).read_text()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def load(problem: Problem) -> dict[str, Any] | None:
    """The shipped figures, or None when there are none or they are for other code. Read once per version of
    the files (the Cost tab draws on every rerun of the page)."""
    stamps = (str(problem.folder), problem.reference, json.dumps(problem.tpu_compile, sort_keys=True),
              *(_stamp(f) for f in (problem.folder / FILE, problem.folder / "baseline.py")))
    if stamps not in _LOADED:
        _LOADED[stamps] = _load(problem)
    return _LOADED[stamps]


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


_LOADED: dict[tuple, dict[str, Any] | None] = {}


def _load(problem: Problem) -> dict[str, Any] | None:
    try:
        data = json.loads((problem.folder / FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("key") == key(problem) else None


def kernel_row(title: str, record: dict[str, Any] | None) -> Figures | None:
    """A kernel's row from its compile record: the model's count plus XLA's count of the program around it."""
    if not isinstance(record, dict) or record.get("status") != "compiled":
        return None
    kernel = record.get("kernel") if isinstance(record.get("kernel"), dict) else None
    if kernel is None:
        return Figures(title, None, None, record.get("peak_bytes"), how="not counted")
    around_flops = float(record.get("flops") or 0.0)
    around_bytes = float(record.get("bytes_accessed") or 0.0)
    return Figures(title, float(kernel["hbm_bytes"]) + around_bytes, float(kernel["flops"]) + around_flops,
                   record.get("peak_bytes"), float(kernel.get("transcendentals") or 0.0),
                   "counted from the grid and blocks")


def baseline_row(title: str, figures: dict[str, Any]) -> Figures:
    return Figures(title, figures.get("bytes_accessed"), figures.get("flops"), figures.get("peak_bytes"),
                   figures.get("transcendentals"), "XLA's cost analysis")


# -- compiling them (needs the TPU extra) ------------------------------------------------------------------

def _entry(problem: Problem, code: str) -> Any:
    namespace: dict[str, Any] = {"__name__": f"_kernel_cost_{problem.slug.replace('-', '_')}"}
    exec(compile(code, f"{problem.slug}", "exec"), namespace)  # noqa: S102 - the problem's own, trusted files
    return namespace[problem.entry]


def _arguments(problem: Problem, sharding: Any = None) -> tuple[list[Any], tuple[int, ...]]:
    import jax
    assert problem.tpu_compile is not None
    specs = problem.tpu_compile["args"]
    args = [s["value"] if "value" in s else jax.ShapeDtypeStruct(tuple(s["shape"]), s.get("dtype", "float32"),
                                                                 sharding=sharding) for s in specs]
    return args, tuple(i for i, s in enumerate(specs) if "value" in s)


def compute(problem: Problem) -> dict[str, Any]:
    """The reference's compile record (the trusted helper's own path: traced, handed over as data, rebuilt
    for Mosaic, compiled, counted) and the baseline's XLA figures, both for one v5e chip; what ``FILE`` holds."""
    import jax

    from grader.boundary import program
    from grader.verifier import tpu_compile
    device = tpu_compile._device()
    args, static = _arguments(problem)
    closed = jax.make_jaxpr(_entry(problem, problem.reference), static_argnums=static)(*args)
    data = json.loads(json.dumps(program.ProgramEncoder().program(closed)))  # plain JSON, as a child sends it
    reference = tpu_compile.compile_on(device, data)
    reference.pop("seconds", None)
    reference.pop("kernels", None)  # the kernel signature (which kernel it is), not a figure
    args, static = _arguments(problem, jax.sharding.SingleDeviceSharding(device))
    with jax.default_device(device):
        compiled = jax.jit(_entry(problem, (problem.folder / "baseline.py").read_text()),
                           static_argnums=static).lower(*args).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    baseline = {"peak_bytes": int(compiled.memory_analysis().peak_memory_in_bytes),
                "flops": float(cost.get("flops", 0.0)), "bytes_accessed": float(cost.get("bytes accessed", 0.0)),
                "transcendentals": float(cost.get("transcendentals", 0.0))}
    return {"problem": problem.slug, "target": TARGET, "key": key(problem), "versions": versions(TARGET),
            "written_by": "python benchmarks/kernel_plans.py", "reference": reference, "baseline": baseline}
