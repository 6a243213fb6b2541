/** The sessions view: filters (search, $type, version, validity, owner), one page of rows, a pager. */

import type { SessionPage, TypeList, TypeRow } from "../wire.js";
import { api } from "./api.js";
import { badge, bytes, clear, cut, failure, h, hashOf, link, show } from "./dom.js";

let typeList: Promise<TypeList> | undefined;

/** The types (asked for once per page load: the filter's choices). */
function typeRows(): Promise<TypeRow[]> {
  typeList ??= api<TypeList>("types");
  typeList.catch(() => (typeList = undefined));
  return typeList.then((list) => list.items);
}

const VALIDITIES = ["", "valid", "needs-migration", "invalid", "unchecked"];
const COLUMNS = [
  ["id", "24%"],
  ["owner / title", "16%"],
  ["updated", "12%"],
  ["size", "8%"],
  ["messages", "7%"],
  ["types", "21%"],
  ["validity", "12%"],
];

export async function viewSessions(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const filters = {
    q: params.get("q") || "",
    type: params.get("type") || "",
    version: params.get("version") || "",
    validity: params.get("validity") || "",
    owner: params.get("owner") || "",
    limit: params.get("limit") || "25",
  };
  const cursor = params.get("cursor") || "";
  // The cursors of the pages before this one, for "previous page".
  const trail = params.get("trail")?.split("\n") ?? [];
  clear(main);
  main.appendChild(h("h1", null, "Sessions"));
  const search = h("input", {
    type: "search",
    placeholder: "id or title contains",
    value: filters.q,
    "data-testid": "search",
  });
  const type = h("select", { "data-testid": "filter-type" }, [h("option", { value: "" }, "any type")]);
  const version = h("input", {
    type: "number",
    min: "1",
    placeholder: "any",
    value: filters.version,
    style: "width:6em",
    "data-testid": "filter-version",
  });
  const validity = h(
    "select",
    { "data-testid": "filter-validity" },
    VALIDITIES.map((name) => h("option", { value: name }, name ? name.replace("-", " ") : "any validity")),
  );
  validity.value = filters.validity;
  const owner = h("input", { placeholder: "owner (list)", value: filters.owner, "data-testid": "filter-owner" });
  const form = h("form", { class: "filters", "data-testid": "filters" }, [
    h("label", null, ["search", search]),
    h("label", null, ["$type", type]),
    h("label", null, ["version", version]),
    h("label", null, ["validity", validity]),
    h("label", null, ["owner", owner]),
    h("button", { type: "submit", class: "primary", "data-testid": "apply" }, "Apply"),
  ]);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = hashOf("sessions", {
      q: search.value,
      type: type.value,
      version: version.value,
      validity: validity.value,
      owner: owner.value,
      limit: filters.limit,
    });
  });
  main.appendChild(form);
  typeRows().then(
    (rows) => {
      for (const row of rows)
        if (row.family === "ProviderState") type.appendChild(h("option", { value: row.type }, show(row.type)));
      type.value = filters.type;
    },
    () => {},
  );
  const table = h("table", { "data-testid": "sessions" }, [
    h(
      "colgroup",
      null,
      COLUMNS.map(([, width]) => h("col", { style: `width:${width}` })),
    ),
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        COLUMNS.map(([title]) => h("th", null, title)),
      ),
    ),
  ]);
  const tbody = h("tbody");
  table.appendChild(tbody);
  main.appendChild(table);
  const pager = h("div", { class: "pager" });
  main.appendChild(pager);
  let page: SessionPage;
  try {
    page = await api<SessionPage>("sessions", { ...filters, cursor });
  } catch (error) {
    main.appendChild(failure(error));
    return;
  }
  if (page.items.length === 0)
    tbody.appendChild(h("tr", null, h("td", { colspan: "7", class: "dim" }, "no sessions on this page match")));
  for (const row of page.items) {
    tbody.appendChild(
      h("tr", { "data-testid": "session-row" }, [
        h("td", { class: "id" }, link("session", { id: row.id }, cut(row.id, 300), "session-link")),
        h("td", null, [
          row.owner !== undefined ? h("div", { class: "chip" }, cut(row.owner, 120)) : h("span", { class: "dim" }, "—"),
          row.title !== undefined ? h("div", null, cut(row.title, 200)) : null,
        ]),
        h("td", { class: "dim" }, row.updatedAt ? row.updatedAt.replace("T", " ").replace(/\.\d+Z$/, "Z") : "—"),
        h("td", null, bytes(row.bytes)),
        h("td", null, String(row.messages)),
        h(
          "td",
          null,
          row.types.length
            ? row.types.map((entry) =>
                h(
                  "span",
                  { class: "chip", title: `key ${show(entry.key)}` },
                  `${cut(entry.$type, 80)} v${entry.version}`,
                ),
              )
            : h("span", { class: "dim" }, row.encrypted ? "encrypted" : "—"),
        ),
        h("td", null, [
          badge(row.validity),
          row.problems ? h("span", { class: "dim" }, ` ${row.problems} problem${row.problems === 1 ? "" : "s"}`) : null,
        ]),
      ]),
    );
  }
  if (cursor) {
    const back = trail.length > 1 ? { cursor: trail[trail.length - 2], trail: trail.slice(0, -1).join("\n") } : {};
    pager.appendChild(link("sessions", { ...filters, ...back }, "← previous page", "prev-page"));
  }
  pager.appendChild(h("span", { class: "dim" }, `${page.items.length} shown, ${page.scanned} read from the store`));
  if (page.cursor)
    pager.appendChild(
      link(
        "sessions",
        { ...filters, cursor: page.cursor, trail: [...trail, page.cursor].join("\n") },
        "next page →",
        "next-page",
      ),
    );
}
