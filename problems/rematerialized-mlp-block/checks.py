"""Requirement checks for rematerialized-mlp-block, read off the traced program.

Under `jax.value_and_grad`, JAX splits a checkpointed block in two: its forward pass is inlined into the
program (only the values the policy saves are kept), and one `remat2` equation in the backward pass
recomputes the rest, here the hidden `tanh`, and computes the block's gradients. So a region counts only where
it does that work, as the rebuilt program's data flow and probes show (never the source, nor the marks the
learner's process writes on equations, which only word messages):

- it is JAX's own checkpoint primitive (a primitive merely *named* `remat2` or `checkpoint` is not), and its
  policy is the program's own parameter;
- it holds *the* hidden tanh: a `tanh` of data computed from `x` and `w1`;
- it is in the backward pass: it reads what the forward pass computed from a hidden tanh outside it (the
  gradient flowing back into the block), where a checkpoint around the whole gradient computation reads only
  the inputs;
- that tanh carries the answer: replacing its values moves the gradients (a region whose output is
  unused, multiplied by zero, selected away or added and subtracted again receives a zero cotangent, so
  nothing moves), and no hidden tanh outside the region reaches those outputs without going through it
  (a plain copy of the block beside it is such a path);
- for a region of the backward pass, its own results (its gradient contributions) are not all zero.

Each row passes only when one region has everything its sentence asks for; row 3 asks that the region of
row 1 (the block with `dots_saveable`) be the one of row 2 (recomputed in the backward pass).
"""

from dataclasses import dataclass, field

from grader.toolkit import (CHECKPOINT, MATMUL, CheckResult, EqnRef, Evidence, Trace, body_eqns, carries, find,
                            is_backward_autodiff, iter_eqns, line_hint, own_scale)

POLICY = "dots_saveable"
"""The child names a policy by JAX's own object (``checkpoint_dots`` is the same object); a function of the
learner's own arrives as ``custom:<name>``."""
REVERSE_APIS = ("value_and_grad", "grad", "vjp", "jacrev")
MAX_REGIONS = 64
"""Checkpointed regions analysed per program (each costs one pass over the data flow): the work stays
bounded whatever the program."""
TINY = 1e-6
"""A differentiated region whose results are all below this fraction of the gradients' size added nothing."""


@dataclass
class Region:
    """What one checkpointed region of one traced program does."""

    ref: EqnRef
    policy: str | None
    reverse: bool
    """Transposed by reverse-mode autodiff: JAX marked it ``differentiated`` in a backward pass."""
    api: str
    """The JAX entry point that differentiated it (``value_and_grad``, ``vjp``, ``jacfwd``...), or ""."""
    forward: bool
    """Differentiated by forward mode only (``jax.jvp``, ``jax.jacfwd``)."""
    tanhs: list[EqnRef]
    """The hidden layer's tanh (of data from `x` and `w1`) inside it, possibly in a nested region."""
    moved: set[str] | None
    """Outputs that moved when the grader replaced those tanh values (None: this shape was not probed)."""
    zero: bool = False
    """A differentiated region whose own results were all zero: it received a zero cotangent."""
    around: list[str] = field(default_factory=list)
    around_evidence: list[Evidence] = field(default_factory=list)
    matmul: bool = False
    """The block's first matrix product is part of the region (its gradient `grads.w1` comes out of it)."""
    moves_grads: bool = False
    """For a region without the tanh: replacing its results moves the gradients and they are not all zero."""

    @property
    def policy_ok(self) -> bool:
        return self.policy == POLICY

    @property
    def differentiated(self) -> bool:
        return self.reverse or self.forward

    @property
    def decorative(self) -> bool:
        return bool(self.tanhs) and (self.zero or (self.moved is not None and not self._relevant_moves()))

    def _relevant_moves(self) -> set[str]:
        assert self.moved is not None
        if self.differentiated:
            return {o for o in self.moved if o.startswith("grads")}
        return set(self.moved)

    @property
    def carries(self) -> bool:
        """Its hidden tanh carries the answer."""
        return bool(self.tanhs) and not self.decorative and not self.around

    def where(self) -> str:
        return line_hint(self.ref)


