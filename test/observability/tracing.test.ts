/**
 * #23 Observability: OpenTelemetry spans of traced stores (openStore's `tracing`), withSession and
 * migrateStore, recorded with the SDK's InMemorySpanExporter on memory and SQLite: names,
 * attributes, nesting, error status, and no session id, content, owner, label or password in
 * anything exported.
 */
import { createHash, createHmac } from "node:crypto";
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { tracingOf } from "../../src/runtime/core/tracing-hooks.js";
import {
  ConflictError,
  migrateStore,
  openStore,
  tracedStore,
  withSession,
  type OtelTracer,
  type OtelTracerProvider,
  type SessionStore,
} from "../../src/stores.js";
import { envelope, testRegistry, v1Session } from "../migrations/helpers.js";
import { SeedingCodec } from "../migrations/store-helpers.js";

/** Everything that must never reach a span: ids, owner, title, labels, content, a password. */
const ID = "sess-SECRET-id-4711";
const OWNED = "owned-SECRET-id-0815";
const OWNER = "tenant-SECRET-owner";
const TITLE = "SECRET-title";
const LABEL = "SECRET-label-value";
const PASSWORD = "hunter2-SECRET-password";
const SECRETS = [ID, OWNED, OWNER, TITLE, LABEL, PASSWORD, "note 1 for", "SECRET"];

const hash = (id: string) => createHash("sha256").update(id).digest("hex").slice(0, 16);

// The structural types accept the SDK's provider and tracer (type-checked here).
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const asProvider: OtelTracerProvider = provider;
const asTracer: OtelTracer = provider.getTracer("t");
void asTracer;

