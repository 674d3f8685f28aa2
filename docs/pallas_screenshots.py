"""Take the README's Pallas screenshots: the blocked matmul after a Submit whose kernel Mosaic refuses, and
its Cost tab after the reference is submitted.

    python docs/pallas_screenshots.py [--out docs] [--only refused|cost]

The real app (``streamlit run app.py``) in Debian's Chromium, the gallery's ``rows_of_one.py`` (a (1, 128)
block) submitted, at 1400x900 (``pallas-refused-compile.png``, the requirement rows in view) and on a
390x844 phone (``pallas-refused-compile-phone.png``). Needs the TPU extra (the row is "not checked" without
it). ``pallas-cost-tab.png``: the reference submitted (Accepted), then the Cost tab at 1400x900, its
caption, takeaway, table and first chart in view. Each PNG is saved in 256 colours, as ``docs/screenshots.py`` does.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "docs")]

import problems  # noqa: E402
from browser_helpers import (DESKTOP, PHONE, launch, open_tab, set_code, start_server, stop_server,  # noqa: E402
                             verdict)
from screenshots import shrink  # noqa: E402

SLUG = "blocked-matmul-with-pallas"


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs"))
    parser.add_argument("--only", choices=("refused", "cost"))
    args = parser.parse_args()
    out = Path(args.out)
    problem = problems.get(SLUG)
    code = (problem.folder / "submissions" / "requirements_not_met" / "rows_of_one.py").read_text()
    proc, url, log = start_server("pallas_screenshots.log")
    shots = []
    try:
        with sync_playwright() as p:
            browser = launch(p)
            refused = (("pallas-refused-compile.png", DESKTOP), ("pallas-refused-compile-phone.png", PHONE))
            for name, viewport in refused if args.only != "cost" else ():
                page = browser.new_page(viewport=viewport, color_scheme="light", device_scale_factor=1)
                page.goto(f"{url}/{SLUG}")
                set_code(page, code)
                submit = page.get_by_role("button", name="Submit", exact=True)
                submit.scroll_into_view_if_needed()
                submit.click()
                verdict(page, "Requirements Not Met", 600)
                open_tab(page, "Requirements")
                row = page.locator('[class*="st-key-req-compiles-for-tpu-v5e"]').first
                row.wait_for(timeout=60_000)
                row.scroll_into_view_if_needed()
                page.wait_for_timeout(1200)
                page.screenshot(path=str(out / name))
                shots.append(out / name)
                page.close()
            if args.only != "refused":
                shots.append(cost_tab(browser, url, problem, out / "pallas-cost-tab.png"))
            browser.close()
    finally:
        stop_server(proc, log)
    for png in shots:
        shrink(png)
        print(f"{png.name}: {png.stat().st_size // 1024} KiB")


def cost_tab(browser, url: str, problem, path: Path) -> Path:
    """The reference submitted, then the Cost tab with the learner's kernel beside the reference and XLA's."""
    page = browser.new_page(viewport=DESKTOP, color_scheme="light", device_scale_factor=1)
    page.goto(f"{url}/{SLUG}")
    set_code(page, problem.reference)
    submit = page.get_by_role("button", name="Submit", exact=True)
    submit.scroll_into_view_if_needed()
    submit.click()
    verdict(page, "Accepted", 600)
    content = open_tab(page, "Cost")
    # the chart's label (the table's cell of the same words is also in the grid's hidden accessible copy)
    content.locator("svg text", has_text="your kernel").first.wait_for(timeout=60_000)
    page.wait_for_timeout(2500)  # the charts draw
    top = content.bounding_box()["y"]  # the tab's top just under the page's header: caption, takeaway, table
    page.mouse.move(700, 860)  # over the tabs, not the statement's own scrolling pane
    page.mouse.wheel(0, top - 70)
    page.wait_for_timeout(1200)
    page.screenshot(path=str(path))
    page.close()
    return path


if __name__ == "__main__":
    main()