def _input_nodes(trace: Trace, name: str) -> list[str]:
    return [n for n, arg in zip(trace.flow.inputs, trace.input_names) if arg == name and n is not None]


def _grad_scale(trace: Trace) -> float:
    targets = trace.probes.get("targets", []) if trace.probes else []
    scales = next((t["scale"] for t in targets if "scale" in t), None)
    if scales is None:
        return 0.0
    return max((scales[k] for k in trace.output_index("grads") if k < len(scales)), default=0.0)


def _moved(trace: Trace, ref: EqnRef) -> set[str] | None:
    result = carries(trace, ref)
    if not result.measured or result.unknown or result.invisible:  # invisible: not seen moving, not proven still
        return None
    return set(result.outputs) - set(result.still)


_CACHE: dict[int, tuple[Trace, list[Region]]] = {}


def regions(trace: Trace) -> list[Region]:
    """Every JAX checkpoint region of the traced program, with what it does (computed once per trace)."""
    cached = _CACHE.get(id(trace))
    if cached is not None and cached[0] is trace:
        return cached[1]
    if len(_CACHE) > 32:
        _CACHE.clear()
    flow = trace.flow
    from_x = flow.reach(trace.inputs("x"))
    from_w1 = flow.reach(_input_nodes(trace, "params['w1']"))
    hidden = [e for e in iter_eqns(trace.jaxpr) if e.primitive == "tanh"
              and any(n in from_x for n in e.in_nodes) and any(n in from_w1 for n in e.in_nodes)]
    scale = _grad_scale(trace)
    source = trace.source  # wording only: which entry point the source spells
    by_reverse = [c for c in source.of(*REVERSE_APIS) if "checkpoint" in c.applied_to] or (
        source.of(*REVERSE_APIS) if source.inside(REVERSE_APIS, "checkpoint") else [])
    found = []
    for ref in find(trace.jaxpr, CHECKPOINT)[:MAX_REGIONS]:
        inside = [t for t in hidden if t.path.startswith(ref.path + "/")]
        # In the backward pass: the region runs after the forward pass, on its results (the cotangent of the
        # block's output is computed from a hidden tanh outside the region), and recomputes what it needs. A
        # fact of the rebuilt program's data flow; neither the source nor the marks on its equations decide.
        reverse = _after_the_forward_pass(trace, ref, hidden)
        region = Region(ref=ref, policy=ref.params.get("policy"), reverse=reverse,
                        api=by_reverse[0].spelled if reverse and by_reverse else "",
                        forward=False, tanhs=inside, moved=None)
        if inside:
            moves = [_moved(trace, t) for t in inside]
            region.moved = None if any(m is None for m in moves) else set().union(*moves)
        if reverse:
            size = own_scale(trace, ref)
            region.zero = size is not None and size <= TINY * scale
        _find_around(trace, region, hidden)
        region.matmul = _holds_matmul(trace, region)
        if reverse and not inside:
            probe = carries(trace, ref, outputs=["grads"])
            region.moves_grads = not region.zero and (not probe.measured or
                                                      (not probe.unknown and len(probe.still) < len(probe.outputs)))
        found.append(region)
    _CACHE[id(trace)] = (trace, found)
    return found


def _after_the_forward_pass(trace: Trace, ref: EqnRef, hidden: list[EqnRef]) -> bool:
    """Whether a hidden tanh computed outside the region reaches what the region reads: the region runs on
    the forward pass's results (the gradient flowing back into the block), as a checkpoint inside the
    differentiated function does; a checkpoint around the whole gradient computation reads only the inputs."""
    outside = [n for t in hidden if not t.path.startswith(ref.path + "/") for n in t.out_nodes]
    if not outside:
        return False
    reached = trace.flow.reach(outside)
    return any(n in reached for n in ref.in_nodes)


