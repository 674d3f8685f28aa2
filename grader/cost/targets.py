"""Where a cost measurement compiles for: this machine's CPU, or a TPU compiled for ahead of time.

A TPU target needs the optional extra (``pip install -r requirements-tpu.txt``: libtpu, pinned to the
release jax's ``tpu`` extra asks for). libtpu compiles for a TPU without one: a topology's devices are
compile-only, so the measurement child (``cost_child.target_device``) places the arguments on one chip of a
small slice and XLA's TPU compiler plans the program. The figures are that compiler's plan for one chip,
which a real chip's own compile of the same program gives to the byte; what a running chip reports after
running (``peak_bytes_in_use``) also counts buffers outside the program.

Only topologies this libtpu accepts are listed (a single chip, ``v5e:1x1``, is refused: the smallest slice
of a host's 2x2 chips is named, and one of its chips used).
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from typing import Any

EXTRA = "requirements-tpu.txt"
"""The optional extra that TPU targets need."""


@dataclass(frozen=True)
class Target:
    name: str
    """What the command line and the JSON call it: ``cpu``, ``tpu-v5e``."""
    label: str
    """How the Cost tab names it."""
    platform: str = "cpu"
    topology: str = ""
    """libtpu's topology name (``v5e:2x2``); the measurement uses its first chip."""
    options: dict[str, Any] = field(default_factory=dict)
    """More arguments of ``get_topology_desc`` (v4's two TensorCores work as one device: ``megacore``)."""
    chip: str = ""
    """The chip, as a sentence names it."""

    def job(self) -> dict[str, Any] | None:
        """What the measurement child is told (None: this machine)."""
        if self.platform == "cpu":
            return None
        return {"name": self.name, "platform": self.platform, "topology": self.topology, "options": dict(self.options)}


CPU = Target("cpu", "This machine (CPU)")
TARGETS: dict[str, Target] = {t.name: t for t in (
    CPU,
    Target("tpu-v5e", "TPU v5e, compiled ahead of time", "tpu", "v5e:2x2", chip="one TPU v5e chip (16 GiB HBM)"),
    Target("tpu-v4", "TPU v4, compiled ahead of time", "tpu", "v4:2x2x1", {"chip_config_name": "megacore"},
           chip="one TPU v4 chip (32 GiB HBM, its two TensorCores as one device)"),
    Target("tpu-v5p", "TPU v5p, compiled ahead of time", "tpu", "v5p:2x2x1", chip="one TPU v5p chip (95 GiB HBM)"),
    Target("tpu-v6e", "TPU v6e, compiled ahead of time", "tpu", "v6e:2x2", chip="one TPU v6e chip (32 GiB HBM)"),
)}
"""Every target, this machine first. The TPU ones are the topologies libtpu 0.0.42.1 accepts on a machine
without a TPU (tests/test_cost_tpu.py compiles on each)."""


def tpu_extra() -> tuple[bool, str]:
    """Whether libtpu is installed (found, not imported: importing it sets ``TPU_LIBRARY_PATH`` for this
    process), and a sentence saying so."""
    try:
        spec = importlib.util.find_spec("libtpu")
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    library = next((os.path.join(f, "libtpu.so") for f in folders if os.path.isfile(os.path.join(f, "libtpu.so"))),
                   None)
    if library is None:
        return False, f"libtpu is not installed: `pip install -r {EXTRA}` adds the TPU targets"
    try:
        from importlib.metadata import version
        release = version("libtpu")
    except Exception:  # noqa: BLE001 - a library without its metadata still loads
        release = "unknown release"
    return True, f"libtpu {release} is installed ({library})"


def available() -> list[Target]:
    """The targets this installation can compile for."""
    ok, _ = tpu_extra()
    return [t for t in TARGETS.values() if t.platform == "cpu" or ok]


def note(target: Target) -> str:
    """What a report's figures are, in a sentence (the CPU's is ``cost_records.CPU_NOTE``)."""
    return (f"These are XLA's TPU compiler's plan for {target.chip}, compiled ahead of time on this server "
            "(libtpu; no TPU was used): the memory the compiled program plans for its arguments, outputs and "
            "temporaries, at its peak. A running chip's own count (peak_bytes_in_use) is larger: it also holds "
            "buffers outside this program.")
