"""Measure the source policy (``grader/grading/source_policy.py``, a hand-written AST walk) against
RestrictedPython's compile-time policy on every file a right answer or a hostile one can be: each problem's
``reference.py``, ``baseline.py`` and ``submissions/**`` gallery (accepted styles, cheats, wrong answers...),
``tests/attacks/`` and ``tests/forgeries/``.

A right answer must never be refused: the gallery's ``accepted/`` files and the references are the right
answers; the attacks and forgeries are the hostile ones (refusing them early is the point, but never the only
defence). Usage: ``python benchmarks/source_policy.py [--list]`` (needs ``pip install -r requirements-dev.txt``
for RestrictedPython). Prints a table; ``--list`` also names each file either policy refuses.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.grading import source_policy  # noqa: E402


def restricted_refuses(code: str) -> str | None:
    """RestrictedPython's first error for ``code`` (its default policy at compile time), or None."""
    from RestrictedPython import compile_restricted_exec
    result = compile_restricted_exec(code, "<submission>")
    return result.errors[0] if result.errors else None


def groups() -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {"right answers (references, accepted/)": [], "other gallery files": [],
                                  "attacks": sorted((ROOT / "tests" / "attacks").glob("*.py")),
                                  "forgeries": sorted((ROOT / "tests" / "forgeries").glob("*.py"))}
    for folder in sorted((ROOT / "problems").iterdir()):
        if folder.name.startswith("_") or not (folder / "reference.py").exists():
            continue
        out["right answers (references, accepted/)"].append(folder / "reference.py")
        out["right answers (references, accepted/)"].extend(sorted((folder / "submissions" / "accepted").rglob("*.py")))
        others = [p for p in sorted((folder / "submissions").rglob("*.py")) if "accepted" not in p.parts]
        out["other gallery files"].extend(others + [p for p in [folder / "baseline.py"] if p.exists()])
    return out


def main(argv: list[str]) -> int:
    print(f"{'files':40} {'n':>5} {'AST walk refuses':>17} {'RestrictedPython refuses':>25}")
    for name, paths in groups().items():
        ours = {p: source_policy.check(p.read_text()) for p in paths}
        theirs = {p: restricted_refuses(p.read_text()) for p in paths}
        print(f"{name:40} {len(paths):5} {sum(r is not None for r in ours.values()):17} "
              f"{sum(r is not None for r in theirs.values()):25}")
        if "--list" in argv:
            for p in paths:
                if ours[p] or theirs[p]:
                    print(f"    {p.relative_to(ROOT)}\n        walk: {ours[p] and ours[p].message()[:140]}"
                          f"\n        restricted: {theirs[p] and theirs[p][:140]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
