/**
 * Stream buffers beyond the contract's single store object (the contract: src/runtime/testing/
 * conformance/streams.ts): two store objects on one location (two processes' view: no in-process
 * wakeup helps) follow and stop each other's streams; PostgreSQL follows through LISTEN, and polls
 * behind PgBouncer; a SQLite file of format 2 gains the stream tables on open; an encrypting
 * store keeps no chunk and no owner in plaintext, and a chunk moved to another position does not
 * open; a traced store passes the buffer (and the encryption) through, with spans.
 */
import { DatabaseSync } from "node:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, describe, expect, it } from "vitest";
import {
  DecryptionError,
  encryptedMessageCodec,
  encryptedSessionCodec,
  openStore,
  PostgresSessionStore,
  SQLITE_SCHEMA_VERSION,
  SqliteSessionStore,
  StreamClosedError,
  type SessionStore,
  type StreamBuffer,
} from "../../src/stores.js";
import { allBackends, type Backend, PG_URL, pgBouncerBackend, scaleOutBackends, serverUp } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "statebag-streams-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

const streamsOf = (store: SessionStore): StreamBuffer => store.streams!;
const shared = [...allBackends, ...scaleOutBackends].filter((b) => b.durable);

describe.each(shared.map((b) => [b.name, b] as [string, Backend]))(
  "%s: two store objects on one location",
  (_, backend) => {
    it("a follower on one sees the other's appends live, in order, and ends on its finish; a stop reaches the writer", async () => {
      const { url, cleanup } = await backend.location();
      const writerStore = await openStore(url);
      const readerStore = await openStore(url);
      try {
        const writer = streamsOf(writerStore);
        const reader = streamsOf(readerStore);
        await writer.open("turn-1", { sessionId: "chat-1", owner: "user-1", leaseMs: 60_000 });
        const followed = collect(reader.follow("turn-1"));
        const expected: string[] = [];
        for (let i = 0; i < 20; i++) {
          const chunk = JSON.stringify({ type: "text-delta", id: "t", delta: `part ${i} é🌍` });
          expected.push(chunk);
          await writer.append("turn-1", [chunk], 60_000);
        }
        expect(await reader.requestStop("turn-1")).toBe(true);
        expect((await writer.append("turn-1", ["last"], 60_000)).stopRequested).toBe(true);
        expected.push("last");
        expect(await writer.finish("turn-1", "stopped", { keepMs: 60_000 })).toBe(true);
        expect(await followed).toEqual(expected);
        expect((await reader.read("turn-1", { from: 18, limit: 2 }))?.chunks).toEqual(expected.slice(18, 20));
        expect((await reader.info("turn-1"))?.status).toBe("stopped");
        // The reader's process takes over nothing live, and is told the writer's stream is closed.
        await expect(reader.append("turn-1", ["x"], 1000)).rejects.toBeInstanceOf(StreamClosedError);
        // Deleting the session through the other object removes the stream for both.
        await readerStore.save({ id: "chat-1", stateBag: {} }, { expectedRevision: null, meta: { owner: "user-1" } });
        expect(await readerStore.delete("chat-1")).toBe(true);
        expect(await writer.info("turn-1")).toBeUndefined();
      } finally {
        await writerStore.close();
        await readerStore.close();
        await cleanup();
      }
    });
  },
);