def _find_around(trace: Trace, region: Region, hidden: list[EqnRef]) -> None:
    """Outputs the region's tanh should carry that a hidden tanh outside it reaches without passing it."""
    if not region.tanhs:
        return
    if region.moved is not None:
        names = sorted(region._relevant_moves())
    else:  # not probed on this shape: the outputs its tanh reaches
        reached = trace.flow.reach([n for t in region.tanhs for n in t.out_nodes])
        names = [n for n, o in zip(trace.output_names, trace.flow.outputs) if o in reached
                 and (n.startswith("grads") or not region.differentiated)]
    outside = [t for t in hidden if not t.path.startswith(region.ref.path + "/")]
    sources = [n for t in outside for n in t.out_nodes]
    if not sources or not names:
        return
    reached = trace.flow.reach(sources, region.ref.out_nodes)
    region.around = [n for n in names for k in trace.output_index(n) if trace.flow.outputs[k] in reached]
    if region.around:
        region.around_evidence = [t.evidence("hidden tanh outside the region, on a path around it")
                                  for t in outside if any(n in reached for n in t.out_nodes)][:3]


def _holds_matmul(trace: Trace, region: Region) -> bool:
    """The block's first matrix product belongs to the region: for a region of the backward pass, the
    gradient of `w1` comes out of it (no path from `x` goes around it); otherwise a matrix product inside it
    computes what its tanh reads."""
    if not region.tanhs:
        return False
    if region.reverse:
        return not carries(trace, region.ref, outputs=["grads.w1"], around_from=("x",)).around
    dots = [e for e in body_eqns(region.ref) if e.primitive in MATMUL]
    reached = trace.flow.reach([n for d in dots for n in d.out_nodes])
    return any(n in reached for t in region.tanhs for n in t.in_nodes)


# ----------------------------------------------------------------------------------------------------
# Messages

