"""The app's few style rules, in one place: room for the editor and the verdict on one screen, display
math that scrolls visibly when it is wider than its column, the jaxpr listing, and a phone layout where
everything stacks and nothing covers Run."""
from __future__ import annotations

import streamlit as st

CSS = """
[data-testid='stMainBlockContainer'] { padding-top: 4.3rem; padding-bottom: 2rem; }  /* clears the top navigation */
.st-key-jaxplay-bridge-box, .st-key-jaxplay-writer-box { display: none; }
h1 { font-size: 2.1rem !important; padding: 0.1rem 0 0.2rem !important; }

/* Display math: never cut off. A formula wider than its column scrolls, with a scrollbar that shows. */
.katex-display > .katex { font-size: 1.1em; }  /* a touch smaller than Streamlit's 1.21em: the widest fit at 1400 px */
.katex-display { overflow-x: auto; overflow-y: hidden; padding: 0.15rem 0 0.45rem; margin: 0.6rem 0; }
.katex-display::-webkit-scrollbar, .jaxplay-jaxpr::-webkit-scrollbar { height: 9px; width: 9px; }
.katex-display::-webkit-scrollbar-thumb, .jaxplay-jaxpr::-webkit-scrollbar-thumb {
  background: rgba(128, 128, 128, 0.6); border-radius: 5px; }
.katex-display::-webkit-scrollbar-track { background: rgba(128, 128, 128, 0.14); border-radius: 5px; }

/* The jaxpr listing: numbered lines, evidence highlighted, sub-programs folded (details elements). No angle brackets in here: the sanitizer drops a style holding one. */
.jaxplay-jaxpr { position: relative; font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
  font-size: 0.8rem; line-height: 1.45; overflow: auto; max-height: 34rem; padding: 0.4rem 0;
  border: 1px solid rgba(128, 128, 128, 0.35); border-radius: 0.5rem; }
.jaxplay-jaxpr .ln { white-space: pre; padding: 0 0.6rem; }
.jaxplay-jaxpr .no { display: inline-block; width: 3.2em; color: rgba(128, 128, 128, 0.9); user-select: none;
  text-align: right; margin-right: 0.4em; }
.jaxplay-jaxpr .fold { display: inline-block; width: 1em; color: rgba(128, 128, 128, 0.9); user-select: none; }
.jaxplay-jaxpr details > summary { list-style: none; cursor: pointer; }
.jaxplay-jaxpr details > summary::-webkit-details-marker { display: none; }
.jaxplay-jaxpr details[open] > summary .fold::before { content: "▾"; }
.jaxplay-jaxpr details:not([open]) > summary .fold::before { content: "▸"; }
.jaxplay-jaxpr .fail { background: rgba(255, 75, 75, 0.18); }
.jaxplay-jaxpr .pass { background: rgba(33, 195, 84, 0.14); }
.jaxplay-jaxpr .why { font-weight: 600; white-space: pre-wrap; }
.jaxplay-jaxpr .fail .why { color: #e5484d; }
.jaxplay-jaxpr .pass .why { color: #2f9e44; }
.jaxplay-jaxpr .flash { outline: 2px solid #ff8c42; }
.jaxplay-jumps a { text-decoration: none; border-bottom: 1px dotted; cursor: pointer; }
.jaxplay-jumps-where { opacity: 0.7; font-size: 0.85em; }

/* Custom input's JSON: a code font, rows of numbers on one line each. */
[class*='st-key-custom-json'] textarea { font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
  font-size: 0.82rem; white-space: pre; }

/* A phone: the columns stack (Streamlit does that), except Run, Submit, Reset and the settings, which stay in
   one row pinned to the bottom of the screen (issue 32: Run started 1,119 px down, below the statement and
   the editor), the page leaving room for it at its end; the statement is a box of its own, about half a
   screen tall, so the editor is reached without scrolling past the whole statement. */
@media (max-width: 640px) {
  [data-testid='stMainBlockContainer'] { padding-left: 0.8rem; padding-right: 0.8rem; padding-top: 4rem;
    padding-bottom: 5.5rem; }
  .st-key-editor-actions { position: fixed !important; left: 0; right: 0; bottom: 0; z-index: 990;
    padding: 0.45rem 0.8rem calc(0.45rem + env(safe-area-inset-bottom)) !important;
    background: rgba(128, 128, 128, 0.22); backdrop-filter: blur(10px); -webkit-backdrop-filter: blur(10px);
    border-top: 1px solid rgba(128, 128, 128, 0.4); }
  .st-key-statement-pane, [data-testid='stLayoutWrapper']:has(> .st-key-statement-pane) {
    height: auto !important; max-height: 52vh !important; overflow-y: auto !important;
    border-bottom: 1px solid rgba(128, 128, 128, 0.35); }
  .st-key-editor-actions [data-testid='stHorizontalBlock'] { flex-wrap: nowrap !important; gap: 0.35rem !important; }
  .st-key-editor-actions [data-testid='stColumn'] { min-width: 0 !important; width: auto !important;
    flex: 1 1 0 !important; }
  .st-key-editor-actions button { padding-left: 0.3rem; padding-right: 0.3rem; }
  .jaxplay-jaxpr { max-height: 24rem; font-size: 0.72rem; }
}
"""


def style() -> None:
    """Add the style rules to the page (once per script run)."""
    st.html(f"<style>{CSS}</style>")


PRESENTER_MAX_SCALE = 1.7
"""The largest the presenter layout draws the page's text, relative to Streamlit's own (at the largest font)."""


def presenter(font_size: int) -> None:
    """The presenter layout's scale: everything a class reads (the verdict, the statement, the tables' captions,
    the jaxpr, the tabs) grows with the editor's font setting, not the editor alone. Streamlit sizes its text
    in rem, so the root font size carries it; 14 px, the default editor font, is Streamlit's own size."""
    scale = max(1.0, min(PRESENTER_MAX_SCALE, font_size / 14))
    st.html(f"<style>html {{ font-size: {scale * 100:.0f}%; }} .jaxplay-jaxpr {{ font-size: 0.85rem; }}</style>")
