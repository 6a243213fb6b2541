/**
 * The types views: the list (registry types and every type with a schema history) and one type
 * (compatibility between consecutive versions with witnesses of a break, migrations, every
 * version's schema, golden fixtures).
 */

import type { Compat, TypeList, TypeView } from "../wire.js";
import { api } from "./api.js";
import { badge, clear, cut, failure, h, link, show } from "./dom.js";
import { tree } from "./json-tree.js";

const versionList = (versions: number[]) => versions.map((version) => `v${version}`).join(" ") || "—";

export async function viewTypes(main: HTMLElement): Promise<void> {
  clear(main);
  main.appendChild(h("h1", null, "Types"));
  let list: TypeList;
  try {
    list = await api<TypeList>("types");
  } catch (error) {
    main.appendChild(failure(error));
    return;
  }
  main.appendChild(
    h(
      "p",
      { class: "dim" },
      `the registry's types and every type with a schema history in ${show(list.schemas)}/history`,
    ),
  );
  const headings = ["family", "$type", "latest", "frozen versions", "fixtures", "migrations", ""];
  const table = h("table", { "data-testid": "types" }, [
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        headings.map((heading) => h("th", null, heading)),
      ),
    ),
  ]);
  const body = h("tbody");
  for (const row of list.items)
    body.appendChild(
      h("tr", { "data-testid": "type-row" }, [
        h("td", { class: "dim" }, show(row.family)),
        h("td", { class: "id" }, link("type", { name: row.type }, cut(row.type, 200), "type-link")),
        h("td", null, row.version !== undefined ? `v${row.version}` : "—"),
        h("td", null, versionList(row.frozen)),
        h("td", null, versionList(row.fixtures)),
        h("td", null, String(row.migrations)),
        h("td", null, [
          row.registered ? null : badge("unchecked", "not registered"),
          row.retired ? badge("invalid", "retired") : null,
        ]),
      ]),
    );
  table.appendChild(body);
  main.appendChild(table);
}

/** The verdict between two consecutive versions: breaking changes first, each with its witness. */
function compatView(compat: Compat): HTMLElement {
  const card = h("div", { class: "card", "data-testid": "compat" }, [
    h("div", { class: "row" }, [
      h("strong", null, `${show(compat.from)} → ${show(compat.to)}`),
      badge(compat.verdict),
      h("span", { class: "dim mono" }, `${show(compat.fromFile)} → ${show(compat.toFile)}`),
    ]),
  ]);
  const changes = [
    ...compat.changes.filter((change) => change.kind !== "compatible"),
    ...compat.changes.filter((change) => change.kind === "compatible"),
  ];
  for (const change of changes.slice(0, 200)) {
    const item = h("div", { class: "part" }, [
      badge(change.kind),
      " ",
      h("span", { class: "mono" }, cut(change.pointer || "/", 200)),
      " ",
      show(change.message),
    ]);
    if (change.witness)
      item.appendChild(
        h("div", null, [
          h(
            "div",
            { class: "label dim" },
            `witness (${show(change.witness.source)}): accepted by ${show(compat.from)}, rejected by ${show(compat.to)}`,
          ),
          h("pre", { "data-testid": "witness" }, show(JSON.stringify(change.witness.document, null, 2))),
        ]),
      );
    card.appendChild(item);
  }
  for (const warning of compat.warnings ?? [])
    card.appendChild(h("div", { class: "dim" }, `warning: ${show(warning)}`));
  return card;
}

export async function viewType(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const name = params.get("name") || "";
  clear(main);
  main.appendChild(h("h1", { class: "id" }, `Type ${cut(name, 300)}`));
  let type: TypeView;
  try {
    type = await api<TypeView>("type", { type: name });
  } catch (error) {
    main.appendChild(failure(error));
    return;
  }
  main.appendChild(
    h("div", { class: "row" }, [
      h("span", { class: "chip" }, show(type.family)),
      type.version !== undefined ? h("span", null, `latest v${type.version}`) : badge("unchecked", "not registered"),
      type.source ? h("span", { class: "dim mono" }, `declared at ${show(type.source)}`) : null,
      type.formerNames.length
        ? h("span", { class: "dim" }, `former names: ${type.formerNames.map((former) => cut(former, 80)).join(", ")}`)
        : null,
      type.retired ? badge("invalid", "retired") : null,
    ]),
  );
  main.appendChild(h("h2", null, "Compatibility between consecutive versions"));
  if (type.compatError)
    main.appendChild(
      h("div", { class: "notice" }, `the compatibility check is not available: ${show(type.compatError)}`),
    );
  if (!type.compat.length && !type.compatError)
    main.appendChild(h("p", { class: "dim" }, "only one version: nothing to compare"));
  for (const compat of type.compat) main.appendChild(compatView(compat));
  if (type.migrations.length) {
    main.appendChild(h("h2", null, "Migrations"));
    main.appendChild(
      h(
        "ul",
        { class: "card" },
        type.migrations.map((migration) =>
          h("li", null, [
            `${cut(migration.type, 120)} v${migration.from} → ${cut(migration.toType, 120)} v${migration.to} `,
            migration.source ? h("span", { class: "dim mono" }, `defined at ${show(migration.source)}`) : null,
          ]),
        ),
      ),
    );
  }
  main.appendChild(h("h2", null, "Schemas"));
  // `v` opens one version's schema: the frozen one when a frozen and the current share the number.
  const wanted = params.get("v");
  const frozenWanted = type.versions.some((version) => version.frozen && String(version.version) === wanted);
  for (const version of type.versions) {
    const open = wanted !== null && String(version.version) === wanted && (version.frozen || !frozenWanted);
    main.appendChild(
      h("details", { class: "card", open, "data-testid": "schema" }, [
        h("summary", null, `v${version.version}${version.current ? " (current)" : " (frozen)"}  ${show(version.file)}`),
        h("div", { class: "tree" }, tree(version.schema, "", {}, 1)),
      ]),
    );
  }
  main.appendChild(h("h2", null, "Golden fixtures"));
  if (!type.fixtures.length) main.appendChild(h("p", { class: "dim" }, "none"));
  for (const fixture of type.fixtures)
    main.appendChild(
      h("details", { class: "card", "data-testid": "fixture" }, [
        h("summary", null, `v${fixture.version}  ${show(fixture.file)}`),
        h("div", { class: "tree" }, tree(fixture.document, "", {}, 1)),
      ]),
    );
}