describe.each(shared.map((b) => [b.name, b] as [string, Backend]))("%s: the writer's lease", (_, backend) => {
  it("an append leaves a lease with nine tenths or more left as it is; renew, and appends once it has run down, write it", async () => {
    const { url, cleanup } = await backend.location();
    const store = await openStore(url);
    try {
      const streams = streamsOf(store);
      await streams.open("lease-1", { sessionId: "chat-1", leaseMs: 60_000 });
      const opened = (await streams.info("lease-1"))!.leaseExpiresAt;
      // Well under 6 s (a tenth of the lease) later: the append writes no lease.
      expect((await streams.append("lease-1", ["a"], 60_000)).length).toBe(1);
      expect((await streams.info("lease-1"))!.leaseExpiresAt).toBe(opened);
      // A renewal always writes it (here shorter: 20 s from now).
      await streams.renew("lease-1", 20_000);
      const renewed = (await streams.info("lease-1"))!.leaseExpiresAt;
      expect(renewed).toBeLessThan(opened - 30_000);
      // Less than nine tenths of the append's lease is left: the append renews it.
      const before = Date.now();
      expect((await streams.append("lease-1", ["b"], 60_000)).length).toBe(2);
      expect((await streams.info("lease-1"))!.leaseExpiresAt).toBeGreaterThanOrEqual(before + 60_000 - 50);
      expect((await streams.read("lease-1", { from: 0 }))?.chunks).toEqual(["a", "b"]);
    } finally {
      await store.close();
      await cleanup();
    }
  });

  it("a writer appending less than nine tenths of its lease apart is never taken over; once it stops, its stream is within the lease after its last append", async () => {
    const { url, cleanup } = await backend.location();
    const writerStore = await openStore(url);
    const recoveringStore = await openStore(url);
    try {
      const writer = streamsOf(writerStore);
      const recovering = streamsOf(recoveringStore);
      const lease = 2000;
      await writer.open("lease-2", { sessionId: "chat-1", leaseMs: lease });
      const followed = collect(recovering.follow("lease-2"));
      // Appends up to 60% of the lease apart, some under a tenth (no lease write), some over.
      const gaps = [20, 900, 100, 1200, 10, 10, 1000];
      let lastWrite = Date.now();
      for (const gap of gaps) {
        // `gap` ms after the previous append started (the checks below take some of it).
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastWrite + gap - Date.now())));
        lastWrite = Date.now();
        await writer.append("lease-2", [`after ${gap}`], lease);
        const info = (await recovering.info("lease-2"))!;
        expect(info.leaseExpiresAt).toBeGreaterThan(Date.now());
        expect(await recovering.finish("lease-2", "interrupted", { keepMs: 60_000, onlyIfAbandoned: true })).toBe(
          false,
        );
      }
      // The writer dies: its lease ends no later than a lease after its last append, and then the
      // stream is taken over; the follower ended with every chunk.
      const { leaseExpiresAt } = (await recovering.info("lease-2"))!;
      expect(leaseExpiresAt).toBeLessThanOrEqual(Date.now() + lease);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, leaseExpiresAt - Date.now() + 60)));
      expect(await recovering.finish("lease-2", "interrupted", { keepMs: 60_000, onlyIfAbandoned: true })).toBe(true);
      expect(await followed).toEqual(gaps.map((gap) => `after ${gap}`));
      await expect(writer.append("lease-2", ["late"], lease)).rejects.toBeInstanceOf(StreamClosedError);
    } finally {
      await writerStore.close();
      await recoveringStore.close();
      await cleanup();
    }
  });
});