def _no_region(trace: Trace) -> CheckResult:
    fake = [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")]
    if fake:
        return CheckResult(False, f"The traced program has no `jax.checkpoint` region: `{fake[0].primitive[8:]}`"
                           f"{line_hint(fake[0])} is a primitive your code registered itself, not JAX's "
                           "checkpoint, whatever it is named. Wrap the block in `jax.checkpoint(block, "
                           "policy=jax.checkpoint_policies.dots_saveable)` inside the loss you differentiate.",
                           [r.evidence("not a JAX primitive") for r in fake[:3]])
    return CheckResult(False, "The traced program has no checkpointed region (no `jax.checkpoint`/`jax.remat`). "
                       "Wrap the block in `jax.checkpoint(block, policy=jax.checkpoint_policies.dots_saveable)` "
                       "inside the loss you differentiate.")


def _policy_words(region: Region) -> str:
    policy = region.policy
    if policy is None:
        return "no policy (the default saves nothing and recomputes everything)"
    if str(policy).startswith("custom:"):
        return (f"a policy of your own, `{policy[7:]}`. It may save the same values here, but the requirement "
                "names JAX's `jax.checkpoint_policies.dots_saveable` (also spelled `checkpoint_dots`), and "
                "the grader does not accept a look-alike")
    if policy == "dots_with_no_batch_dims_saveable":
        return ("`dots_with_no_batch_dims_saveable`, a different policy (it saves only products without batch "
                "dimensions)")
    return f"`jax.checkpoint_policies.{policy}`"


def _why_not_carrying(region: Region) -> str:
    """Why a region holding the hidden tanh does not carry the answer (one sentence)."""
    what = f"The checkpointed region{region.where()}"
    if region.decorative:
        return (f"{what} holds the hidden `tanh`, but it is decorative: when the grader replaced that tanh's "
                "values, the gradients did not change at all"
                + (", and autodiff handed the region a zero gradient" if region.zero else "") +
                ". What it computes is thrown away, multiplied by zero, selected away or added and subtracted "
                "again, so the answer is computed some other way.")
    names = ", ".join(f"`{n}`" for n in region.around[:4])
    return (f"{what} holds the hidden `tanh`, but {names} {'is' if len(region.around) == 1 else 'are'} also "
            "computed from a tanh outside it, by a path that goes around the region (a plain copy of the "
            "block beside it). The gradients must come from the checkpointed block alone.")


def _what_it_computes(region: Region) -> str:
    moved = region.moved if region.moved is not None else (
        {"grads"} if region.differentiated else {"loss", "grads"})
    grads, loss = any(m.startswith("grads") for m in moved), "loss" in moved
    return ("the loss and the gradients are" if grads and loss else "the gradients are" if grads else
            "the loss is" if loss else "the outputs are")


def _hidden_words() -> str:
    return "the hidden layer's `tanh` (a tanh of `x @ w1 + b1`)"


def _evidence(region: Region, note: str) -> list[Evidence]:
    return [region.ref.evidence(note)] + [t.evidence("hidden tanh") for t in region.tanhs[:1]] + region.around_evidence


def _pick(found: list[Region], key) -> Region:
    return max(found, key=key)


# ----------------------------------------------------------------------------------------------------
# The three rows

def checkpoint_dots_saveable(trace: Trace) -> CheckResult:
    found = regions(trace)
    if not found:
        return _no_region(trace)
    good = [r for r in found if r.policy_ok and r.carries and r.matmul]
    if good:
        r = good[0]
        return CheckResult(True, f"The checkpointed region{r.where()} uses `dots_saveable` and wraps the block's "
                           f"hidden layer, its matrix product and its `tanh`{line_hint(r.tanhs[0])}, whose values "
                           f"{_what_it_computes(r)} computed from.", _evidence(r, "checkpoint with dots_saveable"))
    r = _pick(found, lambda r: (r.policy_ok, bool(r.tanhs), r.carries, r.matmul, r.differentiated))
    if not r.policy_ok:
        holds = " It does wrap the block's hidden layer." if r.carries and r.matmul else ""
        return CheckResult(False, f"The checkpointed region{r.where()} uses {_policy_words(r)}.{holds} This "
                           "problem keeps the matrix products and recomputes the rest: pass "
                           "`policy=jax.checkpoint_policies.dots_saveable`.",
                           _evidence(r, f"policy {r.policy}"))
    if not r.tanhs:
        return CheckResult(False, f"The checkpointed region{r.where()} uses `dots_saveable`, but it does not hold "
                           f"{_hidden_words()}, so it does not wrap the function that computes the block. "
                           "Checkpoint the whole block, `x + tanh(x @ w1 + b1) @ w2 + b2`.",
                           _evidence(r, "dots_saveable region without the hidden tanh"))
    if not r.carries:
        return CheckResult(False, _why_not_carrying(r) + " Wrap the block you compute the loss with in "
                           "`jax.checkpoint(..., policy=jax.checkpoint_policies.dots_saveable)`.",
                           _evidence(r, "region that does not carry the answer"))
    return CheckResult(False, f"The checkpointed region{r.where()} uses `dots_saveable` and holds the hidden "
                       "`tanh`, but the matrix product `x @ w1` is outside it (the gradient of `w1` is computed "
                       "outside the region), so the policy has no product of the block to save. Checkpoint the "
                       "function that computes the block, `x + tanh(x @ w1 + b1) @ w2 + b2`, not just the "
                       "activation.", _evidence(r, "dots_saveable around the activation only"))


def checkpoint_inside_grad(trace: Trace) -> CheckResult:
    found = regions(trace)
    if not found:
        return _no_region(trace)

    def ok(r: Region) -> bool:
        return r.reverse and (r.carries if r.tanhs else r.moves_grads)

    good = [r for r in found if ok(r)]
    if good:
        r = max(good, key=lambda r: bool(r.tanhs))
        by = f"`{r.api}` (read from your source)" if r.api else "reverse-mode autodiff"
        return CheckResult(True, f"The checkpointed region{r.where()} is inside the function that {by} "
                           "differentiates: autodiff recomputes it in the backward pass, and the gradients come "
                           "from it.", _evidence(r, "differentiated checkpoint"))
    r = _pick(found, lambda r: (r.reverse, r.forward, bool(r.tanhs), r.carries, r.policy_ok))
    if r.reverse:
        if r.tanhs:
            message = _why_not_carrying(r)
        else:
            message = (f"The checkpointed region{r.where()} is differentiated, but it adds nothing to the "
                       "gradients: autodiff handed it a zero gradient, because its result is thrown away, "
                       "multiplied by zero, selected away or added and subtracted again.")
        return CheckResult(False, message + " Compute the loss from the checkpointed block, inside the function "
                           "you pass to `jax.value_and_grad`.", _evidence(r, "differentiated, not carrying"))
    wraps_grad = any(is_backward_autodiff(e.eqn["name_stack"]) for e in body_eqns(r.ref))
    if wraps_grad:
        why = ("it wraps the gradient computation instead of sitting inside it, so there is no backward pass "
               "for it to save memory in")
    else:
        why = ("reverse-mode autodiff never goes through it: it is outside the differentiated function, or "
               "nothing it computes depends on the parameters being differentiated")
    return CheckResult(False, f"The checkpointed region{r.where()} is never differentiated by `jax.grad` or "
                       f"`jax.value_and_grad`: {why}. Apply `jax.checkpoint` to the block inside the loss function "
                       "you pass to `jax.value_and_grad`.", _evidence(r, "checkpoint outside reverse-mode autodiff"))


def tanh_in_checkpoint(trace: Trace) -> CheckResult:
    found = regions(trace)
    if not found:
        return _no_region(trace)
    good = [r for r in found if r.reverse and r.carries and r.policy_ok and r.matmul]
    if good:
        r = good[0]
        return CheckResult(True, f"One checkpointed region{r.where()} does both: it wraps the block's hidden layer "
                           f"with `dots_saveable`, and it recomputes the hidden `tanh`{line_hint(r.tanhs[0])} in the "
                           "backward pass, where the gradients come from it.",
                           _evidence(r, "recomputed dots_saveable region with the tanh"))
    half = [r for r in found if r.reverse and r.carries and r.policy_ok and not r.matmul]
    if half:
        r = half[0]
        return CheckResult(False, f"The checkpointed region{r.where()} is recomputed in the backward pass and holds "
                           "the hidden `tanh` with `dots_saveable`, but the block's matrix product `x @ w1` is "
                           "outside it: it wraps the activation only, not the function that computes the block. "
                           "Checkpoint the whole block, `x + tanh(x @ w1 + b1) @ w2 + b2`.",
                           _evidence(r, "dots_saveable around the activation only"))
    r = _pick(found, lambda r: (r.differentiated and r.carries, r.policy_ok and r.carries, r.policy_ok,
                                r.differentiated, bool(r.tanhs)))
    if r.tanhs and not r.carries:
        return CheckResult(False, _why_not_carrying(r), _evidence(r, "region that does not carry the answer"))
    if not r.tanhs:
        if r.policy == "everything_saveable":
            why = ("with `everything_saveable` autodiff stores every activation and recomputes nothing, so no "
                   "`tanh` is left inside the region. Use `dots_saveable`, so that the tanh is recomputed")
        else:
            why = ("so the hidden activation is stored rather than recomputed. Checkpoint the whole block, "
                   "`x + tanh(x @ w1 + b1) @ w2 + b2`")
        return CheckResult(False, f"The checkpointed region{r.where()} does not hold {_hidden_words()}, {why}.",
                           _evidence(r, "checkpoint without the hidden tanh"))
    others = [o for o in found if o is not r and o.carries]
    if not r.policy_ok:
        also = ""
        if any(o.policy_ok for o in others):
            o = next(o for o in others if o.policy_ok)
            also = (f" The region that does use `dots_saveable`{o.where()} is never differentiated, so no single "
                    "region is differentiated, holds the tanh and uses `dots_saveable`.")
        return CheckResult(False, f"The differentiated checkpointed region{r.where()} holds the hidden `tanh` but "
                           f"uses {_policy_words(r)}.{also} Pass `policy=jax.checkpoint_policies.dots_saveable` "
                           "to the checkpoint that autodiff differentiates.", _evidence(r, f"policy {r.policy}"))
    return CheckResult(False, f"The checkpointed region{r.where()} uses `dots_saveable` and holds the hidden "
                       "`tanh`, but autodiff never differentiates it (it is not inside a function that "
                       "`jax.grad` differentiates), so nothing is recomputed. Put it inside the loss you pass to "
                       "`jax.value_and_grad`.",
                       _evidence(r, "dots_saveable region outside autodiff"))


CHECKS = {
    "checkpoint-dots-saveable": checkpoint_dots_saveable,
    "checkpoint-inside-grad": checkpoint_inside_grad,
    "tanh-in-checkpoint": tanh_in_checkpoint,
}
