"""Requirement checks for int8-matmul-with-per-channel-scales, read off the traced program.

The product is recognised by what it is, not by its spelling: a JAX `dot_general` (what `@`, `jnp.matmul`,
`jnp.dot` and `jnp.einsum` trace to) whose two operands are int8, one computed from `x` and the other from
`w_q` (in either order). Then:

- `int8-product`: such a product has an int32 result and carries the answer (the child's probes move its
  result and the output moves: not fooled by `* 0`, `jnp.where(False, ...)` or a discarded result), and no
  host callback or primitive of the submission's own feeds the output (a quantization done in NumPy);
- `no-dequantized-matmul`: in the exact data flow, `w_q` reaches the output through no path that avoids the
  int8 × int8 products (a float or int32 matmul of the weights, a multiply-and-sum by hand, a product of
  the weights with an identity, are all such paths);
- `scales-after`: between a product that carries the answer and the output, only conversions that keep
  float32's bits, multiplications, divisions, negations, selections and moves of data run (no further
  contraction, sum or addition, no rounding to a narrower float, no other arithmetic), and `w_scale` does
  not reach the product's operands.
"""
from __future__ import annotations

import ast
from math import prod

from grader.toolkit import (MATMUL, CheckResult, EqnRef, Trace, carries, find, host_callback, iter_eqns, line_hint,
                            node, paths_around)

AFTER_OK = {"convert_element_type", "mul", "div", "neg", "select_n", "broadcast_in_dim", "reshape", "transpose",
            "squeeze", "expand_dims", "copy", "copy_p", "slice", "concatenate", "dynamic_slice",
            "reduce_precision"}
"""Primitives that may run between the product and the output: conversions, scalings and moves of data.
A `dot_general` that contracts nothing larger than one element (an einsum `mn,n->mn`) is a scaling too."""


def _dtype(atom: dict) -> str:
    return str(atom.get("dtype", ""))


def _operands(trace: Trace, ref: EqnRef) -> tuple[str, str] | None:
    """``("x", "w_q")``-style roles of a product's two operands when one comes from `x` and the other from
    `w_q` (either order), else None."""
    a, b = (node(ref.scope, atom) for atom in ref.eqn["invars"][:2])
    from_x, from_w = _reach(trace, "x"), _reach(trace, "w_q")
    if a in from_x and b in from_w:
        return ("x", "w_q")
    if a in from_w and b in from_x:
        return ("w_q", "x")
    return None


def _reach(trace: Trace, name: str) -> set:
    cache = trace.__dict__.setdefault("_int8_reach", {})
    if name not in cache:
        cache[name] = trace.flow.reach(trace.inputs(name))
    return cache[name]


def _int8_products(trace: Trace) -> list[EqnRef]:
    """JAX's own `dot_general`s of two int8 operands, one from `x` and one from `w_q` (any result type)."""
    return [r for r in find(trace.jaxpr, MATMUL)
            if all(_dtype(a) == "int8" for a in r.eqn["invars"][:2]) and _operands(trace, r) is not None]


def _reaches_output(trace: Trace, ref: EqnRef) -> bool:
    return bool(trace.flow.outputs_reached(ref.out_nodes))


def _foreign(trace: Trace) -> list[EqnRef]:
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")]


def _describe(trace: Trace, ref: EqnRef) -> str:
    """Why a `dot_general` is not the required int8 product, in a sentence."""
    ins = [_dtype(a) for a in ref.eqn["invars"][:2]]
    out = _dtype(ref.eqn["outvars"][0])
    where = line_hint(ref)
    if all(d == "int8" for d in ins):
        if _operands(trace, ref) is None:
            return (f"The int8 `dot_general`{where} does not multiply the quantized `x` by `w_q`: one operand must "
                    "be computed from `x` and the other from `w_q`.")
        if out == "int8":
            return (f"The `dot_general`{where} multiplies int8 by int8 but its result is int8 too, so sums past 127 "
                    "wrap around. Pass `preferred_element_type=jnp.int32`.")
        return (f"The `dot_general`{where} multiplies int8 by int8 but accumulates in {out}, not int32. Pass "
                "`preferred_element_type=jnp.int32`: int8 matrix units add up in int32, exactly.")
    if any(d.startswith("int") or d.startswith("uint") for d in ins):
        return (f"The `dot_general`{where} multiplies {ins[0]} by {ins[1]}: the operands were cast before the "
                "product. Keep both int8 (`x_q` as `jnp.int8`, `w_q` as given) and ask for the int32 result with "
                "`preferred_element_type=jnp.int32` instead of casting the inputs.")
    return (f"The `dot_general`{where} multiplies {ins[0]} by {ins[1]}: a float matrix product, as of "
            "dequantized weights. Multiply the int8 values themselves, with an int32 result "
            "(`preferred_element_type=jnp.int32`), and scale afterwards.")


