/**
 * The migration preview of one session: each state value behind its type's latest version,
 * migrated one step at a time (before and after side by side, the changes listed, where the step
 * is defined), and with --write a button that migrates the session as `statebag migrate` does.
 */

import type { MigrateResult, MigrationPreview, MigrationStep, PreviewValue } from "../wire.js";
import { api } from "./api.js";
import { badge, clear, cut, failure, h, link, show } from "./dom.js";
import { type Marks, tree } from "./json-tree.js";

function stepView(card: HTMLElement, step: MigrationStep): void {
  const target = step.toType ? ` → ${cut(step.toType, 120)} v${step.to}` : "";
  card.appendChild(
    h("h3", { "data-testid": "preview-step" }, `step ${cut(step.fromType, 120)} v${step.from}${target}`),
  );
  if (step.source)
    card.appendChild(h("div", { class: "dim mono", "data-testid": "step-source" }, `defined at ${show(step.source)}`));
  if (step.error) {
    card.appendChild(h("div", { class: "error" }, show(step.error)));
    return;
  }
  const changes = step.changes ?? [];
  const before: Marks = {};
  const after: Marks = {};
  for (const change of changes) {
    if (change.op === "removed") before[change.pointer] = { cls: "removed" };
    else if (change.op === "added") after[change.pointer] = { cls: "added" };
    else {
      before[change.pointer] = { cls: "changed" };
      after[change.pointer] = { cls: "changed" };
    }
  }
  card.appendChild(
    h("div", { class: "cols", "data-testid": "diff" }, [
      h("div", { class: "tree" }, [
        h("div", { class: "label dim" }, `before (v${step.from})`),
        tree(step.before, "", before, 0),
      ]),
      h("div", { class: "tree" }, [
        h("div", { class: "label dim" }, `after (v${step.to})`),
        tree(step.after, "", after, 0),
      ]),
    ]),
  );
  card.appendChild(
    h(
      "ul",
      { class: "mono", "data-testid": "changes" },
      changes.slice(0, 100).map((change) => {
        const was = change.op !== "added" ? `  was ${cut(JSON.stringify(change.before), 200)}` : "";
        const now = change.op !== "removed" ? `  now ${cut(JSON.stringify(change.after), 200)}` : "";
        return h("li", null, `${change.op} ${cut(change.pointer || "/", 200)}${was}${now}`);
      }),
    ),
  );
}

function valueView(value: PreviewValue): HTMLElement {
  const verdict =
    value.valid === true
      ? badge("valid", "valid after migration")
      : value.valid === false
        ? badge("invalid", "invalid after migration")
        : null;
  const card = h("div", { class: "card", "data-testid": "preview-value" }, [
    h("div", { class: "row" }, [
      h("strong", { class: "id" }, cut(value.key, 300)),
      h("span", null, `${cut(value.fromType, 120)} v${value.from} → ${cut(value.toType, 120)} v${value.to}`),
      verdict,
    ]),
  ]);
  for (const error of value.errors)
    card.appendChild(h("div", { class: "error" }, `${cut(error.pointer || "/", 200)}: ${show(error.message)}`));
  for (const step of value.steps) stepView(card, step);
  return card;
}

/** The button that migrates this one session (a compare-and-swap save), and its outcome. */
function migrateButton(id: string): HTMLElement {
  const outcome = h("div");
  const button = h(
    "button",
    {
      class: "primary",
      "data-testid": "migrate-one",
      onclick: async () => {
        button.disabled = true;
        clear(outcome);
        try {
          const result = await api<MigrateResult>("migrate", null, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ id }),
          });
          const revision = result.revision !== undefined ? `: revision ${result.revision}` : "";
          const why = result.failure ? `: ${show(result.failure.message)}` : "";
          outcome.appendChild(
            h(
              "div",
              { class: result.outcome === "failed" ? "error" : "notice", "data-testid": "migrate-result" },
              show(result.outcome) + revision + why,
            ),
          );
        } catch (error) {
          outcome.appendChild(failure(error));
        }
        button.disabled = false;
      },
    },
    "Migrate this session (compare-and-swap save)",
  );
  return h("div", { class: "card" }, [button, outcome]);
}

export async function viewPreview(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const id = params.get("id") || "";
  clear(main);
  let preview: MigrationPreview;
  try {
    preview = await api<MigrationPreview>("preview", { id });
  } catch (error) {
    main.appendChild(failure(error));
    return;
  }
  main.appendChild(h("h1", { class: "id" }, `Migration preview: ${cut(preview.id, 300)}`));
  main.appendChild(
    h("div", { class: "row" }, [
      link("session", { id: preview.id }, "← back to the session"),
      h("span", null, `revision ${preview.revision}`),
    ]),
  );
  const { values, nested } = preview;
  if (!values.length) {
    const onLoad = nested.length ? ` (${nested.length} nested values are migrated on load)` : "";
    main.appendChild(
      h("div", { class: "notice" }, `no state value of this session is behind its type's latest version${onLoad}`),
    );
  }
  for (const value of values) main.appendChild(valueView(value));
  if (nested.length) {
    const first = nested
      .slice(0, 20)
      .map((value) => `${cut(value.pointer, 120)} ${cut(value.fromType, 60)} v${value.from}→v${value.to}`);
    main.appendChild(h("div", { class: "dim" }, `nested values migrated on load: ${first.join(", ")}`));
  }
  if (!values.length && !nested.length) return;
  if (preview.write) main.appendChild(migrateButton(preview.id));
  else
    main.appendChild(
      h(
        "div",
        { class: "notice", "data-testid": "read-only" },
        "read-only: start the studio with --write to migrate this session from here (or run statebag migrate)",
      ),
    );
}
