"""The problem registry: every folder under ``problems/`` holding a ``problem.toml`` is a problem.

A problem is data first (see ``_template/``): ``problem.toml`` (metadata, hints, requirements,
constraints), ``statement.md``, ``examples.json``, ``starter.py``, ``reference.py``, ``cases.py`` (a seeded
generator of hidden inputs), ``hidden_expected.json`` (the reference's outputs on them, rebuilt by
``python -m grader build-cases SLUG``) and ``checks.py`` (the requirement checks); optionally
``insight.toml`` and ``baseline.py`` (what the technique buys, measured: ``problems/insight.py``). Adding a
folder adds a problem; no other file changes. Loading a problem never imports JAX: checks read plain data.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from problems.insight import Insight, load_insight

ROOT = Path(__file__).resolve().parent
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


@dataclass(frozen=True)
class ArgSpec:
    """One argument of the entry function."""

    name: str
    kind: str
    """``array`` (``float32`` is the same with the default dtype), ``tree`` (nested dicts and lists of arrays;
    ``float32_tree`` is a dict of float32 arrays), ``int`` or ``float`` (a Python number), ``ints`` (a tuple
    of Python ints, e.g. bucket sizes; mark it ``static``) or ``key`` (a PRNG key made with
    ``jax.random.key`` from the integer the case gives)."""
    static: bool = False
    """Static under ``jax.jit``: the value is part of the traced program, not an input to it."""
    description: str = ""
    dtype: str = "float32"
    """The dtype of an ``array``'s or a ``tree``'s leaves: ``float32``, ``bfloat16``, ``float16``, ``int8``,
    ``int32``, ``uint32``, ``bool``..."""


@dataclass(frozen=True)
class Requirement:
    id: str
    text: str
    advice: bool = False
    """Advice, not a requirement: shown with what the grader saw, never deciding the verdict (``advice = true``
    in ``problem.toml``: a way of writing it that no property of the program can establish)."""
    combines: tuple[str, ...] = ()
    """The rows this one joins (``combines = [...]`` in ``problem.toml``): it holds when one structure meets them
    all, so a submission failing one of them fails this row too."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "combines", tuple(self.combines))


@dataclass(frozen=True)
class Case:
    """One test case: the arguments, and the expected output when known."""

    name: str
    hidden: bool
    inputs: dict[str, Any]
    expected: Any = None
    explanation: str = ""
    edge: str = ""
    """For a hidden case built to reach an edge the statement names: that edge in one sentence, shown with the
    case's failure (``EDGE_KEY`` in ``cases.py``)."""


@dataclass(frozen=True)
class Submission:
    """A file of the problem's gallery (``submissions/``) and the verdict it must get.

    Its module docstring (or leading comments) says so in two lines::

        expect: requirements_not_met
        fails: one-scan, grad-inside-scan

    ``expect`` is a verdict value (``accepted``, ``wrong_answer``, ``requirements_not_met``, ...) and
    ``fails`` the requirement ids that must fail (``none``, or left out, for none); every other requirement
    must pass."""

    path: Path
    expect: str
    fails: tuple[str, ...]


_EXPECT = re.compile(r"^[#\s]*expect:\s*([a-z_]+)\s*$", re.M)
_FAILS = re.compile(r"^[#\s]*fails:\s*(.*?)\s*$", re.M)


def read_submission(path: Path) -> Submission:
    """A gallery file's expectations (``ValueError`` when it states none)."""
    head = "\n".join(path.read_text().splitlines()[:40])
    expect = _EXPECT.search(head)
    if not expect:
        raise ValueError(f"{path}: no `expect: <verdict>` line in its docstring")
    fails = _FAILS.search(head)
    ids = tuple(i for i in re.split(r"[,\s]+", fails.group(1)) if i and i != "none") if fails else ()
    return Submission(path, expect.group(1), ids)


@dataclass(frozen=True)
class SimilarProblem:
    title: str
    difficulty: str


