/**
 * One session: its validity and problems (each linked to the node it is about), the state bag
 * (a chat history as messages and content parts, other values as trees) and the raw stored JSON,
 * built when first shown.
 */

import type { SessionView } from "../wire.js";
import { api } from "./api.js";
import { branchesView } from "./branches.js";
import { badge, bytes, clear, cut, failure, h, link, longText, show, typeLink } from "./dom.js";
import { type Marks, prettyJson, tree } from "./json-tree.js";

/** The raw view shows this many characters of the pretty-printed document, the rest on request. */
const RAW_SHOWN = 200000;

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === "object";

/** One content part of a chat message (text, reasoning, tool call and result, approval, usage, error). */
function contentPart(content: unknown, pointer: string, marks: Marks, answers: Map<unknown, boolean>): HTMLElement {
  const part = isObject(content) ? content : {};
  const type = isObject(content) ? content.$type : undefined;
  let element: HTMLElement;
  if (type === "text") element = longText("text", part.text, "chat-text");
  else if (type === "reasoning")
    element = h("div", { class: "part reasoning", "data-testid": "reasoning" }, [
      h("div", { class: "label" }, "reasoning"),
      longText("text", part.text || ""),
      part.protectedData !== undefined
        ? h("div", { class: "dim" }, `protected data: ${String(part.protectedData).length} chars`)
        : null,
    ]);
  else if (type === "functionCall")
    element = h("div", { class: "part call", "data-testid": "tool-call" }, [
      h("div", { class: "label" }, `tool call: ${cut(part.name, 120)} (${cut(part.callId, 80)})`),
      part.arguments !== undefined
        ? tree(part.arguments, `${pointer}/arguments`, marks, 1)
        : h("span", { class: "dim" }, "no arguments"),
    ]);
  else if (type === "functionResult")
    element = h("div", { class: "part result", "data-testid": "tool-result" }, [
      h("div", { class: "label" }, `tool result (${cut(part.callId, 80)})`),
      tree(part.result, `${pointer}/result`, marks, 1),
    ]);
  else if (type === "toolApprovalRequest") {
    const answer = answers.get(part.requestId);
    const toolCall = isObject(part.toolCall) ? part.toolCall : {};
    element = h("div", { class: "part approval", "data-testid": "approval" }, [
      h("div", { class: "label" }, `approval requested: ${cut(toolCall.name || "?", 120)}`),
      answer === undefined
        ? badge("needs-migration", "pending")
        : badge(answer ? "valid" : "invalid", answer ? "approved" : "denied"),
      toolCall.arguments !== undefined ? tree(toolCall.arguments, `${pointer}/toolCall/arguments`, marks, 1) : null,
    ]);
  } else if (type === "toolApprovalResponse")
    element = h("div", { class: "part approval" }, [
      h("div", { class: "label" }, "approval answered"),
      badge(part.approved ? "valid" : "invalid", part.approved ? "approved" : "denied"),
      part.reason ? h("span", null, ` ${cut(part.reason, 500)}`) : null,
    ]);
  else if (type === "usage") {
    const details = isObject(part.details) ? part.details : {};
    const counts = ["inputTokenCount", "outputTokenCount", "totalTokenCount"]
      .filter((name) => details[name] !== undefined)
      .map((name) => `${name.replace("TokenCount", "")} ${cut(details[name], 20)}`);
    element = h("div", { class: "dim", "data-testid": "usage" }, `usage: ${counts.join(", ")}`);
  } else if (type === "error")
    element = h("div", { class: "part unknown" }, [h("div", { class: "label" }, "error"), longText("", part.message)]);
  else
    element = h("div", { class: "part unknown", "data-testid": "unknown-content" }, [
      h("div", { class: "label" }, `content ${cut(type === undefined ? "(no $type)" : type, 80)}`),
      tree(content, pointer, marks, 1),
    ]);
  const mark = marks[pointer];
  if (mark) {
    element.classList.add("problem");
    element.setAttribute("title", mark.title || "");
    element.setAttribute("data-testid", "problem-node");
  }
  return element;
}