NARROW = ("bfloat16", "float16", "float8")
"""Float types too narrow for an int32 sum: a conversion to one rounds the product's result."""


def _after(trace: Trace, refs: list[EqnRef]) -> list[EqnRef]:
    """Equations (not sub-program holders) on a path from ``refs``' results to the outputs."""
    flow = trace.flow
    on_path = flow.reach([n for p in refs for n in p.out_nodes]) & flow.sources_of(flow.outputs)
    skip = {p.path for p in refs}
    return [r for r in iter_eqns(trace.jaxpr) if not r.eqn["subjaxprs"] and r.path not in skip
            and any(n in on_path for n in r.out_nodes) and any(n in on_path for n in r.in_nodes)]


def _narrows(ref: EqnRef) -> str | None:
    """The narrower float a conversion (or a `lax.reduce_precision`) rounds to, None when it keeps float32's
    bits."""
    if ref.primitive == "convert_element_type" and _dtype(ref.eqn["outvars"][0]).startswith(NARROW):
        return _dtype(ref.eqn["outvars"][0])
    if ref.primitive == "reduce_precision":
        try:
            bits = int(ref.params.get("exponent_bits", 8)), int(ref.params.get("mantissa_bits", 23))
        except (TypeError, ValueError):  # an unreadable form counts as narrowing
            return "a narrower float"
        if bits[0] < 8 or bits[1] < 23:
            return f"a {bits[1]}-bit mantissa"
    return None


def _narrow_casts(trace: Trace, ref: EqnRef) -> list[EqnRef]:
    return [r for r in _after(trace, [ref]) if _narrows(r)]


def int8_product(trace: Trace) -> CheckResult:
    dots = find(trace.jaxpr, MATMUL)
    required = [r for r in _int8_products(trace) if _dtype(r.eqn["outvars"][0]) == "int32"]
    tried = []
    for ref in required:
        carry = carries(trace, ref, what="the int8 product")
        if carry.ok:
            hosted = host_callback(trace, "", "part of the answer (the quantized `x`, a scale) is computed by Python "
                                   "on the host, outside the traced program",
                                   "Quantize `x` and scale the product with JAX's own operations.")
            if not hosted.passed:
                return hosted
            return CheckResult(True, f"The `dot_general`{line_hint(ref)} multiplies the int8 `x` by the int8 `w_q` "
                               "into int32, and the output is computed from it.", [ref.evidence("int8 x int8 -> int32")])
        tried.append((ref, carry))
    if tried:
        ref, carry = tried[0]
        narrow = _narrow_casts(trace, ref)
        if narrow and carry.still:
            to = _narrows(narrow[0])
            return CheckResult(False, f"The int32 result of the int8 product{line_hint(ref)} is rounded to {to} "
                               f"on its way to the output{line_hint(narrow[0])}: when the grader moved the product's "
                               f"results by one, the output did not follow, because {to} keeps too few bits for an "
                               "int32 sum. Compute the output from the exact result: convert it to float32.",
                               [ref.evidence("int8 product"), narrow[0].evidence(f"rounds the result to {to}")])
        return CheckResult(False, carry.message() + " Compute the output from the int32 result of the int8 product.",
                           [r.evidence("int8 product that does not carry the answer") for r, _ in tried])
    fake = _foreign(trace)
    if fake and not any(_reaches_output(trace, d) for d in dots):
        return CheckResult(False, f"There is no JAX `dot_general` computing the output; `{fake[0].primitive[8:]}`"
                           f"{line_hint(fake[0])} is a primitive your code defined itself, not JAX's. Use "
                           "`jax.lax.dot_general` (or `jnp.matmul`/`jnp.einsum`) with `preferred_element_type=jnp.int32`.",
                           [r.evidence("not a JAX primitive") for r in fake[:3]])
    used = [d for d in dots if _reaches_output(trace, d)]
    if not used:
        return CheckResult(False, "No `dot_general` computes the output: the product is written another way (a "
                           "multiply and a sum, or a loop). Multiply the int8 matrices with one `dot_general`, "
                           "`preferred_element_type=jnp.int32`.", [])
    used.sort(key=lambda d: (_operands(trace, d) is None, d.eqn.get("line") or 0))
    return CheckResult(False, _describe(trace, used[0]), [d.evidence("not an int8 x int8 -> int32 product")
                                                         for d in used[:3]])


