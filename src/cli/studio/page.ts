/**
 * The studio's page: its HTML and CSS, served as static strings (no framework, nothing fetched from
 * elsewhere: it works offline). The script is the typed browser code in client/ (app.ts and the
 * views), bundled into app.js (client-script.ts). The Content-Security-Policy (server.ts) allows
 * this origin's script and stylesheet only: no inline script, no style attribute.
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
figure.file { margin: 0 12px 8px 0; } figure.file img { display: block; max-width: 200px; max-height: 160px; border-radius: 4px; }
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
.branches { margin-top: 12px; }
.branch { border-left: 3px dashed #c9a227; padding: 4px 0 4px 12px; margin: 8px 0; opacity: 0.85; }
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
