"""Which isolation layers a deployment requires: ``JAXPLAY_REQUIRE_SANDBOX``.

- unset or ``0``: run with whatever layers work here (the doctor and the app's sidebar say which are off);
- ``1``: refuse to run code unless Landlock, seccomp, the resource limits and dropped privileges work, and,
  when the grader runs as root (so it can), a user of its own per worker;
- ``all``: the same, and bubblewrap too.
"""
from __future__ import annotations

import os

ALWAYS = ("landlock", "seccomp", "rlimits", "privileges")
"""Required by ``1``: they need no privilege, only a recent kernel."""


def requirement() -> str:
    """``""`` (run without layers, with a note), ``"1"`` or ``"all"``."""
    value = os.environ.get("JAXPLAY_REQUIRE_SANDBOX", "").strip().lower()
    return "" if value in ("", "0", "no", "false") else ("all" if value == "all" else "1")


def required_layers() -> list[str]:
    """The layers a job must have under the current requirement (none when nothing is required)."""
    req = requirement()
    if not req:
        return []
    names = list(ALWAYS)
    if os.geteuid() == 0:  # root can give every worker a uid of its own: then it must
        names.append("identity")
    if req == "all":
        names.append("bubblewrap")
    return names
