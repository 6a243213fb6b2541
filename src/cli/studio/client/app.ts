/**
 * The studio's page script (bundled into one file, served as app.js under the token path). A
 * hash router over five views: sessions, one session, its migration preview, types, one type.
 *
 * Everything is built with createElement and textContent (dom.ts), never innerHTML: ids, keys,
 * texts and schema contents are data and are shown as text, control and bidirectional characters
 * made visible. The Content-Security-Policy (../server.ts) allows this origin's script and
 * stylesheet only, so there is no inline script or style attribute anywhere (styles go through the
 * CSSOM). `body[data-view]` names the view shown and `body[data-ready]` is set once it is built.
 */

import type { StudioInfo } from "../wire.js";
import { api } from "./api.js";
import { failure, show } from "./dom.js";
import { viewPreview } from "./preview.js";
import { viewSession } from "./session.js";
import { viewSessions } from "./sessions.js";
import { viewType, viewTypes } from "./types.js";

const main = document.getElementById("main")!;

async function route(): Promise<void> {
  const hash = location.hash.replace(/^#\/?/, "");
  const query = hash.indexOf("?");
  const name = query === -1 ? hash : hash.slice(0, query);
  const params = new URLSearchParams(query === -1 ? "" : hash.slice(query + 1));
  document.body.setAttribute("data-view", name || "sessions");
  try {
    if (name === "session") await viewSession(main, params);
    else if (name === "preview") await viewPreview(main, params);
    else if (name === "types") await viewTypes(main);
    else if (name === "type") await viewType(main, params);
    else await viewSessions(main, params);
  } catch (error) {
    main.appendChild(failure(error));
  }
  document.body.setAttribute("data-ready", name || "sessions");
}

window.addEventListener("hashchange", () => {
  document.body.removeAttribute("data-ready");
  void route();
});
api<StudioInfo>("info").then(
  (info) => {
    const store = document.getElementById("store");
    if (store)
      store.textContent = `${show(info.store)}${info.write ? " · read-write" : " · read-only"}${info.encrypted ? " · encrypted" : ""}`;
  },
  () => {},
);
void route();