@dataclass(frozen=True)
class Problem:
    slug: str
    title: str
    difficulty: str
    tags: tuple[str, ...]
    summary: str
    entry: str
    signature: str
    args: tuple[ArgSpec, ...]
    statement: str
    hints: tuple[str, ...]
    requirements: tuple[Requirement, ...]
    requirements_note: str
    """A sentence shown after the requirements that is not itself a separate check."""
    constraints: tuple[str, ...]
    similar: tuple[SimilarProblem, ...]
    starter: str
    reference: str
    rtol: float
    atol: float
    """The default tolerance of every float output leaf (``[tolerance]``)."""
    hidden_seed: int
    folder: Path
    probe_primitives: tuple[str, ...] = ()
    """Primitives whose equations the child also probes one by one (``grader/learner/counterfactual.py``), for
    checks that ask whether such an equation carries the answer (e.g. ``reduce_max`` before ``exp``)."""
    step_influence: dict[str, Any] | None = None
    """``{"inputs": [...], "blocks": "<static int argument>"}`` (or ``"block_size": "<static int argument>"``,
    the rows of each block): the child measures which row blocks of those inputs each step of the program's
    scans reads (``Trace.step_reads``)."""
    insight: Insight | None = None
    """Why the technique matters, measured at a realistic size (``insight.toml``, optional; see
    ``problems/insight.py``)."""
    tpu_compile: dict[str, Any] | None = None
    """A Pallas problem's realistic size (``[tpu_compile]``: per argument ``{shape, dtype}`` or ``{value}``), as
    the child is told it: ``{"args": [...]}`` in the arguments' order. The learner's function is traced at it
    and compiled for a TPU v5e on the trusted side (``grader/verifier/tpu_compile.py``)."""
    kernel_cost: dict[str, str] | None = None
    """A Pallas problem's Cost tab (``[kernel_cost]``: ``baseline_title``, the name of ``baseline.py``'s ``jnp``
    version, and ``takeaway``, one honest line on what the kernel buys on a v5e): see
    ``grader/cost/kernel_cost.py``."""
    track_order: int | None = None
    """Where the problem stands in its topic's track (``track_order = 2``; optional): a track whose problems
    build on each other lists them in this order, the rest after them, easiest first."""
    output_tolerances: tuple[tuple[str, float, float], ...] = ()
    """``(output path or prefix, rtol, atol)`` for outputs whose numerics differ from the rest
    (``[tolerance.outputs]``: ``loss = { rtol = 5e-3 }``, ``params`` for every ``params.*`` leaf); the longest
    matching path wins, other leaves use ``rtol``/``atol``."""
    examples: tuple[Case, ...] = field(repr=False, default=())

    @property
    def topic(self) -> str:
        """The home page's group: the first tag after ``JAX`` (``lax.scan``, ``jax.vmap``...)."""
        return next((t for t in self.tags if t != "JAX"), "JAX")

    @property
    def tolerance(self) -> dict[str, Any]:
        """Keyword arguments for ``grader.grading.compare.compare``: the default tolerance and the per-output ones."""
        return {"rtol": self.rtol, "atol": self.atol,
                "per_output": {path: (rtol, atol) for path, rtol, atol in self.output_tolerances}}

    @property
    def static_args(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args if a.static)

    @functools.cached_property
    def _cases_module(self) -> ModuleType:
        return _load_module(self.folder / "cases.py", f"problems.{self.slug}.cases")

    @functools.cached_property
    def checks(self) -> dict[str, Callable]:
        """Requirement id -> check function (see ``grader.toolkit.jaxpr_tools.Trace``)."""
        module = _load_module(self.folder / "checks.py", f"problems.{self.slug}.checks")
        return dict(module.CHECKS)

    def generate_hidden_inputs(self, seed: int | None = None) -> list[dict[str, Any]]:
        """The hidden cases' inputs, reproducibly from ``seed`` (the problem's own by default)."""
        return [split_edge(c)[0] for c in self._generate(seed)]

    def _generate(self, seed: int | None = None) -> list[dict[str, Any]]:
        return self._cases_module.generate(self.hidden_seed if seed is None else seed)

    @functools.cached_property
    def hidden(self) -> tuple[Case, ...]:
        """Hidden cases with the reference's expected outputs from ``hidden_expected.json``."""
        generated = [split_edge(c) for c in self._generate()]
        inputs = [inp for inp, _ in generated]
        stored_path = self.folder / "hidden_expected.json"
        stored = json.loads(stored_path.read_text()) if stored_path.exists() else {"cases": []}
        by_digest = {c["digest"]: c["expected"] for c in stored["cases"]}
        cases = []
        for i, inp in enumerate(inputs, 1):
            digest = inputs_digest(inp)
            if digest not in by_digest:
                raise LookupError(f"{self.slug}: hidden case {i} has no stored expected output; run "
                                  f"`python -m grader build-cases {self.slug}`")
            cases.append(Case(name=f"Hidden {i}", hidden=True, inputs=inp, expected=by_digest[digest],
                              edge=generated[i - 1][1]))
        return tuple(cases)

    def cases(self, examples_only: bool = False) -> list[Case]:
        return list(self.examples) + ([] if examples_only else list(self.hidden))

    def gallery(self) -> list[Submission]:
        """Every file under ``submissions/`` with the verdict it must get (see ``Submission``)."""
        return [read_submission(f) for f in sorted((self.folder / "submissions").glob("**/*.py"))]