def no_dequantized_matmul(trace: Trace) -> CheckResult:
    products = _int8_products(trace)
    sources = trace.inputs("w_q")
    names, evidence = paths_around(trace, products, sources)
    if names:
        dots = [e for e in evidence if e.primitive == "dot_general"]
        what = ("a matrix product" if dots else "a computation")
        head = (f"`w_q` reaches the output through {what} that is not an int8 × int8 product with the quantized "
                "`x`" + (f" (for instance `{evidence[0].primitive}` at your line {evidence[0].source_line})"
                         if evidence and evidence[0].source_line else "") + ". ")
        detail = ("" if products else "There is no int8 × int8 product of the quantized `x` and `w_q` at all. ")
        return CheckResult(False, head + detail + "Converting the weights to float (or int32) and multiplying those "
                           "is what int8 serving avoids: keep `w_q` int8 all the way into the product.", evidence)
    reached = trace.flow.outputs_reached(sources)
    if not reached:
        return CheckResult(False, "`w_q` does not reach the output at all.", [])
    return CheckResult(True, "`w_q` reaches the output only through the int8 × int8 product"
                       f"{'s' if len(products) > 1 else ''}.", [p.evidence("int8 product") for p in products])


def _contracts(ref: EqnRef) -> bool:
    """Whether a `dot_general` sums over more than one element."""
    dims = ref.params.get("dimension_numbers")
    shape = ref.eqn["invars"][0]["shape"]
    try:
        (lhs_contract, _), _ = ast.literal_eval(dims) if isinstance(dims, str) else dims
    except (ValueError, SyntaxError, TypeError):  # an unreadable form counts as contracting
        return True
    return prod(shape[i] for i in lhs_contract) > 1


def scales_after(trace: Trace) -> CheckResult:
    products = _int8_products(trace)
    if not products:
        return CheckResult(False, "There is no int8 × int8 product of the quantized `x` and `w_q`, so there is no "
                           "product for the scales to follow: scale the int32 result of such a product.", [])
    carrying = [p for p in products if carries(trace, p).ok or _narrow_casts(trace, p)]
    if not carrying:
        return CheckResult(False, "No int8 × int8 product computes the output (replacing its results changes "
                           "nothing), so no scaling follows a product that matters.",
                           [p.evidence("int8 product") for p in products])
    flow = trace.flow
    for ref in _after(trace, carrying):
        prim = ref.primitive
        narrow = _narrows(ref)
        if not narrow and (prim in AFTER_OK or (prim == "dot_general" and not _contracts(ref))):
            continue
        if narrow:
            why = (f"it is rounded to {narrow}, which keeps too few bits for an int32 sum; convert it to float32")
        elif prim == "dot_general":
            why = ("a matrix product runs on the product's result: scaling by a matrix (a diagonal of "
                   "`w_scale`), or a float matmul of weights copied out of the int8 product, does again what "
                   "the int8 product was for")
        elif prim.startswith("reduce") or prim in ("cumsum", "reduce_sum"):
            why = "it is summed or reduced again"
        elif prim in ("add", "sub", "add_any"):
            why = "something is added to it"
        else:
            why = "it goes through more than a conversion and scaling"
        return CheckResult(False, f"After the int8 product, `{prim}`{line_hint(ref)} works on its result: {why}. "
                           "Convert the int32 result to float32 and multiply it by the row scales of `x` and by "
                           "`w_scale[None, :]`, elementwise; nothing else belongs between the product and the output.",
                           [ref.evidence("not a scaling"), carrying[0].evidence("int8 product")])
    into = [n for p in carrying for n in p.in_nodes]
    if any(n in _reach(trace, "w_scale") for n in into):
        return CheckResult(False, "`w_scale` reaches the operands of the int8 product: apply it to the product's "
                           "result instead.", [carrying[0].evidence("int8 product")])
    if not flow.outputs_reached(trace.inputs("w_scale")):
        return CheckResult(False, "`w_scale` does not reach the output: multiply column j of the product by "
                           "`w_scale[j]`.", [])
    return CheckResult(True, f"After the int8 product{line_hint(carrying[0])} only a conversion and the scalings "
                       "run before the output.", [carrying[0].evidence("int8 product")])


CHECKS = {
    "int8-product": int8_product,
    "no-dequantized-matmul": no_dequantized_matmul,
    "scales-after": scales_after,
}