const dir = mkdtempSync(join(tmpdir(), "statebag-otel-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function spans(name?: string): ReadableSpan[] {
  const all = exporter.getFinishedSpans();
  return name === undefined ? all : all.filter((s) => s.name === name);
}

function parentOf(span: ReadableSpan): ReadableSpan | undefined {
  const id = span.parentSpanContext?.spanId;
  return id === undefined ? undefined : spans().find((s) => s.spanContext().spanId === id);
}

/** Every string an exporter would send for these spans. */
function exportedText(list: readonly ReadableSpan[]): string[] {
  const out: string[] = [];
  const add = (attributes: Record<string, unknown> | undefined) => {
    for (const [key, value] of Object.entries(attributes ?? {})) out.push(key, JSON.stringify(value));
  };
  for (const s of list) {
    out.push(s.name, s.status.message ?? "");
    add(s.attributes);
    add(s.resource.attributes as Record<string, unknown>);
    for (const e of s.events) {
      out.push(e.name);
      add(e.attributes);
    }
  }
  return out;
}

const backends = [
  { name: "memory", system: "memory", url: () => "memory:", collection: undefined },
  {
    name: "sqlite",
    system: "sqlite",
    url: () => `sqlite:${join(dir, `t-${Math.random().toString(36).slice(2)}.db`)}`,
    collection: "statebag_sessions",
  },
];

describe.each(backends)("tracing on $name", (backend) => {
  let store: SessionStore;
  let codec: SeedingCodec;
  const registry = testRegistry();
  const all: ReadableSpan[] = [];

  beforeAll(async () => {
    codec = new SeedingCodec();
    store = await openStore(backend.url(), { codec, tracing: { tracerProvider: asProvider } });
    // A session as the previous release stored it (three values at v1), with content and a password.
    const old = v1Session(ID, 1);
    (old.stateBag.visits as unknown as { page: string }).page = `/login?password=${PASSWORD}`;
    codec.raw.set(ID, envelope(old));
    await store.save({ id: ID, stateBag: {} }, { expectedRevision: null });
    codec.raw.delete(ID);
  });
  beforeEach(() => exporter.reset());
  afterEach(() => all.push(...spans()));
  afterAll(async () => {
    await store.close();
  });

  it("withSession -> load (migrated) -> save, with the database and statebag attributes", async () => {
    const result = await withSession(store, ID, () => "ran", {});
    expect(result.attempts).toBe(1);
    const [session] = spans("statebag.session");
    const [load] = spans("statebag.load");
    const [save] = spans("statebag.save");
    expect(parentOf(session)).toBeUndefined();
    expect(parentOf(load)).toBe(session);
    expect(parentOf(save)).toBe(session);
    expect(session.attributes).toMatchObject({
      "db.operation.name": "withSession",
      "statebag.session.id_hash": hash(ID),
      "statebag.cas.attempt": 1,
      "statebag.outcome": "ok",
    });
    const common = {
      "db.system.name": backend.system,
      ...(backend.collection ? { "db.collection.name": backend.collection } : {}),
    };
    expect(load.attributes).toMatchObject({
      ...common,
      "db.operation.name": "get",
      "statebag.session.id_hash": hash(ID),
      "statebag.session.format_version": 1,
      "statebag.migrations.applied": 3,
      "statebag.types": ["InMemoryChatHistoryState@3", "RollingSummaryState@2", "test.Visits@2"],
      "statebag.cas.attempt": 1,
      "statebag.outcome": "ok",
    });
    expect(load.attributes["statebag.session.bytes"]).toBeGreaterThan(100);
    expect(save.attributes).toMatchObject({
      ...common,
      "db.operation.name": "save",
      "statebag.session.format_version": 1,
      "statebag.outcome": "ok",
      "statebag.cas.attempt": 1,
    });
    expect(save.attributes["statebag.session.bytes"]).toBeGreaterThan(100);
    expect(load.kind).toBe(2); // CLIENT
    expect(load.status.code).toBe(0);
  });

  it("a compare-and-swap conflict: the refused save is an error span, the retry is attempt 2", async () => {
    await withSession(
      store,
      ID,
      async (_session, { attempt }) => {
        if (attempt === 1) {
          const fresh = (await store.get(ID))!;
          await store.save(fresh.session, { expectedRevision: fresh.revision });
        }
      },
      { onConflict: "retry", retryDelayMs: () => 0 },
    );
    const [session] = spans("statebag.session");
    expect(session.attributes).toMatchObject({ "statebag.cas.attempt": 2, "statebag.outcome": "ok" });
    expect(session.events.map((e) => [e.name, e.attributes])).toEqual([
      ["statebag.cas.conflict", { "statebag.cas.attempt": 1 }],
    ]);
    // In order: the concurrent save fn made (inside attempt 1), withSession's refused save, the retry's.
    const saves = spans("statebag.save").filter((s) => parentOf(s) === session);
    expect(
      saves.map((s) => [
        s.attributes["statebag.cas.attempt"],
        s.attributes["statebag.outcome"],
        s.attributes["error.type"],
        s.status.code,
      ]),
    ).toEqual([
      [1, "ok", undefined, 0],
      [1, "conflict", "conflict", 2],
      [2, "ok", undefined, 0],
    ]);
    expect(saves[1].status.message).toBe("conflict");
  });

  it("a conflict withSession gives up on: the call's span is a conflict with error status", async () => {
    await expect(
      withSession(store, ID, async () => {
        const fresh = (await store.get(ID))!;
        await store.save(fresh.session, { expectedRevision: fresh.revision });
      }),
    ).rejects.toBeInstanceOf(ConflictError);
    const [session] = spans("statebag.session");
    expect(session.attributes).toMatchObject({ "statebag.outcome": "conflict", "error.type": "conflict" });
    expect(session.status).toEqual({ code: 2, message: "conflict" });
  });

  it("not found, invalid sessions, owned sessions, list, delete and purge", async () => {
    expect(await store.get("absent-SECRET")).toBeUndefined();
    const [absent] = spans("statebag.load");
    expect(absent.attributes).toMatchObject({
      "statebag.outcome": "not-found",
      "statebag.session.id_hash": hash("absent-SECRET"),
    });
    expect(absent.status.code).toBe(0);

    await expect(
      store.save(
        { id: ID, stateBag: { bad: { $type: "test.Visits", $version: 2, count: "SECRET" } as never } },
        { expectedRevision: null },
      ),
    ).rejects.toThrow();
    const [invalid] = spans("statebag.save");
    expect(invalid.attributes["statebag.outcome"]).toBe("error");
    expect(invalid.status.code).toBe(2);
    expect(typeof invalid.attributes["error.type"]).toBe("string");

    await withSession(store, OWNED, () => {}, {
      owner: OWNER,
      meta: { title: TITLE, labels: { kind: LABEL } },
      ttlMs: 1,
    });
    const page = await store.list({ owner: OWNER, labels: { kind: LABEL } });
    expect(spans("statebag.list")[0].attributes).toMatchObject({
      "db.operation.name": "list",
      "db.response.returned_rows": page.items.length,
      "statebag.outcome": "ok",
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const purged = await store.purgeExpired();
    expect(spans("statebag.purge")[0].attributes).toMatchObject({
      "db.operation.name": "purgeExpired",
      "statebag.sessions.deleted": purged,
    });
    await withSession(store, "erased-SECRET-id", () => {}, { owner: OWNER });
    const receipt = await store.eraseOwner(OWNER);
    const [erase] = spans("statebag.erase");
    expect(erase.attributes).toMatchObject({
      "db.operation.name": "eraseOwner",
      "statebag.sessions.deleted": receipt.sessions,
      "statebag.outcome": "ok",
    });
    expect(receipt.sessions).toBeGreaterThanOrEqual(1);
    expect(await store.delete("absent-SECRET")).toBe(false);
    expect(spans("statebag.delete")[0].attributes["statebag.outcome"]).toBe("not-found");
    // Methods that are not traced are the store's own.
    expect((await store.setup()).version).toBeGreaterThanOrEqual(0);
    expect(store.kind).toBe(backend.name);
  });

  it("migrateStore: a span per run and per session, saves nested under the session", async () => {
    const id = "mig-SECRET-id";
    codec.raw.set(id, envelope(v1Session(id, 2)));
    await store.save({ id, stateBag: {} }, { expectedRevision: null });
    codec.raw.delete(id);
    exporter.reset();
    const report = await migrateStore(store, { registry });
    expect(report.migrated).toBeGreaterThanOrEqual(1);
    const [run] = spans("statebag.migrate");
    expect(parentOf(run)).toBeUndefined();
    expect(run.attributes).toMatchObject({
      "db.operation.name": "migrateStore",
      "statebag.migrate.scanned": report.scanned,
      "statebag.migrate.migrated": report.migrated,
      "statebag.outcome": "ok",
    });
    const sessions = spans("statebag.migrate.session");
    expect(sessions.every((s) => parentOf(s) === run)).toBe(true);
    const one = sessions.find((s) => s.attributes["statebag.session.id_hash"] === hash(id))!;
    expect(one.attributes).toMatchObject({
      "statebag.migrate.result": "migrated",
      "statebag.migrations.applied": 3,
      "statebag.session.format_version": 1,
      "statebag.cas.attempt": 1,
      "statebag.outcome": "ok",
    });
    const save = spans("statebag.save").find((s) => parentOf(s) === one)!;
    expect(save.attributes).toMatchObject({ "statebag.session.id_hash": hash(id), "statebag.outcome": "ok" });
    expect(spans("statebag.scan").every((s) => parentOf(s) === run)).toBe(true);
  });

  it("blobs: put, get, delete, sweep and erase are spans with sizes and counts, never the owner, hash or name", async () => {
    const blobs = store.blobs!;
    const bytes = new TextEncoder().encode(`SECRET file body ${"x".repeat(300_000)}`);
    const put = await blobs.put(bytes, { owner: OWNER, mediaType: "text/plain", name: `${TITLE}.txt` });
    const read = await blobs.get(put.hash, { owner: OWNER });
    await read!.stream.cancel();
    expect(await blobs.get(put.hash, { owner: "someone-else" })).toBeUndefined();
    expect(await blobs.delete(put.hash, { owner: "someone-else" })).toBe(false);
    await blobs.sweep({ owner: OWNER, referenced: new Set([put.hash]) });
    expect(await blobs.eraseOwner(OWNER)).toEqual({ blobs: 1, bytes: bytes.length });
    const [putSpan] = spans("statebag.blob.put");
    expect(putSpan?.attributes).toMatchObject({
      "db.operation.name": "blobs.put",
      "statebag.blob.size": bytes.length,
      "statebag.blob.created": true,
      "statebag.outcome": "ok",
    });
    expect(spans("statebag.blob.get").map((span) => span.attributes["statebag.outcome"])).toEqual(["ok", "not-found"]);
    expect(spans("statebag.blob.get")[0]?.attributes["statebag.blob.size"]).toBe(bytes.length);
    expect(spans("statebag.blob.delete")[0]?.attributes["statebag.outcome"]).toBe("not-found");
    expect(spans("statebag.blob.sweep")[0]?.attributes["statebag.blobs.deleted"]).toBe(0);
    expect(spans("statebag.blob.erase")[0]?.attributes["statebag.blobs.deleted"]).toBe(1);
    const text = exportedText(spans()).join("\n");
    for (const secret of [OWNER, TITLE, put.hash, "SECRET"]) expect(text).not.toContain(secret);
  });

  it("nothing exported names a session id, an owner, a title, a label, content or a password", () => {
    expect(all.length).toBeGreaterThan(20);
    const text = exportedText(all);
    for (const secret of [...SECRETS, dir])
      for (const value of text) expect(value, `a span carries ${secret}`).not.toContain(secret);
  });
});

describe("tracing defaults and context", () => {
  afterEach(() => {
    trace.disable();
    context.disable();
    exporter.reset();
  });

  it("off without a registered global provider (the store is returned as it is), on with one", async () => {
    const plain = await openStore("memory:");
    expect(tracingOf(plain)).toBeUndefined();
    trace.setGlobalTracerProvider(provider);
    const traced = await openStore("memory:");
    expect(tracingOf(traced)).toBeDefined();
    await traced.get("x");
    expect(spans("statebag.load")).toHaveLength(1);
    expect(tracingOf(await openStore("memory:", { tracing: false }))).toBeUndefined();
  });

  it("with a context manager, statebag's spans are children of the application's span", async () => {
    const storage = new AsyncLocalStorage<Context>();
    const manager: ContextManager = {
      active: () => storage.getStore() ?? ROOT_CONTEXT,
      with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.call(thisArg, ...args)),
      bind: (_ctx, target) => target,
      enable() {
        return this;
      },
      disable() {
        storage.disable();
        return this;
      },
    };
    context.setGlobalContextManager(manager);
    const store = await openStore("memory:", { tracing: { tracerProvider: provider } });
    const tracer = provider.getTracer("app");
    await tracer.startActiveSpan("app.request", async (span) => {
      await withSession(store, ID, async () => {
        await tracer.startActiveSpan("app.model", async (inner) => {
          await store.list({ owner: OWNER });
          inner.end();
        });
      });
      span.end();
    });
    const [request] = spans("app.request");
    const [session] = spans("statebag.session");
    expect(parentOf(session)).toBe(request);
    expect(parentOf(spans("statebag.load")[0])).toBe(session);
    expect(parentOf(spans("statebag.list")[0])).toBe(spans("app.model")[0]);
  });

  it("tracedStore wraps a store built by hand, with a keyed id hash", async () => {
    const { MemorySessionStore } = await import("../../src/stores.js");
    const store = tracedStore(new MemorySessionStore(), provider.getTracer("statebag"), { idHashKey: "k" });
    expect(tracedStore(store, provider.getTracer("statebag"))).toBe(store);
    await store.get(ID);
    const [load] = spans("statebag.load");
    expect(load.attributes["statebag.session.id_hash"]).toBe(createHmacHex("k", ID));
    expect(store instanceof MemorySessionStore).toBe(true);
  });
});

function createHmacHex(key: string, id: string): string {
  return createHmac("sha256", key).update(id).digest("hex").slice(0, 16);
}