/** A chat history: one bubble per message, its content parts inside; problems marked where they are. */
function chat(messages: unknown[], pointer: string, marks: Marks): HTMLElement {
  // Which approval requests were answered, and how.
  const answers = new Map<unknown, boolean>();
  for (const message of messages)
    if (isObject(message) && Array.isArray(message.contents))
      for (const content of message.contents)
        if (isObject(content) && content.$type === "toolApprovalResponse")
          answers.set(content.requestId, !!content.approved);
  const box = h("div", { class: "chat", "data-testid": "chat" });
  messages.forEach((message, index) => {
    const messagePointer = `${pointer}/messages/${index}`;
    if (!isObject(message)) {
      box.appendChild(h("div", { class: "msg problem" }, tree(message, messagePointer, marks, 1)));
      return;
    }
    const who = [
      cut(message.role === undefined ? "(no role)" : message.role, 40),
      message.authorName ? cut(message.authorName, 80) : null,
      message.createdAt ? cut(message.createdAt, 40) : null,
    ]
      .filter(Boolean)
      .join(" · ");
    const role = typeof message.role === "string" ? message.role.slice(0, 20) : "unknown";
    const bubble = h("div", { class: "msg", "data-role": role, "data-testid": "message" }, [
      h("div", { class: "who" }, who),
    ]);
    if (Array.isArray(message.contents))
      message.contents.forEach((content, part) => {
        bubble.appendChild(contentPart(content, `${messagePointer}/contents/${part}`, marks, answers));
      });
    else bubble.appendChild(tree(message.contents, `${messagePointer}/contents`, marks, 1));
    // A problem in the message itself (its role, author, ...) marks the whole message.
    const own = Object.keys(marks).filter(
      (marked) =>
        marked === messagePointer ||
        (marked.startsWith(`${messagePointer}/`) && !marked.startsWith(`${messagePointer}/contents/`)),
    );
    if (own.length) {
      bubble.classList.add("problem");
      bubble.setAttribute("data-testid", "problem-node");
      bubble.setAttribute("data-pointer", own[0]);
      bubble.setAttribute("title", own.map((marked) => marks[marked].title || marked).join("\n"));
    }
    box.appendChild(bubble);
  });
  return box;
}

/** The raw view: the stored JSON pretty-printed up to RAW_SHOWN characters, all of the stored text on request. */
function rawView(box: HTMLElement, session: SessionView): void {
  const text = session.raw;
  const pretty = prettyJson(text, RAW_SHOWN);
  if (session.rawCut) box.appendChild(h("div", { class: "notice" }, `first 8 MiB of ${session.rawCut} characters`));
  const pre = h("pre", { "data-testid": "raw-text" }, show(pretty.text));
  box.appendChild(pre);
  if (pretty.cut) {
    const showAll = h(
      "button",
      {
        class: "more",
        "data-testid": "raw-show-all",
        onclick: () => {
          box.removeChild(showAll);
          pre.textContent = show(text);
        },
      },
      `show all ${text.length} characters, as stored`,
    );
    box.insertBefore(
      h(
        "div",
        { class: "notice", "data-testid": "raw-cut" },
        `first ${RAW_SHOWN} characters of the pretty-printed document`,
      ),
      pre,
    );
    box.appendChild(showAll);
  }
}

/** The state bag in the stored document (bare `JSON.stringify(session)` or the envelope). */
function stateBagOf(session: SessionView): JsonObject {
  const document = session.document;
  if (!isObject(document)) return {};
  const holder = session.form === "bare" ? document : isObject(document.session) ? document.session : {};
  return isObject(holder.stateBag) ? holder.stateBag : {};
}

