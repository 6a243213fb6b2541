/**
 * The studio's page: HTML, CSS and JavaScript served as static strings (no framework, no build
 * step, nothing fetched from elsewhere: it works offline).
 *
 * The script builds every element with createElement and textContent, never innerHTML: ids, keys,
 * texts and schema contents are data and are shown as text, control and bidirectional characters
 * made visible. Links are fragments built with encodeURIComponent. The Content-Security-Policy
 * (server.ts) allows this origin's script and stylesheet only.
 *
 * Everything it shows is bounded, whatever a stored document holds: long strings (and chat texts)
 * are cut at MAX_STRING with a "show all" button, containers show MAX_ITEMS children at a time and a
 * collapsed container's children are built only when it is opened, and the raw stored JSON is built
 * when it is first shown, pretty-printed up to RAW_SHOWN characters (indentation stops deepening at
 * RAW_INDENT_DEPTH levels, so its size stays linear in the stored text).
 */

export const STUDIO_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>statebag studio</title>
<link rel="stylesheet" href="app.css">
<script src="app.js" defer></script>
</head>
<body>
<header class="top">
  <a class="brand" href="#/sessions">statebag studio</a>
  <nav><a href="#/sessions" data-testid="nav-sessions">Sessions</a><a href="#/types" data-testid="nav-types">Types</a></nav>
  <span id="store" class="store"></span>