describe.runIf(serverUp.postgres)("PostgreSQL followers", () => {
  const listening = async (channelLike: string): Promise<number> => {
    const admin = new PostgresSessionStore({ connectionString: PG_URL, schema: "public" });
    try {
      const raw = (
        admin as unknown as { pool: { query(sql: string, p: unknown[]): Promise<{ rows: { n: string }[] }> } }
      ).pool;
      const { rows } = await raw.query(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'statebag' AND query LIKE $1",
        [`LISTEN "${channelLike}%`],
      );
      return Number(rows[0].n);
    } finally {
      await admin.close();
    }
  };

  /** Reads `probe` until it gives `want` (at most ~5 s), and returns the last value read. */
  const settlesTo = async (probe: () => Promise<number>, want: number): Promise<number> => {
    let value = await probe();
    for (let attempt = 0; value !== want && attempt < 50; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      value = await probe();
    }
    return value;
  };

  it("LISTEN on a connection of their own while someone follows (released after), NOTIFY from any process", async () => {
    const { postgresBackend } = await import("./helpers.js");
    const { url, cleanup } = await postgresBackend().location();
    const a = await openStore(url);
    const b = await openStore(url);
    try {
      const schema = new URL(url).searchParams.get("schema")!;
      const { streamChannel } = await import("../../src/runtime/stores/postgres/stream-buffer.js");
      const channel = streamChannel(schema);
      await streamsOf(a).open("s", { sessionId: "c", leaseMs: 60_000 });
      const controller = new AbortController();
      const seen: string[] = [];
      let first: () => void = () => undefined;
      const gotFirst = new Promise<void>((resolve) => {
        first = resolve;
      });
      const following = (async () => {
        for await (const chunk of streamsOf(b).follow("s", { signal: controller.signal })) {
          seen.push(chunk);
          first();
        }
      })();
      await streamsOf(a).append("s", ["one"], 60_000);
      await gotFirst;
      // LISTEN starts when the follower first waits, which may come just after it read "one".
      expect(await settlesTo(() => listening(channel), 1)).toBe(1);
      controller.abort();
      await following;
      expect(seen).toEqual(["one"]);
      expect(await settlesTo(() => listening(channel), 0)).toBe(0);
    } finally {
      await a.close();
      await b.close();
      await cleanup();
    }
  });

  it.runIf(scaleOutBackends.includes(pgBouncerBackend))(
    "behind PgBouncer (?pgbouncer=true) they never LISTEN, and still follow",
    async () => {
      const { url, cleanup } = await pgBouncerBackend.location();
      const a = await openStore(url);
      const b = await openStore(url);
      try {
        const schema = new URL(url).searchParams.get("schema")!;
        const { streamChannel } = await import("../../src/runtime/stores/postgres/stream-buffer.js");
        await streamsOf(a).open("s", { sessionId: "c", leaseMs: 60_000 });
        const following = collect(streamsOf(b).follow("s"));
        await streamsOf(a).append("s", ["one"], 60_000);
        await streamsOf(a).append("s", ["two"], 60_000);
        expect(await listening(streamChannel(schema))).toBe(0);
        await streamsOf(a).finish("s", "done", { keepMs: 60_000 });
        expect(await following).toEqual(["one", "two"]);
      } finally {
        await a.close();
        await b.close();
        await cleanup();
      }
    },
  );
});

describe("SQLite format 2 -> 3", () => {
  it("a writable open adds the stream tables to a format-2 file; its sessions stay; a read-only open asks for the upgrade", async () => {
    const path = join(dir, "v2.db");
    const v2 = new SqliteSessionStore({ path });
    await v2.save({ id: "old", stateBag: {} }, { expectedRevision: null, meta: { owner: "o" } });
    await v2.close();
    const raw = new DatabaseSync(path);
    raw.exec(`DROP TABLE statebag_stream_chunks; DROP TABLE statebag_streams;
      UPDATE statebag_meta SET value = 2 WHERE key = 'schema_version'`);
    raw.close();
    const readOnly = new SqliteSessionStore({ path, readOnly: true });
    await expect(readOnly.get("old")).rejects.toThrow(/storage format 2/);
    await readOnly.close();
    const store = new SqliteSessionStore({ path });
    expect(await store.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: true });
    expect((await store.get("old"))?.meta.owner).toBe("o");
    await store.streams.open("s", { sessionId: "old", leaseMs: 1000 });
    expect((await store.streams.append("s", ["a"], 1000)).length).toBe(1);
    await store.close();
  });
});

