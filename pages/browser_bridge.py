"""The one piece of JavaScript the app needs: the browser's side of the editor and of saved progress.

A Streamlit components-v2 element (it runs in the page itself, not in an iframe) that:

- reads this browser's saved code and solved marks from ``localStorage`` once per page load and reports them
  (state ``stored``), and writes what the server asks it to (``data["write"]``), so code survives a reload;
- closes streamlit-ace's gap between what is *visible* and what the server has: the editor sends its text
  200 ms after typing stops, so a click on Run or Submit right after typing would grade older code. In the
  capture phase of that click, before Streamlit's own handler, it reads the editor's text and reports it
  (state ``flushed``, with a sequence number) in the same rerun as the click;
- makes Ctrl+Enter (Cmd+Enter) in the editor run the visible examples (trigger ``action``); with
  ``auto_update`` streamlit-ace would otherwise insert a line;
- closes a stale "Page not found" dialog when the server says the page was found (``dismiss_not_found``):
  Streamlit 1.67 treats the ``pages/`` folder beside ``app.py`` as an old-style multipage app on the very
  first run after the server starts, and a visitor who opens a problem's URL first is told the page does
  not exist although ``st.navigation`` then renders it.

Without JavaScript (AppTest) it reports nothing and the page falls back to the editor's own value.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

STALE_NOT_FOUND = "jaxplay_stale_not_found"
"""Session-state flag set by ``app.py`` when this session's first run was Streamlit's old-style one."""

_JS = r"""
const PREFIX = "jaxplay:";
let flushSeq = 0;

function readStore() {
  const out = {code: {}, solved: []};
  try {
    for (let i = 0; i < window.localStorage.length; i++) {
      const k = window.localStorage.key(i);
      if (k && k.startsWith(PREFIX + "code:")) out.code[k.slice((PREFIX + "code:").length)] = window.localStorage.getItem(k);
    }
    out.solved = JSON.parse(window.localStorage.getItem(PREFIX + "solved") || "[]");
  } catch (e) { /* storage disabled: behave as an empty store */ }
  return out;
}

function writeStore(write) {
  if (!write) return;
  try {
    for (const [slug, code] of Object.entries(write.code || {})) {
      const key = PREFIX + "code:" + slug;
      if (code === null) window.localStorage.removeItem(key);
      else if (window.localStorage.getItem(key) !== code) window.localStorage.setItem(key, code);
    }
    if (write.solved && write.solved.length) {
      const have = new Set(JSON.parse(window.localStorage.getItem(PREFIX + "solved") || "[]"));
      write.solved.forEach((s) => have.add(s));
      window.localStorage.setItem(PREFIX + "solved", JSON.stringify([...have].sort()));
    }
  } catch (e) { /* quota or disabled storage: nothing to do */ }
}

function findEditor(editorKey) {
  if (!editorKey) return null;
  const frame = document.querySelector(".st-key-" + editorKey + " iframe");
  if (!frame) return null;
  try {
    const win = frame.contentWindow;
    const el = frame.contentDocument && frame.contentDocument.querySelector(".ace_editor");
    if (!win || !el) return null;
    const editor = (el.env && el.env.editor) || (win.ace && win.ace.edit(el));
    return editor ? {frame, win, editor} : null;
  } catch (e) { return null; }
}

// Some monospace fonts draw "_" below Ace's default line box, where it is clipped: give lines more room.
function styleEditor(found) {
  const doc = found.frame.contentDocument;
  if (!doc || doc.getElementById("jaxplay-ace-style")) return;
  const style = doc.createElement("style");
  style.id = "jaxplay-ace-style";
  style.textContent = ".ace_editor { line-height: 1.45 !important; }";
  doc.head.appendChild(style);
  try { found.editor.renderer.updateFontSize(); found.editor.resize(true); } catch (e) {}
}

