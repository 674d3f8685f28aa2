"""Take the README's screenshots: the real app (``streamlit run app.py``) in Debian's Chromium.

    python docs/screenshots.py [--out docs]

Home, a problem, an accepted Submit, a failed requirement's jaxpr view and the structure picture, in the
light and the dark theme, at 1400x900, on a 390x844 phone and on a 1920x1080 projector (presenter layout, largest
font) where it matters; then the Cost tab of the two
seed problems at their realistic sizes (light theme: ``cost-<slug>.png``), and, where the TPU extra is
installed, the remat problem's Cost tab compiled for a TPU v5e (``cost-tpu-<slug>.png``; ``--only tpu``
takes that one alone). Each PNG is saved at the viewport's size in 256 colours, so the files stay small.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import problems  # noqa: E402
from browser_helpers import (DESKTOP, PHONE, launch, open_tab, set_code, start_server, stop_server,  # noqa: E402
                             verdict)

GA = "gradient-accumulation-with-scan"
REMAT = "rematerialized-mlp-block"


def through_scan() -> str:
    from test_browser import THROUGH_SCAN
    return THROUGH_SCAN


def top(page) -> None:
    page.mouse.move(1, 1)
    page.wait_for_timeout(400)


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs"))
    parser.add_argument("--only", choices=("all", "tpu"), default="all")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(exist_ok=True)
    proc, url, log = start_server("screenshots.log")
    problem = problems.get(GA)
    try:
        with sync_playwright() as p:
            browser = launch(p)
            from grader.cost.targets import tpu_extra
            if tpu_extra()[0]:
                cost_tab(browser, url, REMAT, out / f"cost-tpu-{REMAT}.png", target="TPU v5e, compiled ahead of time")
            for scheme in (("light", "dark") if args.only == "all" else ()):
                page = browser.new_page(viewport=DESKTOP, color_scheme=scheme)
                page.goto(url + "/")
                page.get_by_text(problem.title, exact=True).first.wait_for(timeout=60_000)
                page.wait_for_timeout(1500)
                page.screenshot(path=str(out / f"home-{scheme}.png"))

                page.goto(f"{url}/{GA}")
                set_code(page, problem.reference)
                page.get_by_role("button", name="Run", exact=True).click()
                verdict(page, "Accepted", 240)
                top(page)
                page.screenshot(path=str(out / f"problem-{scheme}.png"))

                page.get_by_role("button", name="Submit", exact=True).click()
                verdict(page, "Submit (examples", 240)
                top(page)
                page.screenshot(path=str(out / f"submit-accepted-{scheme}.png"))

                set_code(page, through_scan())
                page.get_by_role("button", name="Run", exact=True).click()
                verdict(page, "Requirements Not Met", 240)
                open_tab(page, "jaxpr")
                panel = page.locator('[data-testid="stTabs"]').first
                page.locator(".jaxplay-jaxpr.mine").wait_for()
                page.wait_for_timeout(1200)
                panel.screenshot(path=str(out / f"jaxpr-failed-requirement-{scheme}.png"))
                open_tab(page, "Structure")
                page.locator('[data-testid="stGraphVizChart"] svg').nth(1).wait_for(timeout=120_000)
                page.wait_for_timeout(800)
                panel.screenshot(path=str(out / f"structure-{scheme}.png"))
                page.close()

                phone = browser.new_page(viewport=PHONE, color_scheme=scheme, device_scale_factor=1)
                phone.goto(f"{url}/{GA}")
                set_code(phone, problem.reference)
                run = phone.get_by_role("button", name="Run", exact=True)
                run.scroll_into_view_if_needed()
                run.click()
                banner = verdict(phone, "Accepted", 240)
                phone.locator('iframe[title="streamlit_ace.streamlit_ace"]').scroll_into_view_if_needed()
                banner.wait_for()
                phone.wait_for_timeout(600)
                phone.screenshot(path=str(out / f"phone-{scheme}.png"))
                phone.close()

                # a projector: presenter layout at the largest font, the verdict of a Run on screen
                hall = browser.new_page(viewport={"width": 1920, "height": 1080}, color_scheme=scheme)
                hall.add_init_script("window.localStorage.setItem('jaxplay:prefs', JSON.stringify("
                                     "{presenter: true, font_size: 28, keybinding: 'Default'}))")
                hall.goto(f"{url}/{GA}")
                set_code(hall, problem.reference)
                hall.get_by_role("button", name="Run", exact=True).click()
                verdict(hall, "Accepted", 240)
                hall.wait_for_timeout(1500)
                hall.screenshot(path=str(out / f"presenter-{scheme}.png"))
                hall.close()
            for slug in ((GA, REMAT) if args.only == "all" else ()):
                cost_tab(browser, url, slug, out / f"cost-{slug}.png")
            browser.close()
    finally:
        stop_server(proc, log)
    for png in sorted(out.glob("*.png" if args.only == "all" else "cost-tpu-*.png")):
        shrink(png)
        print(f"{png.name}: {png.stat().st_size // 1024} KiB")


def cost_tab(browser, url: str, slug: str, path: Path, target: str = "") -> None:
    """The Cost tab after measuring the reference at the problem's realistic size: its charts and takeaways
    (compiled for ``target``, a label of the tab's choice, when given)."""
    problem = problems.get(slug)
    page = browser.new_page(viewport={"width": 1400, "height": 1800}, color_scheme="light")
    page.goto(f"{url}/{slug}")
    set_code(page, problem.reference)
    panel = open_tab(page, "Cost")
    if target:
        panel.get_by_text(target, exact=True).click()
        page.wait_for_timeout(1500)
    panel.get_by_role("button", name="Measure cost").click()
    charts = problem.insight.charts_for("tpu" if target else "cpu")
    for chart in charts:
        page.get_by_text(chart.title, exact=True).wait_for(timeout=900_000)
    page.locator('.st-key-tab-cost [data-testid="stVegaLiteChart"]').nth(len(charts) - 1) \
        .wait_for(timeout=60_000)
    page.wait_for_timeout(2500)  # the charts' own drawing
    panel.screenshot(path=str(path))
    page.close()


def shrink(png: Path) -> None:
    """256 colours are plenty for a screenshot of text: about a third of the bytes."""
    from PIL import Image
    with Image.open(png) as img:
        small = img.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(png, optimize=True)


if __name__ == "__main__":
    main()