describe("encrypted stream buffers", () => {
  const keyring = { current: "k1", keys: { k1: Buffer.alloc(32, 7) } };
  const codecs = () => ({
    codec: encryptedSessionCodec({ keyring, store: "chat" }),
    messageCodec: encryptedMessageCodec({ keyring, store: "chat" }),
  });

  it("SQLite: no chunk and no owner in plaintext at rest; a chunk moved to another position or stream does not open", async () => {
    const path = join(dir, "enc.db");
    const store = await openStore(`sqlite:${path}`, codecs());
    try {
      await store.streams!.open("s1", { sessionId: "c", owner: "alice@example.com", leaseMs: 60_000 });
      await store.streams!.append("s1", ["SECRET-0", "SECRET-1"], 60_000);
      await store.streams!.open("s2", { sessionId: "c", owner: "alice@example.com", leaseMs: 60_000 });
      await store.streams!.append("s2", ["other"], 60_000);
      const raw = new DatabaseSync(path);
      const rows = raw
        .prepare("SELECT stream_id, seq, body FROM statebag_stream_chunks ORDER BY stream_id, seq")
        .all() as {
        body: string;
      }[];
      const owners = raw.prepare("SELECT owner FROM statebag_streams").all() as { owner: string }[];
      expect(rows.map((r) => r.body).some((b) => b.includes("SECRET"))).toBe(false);
      expect(rows.every((r) => r.body.startsWith('{"format":"statebag.encrypted"'))).toBe(true);
      expect(owners.every((r) => !r.owner.includes("alice"))).toBe(true);
      expect((await store.streams!.read("s1", { from: 0 }))?.chunks).toEqual(["SECRET-0", "SECRET-1"]);
      // Swap positions 0 and 1, then copy s2's chunk over s1's first.
      raw.exec(`UPDATE statebag_stream_chunks SET seq = 9 WHERE stream_id = 's1' AND seq = 0;
        UPDATE statebag_stream_chunks SET seq = 0 WHERE stream_id = 's1' AND seq = 1;
        UPDATE statebag_stream_chunks SET seq = 1 WHERE stream_id = 's1' AND seq = 9;`);
      await expect(store.streams!.read("s1", { from: 0 })).rejects.toBeInstanceOf(DecryptionError);
      raw.exec(`UPDATE statebag_stream_chunks SET body = (SELECT body FROM statebag_stream_chunks WHERE stream_id = 's2')
        WHERE stream_id = 's1' AND seq = 0`);
      await expect(store.streams!.read("s1", { from: 0, limit: 1 })).rejects.toBeInstanceOf(DecryptionError);
      raw.close();
    } finally {
      await store.close();
    }
  });

  it("a plaintext store's chunks do not open under encryption (no plaintext fallback)", async () => {
    const path = join(dir, "plain.db");
    const plain = await openStore(`sqlite:${path}`);
    await plain.streams!.open("s", { sessionId: "c", leaseMs: 60_000 });
    await plain.streams!.append("s", ["hello"], 60_000);
    await plain.close();
    const encrypted = await openStore(`sqlite:${path}`, codecs());
    try {
      await expect(encrypted.streams!.read("s", { from: 0 })).rejects.toBeInstanceOf(DecryptionError);
    } finally {
      await encrypted.close();
    }
  });

  it("a traced store passes the buffer through with spans, and still encrypts its chunks", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const path = join(dir, "traced.db");
    const store = await openStore(`sqlite:${path}`, { ...codecs(), tracing: { tracerProvider: provider } });
    try {
      const streams = store.streams!;
      await streams.open("s", { sessionId: "c", owner: "o", leaseMs: 60_000 });
      await streams.append("s", ["SECRET"], 60_000);
      expect(await streams.finish("s", "done", { keepMs: 60_000 })).toBe(true);
      expect(await collect(streams.follow("s"))).toEqual(["SECRET"]);
      const names = exporter.getFinishedSpans().map((s) => s.name);
      expect(names).toEqual(expect.arrayContaining(["statebag.stream.open", "statebag.stream.finish"]));
      expect(names).not.toContain("statebag.stream.append");
      const raw = new DatabaseSync(path);
      const bodies = raw.prepare("SELECT body FROM statebag_stream_chunks").all() as { body: string }[];
      raw.close();
      expect(bodies.length).toBe(1);
      expect(bodies[0].body.includes("SECRET")).toBe(false);
    } finally {
      await store.close();
    }
  });
});
