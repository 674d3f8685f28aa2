"""A Pallas problem's Cost tab: the learner's kernel, the reference kernel and the ``jnp`` version XLA fuses on
its own, compiled for a TPU v5e (``grader/cost/kernel_cost.py``).

Nothing is measured on a click: the reference's and the baseline's figures ship with the problem, and the
learner's kernel's come with their Submit (the trusted compile record of "Compiles for a TPU v5e",
``Report.tpu``), remembered for the session so that a Run afterwards does not hide them.
"""
from __future__ import annotations

import streamlit as st

from grader.cost import kernel_model
from grader.cost.charts import Chart, series_colour
from grader.grading.numbers import figure
from grader.cost.kernel_cost import Figures, baseline_row, kernel_row, load
from grader.records import learner
from pages.services import progress, runs
from pages.views import cost_view
from pages.views.markup import md
from problems import Problem

MB = 1 << 20
ROLES = {"your kernel": "learner", "reference kernel": "reference"}
"""Each row's program, for its colour (``series_colour``): the rest is the ``jnp`` baseline."""
MEMORY = "jaxplay_kernel_records"
"""``{slug: (code, record)}``: the last Submit's compile record per problem, for the session."""


def cost_tab(problem: Problem) -> None:
    spec = problem.kernel_cost or {"baseline_title": "jnp version", "takeaway": ""}
    size = ", ".join(f"`{a.name}` {tuple(s['shape'])}" if "shape" in s else f"`{a.name}` = {s['value']}"
                     for a, s in zip(problem.args, (problem.tpu_compile or {}).get("args", [])))
    st.caption(md(f"What the kernel buys on a TPU v5e against the `jnp` version XLA fuses on its own, at the "
                  f"realistic size ({size}), compiled ahead of time for one v5e chip (no TPU is used). A kernel's "
                  "HBM bytes and FLOPs are **counted from its grid and blocks** (a model: XLA's cost analysis counts "
                  "nothing inside a Mosaic kernel); the `jnp` version's are **XLA's cost analysis**. The planned "
                  "peak is XLA's memory analysis of each compiled program."))
    if spec["takeaway"]:
        st.info(md(spec["takeaway"]), icon=":material/lightbulb:")
    shipped = load(problem)
    rows: list[Figures] = []
    mine = _learner(problem)
    if mine is not None:
        rows.append(mine)
    if shipped is not None:
        ref = kernel_row("reference kernel", shipped["reference"])
        rows += [r for r in (ref, baseline_row(spec["baseline_title"], shipped["baseline"])) if r is not None]
    else:
        st.warning("The problem's own figures are missing or were written for other code "
                   "(`python benchmarks/kernel_plans.py` writes them).")
    if not rows:
        return
    _table(rows)
    for chart in charts(rows):
        cost_view._chart(chart)
    if shipped is not None:
        versions = ", ".join(f"{k} {v}" for k, v in shipped.get("versions", {}).items())
        st.caption(md(f"The reference's and the `jnp` version's figures were compiled once ({versions}) and ship "
                      f"with the problem. The roofline takes a v5e's {kernel_model.PEAK_FLOPS / 1e12:.0f} TFLOP/s "
                      f"(bfloat16 matrix units) and {kernel_model.PEAK_BYTES / 1e9:.0f} GB/s of HBM; what a chip measures is in the takeaway above, and it can be far from the "
                      "roofline where neither roof binds (exponentials and other vector work)."))


def _learner(problem: Problem) -> Figures | None:
    """The learner's kernel's row from their last Submit (remembered for the session), or None with a line
    saying why there is none."""
    memory = st.session_state.setdefault(MEMORY, {})
    task, report = runs.last_report(problem.slug)
    if task is not None and task.kind == "submit" and report is not None and report.tpu is not None:
        memory[problem.slug] = (task.code, report.tpu)
    code, record = memory.get(problem.slug, (None, None))
    if record is None:
        st.caption("**Submit** to see your kernel's figures here: on Submit the grader compiles it for a v5e and "
                   "counts what it moves.")
        return None
    status = record.get("status")
    if status != "compiled":
        why = {"refused": "it does not compile for a TPU v5e (see Requirements)",
               "traced_error": "it could not be traced at the realistic size (see Requirements)"}.get(
                   status, "it was not compiled for a TPU v5e on this server")
        st.caption(f"Your last Submit's kernel has no figures: {why}.")
        return None
    if code != (progress.code(problem.slug) or problem.starter):
        st.caption("Your kernel's figures are from your last Submit, an earlier version of your code.")
    notes = (record.get("kernel") or {}).get("notes") or []
    if notes:  # what the model could not count exactly (a block copied by hand, a data-dependent index)
        st.caption(md("Counting your kernel: " + learner("; ".join(str(n) for n in notes[:4]))))
    return kernel_row("your kernel", record)


def _table(rows: list[Figures]) -> None:
    table = []
    for r in rows:
        roof = r.roof or {}
        table.append({  # every figure written by numbers.figure, as the charts' labels are (issue 46)
            "program": r.title,
            "HBM bytes (MiB)": figure(None if r.hbm_bytes is None else r.hbm_bytes / MB),
            "planned peak (MiB)": figure(None if r.peak_bytes is None else r.peak_bytes / MB),
            "GFLOP": figure(None if r.flops is None else r.flops / 1e9),
            "FLOPs / byte": figure(roof.get("intensity")),
            "roofline (ms)": figure(roof["bound_s"] * 1e3 if roof else None),
            "bound by": "" if not roof else ("compute" if roof["binds"] == "compute" else "HBM"),
            "bytes and FLOPs": r.how,
        })
    import pandas as pd  # (here: a server's first page view does without it)
    st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch", key="kernel-cost-table")
    ridge = kernel_model.PEAK_FLOPS / kernel_model.PEAK_BYTES
    st.caption(f"Roofline: the least time a v5e could take, max(FLOPs / {kernel_model.ROOFS}); below "
               f"about {round(ridge, -1):.0f} FLOPs a byte (the ridge) HBM binds.")


def charts(rows: list[Figures]) -> list[Chart]:
    """Bar charts of HBM bytes, planned peak and the roofline time, one bar per program (the Cost tab's own)."""
    specs = [("hbm_bytes", "HBM traffic", "HBM bytes (MiB)", "MiB", lambda r: r.hbm_bytes, MB,
              "A kernel's: each block's copies between HBM and VMEM, counted from the grid and index maps (a block "
              "whose index does not change from one step to the next is not fetched again); the `jnp` version's: "
              "XLA's bytes accessed."),
             ("peak_bytes", "Planned peak", "planned peak memory (MiB)", "MiB", lambda r: r.peak_bytes, MB,
              "XLA's plan for one v5e chip: arguments, result and temporaries held at once."),
             ("roofline", "Roofline time", "least time on a v5e (ms)", "ms",
              lambda r: None if r.roof is None else r.roof["bound_s"], 1e-3,
              f"max(FLOPs / {kernel_model.ROOFS}): the time neither the matrix units nor HBM could beat.")]
    out = []
    for metric, title, label, unit, value, scale, note in specs:
        bars = [{"x": r.title, "program": r.title, "value": value(r) / scale, "measured_once": False}
                for r in rows if value(r) is not None]
        missing = [f"{r.title}: not counted" for r in rows if value(r) is None]
        out.append(Chart(title=title, takeaway=note, kind="bar", metric=metric, x_label="program", y_label=label,
                         unit=unit, rows=bars, missing=missing,
                         colours={r.title: series_colour(ROLES.get(r.title, "baseline")) for r in rows}))
    return out