/** Images the studio previews (served by api/blob from the store's blob store). */
const PREVIEWED = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export async function viewSession(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const id = params.get("id") || "";
  clear(main);
  let session: SessionView;
  try {
    session = await api<SessionView>("session", { id });
  } catch (error) {
    main.appendChild(failure(error));
    return;
  }
  const marks: Marks = {};
  for (const problem of session.problems) marks[problem.pointer] = { cls: "problem", title: show(problem.message) };
  main.appendChild(h("h1", { class: "id", "data-testid": "session-id" }, `session ${cut(session.id, 500)}`));
  // Built when first shown, and bounded: a stored text can be megabytes, or nested thousands deep.
  const raw = h("div", { class: "card", hidden: "hidden", "data-testid": "raw" });
  const behind =
    session.validity === "needs-migration" || session.state.some((entry) => entry.status === "needs-migration");
  main.appendChild(
    h("div", { class: "row" }, [
      badge(session.validity),
      h("span", null, `revision ${session.revision}`),
      h("span", { class: "dim" }, bytes(session.bytes)),
      session.owner !== undefined ? h("span", { class: "chip" }, `owner ${cut(session.owner, 120)}`) : null,
      session.title !== undefined ? h("span", null, cut(session.title, 200)) : null,
      session.updatedAt ? h("span", { class: "dim" }, `updated ${show(session.updatedAt)}`) : null,
      session.encrypted ? h("span", { class: "chip" }, "decrypted with the keyring") : null,
      behind ? link("preview", { id: session.id }, "Migration preview →", "preview-link") : null,
      h(
        "button",
        {
          "data-testid": "raw-toggle",
          onclick: () => {
            if (!raw.firstChild) rawView(raw, session);
            raw.hidden = !raw.hidden;
          },
        },
        "Raw stored JSON",
      ),
    ]),
  );
  main.appendChild(raw);
  const files = session.files ?? [];
  if (files.length) {
    main.appendChild(h("h2", null, `${files.length} file${files.length === 1 ? "" : "s"} in the blob store`));
    main.appendChild(
      h(
        "div",
        { class: "card row", "data-testid": "files" },
        files.map((file) =>
          h("figure", { class: "file", "data-testid": "file" }, [
            PREVIEWED.has(file.mediaType)
              ? h("img", {
                  src: `api/blob?${new URLSearchParams({ id: session.id, hash: file.hash })}`,
                  alt: cut(file.name ?? file.hash.slice(0, 12), 120),
                  "data-testid": "file-preview",
                })
              : null,
            h(
              "figcaption",
              { class: "dim" },
              `${cut(file.name ?? file.hash.slice(0, 12), 120)} · ${cut(file.mediaType, 80)} · ${bytes(file.size)}`,
            ),
          ]),
        ),
      ),
    );
  }
  const problems = session.problems;
  if (problems.length) {
    main.appendChild(h("h2", null, `${problems.length} problem${problems.length === 1 ? "" : "s"}`));
    main.appendChild(
      h(
        "ul",
        { class: "problems card", "data-testid": "problems" },
        problems.map((problem) =>
          h("li", null, [
            h(
              "a",
              {
                class: "ptr",
                href: "#",
                onclick: (event) => {
                  event.preventDefault();
                  document
                    .querySelector(`[data-pointer="${CSS.escape(problem.pointer)}"]`)
                    ?.scrollIntoView({ block: "center" });
                },
              },
              cut(problem.pointer || "(document root)", 300),
            ),
            " ",
            show(problem.message),
            problem.hint ? h("div", { class: "dim" }, `fix: ${show(problem.hint)}`) : null,
          ]),
        ),
      ),
    );
  }
  if (session.preserved.length) {
    const first = session.preserved
      .slice(0, 5)
      .map((value) => `${cut(value.pointer, 120)} ${cut(value.$type, 80)} v${value.version}`);
    main.appendChild(
      h(
        "div",
        { class: "notice" },
        `${session.preserved.length} value(s) of types this registry does not know (or newer versions): kept as stored, not checked: ${first.join(", ")}`,
      ),
    );
  }
  if (session.quarantined.length)
    main.appendChild(
      h(
        "div",
        { class: "notice" },
        `${session.quarantined.length} value(s) set aside by a quarantine load (session.quarantine)`,
      ),
    );
  main.appendChild(h("h2", null, "State bag"));
  if (!session.document)
    main.appendChild(
      h("div", { class: "notice" }, "the stored text is not a JSON document the studio can show (see the raw JSON)"),
    );
  const bag = stateBagOf(session);
  for (const entry of session.state) {
    const value = bag[entry.key];
    const card = h("div", { class: "card", "data-testid": "state-entry" }, [
      h("div", { class: "row" }, [
        h("strong", { class: "id grow" }, cut(entry.key, 300)),
        entry.known
          ? typeLink(entry.$type, entry.version)
          : h("span", { class: "chip" }, `${cut(entry.$type, 120)} v${entry.version} (not in the registry)`),
        entry.known && entry.latest !== entry.version ? h("span", { class: "dim" }, `latest v${entry.latest}`) : null,
        badge(entry.status),
      ]),
    ]);
    for (const problem of entry.problems)
      card.appendChild(
        h("div", { class: "error" }, [
          h("span", { class: "ptr mono" }, cut(problem.pointer, 300)),
          ": ",
          show(problem.message),
        ]),
      );
    if (isObject(value) && Array.isArray(value.messages)) {
      const branches = branchesView(value, entry.pointer, marks, chat);
      card.appendChild(
        h("h3", null, `History (${value.messages.length} messages${branches ? " on the active path" : ""})`),
      );
      card.appendChild(chat(value.messages, entry.pointer, marks));
      if (branches) card.appendChild(branches);
      const { messages: _messages, ...rest } = value;
      card.appendChild(h("h3", null, "Other fields"));
      card.appendChild(tree(rest, entry.pointer, marks, 1));
    } else card.appendChild(tree(value, entry.pointer, marks, 0));
    main.appendChild(card);
  }
  const elsewhere = problems.filter(
    (problem) =>
      !session.state.some(
        (entry) => problem.pointer === entry.pointer || problem.pointer.startsWith(`${entry.pointer}/`),
      ),
  );
  if (elsewhere.length && session.document) {
    main.appendChild(h("h2", null, "Document"));
    main.appendChild(h("div", { class: "card" }, tree(session.document, "", marks, 0)));
  }
}
