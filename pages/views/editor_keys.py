"""Closing brackets typed in the editor land where the learner means them (issue 32).

Ace closes ``(``, ``[`` and ``{`` itself, and skips over its own closer when the learner types it, but only
while both sit on the line where the opener was typed. A learner typing a dict across lines (``d = {``,
Enter, ``"a": 1,``, Enter, ``}``) got a second ``}``, the first one left on a line below, and every later
line one level too deep; Python mode never outdents a closer either. This script, run by the browser bridge
(``pages/services/browser_bridge.py``) on each editor it finds, makes a typed closer behave as in VS Code:

- it *overtypes* the closer Ace inserted for the same opener when only whitespace lies between them, on the
  same line or on a later one (the blank line the cursor was on goes, the closer is put at the opener's
  line's indentation, the cursor after it);
- typed at the start of a line with no such closer, it is outdented to its opener's line's indentation;
- everything else (a closer after text, inside a string or a comment, a mismatched one, a selection,
  several cursors) is Ace's own behaviour.

Enter on a line that holds only indentation (Ace's own, on a blank line) leaves that line empty, as VS Code
does: a learner's blank lines never carry trailing spaces into the code that is graded and saved.

Only closers Ace inserted itself are overtyped (tracked by anchors, which follow edits): a closer the learner
typed, or one in loaded code, is never eaten. Enter still never takes a completion: nothing here touches it.
"""
from __future__ import annotations

