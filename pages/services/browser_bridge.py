"""The one piece of JavaScript the app needs: the browser's side of the editor and of saved progress.

A Streamlit components-v2 element (it runs in the page itself, not in an iframe) that:

- reads this browser's saved code, verdicts, solved marks, display preferences and class (``ITEMS``) from
  ``localStorage`` once
  per page load and reports them (state ``stored``), and writes what the server asks it to
  (``data["write"]``), so code and verdicts survive a reload;
- closes streamlit-ace's gap between what is *visible* and what the server has: the editor sends its text
  200 ms after typing stops, so a click on Run or Submit right after typing would grade older code. In the
  capture phase of that click, before Streamlit's own handler, it reads the editor's text and reports it
  (state ``flushed``, with a sequence number and the button). Being a state, not a one-shot trigger, the
  click also survives a rerun that cuts off the click's own script run (the editor's late value, say),
  which would otherwise lose the button's press (``new_click``);
- turns streamlit-ace's live autocompletion off unless the learner chose it (``live_completion``): the
  component hard-codes it on, and then Enter at the end of a word takes a suggestion (a word from the
  docstring) instead of starting a new line; Ctrl+Space still offers suggestions;
- makes Ctrl+Enter (Cmd+Enter) in the editor run the visible examples (trigger ``action``); with
  ``auto_update`` streamlit-ace would otherwise insert a line;
- brings the verdict and the case strip under it into view once a Run or Submit (a click or Ctrl+Enter) has
  one: on a phone, Run sits at the bottom of the screen and the verdict appears below the fold (and the strip
  is kept clear of the pinned Run bar); on a projector, at its bottom edge;
- opens each jaxpr listing at its ``data-focus`` line the first time it is shown, and follows the jump
  links (``a[data-jaxpr-line]``) from a requirement to its equations: it switches to the jaxpr tab, unfolds
  and scrolls to the line (a third of the way down the listing, the listing on screen), and outlines it for a
  moment;
- makes a server restart look like the product (``restartNotice``): while Streamlit's connection status says
  the page has lost its server, a short "Reconnecting…" notice sits at the top of the page, and Streamlit's
  own connection-error dialog (written for a developer: "Is Streamlit still running? ... restart it in your
  terminal") is closed through its own Close button, which keeps it closed until the connection is back;
  a page comes back by Streamlit's own reconnection, or, should that not come within ``RESTART_GRACE_MS``
  of the server answering its health check again (Streamlit asks every 4 s at most), by loading itself
  again (``watchServer``);
- keeps a board's freshness line honest while no script run comes (``freshness``): it counts the seconds
  since the board's last good read and says "reconnecting" or how old the board is.

Without JavaScript (AppTest) it reports nothing and the page falls back to the editor's own value.
"""
from __future__ import annotations

import time
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from pages.views.editor_keys import JS as _EDITOR_KEYS_JS