EDGE_KEY = "_edge"
"""A hidden case built to reach an edge the statement names (a tie, an undefined formula) carries that edge in
one sentence under this key of its dict in ``cases.py``: it is not an input, and a failure of the case names it."""


def split_edge(case: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A generated case's inputs, and the edge it reaches (``""`` for none)."""
    edge = case.get(EDGE_KEY, "")
    if not isinstance(edge, str):
        raise TypeError(f"a hidden case's {EDGE_KEY} must be a sentence")
    return {k: v for k, v in case.items() if k != EDGE_KEY}, edge


def inputs_digest(inputs: dict[str, Any]) -> str:
    """A short fingerprint of a case's inputs, so stale stored outputs are noticed."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]


def _load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOP_LEVEL_KEYS = {"slug", "title", "difficulty", "tags", "summary", "entry", "signature", "hidden_seed", "args",
                  "tolerance", "hints", "constraints", "requirements", "requirements_note", "similar",
                  "probe_primitives", "step_influence", "tpu_compile", "track_order", "kernel_cost"}


def _tpu_compile(meta: dict[str, Any], folder: Path) -> dict[str, Any] | None:
    table = meta.get("tpu_compile")
    if table is None:
        return None
    names = [a["name"] for a in meta["args"]]
    if set(table) != set(names) or not all(isinstance(v, dict) and (set(v) <= {"shape", "dtype"} and "shape" in v
                                                                     or set(v) == {"value"}) for v in table.values()):
        raise ValueError(f"{folder / 'problem.toml'}: [tpu_compile] gives every argument a shape (and dtype) or a "
                         "value")
    return {"args": [dict(table[n]) for n in names]}


def _kernel_cost(meta: dict[str, Any], folder: Path) -> dict[str, str] | None:
    table = meta.get("kernel_cost")
    if table is None:
        return None
    if set(table) - {"baseline_title", "takeaway"} or not table.get("takeaway") or "tpu_compile" not in meta:
        raise ValueError(f"{folder / 'problem.toml'}: [kernel_cost] needs [tpu_compile] and a `takeaway` "
                         "(and optionally `baseline_title`), nothing else")
    return {"baseline_title": str(table.get("baseline_title", "jnp version")), "takeaway": str(table["takeaway"])}


def load_problem(folder: Path) -> Problem:
    meta = tomllib.loads((folder / "problem.toml").read_text())
    unknown = set(meta) - TOP_LEVEL_KEYS
    tol = meta.get("tolerance", {})
    unknown |= {f"tolerance.{k}" for k in set(tol) - {"rtol", "atol", "outputs"}}
    outputs = tol.get("outputs", {})
    unknown |= {f"tolerance.outputs.{path}.{k}" for path, t in outputs.items() for k in set(t) - {"rtol", "atol"}}
    if unknown:
        raise ValueError(f"{folder / 'problem.toml'}: unknown keys {sorted(unknown)} (a plain key written after "
                         "a [table] belongs to that table)")
    examples = json.loads((folder / "examples.json").read_text())
    rtol, atol = float(tol.get("rtol", DEFAULT_RTOL)), float(tol.get("atol", DEFAULT_ATOL))
    return Problem(
        slug=meta["slug"], title=meta["title"], difficulty=meta["difficulty"],
        tags=tuple(meta.get("tags", ())), summary=meta["summary"], entry=meta["entry"],
        signature=meta["signature"],
        args=tuple(ArgSpec(**a) for a in meta["args"]),
        statement=(folder / "statement.md").read_text(),
        hints=tuple(meta.get("hints", ())),
        requirements=tuple(Requirement(**r) for r in meta["requirements"]),
        requirements_note=meta.get("requirements_note", ""),
        constraints=tuple(meta.get("constraints", ())),
        similar=tuple(SimilarProblem(**s) for s in meta.get("similar", ())),
        starter=(folder / "starter.py").read_text(),
        reference=(folder / "reference.py").read_text(),
        rtol=rtol, atol=atol,
        output_tolerances=tuple((path, float(t.get("rtol", rtol)), float(t.get("atol", atol)))
                                for path, t in outputs.items()),
        hidden_seed=int(meta.get("hidden_seed", 0)),
        folder=folder,
        probe_primitives=tuple(meta.get("probe_primitives", ())),
        step_influence=meta.get("step_influence"),
        tpu_compile=_tpu_compile(meta, folder),
        kernel_cost=_kernel_cost(meta, folder),
        track_order=meta.get("track_order"),
        insight=load_insight(folder, tuple(a["name"] for a in meta["args"])),
        examples=tuple(Case(name=f"Example {i}", hidden=False, inputs=e["inputs"], expected=e["expected"],
                            explanation=e.get("explanation", ""))
                       for i, e in enumerate(examples, 1)),
    )


@functools.cache
def registry() -> dict[str, Problem]:
    """Every problem, by slug, in folder-name order (``_template`` and other ``_`` folders skipped)."""
    found = {}
    for folder in sorted(ROOT.iterdir()):
        if folder.is_dir() and not folder.name.startswith(("_", ".")) and (folder / "problem.toml").exists():
            problem = load_problem(folder)
            if problem.slug != folder.name:
                raise ValueError(f"{folder}: slug {problem.slug!r} must match the folder name")
            found[problem.slug] = problem
    return found


def get(slug: str) -> Problem:
    return registry()[slug]


DIFFICULTY_ORDER = {"Easy": 0, "Medium": 1, "Hard": 2}


AFTER_THE_JAX_TRACK = ("Sharding", "Pallas")
"""Topics a learner meets after the JAX track's (kernels, once the transformations are known): listed last."""


def by_topic() -> dict[str, list[Problem]]:
    """Problems grouped by topic (the JAX track's topics in alphabetical order, then ``AFTER_THE_JAX_TRACK``);
    within a topic in the order its problems give (``track_order``: the Pallas track builds each kernel on the
    one before), then easiest first."""
    groups: dict[str, list[Problem]] = {}
    for p in registry().values():
        groups.setdefault(p.topic, []).append(p)
    order = sorted(groups, key=lambda t: (t in AFTER_THE_JAX_TRACK,
                                          AFTER_THE_JAX_TRACK.index(t) if t in AFTER_THE_JAX_TRACK else 0, t))
    return {t: sorted(groups[t], key=lambda p: (p.track_order is None, p.track_order or 0,
                                                 DIFFICULTY_ORDER.get(p.difficulty, 9), p.title)) for t in order}
