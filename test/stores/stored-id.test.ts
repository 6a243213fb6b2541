/**
 * Issue #21.5: a stored row whose document id differs from its key. Every backend refuses it at
 * load (store.get) with one typed error naming the key and the document's id; withSession reports
 * that error instead of blaming its callback, and a bulk migration words it the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { defaultSessionCodec, loadStoredSession, StoredSessionIdError } from "../../src/runtime/stores/codec.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import { migrateStore } from "../../src/runtime/stores/migrate.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { SessionCodec, SessionStore, StoredSession } from "../../src/runtime/stores/types.js";
import { withSession } from "../../src/runtime/stores/with-session.js";
import { allBackends, counterSession, type Backend } from "./helpers.js";

const honest = defaultSessionCodec();
/** Writes every session as if its id were `id`: the row ends up under one key holding another id. */
const writesAs = (id: string): SessionCodec => ({
  serialize: (session) => honest.serialize({ ...session, id }),
  deserialize: (text, key) => honest.deserialize(text, key),
});

async function rejection(promise: Promise<unknown>): Promise<StoredSessionIdError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoredSessionIdError);
  return error as StoredSessionIdError;
}

describe.each(allBackends)("$name store: a row whose session id is not its key", (backend: Backend) => {
  let url: string;
  let cleanup: () => Promise<void>;
  let store: SessionStore;

  beforeAll(async () => {
    ({ url, cleanup } = await backend.location());
    // memory: is a new store per openStore call, so the one store both writes and reads.
    store = await openStore(url, { codec: writesAs("the-other-one") });
  });
  afterAll(async () => {
    await store?.close();
    await cleanup?.();
  });

  it("store.get refuses it with a typed error naming the key and the document's id", async () => {
    const revision = await store.save(counterSession("the-key", 1), { expectedRevision: null });
    const error = await rejection(store.get("the-key"));
    expect(error.code).toBe("session-invalid");
    expect(error.key).toBe("the-key");
    expect(error.documentId).toBe("the-other-one");
    expect(error.message).toContain('stored under the key "the-key"');
    expect(error.message).toContain('has the id "the-other-one"');
    expect(error.message).toContain(store.url);
    expect(error.hint).toMatch(/delete the row "the-key", or save the document under its own id "the-other-one"/);
    // Nothing is lost: the row is still there, as written.
    const page = await store.scan({ includeText: true });
    expect(page.items.map((i) => [i.id, i.revision])).toEqual([["the-key", revision]]);
  });

  it("withSession reports the row, not its callback, and runs nothing", async () => {
    let ran = false;
    const error = await rejection(
      withSession(store, "the-key", () => {
        ran = true;
      }),
    );
    expect(ran).toBe(false);
    expect(error.message).not.toMatch(/fn changed/);
    expect(error.key).toBe("the-key");
  });

  it("a bulk migration fails the row with the same wording", async () => {
    const report = await migrateStore(store, { dryRun: true });
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]).toMatchObject({ id: "the-key", pointer: "/session/id", code: "session" });
    expect(report.failed[0].message).toBe(new StoredSessionIdError("the-key", "the-other-one").message.split("\n")[0]);
  });
});

describe("the stored-id rule", () => {
  it("escapes and cuts both ids in the message", () => {
    const key = `k\u001b[31m${"x".repeat(5000)}`;
    const error = new StoredSessionIdError(key, `d\n\u0007${"y".repeat(5000)}`);
    expect(error.message).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
    expect(error.message.split("\n")[0]).not.toContain("\n");
    expect(error.message).toContain("\\u001b[31m");
    expect(error.message).toContain("\\n\\u0007");
    expect(error.message.length).toBeLessThan(700);
    // The exact values stay on the error for programs.
    expect(error.key).toBe(key);
  });

  it("names a non-string id by what it is", () => {
    const error = new StoredSessionIdError("k", 42);
    expect(error.message).toContain("has the id number 42");
    expect(error.hint).not.toContain("own id number");
  });

  it("applies to a store implemented elsewhere through withSession", async () => {
    // A third-party store that does not check: withSession still names the row.
    const inner = new MemorySessionStore();
    await inner.save(counterSession("elsewhere", 1), { expectedRevision: null });
    const lying: SessionStore = Object.assign(Object.create(inner) as SessionStore, {
      get: async (id: string): Promise<StoredSession | undefined> => {
        const loaded = await inner.get(id);
        return loaded && { ...loaded, session: { ...loaded.session, id: "someone-else" } as AgentSession };
      },
    });
    const error = await rejection(withSession(lying, "elsewhere", () => undefined));
    expect(error.documentId).toBe("someone-else");
  });

  it("hands the codec the key, so a codec that does not read ids can answer with it", () => {
    const seen: (string | undefined)[] = [];
    const raw: SessionCodec = {
      serialize: () => "",
      deserialize: (_text, key) => (seen.push(key), { id: key ?? "", stateBag: {} }),
    };
    expect(loadStoredSession(raw, "abc", "{}").id).toBe("abc");
    expect(seen).toEqual(["abc"]);
  });
});
