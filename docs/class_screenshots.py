"""Take the README's class screenshots: the real app (``streamlit run app.py``) in Debian's Chromium.

    python docs/class_screenshots.py [--out docs]

A teacher starts a class on ``/class``; a learner joins on a 390x844 phone; 29 more learners' Runs and
Submits of the rematerialized MLP block (files of its gallery and two that cannot run, graded by the app's
runner and recorded by the app's hook, as a page's grading thread does; each distinct file is graded once)
fill the board, projected at 1920x1080: 30 learners on one screen, each requirement with who fails it.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "docs")]

from browser_helpers import DESKTOP, PHONE, launch, start_server, stop_server  # noqa: E402
from screenshots import shrink  # noqa: E402

REMAT = "rematerialized-mlp-block"
GALLERY = ROOT / "problems" / REMAT / "submissions"
# (nickname, the files they ran in turn; "submit:" marks a Submit)
CLASS = [
    ("ana", ["requirements_not_met/no_checkpoint.py", "submit:accepted/decorator_partial.py"]),
    ("ben", ["requirements_not_met/checkpoint_around_grad.py"]),
    ("chloé", ["requirements_not_met/no_policy.py", "submit:accepted/nested_checkpoint.py"]),
    ("dev", ["wrong_answer/half_sum_of_squares_over_batch.py"]),
    ("eli", ["requirements_not_met/no_checkpoint.py"]),
    ("fatima", ["submit:accepted/flax_style_module.py"]),
    ("gus", ["requirements_not_met/checkpoint_around_grad.py", "requirements_not_met/checkpoint_around_grad.py"]),
    ("hana", ["requirements_not_met/nothing_saveable.py", "accepted/hidden_layer_only.py"]),
    ("ivan", ["requirements_not_met/no_checkpoint.py"]),
    ("jun", ["requirements_not_met/everything_saveable.py", "submit:accepted/remat_alias_grad_separate_loss.py"]),
    ("kofi", ["requirements_not_met/checkpoint_around_grad.py"]),
    ("lea", ["requirements_not_met/output_layer_only.py"]),
    ("mo", ["requirements_not_met/no_checkpoint.py", "requirements_not_met/no_policy.py"]),
    ("nika", ["submit:accepted/scan_body_checkpoint.py"]),
    ("omar", ["requirements_not_met/no_policy.py"]),
    ("pia", ["syntax:def remat_mlp_block(params, x, y:\n    return 0\n"]),
    ("quinn", ["requirements_not_met/checkpoint_around_grad.py", "submit:accepted/decorator_partial.py"]),
    ("rosa", ["requirements_not_met/no_checkpoint.py"]),
    ("sam", ["accepted/hidden_layer_only.py"]),
    ("tariq", ["runtime:def remat_mlp_block(params, x, y):\n    return params['w9']\n"]),
    ("uma", ["requirements_not_met/output_layer_only.py"]),
    ("vic", ["submit:accepted/nested_checkpoint.py"]),
    ("wen", ["requirements_not_met/no_checkpoint.py", "requirements_not_met/no_policy.py"]),
    ("xena", ["wrong_answer/half_sum_of_squares_over_batch.py"]),
    ("yuki", ["requirements_not_met/everything_saveable.py"]),
    ("zara", ["requirements_not_met/checkpoint_around_grad.py"]),
    ("amir", ["submit:accepted/flax_style_module.py"]),
    ("bea", ["requirements_not_met/nothing_saveable.py"]),
    ("carl", ["requirements_not_met/no_checkpoint.py"]),
]


def fill_class(code: str) -> None:
    """The class's Runs and Submits, graded and recorded the app's way."""
    import problems
    from classroom import ClassStore
    from pages.services import class_store
    from pages.services.runs import get_runner
    problem = problems.get(REMAT)
    store = ClassStore(os.environ["JAXPLAY_DB"])
    graded: dict[str, object] = {}
    for nickname, files in CLASS:
        who, _ = store.join(code, nickname)
        for spec in files:
            submit = spec.startswith("submit:")
            if spec.startswith(("syntax:", "runtime:")):
                text = spec.split(":", 1)[1]
            else:
                text = (GALLERY / spec.removeprefix("submit:")).read_text()
            if spec not in graded:
                graded[spec] = get_runner().grade(problem, text, examples_only=not submit)
            class_store.record(who, REMAT, "submit" if submit else "run", text, graded[spec])


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs"))
    out = Path(parser.parse_args().out)
    data = tempfile.mkdtemp(prefix="jaxplay-class-shots-")
    os.environ["JAXPLAY_DB"] = f"sqlite:///{data}/classroom.sqlite3"
    os.environ["JAXPLAY_DATA"] = f"{data}/data"
    proc, url, log = start_server("class-screenshots.log", env={"JAXPLAY_DB": os.environ["JAXPLAY_DB"],
                                                                "JAXPLAY_DATA": os.environ["JAXPLAY_DATA"]})
    try:
        with sync_playwright() as p:
            browser = launch(p)
            teacher = browser.new_page(viewport=DESKTOP)
            teacher.goto(url + "/class")
            teacher.get_by_label("Class name (optional)").wait_for(timeout=300_000)  # a fresh server, a busy machine
            teacher.get_by_label("Class name (optional)").fill("JAX workshop, Monday")
            teacher.get_by_role("button", name="Start a class").click()
            teacher.locator(".jaxplay-class-code").wait_for(timeout=60_000)
            code = teacher.locator(".jaxplay-class-code").inner_text().strip()
            board = teacher.get_by_role("link", name="Open the class board").get_attribute("href")
            teacher.mouse.move(1, 1)
            teacher.screenshot(path=str(out / "class-start.png"))

            phone = browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
            phone.goto(f"{url}/?class={code}")
            phone.get_by_label("Nickname").wait_for(timeout=300_000)
            phone.get_by_label("Nickname").fill("zoe")
            phone.wait_for_timeout(500)
            phone.screenshot(path=str(out / "class-join-phone.png"))
            phone.get_by_role("button", name="Join class").click()
            phone.get_by_text(f"Class {code} · zoe").first.wait_for(timeout=120_000)

            fill_class(code)
            projector = browser.new_page(viewport={"width": 1920, "height": 1080})
            projector.goto(board)
            projector.get_by_text("carl").first.wait_for(timeout=120_000)
            projector.wait_for_timeout(3000)
            projector.mouse.move(1, 1)
            projector.screenshot(path=str(out / "class-board.png"))
        for name in ("class-start.png", "class-join-phone.png", "class-board.png"):
            shrink(out / name)
    finally:
        stop_server(proc, log)
        from grader.sandbox.pool import shutdown_shared_pools
        shutdown_shared_pools()


if __name__ == "__main__":
    main()