_JS = _EDITOR_KEYS_JS + r"""
const PREFIX = "jaxplay:";
const CLASS_COOKIE = "jaxplay_class";  // the class's code and token, sent with every page load's first request
const ITEMS = ["class", "teaching", "inflight"];  // JSON kept whole: this browser's class (code, token), the classes it teaches, the Runs awaiting a verdict
let flushSeq = 0;

function readStore() {
  const out = {code: {}, verdict: {}, solved: [], prefs: null};
  try {
    for (let i = 0; i < window.localStorage.length; i++) {
      const k = window.localStorage.key(i);
      if (!k) continue;
      for (const kind of ["code", "verdict"]) {
        if (k.startsWith(PREFIX + kind + ":")) out[kind][k.slice((PREFIX + kind + ":").length)] = window.localStorage.getItem(k);
      }
    }
    out.solved = JSON.parse(window.localStorage.getItem(PREFIX + "solved") || "[]");
    out.prefs = JSON.parse(window.localStorage.getItem(PREFIX + "prefs") || "null");
  } catch (e) { /* storage disabled: behave as an empty store */ }
  for (const name of ITEMS) {
    try { out[name] = JSON.parse(window.localStorage.getItem(PREFIX + name) || "null"); } catch (e) { out[name] = null; }
  }
  if (out.class && !document.cookie.includes(CLASS_COOKIE + "=")) classCookie(out.class);  // joined before the cookie
  return out;
}

// The server reads the class from this cookie in the first script run of every page load (a reload, a page
// that reconnects after a server restart), before this script has said anything.
function classCookie(value) {
  try {
    if (value && value.code && value.token) {
      const v = encodeURIComponent(JSON.stringify({code: value.code, token: value.token}));
      document.cookie = CLASS_COOKIE + "=" + v + "; path=/; max-age=31536000; SameSite=Strict" +
        (location.protocol === "https:" ? "; Secure" : "");
    } else {
      document.cookie = CLASS_COOKIE + "=; path=/; max-age=0; SameSite=Strict";
    }
  } catch (e) { /* cookies disabled: storage still holds the class */ }
}

function writeStore(write) {
  if (!write) return;
  try {
    for (const kind of ["code", "verdict"]) {
      for (const [slug, value] of Object.entries(write[kind] || {})) {
        const key = PREFIX + kind + ":" + slug;
        if (value === null) window.localStorage.removeItem(key);
        else if (window.localStorage.getItem(key) !== value) window.localStorage.setItem(key, value);
      }
    }
    if (write.prefs) window.localStorage.setItem(PREFIX + "prefs", JSON.stringify(write.prefs));
    if (write.solved && write.solved.length) {
      const have = new Set(JSON.parse(window.localStorage.getItem(PREFIX + "solved") || "[]"));
      write.solved.forEach((s) => have.add(s));
      window.localStorage.setItem(PREFIX + "solved", JSON.stringify([...have].sort()));
    }
    for (const name of ITEMS) {
      if (!(name in write)) continue;
      if (write[name] === null) window.localStorage.removeItem(PREFIX + name);
      else window.localStorage.setItem(PREFIX + name, JSON.stringify(write[name]));
      if (name === "class") classCookie(write[name]);
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

// Open each jaxpr listing at its focus line (the first failing requirement's equation) when first shown; a
// listing a jump link is on its way to opens at the jump's line instead (see jumpTo).
function focusListings() {
  applyJump();
  for (const box of document.querySelectorAll(".jaxplay-jaxpr[data-focus]")) {
    if (!box.offsetParent) continue;  // in a tab that is not shown yet
    const key = box.dataset.focus + ":" + box.textContent.length;
    if (box.dataset.focused === key) continue;
    box.dataset.focused = key;
    const line = box.querySelector('[data-line="' + box.dataset.focus + '"]');
    if (line) box.scrollTop = Math.max(0, line.offsetTop - box.clientHeight / 3);
  }
}

// Bring line `line` of listing `box` into view: a third of the way down the listing, and the listing's part
// around it on the screen, clear of the top navigation and of a phone's pinned Run bar. (scrollIntoView with
// "nearest" stopped as soon as the line touched the screen's edge: the line was the last, half-cut row.)
function showLine(box, line) {
  for (let el = line.parentElement; el && el !== box; el = el.parentElement) {
    if (el.tagName === "DETAILS") el.open = true;
  }
  const lineTop = line.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
  box.scrollTop = Math.max(0, lineTop - box.clientHeight / 3);
  const r = line.getBoundingClientRect();
  const b = box.getBoundingClientRect();
  const h = window.innerHeight || document.documentElement.clientHeight;
  const top = 72, bottom = h - pinnedBarHeight() - 12;  // under the navigation, above a pinned bar
  if (r.top >= top && r.bottom <= bottom) return;
  // the listing's top at the screen's top when the line then fits, else the line in the middle of what is free
  const want = (r.bottom - b.top + top <= bottom) ? b.top - top : r.top - (top + bottom) / 2;
  scrollPage(want);
}

// The height a phone's pinned Run bar takes at the screen's bottom (0 where nothing is pinned).
function pinnedBarHeight() {
  const bar = document.querySelector(".st-key-editor-actions");
  if (!bar || getComputedStyle(bar).position !== "fixed") return 0;
  const h = window.innerHeight || document.documentElement.clientHeight;
  return Math.max(0, h - bar.getBoundingClientRect().top);
}

// Scroll the page's own scroller (Streamlit scrolls its main section, not the document) by `dy` pixels.
function scrollPage(dy, behavior) {
  const el = [document.querySelector('[data-testid="stMain"]'),
              document.querySelector('[data-testid="stAppViewContainer"]'), document.scrollingElement]
    .find((e) => e && e.scrollHeight > e.clientHeight + 1 && getComputedStyle(e).overflowY !== "visible")
    || document.scrollingElement;
  el.scrollBy({top: dy, behavior: behavior || "instant"});
}

// After a Run or Submit: scroll its verdict and the case strip under it into view when the verdict arrives (a
// new banner, or new words in it), unless both are on screen already, above a phone's pinned Run bar (the
// strip sat behind it: "in view" had counted the bar's part of the screen). Kept on window: the page may
// rebuild these elements while grading.
const STRIP_WAIT_MS = 1000;
function expectVerdict() {
  const v = document.querySelector(".st-key-verdict");
  window.__jaxplayExpect = {at: Date.now(), el: v, text: v ? v.innerText : null, seen: 0};
}

function showVerdict() {
  const want = window.__jaxplayExpect;
  if (!want) return;
  if (Date.now() - want.at > 600000) { window.__jaxplayExpect = null; return; }
  const v = document.querySelector(".st-key-verdict");
  if (!v || !v.offsetParent || (v === want.el && v.innerText === want.text)) return;
  const strip = document.querySelector(".st-key-case-strip");
  want.seen = want.seen || Date.now();
  if (!(strip && strip.offsetParent) && Date.now() - want.seen < STRIP_WAIT_MS) return;  // drawn a moment later
  window.__jaxplayExpect = null;
  const r = v.getBoundingClientRect();
  const last = strip && strip.offsetParent ? Math.max(r.bottom, strip.getBoundingClientRect().bottom) : r.bottom;
  const h = window.innerHeight || document.documentElement.clientHeight;
  const bottom = h - pinnedBarHeight() - 8;
  if (r.top >= 0 && last <= bottom) return;  // in view already: nothing moves
  const top = 64;  // under the navigation
  const dy = last - r.top <= bottom - top ? (r.top + last) / 2 - (top + bottom) / 2 : r.top - top;
  scrollPage(dy, "smooth");
}

// A jump link: switch to the jaxpr tab (a rerun builds it) and show the line once the listing is there. The
// jump is kept for a few seconds: a listing drawn again meanwhile (a rerun replaces it) is scrolled again,
// and the listing's own focus line (focusListings) never takes its place.
const JUMP_KEEP_MS = 3000, JUMP_WAIT_MS = 15000;
function jumpTo(n) {
  const tab = Array.from(document.querySelectorAll('[role="tab"]'))
    .find((b) => (b.textContent || "").trim() === "jaxpr");
  if (tab && tab.getAttribute("aria-selected") !== "true") tab.click();  // reruns the page to build the tab
  window.__jaxplayJump = {line: String(n), at: Date.now(), box: null, shown: 0};
  applyJump();
  const timer = window.setInterval(() => { if (!applyJump()) window.clearInterval(timer); }, 100);
}

// Show the pending jump's line in the listing on screen; false once there is no jump left to keep.
function applyJump() {
  const j = window.__jaxplayJump;
  if (!j) return false;
  const now = Date.now();
  if ((j.shown && now - j.shown > JUMP_KEEP_MS) || now - j.at > JUMP_WAIT_MS) {
    window.__jaxplayJump = null;
    return false;
  }
  const box = document.querySelector(".jaxplay-jaxpr.mine");
  const line = box && box.offsetParent && box.querySelector('[data-line="' + j.line + '"]');
  if (!line || j.box === box) return true;
  j.box = box;
  j.shown = now;
  box.dataset.focused = box.dataset.focus + ":" + box.textContent.length;  // the jump, not the focus line
  showLine(box, line);
  line.classList.add("flash");
  window.setTimeout(() => line.classList.remove("flash"), 1500);
  return true;
}

// A restart looks like the product. Streamlit says on its app element whether the page has its server
// (data-test-connection-state: CONNECTED, PINGING_SERVER, CONNECTING...; its connection status widget is not
// drawn with the minimal toolbar); while it has not, this notice replaces Streamlit's developer dialog.
const DEV_DIALOG = /Connection error|Is Streamlit still running|Streamlit server is not responding/;
function connectionLost() {
  const app = document.querySelector('[data-testid="stApp"][data-test-connection-state]');
  if (app) return app.getAttribute("data-test-connection-state") !== "CONNECTED";
  return !!document.querySelector('[data-testid="stConnectionStatus"]');
}

function hideDevDialogStyle() {
  if (document.getElementById("jaxplay-no-dev-dialog")) return;
  const style = document.createElement("style");
  style.id = "jaxplay-no-dev-dialog";
  // No dialog of Streamlit's while the page has no server (the notice below says what is going on).
  style.textContent = 'body:has([data-testid="stApp"]:not([data-test-connection-state="CONNECTED"])) ' +
    '[data-testid="stDialog"] { display: none !important; }';
  document.head.appendChild(style);
}

function restartNotice() {
  hideDevDialogStyle();
  const lost = connectionLost();
  for (const dialog of document.querySelectorAll('[data-testid="stDialog"]')) {
    if (!DEV_DIALOG.test(dialog.innerText || "")) continue;
    const close = dialog.querySelector('button[aria-label="Close"]');
    if (close) close.click();  // Streamlit's own dismissal: it stays closed until the connection is back
    dialog.style.display = "none";
  }
  let note = document.getElementById("jaxplay-reconnecting");
  if (lost) {
    window.__jaxplayLostAt = window.__jaxplayLostAt || Date.now();
    watchServer();
  } else {
    window.__jaxplayLostAt = 0;
    window.__jaxplayBackAt = 0;
    if (note) note.remove();
    return;
  }
  if (Date.now() - window.__jaxplayLostAt < 700) return;  // a blip: nothing to say
  if (!note) {
    note = document.createElement("div");
    note.id = "jaxplay-reconnecting";
    note.setAttribute("role", "status");
    note.style.cssText = "position:fixed;top:0.6rem;left:50%;transform:translateX(-50%);z-index:1000100;" +
      "background:#fff3bf;color:#5c3c00;border:1px solid #e8b400;border-radius:0.6rem;padding:0.45rem 1rem;" +
      "font:600 1rem/1.35 sans-serif;box-shadow:0 2px 10px rgba(0,0,0,0.18);max-width:92vw;text-align:center;";
    document.body.appendChild(note);
  }
  const s = Math.round((Date.now() - window.__jaxplayLostAt) / 1000);
  note.textContent = "Reconnecting to the JAX Playground… (" + s + " s) Your code is kept in this browser; " +
    "the page comes back by itself.";
}

// Streamlit asks for its server again at most every 4 s: a page could come back 4 s after the server did.
// While the page has no server this asks every RESTART_POLL_MS itself, and once the server answers and
// Streamlit has still not reconnected RESTART_GRACE_MS later, it loads the page again (the code is in this
// browser; a click no session started a grading for is handed to the new page, as to a reconnected one).
const RESTART_POLL_MS = 500, RESTART_GRACE_MS = 1500;
function watchServer() {
  if (window.__jaxplayWatching) return;
  window.__jaxplayWatching = true;
  const tick = async () => {
    if (!connectionLost()) { window.__jaxplayWatching = false; return; }
    try {
      const ctl = new AbortController();
      const stop = window.setTimeout(() => ctl.abort(), 1000);
      const r = await fetch(new URL("_stcore/health", window.location.href), {cache: "no-store", signal: ctl.signal});
      window.clearTimeout(stop);
      if (r.ok) window.__jaxplayBackAt = window.__jaxplayBackAt || Date.now();
    } catch (e) { window.__jaxplayBackAt = 0; }
    if (window.__jaxplayBackAt && Date.now() - window.__jaxplayBackAt > RESTART_GRACE_MS && connectionLost()) {
      try {
        if (window.__jaxplayLastFlush) window.sessionStorage.setItem(PREFIX + "last-flush", JSON.stringify(window.__jaxplayLastFlush));
        if (window.__jaxplayAck) window.sessionStorage.setItem(PREFIX + "ack", JSON.stringify(window.__jaxplayAck));
      } catch (e) {}
      window.location.reload();
      return;
    }
    window.setTimeout(tick, RESTART_POLL_MS);
  };
  window.setTimeout(tick, RESTART_POLL_MS);
}

// A page loaded again by watchServer: the last click and its acknowledgements, as a reconnected page has them.
try {
  const kept = window.sessionStorage.getItem(PREFIX + "last-flush");
  if (kept && !window.__jaxplayLastFlush) window.__jaxplayLastFlush = JSON.parse(kept);
  const ack = window.sessionStorage.getItem(PREFIX + "ack");
  if (ack && !window.__jaxplayAck) window.__jaxplayAck = JSON.parse(ack);
  window.sessionStorage.removeItem(PREFIX + "last-flush");
  window.sessionStorage.removeItem(PREFIX + "ack");
} catch (e) {}

// A board's freshness line: the seconds since its last good read, counted here while no script run comes.
function freshness() {
  const lost = connectionLost();
  for (const el of document.querySelectorAll(".jaxplay-fresh[data-at]")) {
    const age = (Date.now() - Number(el.dataset.at)) / 1000;
    const staleAfter = Number(el.dataset.staleAfter || 6000) / 1000;
    const text = el.querySelector(".jaxplay-fresh-text");
    if (!text) continue;
    if (!el.dataset.said) el.dataset.said = text.textContent;
    if (lost || age > staleAfter) {
      el.classList.add("jaxplay-stale");
      text.textContent = "last update " + Math.round(age) + " s ago: " +
        (lost ? "reconnecting to the server…" : (el.classList.contains("jaxplay-fresh-stale") ?
          el.dataset.said.replace(/^last update \d+ s ago: /, "") : "waiting for the server…"));
    } else if (text.textContent !== el.dataset.said) {
      el.classList.remove("jaxplay-stale");
      text.textContent = el.dataset.said;
    }
  }
}

export default function ({ data, setStateValue, setTriggerValue }) {
  const d = data || {};
  // Once per server session: a page left open through a server restart reconnects to a new session, which
  // knows nothing of this browser until it is told again.
  if (window.__jaxplayReported !== (d.session || true)) {
    window.__jaxplayReported = d.session || true;
    setStateValue("stored", Object.assign(readStore(), {session: d.session || null}));
    // A click on one of the bridge's buttons made on the page of the old session (the server restarted, and
    // this page was still drawn by the old session when it was clicked) that no session started a task for: it
    // is this session's to run. One whose task started is acknowledged by the writer (``ack``), never resent.
    const last = window.__jaxplayLastFlush;
    const ack = window.__jaxplayAck || {};
    if (last && last.state.session !== (d.session || null) && !(ack.seqs || []).includes(last.state.seq)
        && Date.now() - last.at < (d.retry_click_s || 0) * 1000) {  // older: not run by another session
      flushSeq += 1;
      const state = Object.assign({}, last.state, {seq: Date.now() * 1000 + (flushSeq % 1000),
                                                   session: d.session || null});
      window.__jaxplayLastFlush = {state: state, at: last.at};
      setStateValue("flushed", state);
    }
  }
  const editorKey = d.editor_key;
  const buttonKeys = d.button_keys || [];

  function flush(button) {
    const found = findEditor(editorKey);
    if (!found) return;
    flushSeq += 1;
    const code = found.editor.getValue();
    const state = {code: code, seq: Date.now() * 1000 + (flushSeq % 1000), slug: d.slug, button: button,
                   session: d.session || null};
    window.__jaxplayLastFlush = {state: state, at: Date.now()};
    setStateValue("flushed", state);
    if (d.slug) { try { window.localStorage.setItem(PREFIX + "code:" + d.slug, code); } catch (e) {} }
  }

  function onClick(ev) {
    const t = ev.target;
    if (!t || !t.closest) return;
    const jump = t.closest("a[data-jaxpr-line]");
    if (jump) { ev.preventDefault(); jumpTo(jump.dataset.jaxprLine); return; }
    for (const k of buttonKeys) {
      const box = t.closest(".st-key-" + k);
      if (box && t.closest("button") && !t.closest("button").disabled) {
        if ((d.verdict_keys || []).includes(k)) expectVerdict();
        flush(k);
        return;
      }
    }
  }
  document.addEventListener("click", onClick, true);

  let hooked = null;
  function onKey(ev) {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") {
      ev.preventDefault();
      ev.stopImmediatePropagation();
      const found = findEditor(editorKey);
      if (found) {
        expectVerdict();
        // As a click on Run: the editor's text as state, handed out again until a grading starts (a trigger
        // alone is lost when the script run that receives it is cut off by another rerun)
        if (buttonKeys.length) flush(buttonKeys[0]);
        setTriggerValue("action", {kind: "run", code: found.editor.getValue(), at: Date.now()});
      }
    }
  }
  function onChange() {
    const found = findEditor(editorKey);
    if (found && d.slug) {
      try { window.localStorage.setItem(PREFIX + "code:" + d.slug, found.editor.getValue()); } catch (e) {}
    }
  }
  const liveCompletion = d.live_completion === true;
  function applyOptions(found) {
    try {
      if (found.editor.getOption("enableLiveAutocompletion") !== liveCompletion) {
        found.editor.setOption("enableLiveAutocompletion", liveCompletion);
      }
    } catch (e) {}
  }
  const timer = window.setInterval(() => {
    restartNotice();
    freshness();
    focusListings();
    showVerdict();
    const found = findEditor(editorKey);
    if (found) applyOptions(found);  // every tick: a re-rendered editor may have put the component's default back
    if (!found || (hooked && hooked.editor === found.editor)) return;
    if (hooked) unhook();
    styleEditor(found);
    installBrackets(found.editor);
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

_WRITER_JS = _JS.split("function findEditor")[0] + """
export default function ({ data }) {
  const d = data || {};
  writeStore(d.write);
  if (d.ack) window.__jaxplayAck = d.ack;  // the clicks whose tasks this session started (see the bridge)
}
"""

_component = st.components.v2.component("jaxplay_browser_bridge", html="<span></span>", js=_JS)
_writer = st.components.v2.component("jaxplay_browser_writer", html="<span></span>", js=_WRITER_JS)


ITEMS = ("class", "teaching", "inflight")
"""Values kept whole as JSON (the ``ITEMS`` of the script above): the class this browser has joined, the
classes it teaches (``pages/views/class_bar.py``, ``pages/teacher_page.py``) and the Runs and Submits it
started and has no verdict of yet (``pages/problem.py``: a page that reconnects asks what became of them)."""


def _noop() -> None:
    pass


RETRY_CLICK_S = 10.0
"""How long a click handed to a script run that was stopped before its grading started is handed out again
(and how long the browser resends an unacknowledged click to a new server session)."""


def bridge(*, slug: str | None = None, editor_key: str | None = None, button_keys: tuple[str, ...] = (),
           live_completion: bool = False) -> Any:
    """Mount the bridge; returns the component result (``stored``, ``flushed`` state; ``action`` trigger).
    ``button_keys``: Run, Submit, then any other button whose click must carry the editor's text; the verdict
    is brought into view after the first two."""
    ctx = get_script_run_ctx()
    with st.container(key="jaxplay-bridge-box"):  # hidden by pages/views/layout.py: it takes no room
        return _component(key="jaxplay_bridge",
                          data={"slug": slug, "editor_key": editor_key, "button_keys": list(button_keys),
                                "session": ctx.session_id if ctx is not None else None,
                                "verdict_keys": list(button_keys[:2]), "retry_click_s": RETRY_CLICK_S,
                                "live_completion": bool(live_completion)},
                          height=0, on_stored_change=_noop, on_flushed_change=_noop, on_action_change=_noop)


def _fresh(slug: str, flushed: Any) -> bool:
    """Whether ``flushed`` is this problem's and not yet used; marks it used.

    A script run can be stopped at any Streamlit call by a rerun already waiting (a session state read
    included), so a click handed out once may never have started its grading: the run that took it was
    stopped between ``new_click`` and the grading's start, and the next run sees no button press. Such a click
    is handed out again (for ``RETRY_CLICK_S``) until a grading has started since; that was the lost first
    Run or Submit on a fresh server, where the first page's own reruns are still arriving at the click."""
    if not isinstance(flushed, dict) or flushed.get("slug") != slug or not isinstance(flushed.get("code"), str):
        return False
    used = st.session_state.setdefault("jaxplay_flush_used", {})
    mark = used.get(slug)
    if isinstance(mark, tuple) and mark[0] == flushed.get("seq"):
        if _started_since(slug, mark[1]) or time.monotonic() - mark[1] > RETRY_CLICK_S:
            return False
        return True  # (the mark keeps its first time)
    used[slug] = (flushed.get("seq"), time.monotonic())
    return True