JS = r"""
const JP_CLOSERS = {")": "(", "]": "[", "}": "{"};
const JP_OPENERS = {"(": ")", "[": "]", "{": "}"};

function jpIndent(text) { return (text.match(/^[ \t]*/) || [""])[0]; }

// The innermost bracket opened before (row, column) and not closed before it; brackets in strings and
// comments do not count (only Ace's paren tokens are read).
function jpOpenerBefore(session, row, column) {
  let depth = 0;
  for (let r = row; r >= 0 && r > row - 2000; r--) {
    const tokens = session.getTokens(r);
    const starts = [];
    let x = 0;
    for (const t of tokens) { starts.push(x); x += t.value.length; }
    for (let i = tokens.length - 1; i >= 0; i--) {
      const t = tokens[i];
      if (!/paren/.test(t.type || "")) continue;
      for (let j = t.value.length - 1; j >= 0; j--) {
        const col = starts[i] + j;
        if (r === row && col >= column) continue;
        const ch = t.value[j];
        if (ch in JP_CLOSERS) depth += 1;
        else if (ch in JP_OPENERS) {
          if (depth === 0) return {row: r, column: col, ch: ch};
          depth -= 1;
        }
      }
    }
  }
  return null;
}

// The first character after (row, column) that is not whitespace, within a few lines.
function jpNextVisible(session, row, column) {
  const last = Math.min(session.getLength() - 1, row + 200);
  for (let r = row; r <= last; r++) {
    const line = session.getLine(r);
    const from = r === row ? column : 0;
    const m = line.slice(from).match(/\S/);
    if (m) return {row: r, column: from + m.index, ch: m[0]};
  }
  return null;
}

function installBrackets(editor) {
  if (!editor || editor.__jaxplayBrackets) return;
  editor.__jaxplayBrackets = true;
  let auto = [];  // anchors on the closers Ace inserted itself

  function liveAnchors(session) {
    auto = auto.filter((a) => {
      const p = a.getPosition();
      const keep = a.document === session.getDocument() && (session.getLine(p.row).charAt(p.column) in JP_CLOSERS);
      if (!keep) { try { a.detach(); } catch (e) {} }
      return keep;
    });
    return auto;
  }

  function autoAt(session, pos) {
    return liveAnchors(session).find((a) => {
      const p = a.getPosition();
      return p.row === pos.row && p.column === pos.column;
    });
  }

  function sameOpener(a, b) { return a && b && a.row === b.row && a.column === b.column; }

  // Handle a typed closer c; false leaves it to Ace.
  function close(c) {
    const session = editor.getSession();
    const Range = editor.getSelectionRange().constructor;
    const cur = editor.getCursorPosition();
    const line = session.getLine(cur.row);
    const open = jpOpenerBefore(session, cur.row, cur.column);
    if (!open || open.ch !== JP_CLOSERS[c]) return false;
    if (cur.column > 0) {  // inside a string or a comment: Ace's own behaviour
      const left = session.getTokenAt(cur.row, cur.column), right = session.getTokenAt(cur.row, cur.column + 1);
      if (left && /comment/.test(left.type || "")) return false;
      if (left && right && left.index === right.index && /string/.test(left.type || "")) return false;
    }
    const next = jpNextVisible(session, cur.row, cur.column);
    const atStart = line.slice(0, cur.column).trim() === "";
    const overtype = next && next.ch === c && autoAt(session, next) &&
      sameOpener(jpOpenerBefore(session, next.row, next.column), open) &&
      (atStart || (next.row === cur.row));
    if (!overtype) {
      if (!atStart || cur.row === open.row) return false;
      const indent = jpIndent(session.getLine(open.row));
      session.replace(new Range(cur.row, 0, cur.row, cur.column), indent);
      editor.clearSelection();
      editor.moveCursorTo(cur.row, indent.length);
      editor.insert(c);
      return true;
    }
    if (!atStart) {  // right before it on this line: step over it
      editor.moveCursorTo(next.row, next.column + 1);
      editor.clearSelection();
      return true;
    }
    const indent = cur.row === open.row ? null : jpIndent(session.getLine(open.row));
    const doc = session.getDocument();
    const mark = doc.createAnchor(next.row, next.column);
    if (next.row !== cur.row) {  // the blank line the cursor is on goes; the closer below stays
      const prev = session.getLine(cur.row - 1);
      session.remove(new Range(cur.row - 1, prev.length, cur.row, line.length));
    }
    let p = mark.getPosition();
    if (indent !== null) {
      const have = jpIndent(session.getLine(p.row));
      if (p.column === have.length && have !== indent) session.replace(new Range(p.row, 0, p.row, have.length), indent);
      p = mark.getPosition();
    }
    mark.detach();
    editor.clearSelection();
    editor.moveCursorTo(p.row, p.column + 1);
    return true;
  }

  function track(session, row, column) {
    auto.push(session.getDocument().createAnchor(row, column));
    if (auto.length > 200) { try { auto.shift().detach(); } catch (err) {} }
  }

  // After Enter: the line left behind holds only the indentation Ace gave it (Enter on an indented blank
  // line): it is emptied, so no blank line keeps trailing spaces; a line with text is never touched.
  function trimLeft(session, before, cur) {
    if (cur.row !== before.row + 1) return;
    const left = session.getLine(before.row);
    if (left.length && left.trim() === "") {
      const Range = editor.getSelectionRange().constructor;
      session.remove(new Range(before.row, 0, before.row, left.length));
    }
  }

  // After Enter: a "{" typed at a line's end gets its "}" only now, on the line below (Ace's Enter between
  // braces): track it. A line that closed brackets opened on earlier lines ends a statement that began on
  // the opener's line: the new line takes that line's indentation (one level more after a ":").
  function afterEnter(session, before, cur) {
    const Range = editor.getSelectionRange().constructor;
    if (session.getLength() === before.lines + 2 && cur.row === before.row + 1) {
      const below = session.getLine(cur.row + 1);
      const at = below.search(/\S/);
      if (at >= 0 && below.charAt(at) === "}" && below.trim() === "}") track(session, cur.row + 1, at);
      return;
    }
    if (session.getLength() !== before.lines + 1 || cur.row !== before.row + 1) return;
    const line = session.getLine(cur.row);
    if (line.slice(0, cur.column).trim() !== "" || jpOpenerBefore(session, cur.row, 0)) return;
    const prev = session.getLine(cur.row - 1);
    let start = null;
    for (let col = 0; col < prev.length && start === null; col++) {
      if (!(prev.charAt(col) in JP_CLOSERS)) continue;
      const token = session.getTokenAt(cur.row - 1, col + 1);
      if (!token || !/paren/.test(token.type || "")) continue;
      const open = jpOpenerBefore(session, cur.row - 1, col);
      if (open && open.row < cur.row - 1) start = open.row;
    }
    if (start === null) return;
    let indent = jpIndent(session.getLine(start));
    if (/:\s*(#.*)?$/.test(prev)) indent += session.getTabString();
    if (indent === line.slice(0, cur.column)) return;
    session.replace(new Range(cur.row, 0, cur.row, cur.column), indent);
    editor.clearSelection();
    editor.moveCursorTo(cur.row, indent.length);
  }

  editor.commands.on("exec", (e) => {
    if (!e || !e.command || e.command.name !== "insertstring" || typeof e.args !== "string") return;
    const session = editor.getSession();
    if (e.args in JP_OPENERS || e.args === "\n" || e.args === "\r\n") {
      const cur = editor.getCursorPosition();
      e.__jpBefore = {row: cur.row, column: cur.column, length: session.getLine(cur.row).length,
                      lines: session.getLength()};
      return;
    }
    if (!(e.args in JP_CLOSERS) || !editor.selection.isEmpty() || editor.inMultiSelectMode) return;
    let handled = false;
    try { handled = close(e.args); } catch (err) { handled = false; }
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  });
  editor.commands.on("afterExec", (e) => {
    const before = e && e.__jpBefore;
    if (!before) return;
    const session = editor.getSession();
    const cur = editor.getCursorPosition();
    const line = session.getLine(cur.row);
    if (!(e.args in JP_OPENERS)) {
      try { afterEnter(session, before, cur); } catch (err) {}
      try { trimLeft(session, before, editor.getCursorPosition()); } catch (err) {}
      return;
    }
    // Ace paired the opener: the line grew by two and its closer sits right after the cursor
    if (cur.row === before.row && line.length === before.length + 2 && line.charAt(cur.column) === JP_OPENERS[e.args]) {
      track(session, cur.row, cur.column);
    }
  });
}
"""
"""Defines ``installBrackets(editor)``; the bridge calls it on each Ace editor it hooks."""