</header>
<main id="main"><p class="dim">Loading…</p></main>
<noscript>The studio needs JavaScript (served by this local process only).</noscript>
</body>
</html>
`;

export const STUDIO_CSS = `
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; max-width: 100%; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; background: #f6f7f9; overflow-wrap: anywhere; }
a { color: #1f5fbf; text-decoration: none; }
a:hover { text-decoration: underline; }
.top { display: flex; gap: 18px; align-items: center; padding: 10px 18px; background: #1d2330; color: #fff; flex-wrap: wrap; }
.top a { color: #fff; }
.top nav { display: flex; gap: 14px; }
.brand { font-weight: 700; letter-spacing: .2px; }
.store { margin-left: auto; color: #b9c2d3; font-size: 12px; min-width: 0; }
main { padding: 16px 18px 48px; max-width: 1400px; margin: 0 auto; min-width: 0; }
h1 { font-size: 20px; margin: 4px 0 10px; }
h2 { font-size: 16px; margin: 22px 0 8px; }
h3 { font-size: 14px; margin: 14px 0 6px; }
.dim { color: #6b7385; }
.mono, code, pre, .tree { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
.card { background: #fff; border: 1px solid #dde1e8; border-radius: 8px; padding: 12px 14px; margin: 10px 0; min-width: 0; }
.row { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; min-width: 0; }
.grow { flex: 1 1 auto; min-width: 0; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; align-items: end; margin-bottom: 10px; }
.filters label { display: flex; flex-direction: column; font-size: 12px; color: #4a5263; }
input, select, button { font: inherit; padding: 5px 8px; border: 1px solid #c5cad4; border-radius: 6px; background: #fff; }
button { cursor: pointer; background: #eef1f6; }
button.primary { background: #1f5fbf; color: #fff; border-color: #1f5fbf; }
button:disabled { opacity: .5; cursor: default; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; background: #fff; border: 1px solid #dde1e8; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #eceef2; vertical-align: top; overflow-wrap: anywhere; word-break: break-word; }
th { background: #f0f2f6; font-weight: 600; font-size: 12px; color: #4a5263; }
.id { font-family: ui-monospace, Menlo, Consolas, monospace; unicode-bidi: isolate; }
.chip { display: inline-block; padding: 1px 7px; border-radius: 10px; background: #eef1f6; margin: 1px 3px 1px 0; font-size: 12px; max-width: 100%; overflow-wrap: anywhere; unicode-bidi: isolate; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.b-valid, .b-compatible { background: #dcf3e3; color: #17602f; }
.b-needs-migration { background: #fff1cc; color: #7a5300; }
.b-invalid, .b-breaking { background: #fde0e0; color: #9b1c1c; }
.b-unchecked, .b-undecided { background: #e8e4fb; color: #4b3a9c; }
.problem { outline: 2px solid #d33; background: #fff0f0; border-radius: 3px; }
.problems li { margin: 4px 0; }
.problems .ptr { font-family: ui-monospace, Menlo, monospace; font-weight: 600; }
.tree { line-height: 1.5; min-width: 0; }
.tree details { margin-left: 14px; }
.tree summary { cursor: pointer; color: #4a5263; }
.tree .kv { margin-left: 14px; min-width: 0; }
.tree .k { color: #7a3e9d; }
.tree .s { color: #0b6b3a; white-space: pre-wrap; }
.tree .n { color: #1f5fbf; }
.tree .l { color: #9b4d00; }
.tree .added { background: #e3f7e8; }
.tree .removed { background: #fde7e7; text-decoration: line-through; }
.tree .changed { background: #fff3cf; }
.chat { display: flex; flex-direction: column; gap: 8px; }
.msg { border-radius: 10px; padding: 8px 12px; max-width: 85%; background: #fff; border: 1px solid #dde1e8; min-width: 0; }
.msg[data-role="user"] { align-self: flex-end; background: #e6f0ff; border-color: #c7dafc; }
.msg[data-role="system"] { align-self: center; background: #f2f2f2; font-size: 13px; }
.msg[data-role="tool"] { background: #f5f1ff; }
.msg .who { font-size: 11px; color: #6b7385; margin-bottom: 3px; }
.msg .text { white-space: pre-wrap; }
.part { margin: 5px 0; padding: 5px 8px; border-left: 3px solid #c5cad4; background: #fafbfc; border-radius: 3px; min-width: 0; }
.part .label { font-size: 11px; font-weight: 700; color: #4a5263; }
.part.reasoning { border-color: #a48be0; font-style: italic; }
.part.call { border-color: #1f5fbf; }
.part.result { border-color: #17602f; }
.part.approval { border-color: #d08a00; }
.part.unknown { border-color: #9b1c1c; }
.cols { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 10px; }
.more { font-size: 12px; padding: 1px 6px; margin-left: 6px; }
.pager { display: flex; gap: 8px; align-items: center; margin-top: 10px; }
.notice { padding: 8px 12px; border-radius: 6px; background: #fff8e1; border: 1px solid #f0d98a; margin: 8px 0; }
.error { padding: 8px 12px; border-radius: 6px; background: #fde0e0; border: 1px solid #f2b2b2; margin: 8px 0; }
`;

/** The page's script: plain JavaScript (ES2020), no template literals (it sits in one). */
export const STUDIO_JS = String.raw`"use strict";
(function () {
  var main = document.getElementById("main");
  var INFO = null;
  var MAX_STRING = 400, MAX_ITEMS = 100, RAW_SHOWN = 200000, RAW_INDENT_DEPTH = 40;
  var UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;

  /** A string as text to show: invisible and direction-changing characters made visible. */
  function show(s) {
    return String(s).replace(UNSAFE, function (c) { return "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"); });
  }
  function cut(s, n) { s = show(s); return s.length > n ? s.slice(0, n) + "… (" + s.length + " chars)" : s; }

  /** A long text as an element: its first MAX_STRING characters, and a button that shows all of it. */
  function longText(cls, text, testid) {
    var s = show(text);
    var el = h("div", { class: cls, "data-testid": testid }, s.length > MAX_STRING ? s.slice(0, MAX_STRING) + "…" : s);
    if (s.length > MAX_STRING) {
      var btn = h("button", { class: "more", "data-testid": "show-all", onclick: function () { el.textContent = s; } }, "show all " + s.length + " chars");
      el.appendChild(btn);
    }
    return el;
  }

  /** An element: props are set as properties or attributes chosen here, children appended as text or nodes. */
  function h(tag, props, children) {
    var el = document.createElement(tag);
    if (props) {
      for (var k in props) {
        var v = props[k];
        if (v === undefined || v === null || v === false) continue;
        if (k === "class") el.className = v;
        else if (k === "text") el.textContent = v;
        else if (k === "onclick") el.addEventListener("click", v);
        else if (k === "onchange") el.addEventListener("change", v);
        else if (k === "open") el.open = true;
        else if (k === "value") el.value = v;
        else if (k === "style") el.style.cssText = v; // CSSOM: allowed by the CSP, a style attribute is not
        else el.setAttribute(k, String(v));
      }
    }
    if (children !== undefined) append(el, children);
    return el;
  }
  function append(el, children) {
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (c) {
      if (c === undefined || c === null || c === false) return;
      el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    });
    return el;
  }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }
  function link(route, params, text, testid) {
    return h("a", { href: hashOf(route, params), "data-testid": testid }, text);
  }
  function hashOf(route, params) {
    var q = new URLSearchParams();
    for (var k in params || {}) if (params[k] !== undefined && params[k] !== "" && params[k] !== null) q.set(k, String(params[k]));
    var s = q.toString();
    return "#/" + route + (s ? "?" + s : "");
  }
  function badge(kind, text) { return h("span", { class: "badge b-" + kind, "data-testid": "badge" }, text || kind.replace("-", " ")); }
  function bytes(n) { return n < 1024 ? n + " B" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" : (n / 1048576).toFixed(1) + " MiB"; }
  function segment(k) { return String(k).replace(/~/g, "~0").replace(/\//g, "~1"); }
  function typeLink(type, version) { return link("type", { name: type, v: version }, show(type) + (version ? " v" + version : ""), "type-link"); }

  async function api(path, params, init) {
    var q = new URLSearchParams();
    for (var k in params || {}) if (params[k] !== undefined && params[k] !== "" && params[k] !== null) q.set(k, String(params[k]));
    var s = q.toString();
    var res = await fetch("api/" + path + (s ? "?" + s : ""), Object.assign({ credentials: "same-origin", cache: "no-store" }, init || {}));
    var body = null;
    try { body = await res.json(); } catch (e) { body = null; }
    if (!res.ok) throw new Error((body && body.error) || ("HTTP " + res.status));
    return body;
  }

  function failure(e) { return h("div", { class: "error", "data-testid": "error" }, show(e && e.message ? e.message : e)); }

  // ---- JSON tree ---------------------------------------------------------------------------

  /**
   * A JSON value as a collapsible tree. marks: pointer -> { cls, title }. Nodes under a mark are
   * opened so the mark is visible; big containers and long strings start collapsed.
   */
  function tree(value, pointer, marks, depth) {
    marks = marks || {};
    depth = depth || 0;
    var mark = marks[pointer];
    var wrap;
    if (value !== null && typeof value === "object") {
      var isArr = Array.isArray(value);
      var keys = isArr ? value.map(function (_, i) { return i; }) : Object.keys(value);
      var inside = Object.keys(marks).some(function (p) { return p.indexOf(pointer + "/") === 0; });
      // Measured only near the top: stringifying every level of a deep value is quadratic.
      var open = depth < 1 || inside || (depth < 3 && JSON.stringify(value).length < 2000);
      var d = h("details", { open: open });
      var summary = h("summary", null, isArr ? "[" + keys.length + " items]" : "{" + keys.length + " keys}" + (value.$type !== undefined ? " " + cut(value.$type, 80) + (value.$version !== undefined ? " v" + cut(value.$version, 10) : "") : ""));
      d.appendChild(summary);
      var shown = 0;
      var renderSome = function (from) {
        var end = Math.min(keys.length, from + MAX_ITEMS);
        for (var i = from; i < end; i++) {
          var k = keys[i];
          var child = pointer + "/" + segment(k);
          var row = h("div", { class: "kv" }, [h("span", { class: "k" }, cut(k, 200) + ": ")]);
          row.appendChild(tree(value[k], child, marks, depth + 1));
          d.appendChild(row);
        }
        shown = end;
        if (shown < keys.length) {
          var more = h("button", { class: "more", onclick: function () { d.removeChild(more); renderSome(shown); } }, "show " + Math.min(MAX_ITEMS, keys.length - shown) + " more of " + keys.length);
          d.appendChild(more);
        }
      };
      // A collapsed container's children are built when it is first opened (a deep value costs nothing until read).
      if (open) renderSome(0);
      else d.addEventListener("toggle", function first() { if (d.open) { d.removeEventListener("toggle", first); renderSome(0); } });
      wrap = d;
    } else if (typeof value === "string") {
      var s = show(value);
      wrap = h("span", { class: "s" }, '"' + (s.length > MAX_STRING ? s.slice(0, MAX_STRING) + "…" : s) + '"');
      if (s.length > MAX_STRING) {
        var btn = h("button", { class: "more", onclick: function () { holder.textContent = '"' + s + '"'; } }, "show all " + s.length + " chars");
        var holder = h("span", null, [wrap, btn]);
        wrap = holder;
      }
    } else {
      wrap = h("span", { class: typeof value === "number" ? "n" : "l" }, String(JSON.stringify(value)));
    }
    if (mark) {
      wrap.classList.add(mark.cls);
      if (mark.title) wrap.setAttribute("title", mark.title);
      if (mark.cls === "problem") wrap.setAttribute("data-testid", "problem-node");
      wrap.setAttribute("data-pointer", pointer);
    }
    return wrap;
  }

  // ---- sessions ----------------------------------------------------------------------------

  var TYPES = null;
  async function typeNames() {
    if (!TYPES) TYPES = await api("types");
    return TYPES.items;
  }

  async function viewSessions(params) {
    var f = { q: params.get("q") || "", type: params.get("type") || "", version: params.get("version") || "", validity: params.get("validity") || "", owner: params.get("owner") || "", cursor: params.get("cursor") || "", limit: params.get("limit") || "25" };
    var trail = params.get("trail") ? params.get("trail").split("\n") : [];
    clear(main);
    main.appendChild(h("h1", null, "Sessions"));
    var q = h("input", { type: "search", placeholder: "id or title contains", value: f.q, "data-testid": "search" });
    var type = h("select", { "data-testid": "filter-type" }, [h("option", { value: "" }, "any type")]);
    var version = h("input", { type: "number", min: "1", placeholder: "any", value: f.version, style: "width:6em", "data-testid": "filter-version" });
    var validity = h("select", { "data-testid": "filter-validity" }, ["", "valid", "needs-migration", "invalid", "unchecked"].map(function (v) { return h("option", { value: v }, v ? v.replace("-", " ") : "any validity"); }));
    validity.value = f.validity;
    var owner = h("input", { placeholder: "owner (list)", value: f.owner, "data-testid": "filter-owner" });
    var apply = function () { location.hash = hashOf("sessions", { q: q.value, type: type.value, version: version.value, validity: validity.value, owner: owner.value, limit: f.limit }); };
    var form = h("form", { class: "filters", "data-testid": "filters" }, [
      h("label", null, ["search", q]), h("label", null, ["$type", type]), h("label", null, ["version", version]),
      h("label", null, ["validity", validity]), h("label", null, ["owner", owner]),
      h("button", { type: "submit", class: "primary", "data-testid": "apply" }, "Apply"),
    ]);
    form.addEventListener("submit", function (e) { e.preventDefault(); apply(); });
    main.appendChild(form);
    typeNames().then(function (items) {
      items.filter(function (t) { return t.family === "ProviderState"; }).forEach(function (t) { type.appendChild(h("option", { value: t.type }, show(t.type))); });
      type.value = f.type;
    }, function () {});
    var table = h("table", { "data-testid": "sessions" }, [
      h("colgroup", null, [h("col", { style: "width:24%" }), h("col", { style: "width:16%" }), h("col", { style: "width:12%" }), h("col", { style: "width:8%" }), h("col", { style: "width:7%" }), h("col", { style: "width:21%" }), h("col", { style: "width:12%" })]),
      h("thead", null, h("tr", null, ["id", "owner / title", "updated", "size", "messages", "types", "validity"].map(function (t) { return h("th", null, t); }))),
    ]);
    var tbody = h("tbody");
    table.appendChild(tbody);
    main.appendChild(table);
    var pager = h("div", { class: "pager" });
    main.appendChild(pager);
    var page;
    try {
      page = await api("sessions", { q: f.q, type: f.type, version: f.version, validity: f.validity, owner: f.owner, cursor: f.cursor, limit: f.limit });
    } catch (e) { main.appendChild(failure(e)); return; }
    if (page.items.length === 0) tbody.appendChild(h("tr", null, h("td", { colspan: "7", class: "dim" }, "no sessions on this page match")));
    page.items.forEach(function (r) {
      tbody.appendChild(h("tr", { "data-testid": "session-row" }, [
        h("td", { class: "id" }, link("session", { id: r.id }, cut(r.id, 300), "session-link")),
        h("td", null, [r.owner !== undefined ? h("div", { class: "chip" }, cut(r.owner, 120)) : h("span", { class: "dim" }, "—"), r.title !== undefined ? h("div", null, cut(r.title, 200)) : null]),
        h("td", { class: "dim" }, r.updatedAt ? r.updatedAt.replace("T", " ").replace(/\.\d+Z$/, "Z") : "—"),
        h("td", null, bytes(r.bytes)),
        h("td", null, String(r.messages)),
        h("td", null, r.types.length ? r.types.map(function (t) { return h("span", { class: "chip", title: "key " + show(t.key) }, cut(t.$type, 80) + " v" + t.version); }) : h("span", { class: "dim" }, r.encrypted ? "encrypted" : "—")),
        h("td", null, [badge(r.validity), r.problems ? h("span", { class: "dim" }, " " + r.problems + " problem" + (r.problems === 1 ? "" : "s")) : null]),
      ]));
    });
    var base = { q: f.q, type: f.type, version: f.version, validity: f.validity, owner: f.owner, limit: f.limit };
    if (f.cursor) pager.appendChild(link("sessions", Object.assign({}, base, trail.length > 1 ? { cursor: trail[trail.length - 2], trail: trail.slice(0, -1).join("\n") } : {}), "← previous page", "prev-page"));
    pager.appendChild(h("span", { class: "dim" }, page.items.length + " shown, " + page.scanned + " read from the store"));
    if (page.cursor) pager.appendChild(link("sessions", Object.assign({}, base, { cursor: page.cursor, trail: trail.concat([page.cursor]).join("\n") }), "next page →", "next-page"));
  }

  // ---- one session -------------------------------------------------------------------------

  function contentPart(c, pointer, marks, answers) {
    var mark = marks[pointer];
    var t = c && typeof c === "object" ? c.$type : undefined;
    var el;
    if (t === "text") el = longText("text", c.text, "chat-text");
    else if (t === "reasoning") el = h("div", { class: "part reasoning", "data-testid": "reasoning" }, [h("div", { class: "label" }, "reasoning"), longText("text", c.text || ""), c.protectedData !== undefined ? h("div", { class: "dim" }, "protected data: " + String(c.protectedData).length + " chars") : null]);
    else if (t === "functionCall") el = h("div", { class: "part call", "data-testid": "tool-call" }, [h("div", { class: "label" }, "tool call: " + cut(c.name, 120) + " (" + cut(c.callId, 80) + ")"), c.arguments !== undefined ? tree(c.arguments, pointer + "/arguments", marks, 1) : h("span", { class: "dim" }, "no arguments")]);
    else if (t === "functionResult") el = h("div", { class: "part result", "data-testid": "tool-result" }, [h("div", { class: "label" }, "tool result (" + cut(c.callId, 80) + ")"), tree(c.result, pointer + "/result", marks, 1)]);
    else if (t === "toolApprovalRequest") {
      var answer = answers.get(c.requestId);
      var tc = c.toolCall || {};
      el = h("div", { class: "part approval", "data-testid": "approval" }, [h("div", { class: "label" }, "approval requested: " + cut(tc.name || "?", 120)), answer === undefined ? badge("needs-migration", "pending") : badge(answer ? "valid" : "invalid", answer ? "approved" : "denied"), tc.arguments !== undefined ? tree(tc.arguments, pointer + "/toolCall/arguments", marks, 1) : null]);
    } else if (t === "toolApprovalResponse") el = h("div", { class: "part approval" }, [h("div", { class: "label" }, "approval answered"), badge(c.approved ? "valid" : "invalid", c.approved ? "approved" : "denied"), c.reason ? h("span", null, " " + cut(c.reason, 500)) : null]);
    else if (t === "usage") { var u = c.details || {}; el = h("div", { class: "dim", "data-testid": "usage" }, "usage: " + ["inputTokenCount", "outputTokenCount", "totalTokenCount"].filter(function (k) { return u[k] !== undefined; }).map(function (k) { return k.replace("TokenCount", "") + " " + cut(u[k], 20); }).join(", ")); }
    else if (t === "error") el = h("div", { class: "part unknown" }, [h("div", { class: "label" }, "error"), longText("", c.message)]);
    else el = h("div", { class: "part unknown", "data-testid": "unknown-content" }, [h("div", { class: "label" }, "content " + cut(t === undefined ? "(no $type)" : t, 80)), tree(c, pointer, marks, 1)]);
    if (mark) { el.classList.add("problem"); el.setAttribute("title", mark.title || ""); el.setAttribute("data-testid", "problem-node"); }
    return el;
  }

  function chat(value, pointer, marks) {
    var answers = new Map();
    value.messages.forEach(function (m) { (m && Array.isArray(m.contents) ? m.contents : []).forEach(function (c) { if (c && c.$type === "toolApprovalResponse") answers.set(c.requestId, !!c.approved); }); });
    var box = h("div", { class: "chat", "data-testid": "chat" });
    value.messages.forEach(function (m, i) {
      var mp = pointer + "/messages/" + i;
      if (!m || typeof m !== "object") { box.appendChild(h("div", { class: "msg problem" }, tree(m, mp, marks, 1))); return; }
      var who = [cut(m.role === undefined ? "(no role)" : m.role, 40), m.authorName ? cut(m.authorName, 80) : null, m.createdAt ? cut(m.createdAt, 40) : null].filter(Boolean).join(" · ");
      var el = h("div", { class: "msg", "data-role": typeof m.role === "string" ? m.role.slice(0, 20) : "unknown", "data-testid": "message" }, [h("div", { class: "who" }, who)]);
      if (Array.isArray(m.contents)) m.contents.forEach(function (c, j) { el.appendChild(contentPart(c, mp + "/contents/" + j, marks, answers)); });
      else el.appendChild(tree(m.contents, mp + "/contents", marks, 1));
      // A problem in the message itself (its role, author, ...) marks the whole message.
      var own = Object.keys(marks).filter(function (p) { return p === mp || (p.indexOf(mp + "/") === 0 && p.indexOf(mp + "/contents/") !== 0); });
      if (own.length) { el.classList.add("problem"); el.setAttribute("data-testid", "problem-node"); el.setAttribute("data-pointer", own[0]); el.setAttribute("title", own.map(function (p) { return marks[p].title || p; }).join("\n")); }
      box.appendChild(el);
    });
    return box;
  }

  async function viewSession(params) {
    var id = params.get("id") || "";
    clear(main);
    var s;
    try { s = await api("session", { id: id }); } catch (e) { main.appendChild(failure(e)); return; }
    var marks = {};
    s.problems.forEach(function (p) { marks[p.pointer] = { cls: "problem", title: show(p.message) }; });
    main.appendChild(h("h1", { class: "id", "data-testid": "session-id" }, "session " + cut(s.id, 500)));
    main.appendChild(h("div", { class: "row" }, [
      badge(s.validity), h("span", null, "revision " + s.revision), h("span", { class: "dim" }, bytes(s.bytes)),
      s.owner !== undefined ? h("span", { class: "chip" }, "owner " + cut(s.owner, 120)) : null,
      s.title !== undefined ? h("span", null, cut(s.title, 200)) : null,
      s.updatedAt ? h("span", { class: "dim" }, "updated " + s.updatedAt) : null,
      s.encrypted ? h("span", { class: "chip" }, "decrypted with the keyring") : null,
      s.validity === "needs-migration" || s.state.some(function (x) { return x.status === "needs-migration"; }) ? link("preview", { id: s.id }, "Migration preview →", "preview-link") : null,
      h("button", { "data-testid": "raw-toggle", onclick: function () { if (!raw.firstChild) rawView(raw, s); raw.hidden = !raw.hidden; } }, "Raw stored JSON"),
    ]));
    // Built when first shown, and bounded: a stored text can be megabytes, or nested thousands deep.
    var raw = h("div", { class: "card", hidden: "hidden", "data-testid": "raw" });
    main.appendChild(raw);
    if (s.problems.length) {
      main.appendChild(h("h2", null, s.problems.length + " problem" + (s.problems.length === 1 ? "" : "s")));
      main.appendChild(h("ul", { class: "problems card", "data-testid": "problems" }, s.problems.map(function (p) {
        return h("li", null, [h("a", { class: "ptr", href: "#", onclick: function (e) { e.preventDefault(); var n = document.querySelector('[data-pointer="' + CSS.escape(p.pointer) + '"]'); if (n) n.scrollIntoView({ block: "center" }); } }, cut(p.pointer || "(document root)", 300)), " ", show(p.message), p.hint ? h("div", { class: "dim" }, "fix: " + show(p.hint)) : null]);
      })));
    }
    if (s.preserved.length) main.appendChild(h("div", { class: "notice" }, s.preserved.length + " value(s) of types this registry does not know (or newer versions): kept as stored, not checked: " + s.preserved.slice(0, 5).map(function (p) { return cut(p.pointer, 120) + " " + cut(p.$type, 80) + " v" + p.version; }).join(", ")));
    if (s.quarantined.length) main.appendChild(h("div", { class: "notice" }, s.quarantined.length + " value(s) set aside by a quarantine load (session.quarantine)"));
    main.appendChild(h("h2", null, "State bag"));
    if (!s.document) main.appendChild(h("div", { class: "notice" }, "the stored text is not a JSON document the studio can show (see the raw JSON)"));
    var bag = s.document ? (s.form === "bare" ? s.document.stateBag : (s.document.session || {}).stateBag) || {} : {};
    s.state.forEach(function (e) {
      var value = bag[e.key];
      var card = h("div", { class: "card", "data-testid": "state-entry" }, [
        h("div", { class: "row" }, [h("strong", { class: "id grow" }, cut(e.key, 300)), e.known ? typeLink(e.$type, e.version) : h("span", { class: "chip" }, cut(e.$type, 120) + " v" + e.version + " (not in the registry)"), e.known && e.latest !== e.version ? h("span", { class: "dim" }, "latest v" + e.latest) : null, badge(e.status)]),
      ]);
      e.problems.forEach(function (p) { card.appendChild(h("div", { class: "error" }, [h("span", { class: "ptr mono" }, cut(p.pointer, 300)), ": ", show(p.message)])); });
      if (value && typeof value === "object" && Array.isArray(value.messages)) {
        card.appendChild(h("h3", null, "History (" + value.messages.length + " messages)"));
        card.appendChild(chat(value, e.pointer, marks));
        var rest = Object.assign({}, value); delete rest.messages;
        card.appendChild(h("h3", null, "Other fields"));
        card.appendChild(tree(rest, e.pointer, marks, 1));
      } else card.appendChild(tree(value, e.pointer, marks, 0));
      main.appendChild(card);
    });
    var others = s.problems.filter(function (p) { return !s.state.some(function (e) { return p.pointer === e.pointer || p.pointer.indexOf(e.pointer + "/") === 0; }); });
    if (others.length && s.document) { main.appendChild(h("h2", null, "Document")); main.appendChild(h("div", { class: "card" }, tree(s.document, "", marks, 0))); }
  }

  /** The raw view: the stored JSON pretty-printed up to RAW_SHOWN characters, all of the stored text on request. */
  function rawView(box, s) {
    var text = s.raw;
    var pretty = prettyJson(text, RAW_SHOWN);
    if (s.rawCut) box.appendChild(h("div", { class: "notice" }, "first 8 MiB of " + s.rawCut + " characters"));
    var pre = h("pre", { "data-testid": "raw-text" }, show(pretty.text));
    box.appendChild(pre);
    if (pretty.cut) {
      var btn = h("button", { class: "more", "data-testid": "raw-show-all", onclick: function () { box.removeChild(btn); pre.textContent = show(text); } }, "show all " + text.length + " characters, as stored");
      box.insertBefore(h("div", { class: "notice", "data-testid": "raw-cut" }, "first " + RAW_SHOWN + " characters of the pretty-printed document"), pre);
      box.appendChild(btn);
    }
  }

  /**
   * JSON text pretty-printed, stopping at max characters: { text, cut }. Indentation deepens to
   * RAW_INDENT_DEPTH levels and no further, so the output is at most a constant times the input.
   * Text that is not JSON (or too deep to parse) is shown as it is, cut the same way.
   */
  function prettyJson(text, max) {
    var value;
    try { value = JSON.parse(text); } catch (e) { return text.length > max ? { text: text.slice(0, max), cut: true } : { text: text, cut: false }; }
    var out = [], size = 0, full = false;
    function put(str) {
      if (full) return;
      if (size + str.length > max) { out.push(str.slice(0, max - size)); size = max; full = true; return; }
      out.push(str); size += str.length;
    }
    function nl(depth) { put("\n" + "  ".repeat(Math.min(depth, RAW_INDENT_DEPTH))); }
    function walk(v, depth) {
      if (full) return;
      if (v === null || typeof v !== "object") { put(JSON.stringify(v)); return; }
      var isArr = Array.isArray(v);
      var keys = isArr ? null : Object.keys(v);
      var n = isArr ? v.length : keys.length;
      if (n === 0) { put(isArr ? "[]" : "{}"); return; }
      put(isArr ? "[" : "{");
      for (var i = 0; i < n && !full; i++) {
        nl(depth + 1);
        if (isArr) walk(v[i], depth + 1);
        else { put(JSON.stringify(keys[i]) + ": "); walk(v[keys[i]], depth + 1); }
        if (i < n - 1) put(",");
      }
      nl(depth);
      put(isArr ? "]" : "}");
    }
    try { walk(value, 0); } catch (e) { return text.length > max ? { text: text.slice(0, max), cut: true } : { text: text, cut: false }; }
    return { text: out.join(""), cut: full };
  }

  // ---- migration preview -------------------------------------------------------------------

  async function viewPreview(params) {
    var id = params.get("id") || "";
    clear(main);
    var p;
    try { p = await api("preview", { id: id }); } catch (e) { main.appendChild(failure(e)); return; }
    main.appendChild(h("h1", { class: "id" }, "Migration preview: " + cut(p.id, 300)));
    main.appendChild(h("div", { class: "row" }, [link("session", { id: p.id }, "← back to the session"), h("span", null, "revision " + p.revision)]));
    if (!p.values.length) main.appendChild(h("div", { class: "notice" }, "no state value of this session is behind its type's latest version" + (p.nested.length ? " (" + p.nested.length + " nested values are migrated on load)" : "")));
    p.values.forEach(function (v) {
      var card = h("div", { class: "card", "data-testid": "preview-value" }, [h("div", { class: "row" }, [h("strong", { class: "id" }, cut(v.key, 300)), h("span", null, cut(v.fromType, 120) + " v" + v.from + " → " + cut(v.toType, 120) + " v" + v.to), v.valid === true ? badge("valid", "valid after migration") : v.valid === false ? badge("invalid", "invalid after migration") : null])]);
      v.errors.forEach(function (e) { card.appendChild(h("div", { class: "error" }, cut(e.pointer || "/", 200) + ": " + show(e.message))); });
      v.steps.forEach(function (st) {
        card.appendChild(h("h3", { "data-testid": "preview-step" }, "step " + cut(st.fromType, 120) + " v" + st.from + (st.toType ? " → " + cut(st.toType, 120) + " v" + st.to : "")));
        if (st.source) card.appendChild(h("div", { class: "dim mono", "data-testid": "step-source" }, "defined at " + show(st.source)));
        if (st.error) { card.appendChild(h("div", { class: "error" }, show(st.error))); return; }
        var before = {}, after = {};
        (st.changes || []).forEach(function (c) { if (c.op === "removed") before[c.pointer] = { cls: "removed" }; else if (c.op === "added") after[c.pointer] = { cls: "added" }; else { before[c.pointer] = { cls: "changed" }; after[c.pointer] = { cls: "changed" }; } });
        card.appendChild(h("div", { class: "cols", "data-testid": "diff" }, [
          h("div", { class: "tree" }, [h("div", { class: "label dim" }, "before (v" + st.from + ")"), tree(st.before, "", before, 0)]),
          h("div", { class: "tree" }, [h("div", { class: "label dim" }, "after (v" + st.to + ")"), tree(st.after, "", after, 0)]),
        ]));
        card.appendChild(h("ul", { class: "mono", "data-testid": "changes" }, (st.changes || []).slice(0, 100).map(function (c) {
          return h("li", null, c.op + " " + cut(c.pointer || "/", 200) + (c.op !== "added" ? "  was " + cut(JSON.stringify(c.before), 200) : "") + (c.op !== "removed" ? "  now " + cut(JSON.stringify(c.after), 200) : ""));
        })));
      });
      main.appendChild(card);
    });
    if (p.nested.length) main.appendChild(h("div", { class: "dim" }, "nested values migrated on load: " + p.nested.slice(0, 20).map(function (m) { return cut(m.pointer, 120) + " " + cut(m.fromType, 60) + " v" + m.from + "→v" + m.to; }).join(", ")));
    if (p.values.length || p.nested.length) {
      if (p.write) {
        var out = h("div");
        var btn = h("button", { class: "primary", "data-testid": "migrate-one", onclick: async function () {
          btn.disabled = true;
          clear(out);
          try {
            var r = await api("migrate", null, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ id: p.id }) });
            out.appendChild(h("div", { class: r.outcome === "failed" ? "error" : "notice", "data-testid": "migrate-result" }, r.outcome + (r.revision !== undefined ? ": revision " + r.revision : "") + (r.failure ? ": " + show(r.failure.message) : "")));
          } catch (e) { out.appendChild(failure(e)); }
          btn.disabled = false;
        } }, "Migrate this session (compare-and-swap save)");
        main.appendChild(h("div", { class: "card" }, [btn, out]));
      } else main.appendChild(h("div", { class: "notice", "data-testid": "read-only" }, "read-only: start the studio with --write to migrate this session from here (or run statebag migrate)"));
    }
  }

  // ---- types -------------------------------------------------------------------------------

  async function viewTypes() {
    clear(main);
    main.appendChild(h("h1", null, "Types"));
    var t;
    try { t = await api("types"); } catch (e) { main.appendChild(failure(e)); return; }
    main.appendChild(h("p", { class: "dim" }, "the registry's types and every type with a schema history in " + show(t.schemas) + "/history"));
    var table = h("table", { "data-testid": "types" }, [h("thead", null, h("tr", null, ["family", "$type", "latest", "frozen versions", "fixtures", "migrations", ""].map(function (x) { return h("th", null, x); })))]);
    var body = h("tbody");
    t.items.forEach(function (x) {
      body.appendChild(h("tr", { "data-testid": "type-row" }, [h("td", { class: "dim" }, show(x.family)), h("td", { class: "id" }, link("type", { name: x.type }, cut(x.type, 200), "type-link")), h("td", null, x.version !== undefined ? "v" + x.version : "—"),
        h("td", null, x.frozen.map(function (v) { return "v" + v; }).join(" ") || "—"), h("td", null, x.fixtures.map(function (v) { return "v" + v; }).join(" ") || "—"), h("td", null, String(x.migrations)),
        h("td", null, [x.registered ? null : badge("unchecked", "not registered"), x.retired ? badge("invalid", "retired") : null])]));
    });
    table.appendChild(body);
    main.appendChild(table);
  }

  async function viewType(params) {
    var name = params.get("name") || "";
    clear(main);
    main.appendChild(h("h1", { class: "id" }, "Type " + cut(name, 300)));
    var t;
    try { t = await api("type", { type: name }); } catch (e) { main.appendChild(failure(e)); return; }
    main.appendChild(h("div", { class: "row" }, [h("span", { class: "chip" }, show(t.family)), t.version !== undefined ? h("span", null, "latest v" + t.version) : badge("unchecked", "not registered"), t.source ? h("span", { class: "dim mono" }, "declared at " + show(t.source)) : null, t.formerNames.length ? h("span", { class: "dim" }, "former names: " + t.formerNames.map(function (n) { return cut(n, 80); }).join(", ")) : null, t.retired ? badge("invalid", "retired") : null]));
    main.appendChild(h("h2", null, "Compatibility between consecutive versions"));
    if (t.compatError) main.appendChild(h("div", { class: "notice" }, "the compatibility check is not available: " + show(t.compatError)));
    if (!t.compat.length && !t.compatError) main.appendChild(h("p", { class: "dim" }, "only one version: nothing to compare"));
    t.compat.forEach(function (c) {
      var card = h("div", { class: "card", "data-testid": "compat" }, [h("div", { class: "row" }, [h("strong", null, c.from + " → " + c.to), badge(c.verdict), h("span", { class: "dim mono" }, show(c.fromFile) + " → " + show(c.toFile))])]);
      c.changes.filter(function (ch) { return ch.kind !== "compatible"; }).concat(c.changes.filter(function (ch) { return ch.kind === "compatible"; })).slice(0, 200).forEach(function (ch) {
        var item = h("div", { class: "part" }, [badge(ch.kind), " ", h("span", { class: "mono" }, cut(ch.pointer || "/", 200)), " ", show(ch.message)]);
        if (ch.witness) item.appendChild(h("div", null, [h("div", { class: "label dim" }, "witness (" + show(ch.witness.source) + "): accepted by " + c.from + ", rejected by " + c.to), h("pre", { "data-testid": "witness" }, show(JSON.stringify(ch.witness.document, null, 2)))]));
        card.appendChild(item);
      });
      (c.warnings || []).forEach(function (w) { card.appendChild(h("div", { class: "dim" }, "warning: " + show(w))); });
      main.appendChild(card);
    });
    if (t.migrations.length) {
      main.appendChild(h("h2", null, "Migrations"));
      main.appendChild(h("ul", { class: "card" }, t.migrations.map(function (m) { return h("li", null, [cut(m.type, 120) + " v" + m.from + " → " + cut(m.toType, 120) + " v" + m.to + " ", m.source ? h("span", { class: "dim mono" }, "defined at " + show(m.source)) : null]); })));
    }
    main.appendChild(h("h2", null, "Schemas"));
    var wanted = params.get("v");
    t.versions.forEach(function (v) {
      var open = wanted !== null && String(v.version) === wanted && (v.frozen || !t.versions.some(function (o) { return o.frozen && String(o.version) === wanted; }));
      main.appendChild(h("details", { class: "card", open: open, "data-testid": "schema" }, [h("summary", null, "v" + v.version + (v.current ? " (current)" : " (frozen)") + "  " + show(v.file)), h("div", { class: "tree" }, tree(v.schema, "", {}, 1))]));
    });
    main.appendChild(h("h2", null, "Golden fixtures"));
    if (!t.fixtures.length) main.appendChild(h("p", { class: "dim" }, "none"));
    t.fixtures.forEach(function (fx) { main.appendChild(h("details", { class: "card", "data-testid": "fixture" }, [h("summary", null, "v" + fx.version + "  " + show(fx.file)), h("div", { class: "tree" }, tree(fx.document, "", {}, 1))])); });
  }

  // ---- router ------------------------------------------------------------------------------

  async function route() {
    var hash = location.hash.replace(/^#\/?/, "");
    var q = hash.indexOf("?");
    var name = q === -1 ? hash : hash.slice(0, q);
    var params = new URLSearchParams(q === -1 ? "" : hash.slice(q + 1));
    document.body.setAttribute("data-view", name || "sessions");
    try {
      if (name === "session") await viewSession(params);
      else if (name === "preview") await viewPreview(params);
      else if (name === "types") await viewTypes();
      else if (name === "type") await viewType(params);
      else await viewSessions(params);
    } catch (e) { main.appendChild(failure(e)); }
    document.body.setAttribute("data-ready", name || "sessions");
  }

  window.addEventListener("hashchange", function () { document.body.removeAttribute("data-ready"); route(); });
  api("info").then(function (info) {
    INFO = info;
    document.getElementById("store").textContent = show(info.store) + (info.write ? " · read-write" : " · read-only") + (info.encrypted ? " · encrypted" : "");
  }, function () {});
  route();
})();
`;