def _started_since(slug: str, since: float) -> bool:
    """Whether this session has a task started at or after ``since`` (or one under way: no second): a grading,
    a custom input's run or a cost measurement, whichever button the click was on."""
    from pages.services import runs
    if runs.current() is not None:
        return True
    if any(getattr(runs.current_background(kind), "slug", None) == slug for kind in runs.BACKGROUND):
        return True
    for kind in runs.LAST_KINDS:
        task = runs.last(slug, kind)
        if task is not None and not task.restored and task.started >= since - 0.001:
            return True
    return False


def new_click(slug: str, flushed: Any, buttons: tuple[str, ...]) -> tuple[str, str] | None:
    """(button key, editor text) of a click on one of ``buttons`` that the bridge reported and no script run
    has acted on yet, once. A click made in another server session is not this one's: a page left open
    through a server restart sends its last state again when it reconnects, and its last Run must not run
    (and be recorded) a second time."""
    ctx = get_script_run_ctx()
    if isinstance(flushed, dict) and flushed.get("session") and ctx is not None and \
            flushed.get("session") != ctx.session_id:
        return None
    if isinstance(flushed, dict) and flushed.get("button") in buttons and _fresh(slug, flushed):
        return flushed["button"], flushed["code"]
    return None


def write(changes: dict[str, Any]) -> None:
    """Write ``changes`` (``code``/``verdict``: slug -> text or None to forget; ``solved``; ``prefs``; an item of
    ``ITEMS``: its JSON value, None to forget) to this
    browser's storage. Mounted at the end of each script run, so what the run decided (a verdict drawn in
    the click's own run, a solved mark) is saved without another rerun."""
    with st.container(key="jaxplay-writer-box"):
        _writer(key="jaxplay_writer", data={"write": changes, "ack": {"seqs": started_clicks()}}, height=0)


def started_clicks() -> list[int]:
    """The sequence numbers of the bridge's clicks whose tasks this session started: the browser keeps them,
    so that after a server restart it hands the new session only a click no session acted on."""
    used = st.session_state.get("jaxplay_flush_used") or {}
    return [mark[0] for slug, mark in used.items()
            if isinstance(mark, tuple) and isinstance(mark[0], int) and _started_since(slug, mark[1])]
