"""Experiments for mixed-precision-with-loss-scaling, run by the verifier on the rebuilt program (trusted side).

``scale-inside-grad`` asks that "the matrix products of the backward pass run on scaled values". That is a
claim about values: the verifier evaluates the program twice on the case's inputs, with ``loss_scale`` as
given and halved, and keeps every value that halves with it (matrix products among them: products of values
scaled by ``loss_scale``) while the update does not change. A scale applied only after the gradients reaches no product;
a product merely fed ``loss_scale * 0`` does not move with it.
"""


def products_on_scaled_values(program):
    """``{"scaled": [{"path", "k", "product"}...], "products": n, "same_update": bool}``: the values (outside
    loops or not; ``product`` when a matrix product computes it) that are halved when ``loss_scale`` is, and
    whether the returned parameters stay the same meanwhile (the scale is divided out again)."""
    import numpy as np

    scale = float(program.args["loss_scale"])
    smaller = scale / 2.0 if scale >= 2.0 else scale * 2.0
    factor = smaller / scale
    first = program.values(loss_scale=np.float32(scale))
    second = program.values(loss_scale=np.float32(smaller))
    scaled, products = [], 0
    for path, outs in first.items():
        eqn = program.equation(path)
        if eqn is None:
            continue
        product = eqn.primitive.name == "dot_general"
        products += product
        other = second.get(path)
        for k, (a, b) in enumerate(zip(outs, other or [])):
            a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
            top = float(np.max(np.abs(a))) if a.size else 0.0
            if a.size and top > 0 and np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and \
                    float(np.max(np.abs(b - factor * a))) <= 1e-2 * abs(factor) * top:
                scaled.append({"path": path, "k": k, "product": product})
    update = [np.asarray(v, dtype=np.float64) for n, v in program.run(loss_scale=np.float32(scale)).items()
              if n.startswith("params")]
    again = [np.asarray(v, dtype=np.float64) for n, v in program.run(loss_scale=np.float32(smaller)).items()
             if n.startswith("params")]
    same = all(np.allclose(a, b, rtol=1e-2, atol=1e-3, equal_nan=True) for a, b in zip(update, again))
    return {"scaled": scaled, "products": products, "same_update": bool(same)}


EXPERIMENTS = {"scaled_products": products_on_scaled_values}
