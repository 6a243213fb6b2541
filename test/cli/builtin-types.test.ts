/**
 * Issue #34.17: a type statebag itself writes is always in the CLI's registry. `statebag inspect` of
 * the chat index document statebag/http 0.1.0 kept per owner exited 1 ("statebag.http.ChatIndex was
 * not checked"); it is now checked like any built-in type, with or without a project registry. A
 * rule test reads every `$type` literal the runtime writes and asks the CLI's registry for each, so
 * a built-in type added later without the CLI knowing it fails here.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliDefaultRegistry, withCliBuiltins } from "../../src/cli/registry.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";
import { SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { cli, REPO, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** The document StoreChatIndex of statebag/http 0.1.0 saved for an owner (git show 2e1d915:src/runtime/http/chat-index.ts). */
function chatIndexDocument(id: string, chats: unknown[]): AgentSession {
  return {
    id,
    stateBag: {
      "statebag.http.chats": { $type: "statebag.http.ChatIndex", $version: 1, chats } as never,
    },
  };
}

async function storeWith(name: string, session: AgentSession): Promise<string> {
  const path = join(tmp.dir, `${name}.db`);
  const store = new SqliteSessionStore({ path, codec: defaultSessionCodec() });
  await store.setup();
  await store.save(session, { expectedRevision: null });
  await store.close();
  return `sqlite:${path}`;
}

describe("statebag inspect: the chat index document statebag/http 0.1.0 wrote", () => {
  const id = "chat-index/ada";
  const chats = [
    { id: "c2", title: "Lisbon trip", updatedAt: "2026-11-26T10:00:00.000Z" },
    { id: "c1", title: "Hello", updatedAt: "2026-11-25T09:00:00.000Z" },
  ];

  it("is checked and valid (exit 0), without a project registry", async () => {
    const store = await storeWith("index", chatIndexDocument(id, chats));
    const run = await cli(["inspect", "--store", store, id, "--brief"], { cwd: tmp.dir });
    expect(run.stdout + run.stderr).not.toContain("not checked");
    expect(run.stdout).toContain("✔ valid");
    expect(run.code).toBe(0);
    const json = (await cli(["inspect", "--store", store, id, "--json"], { cwd: tmp.dir })).json();
    expect(json.ok).toBe(true);
    expect(json.validation).toMatchObject({ ok: true, unchecked: 0, preserved: [] });
  });

  it("is checked with a project registry too (generatedTypes or a registry used as it is)", async () => {
    const store = await storeWith("index-project", chatIndexDocument(id, chats));
    const generated = join(tmp.dir, "generated-registry.mjs");
    writeFileSync(generated, "export const generatedTypes = [];\n");
    const own = join(tmp.dir, "own-registry.ts");
    writeFileSync(
      own,
      `import { TypeRegistry } from ${JSON.stringify(join(REPO, "src/index.ts"))};\nexport const registry = new TypeRegistry();\n`,
    );
    for (const module of [generated, own]) {
      const run = await cli(["inspect", "--store", store, id, "--brief", "--registry", module], { cwd: tmp.dir });
      expect(run.stdout, module).toContain("✔ valid");
      expect(run.code, module).toBe(0);
    }
  });

  it("is checked, not waved through: a corrupted index is a problem at its pointer (exit 1)", async () => {
    const store = await storeWith("index-bad", chatIndexDocument(id, [{ id: 7, title: "x", updatedAt: "y" }]));
    const run = await cli(["inspect", "--store", store, id, "--json"], { cwd: tmp.dir });
    expect(run.code).toBe(1);
    expect(run.json().validation.problems).toEqual([
      expect.objectContaining({ pointer: "/session/stateBag/statebag.http.chats/chats/0/id" }),
    ]);
  });

  it("a project registry that declares the type itself keeps its own definition", () => {
    const own = new TypeRegistry();
    const def = own.register({
      $type: "statebag.http.ChatIndex",
      version: 3,
      schema: { type: "object", properties: { chats: { type: "array" } } },
    });
    expect(withCliBuiltins(own).get("statebag.http.ChatIndex")).toBe(def);
  });
});

/** Every `.ts` file under a folder. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/**
 * `$type` literals in the runtime that are not statebag session state, each with why: they are
 * written only into other formats' documents, or are test fixtures.
 */
const NOT_STORED_BY_STATEBAG = new Map<string, string>([
  ["statebag.SessionInfo", "written only into exported Agent Framework documents; import removes it"],
  ["unknown", "the .NET DTO wrapper of an exported document's unknown content"],
  ["agent_thread_state", "an Agent Framework Python document's type"],
  ["chat_message_store_state", "an Agent Framework Python document's type"],
  ["chat", "statebag/http's value of the label statebag.type (a chat session), not a $type"],
]);

describe("every built-in $type statebag writes is in the CLI's registry", () => {
  it("finds each $type literal of src/runtime in cliDefaultRegistry()", () => {
    const registry = cliDefaultRegistry();
    const found = new Map<string, string>();
    const root = join(REPO, "src/runtime");
    for (const file of sources(root)) {
      // The conformance kit's sessions are a test's (test.Counter, test.Blob), not statebag's.
      if (relative(root, file).startsWith("testing")) continue;
      const text = readFileSync(file, "utf8").replace(/^\s*(?:\/\/|\*).*$/gm, "");
      for (const m of text.matchAll(/\$type: "([^"$]+)"|\b[A-Z_]*TYPE = "([^"$]+)"/g)) {
        const type = m[1] ?? m[2];
        if (!found.has(type)) found.set(type, relative(REPO, file));
      }
    }
    // The scan sees the writers it must (a scan that finds nothing would pass vacuously).
    expect([...found.keys()]).toEqual(
      expect.arrayContaining(["InMemoryChatHistoryState", "statebag.ToolApprovalState", "text", "functionCall"]),
    );
    const unknown = [...found]
      .filter(([type]) => !registry.has(type) && !NOT_STORED_BY_STATEBAG.has(type))
      .map(([type, file]) => `${type} (${file})`);
    expect(unknown).toEqual([]);
  });

  it("holds the chat index type that defaultRegistry() lacks, and every type of defaultRegistry()", () => {
    const registry = cliDefaultRegistry();
    expect(defaultRegistry().has("statebag.http.ChatIndex")).toBe(false);
    expect(registry.has("statebag.http.ChatIndex")).toBe(true);
    for (const def of defaultRegistry().types()) expect(registry.get(def.$type)).toBe(def);
  });
});