function dismissStaleNotFound() {
  const started = Date.now();
  const timer = window.setInterval(() => {
    for (const dialog of document.querySelectorAll("[role='dialog']")) {
      if (!(dialog.textContent || "").includes("Page not found")) continue;
      const close = dialog.querySelector("button[aria-label='Close']") || dialog.querySelector("button");
      if (close) close.click();
    }
    if (Date.now() - started > 8000) window.clearInterval(timer);
  }, 100);
}

export default function ({ data, setStateValue, setTriggerValue }) {
  const d = data || {};
  writeStore(d.write);
  if (d.dismiss_not_found && !window.__jaxplayDismissed) {
    window.__jaxplayDismissed = true;
    dismissStaleNotFound();
  }
  if (!window.__jaxplayReported) {
    window.__jaxplayReported = true;
    setStateValue("stored", readStore());
  }
  const editorKey = d.editor_key;
  const buttonKeys = d.button_keys || [];

  function flush() {
    const found = findEditor(editorKey);
    if (!found) return;
    flushSeq += 1;
    const code = found.editor.getValue();
    setStateValue("flushed", {code: code, seq: Date.now() * 1000 + (flushSeq % 1000), slug: d.slug});
    if (d.slug) { try { window.localStorage.setItem(PREFIX + "code:" + d.slug, code); } catch (e) {} }
  }

  function onClick(ev) {
    const t = ev.target;
    if (!t || !t.closest) return;
    for (const k of buttonKeys) {
      const box = t.closest(".st-key-" + k);
      if (box && t.closest("button") && !t.closest("button").disabled) { flush(); return; }
    }
  }
  document.addEventListener("click", onClick, true);

  let hooked = null;
  function onKey(ev) {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") {
      ev.preventDefault();
      ev.stopImmediatePropagation();
      const found = findEditor(editorKey);
      if (found) setTriggerValue("action", {kind: "run", code: found.editor.getValue(), at: Date.now()});
    }
  }
  function onChange() {
    const found = findEditor(editorKey);
    if (found && d.slug) {
      try { window.localStorage.setItem(PREFIX + "code:" + d.slug, found.editor.getValue()); } catch (e) {}
    }
  }
  const timer = window.setInterval(() => {
    const found = findEditor(editorKey);
    if (!found || (hooked && hooked.editor === found.editor)) return;
    if (hooked) unhook();
    styleEditor(found);
    found.win.addEventListener("keydown", onKey, true);
    found.editor.on("change", onChange);
    hooked = found;
  }, 250);
  function unhook() {
    try { hooked.win.removeEventListener("keydown", onKey, true); hooked.editor.off("change", onChange); } catch (e) {}
    hooked = null;
  }
  return () => {
    window.clearInterval(timer);
    document.removeEventListener("click", onClick, true);
    if (hooked) unhook();
  };
}
"""

_component = st.components.v2.component("jaxplay_browser_bridge", html="<span></span>", js=_JS)


def _noop() -> None:
    pass


def bridge(*, slug: str | None = None, editor_key: str | None = None, button_keys: tuple[str, ...] = (),
           write: dict[str, Any] | None = None) -> Any:
    """Mount the bridge; returns the component result (``stored``, ``flushed`` state; ``action`` trigger)."""
    return _component(
        key="jaxplay_bridge",
        data={"slug": slug, "editor_key": editor_key, "button_keys": list(button_keys), "write": write,
              "dismiss_not_found": bool(st.session_state.get(STALE_NOT_FOUND))},
        height=0,
        on_stored_change=_noop, on_flushed_change=_noop, on_action_change=_noop,
    )


def clicked_code(slug: str, code: str, flushed) -> str:
    """The editor's text at the moment of the click (see ``browser_bridge``), else the editor's last value."""
    if not isinstance(flushed, dict) or flushed.get("slug") != slug or not isinstance(flushed.get("code"), str):
        return code
    used = st.session_state.setdefault("jaxplay_flush_used", {})
    if used.get(slug) == flushed.get("seq"):
        return code
    used[slug] = flushed.get("seq")
    return flushed["code"]
