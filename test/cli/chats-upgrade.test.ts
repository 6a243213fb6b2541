/**
 * `statebag chats upgrade`: chats written by statebag 0.1.0's chat server (`ui-chat/<owner>/<chat>`
 * rows and `ui-chat-index/<owner>` index documents, seeded here as 0.1.0 wrote them) move to owned
 * sessions `ui-chat/<chat>`, on SQLite, PostgreSQL and Redis, and on an encrypted store. A dry run
 * writes nothing; a rerun is a no-op; a run stopped between creating a new row and deleting the old
 * one is finished by the next; a new id held by someone else is reported and nothing is lost.
 */
import { randomBytes } from "node:crypto";
import { chmodSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { escapeSegment as serverEscape } from "../../src/runtime/http/chat-flow.js";
import { escapeSegment } from "../../src/cli/commands/chats-upgrade.js";
import { serializeSession } from "../../src/runtime/persistence/serialization.js";
import { SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";
import type { SessionCodec } from "../../src/runtime/stores/types.js";
import { encryptionCodecs, openStore, type SessionStore } from "../../src/stores.js";
import { cli, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-chats-upgrade-");
const PG = process.env.STATEBAG_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS = process.env.STATEBAG_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const RUN = `${process.pid}_${randomBytes(3).toString("hex")}`;

const KEY = randomBytes(32);
const KEYRING = tmp.file("keyring.json", { current: "k1", keys: { k1: KEY.toString("base64") }, store: "chats" });
chmodSync(KEYRING, 0o600);
const encrypted = () => encryptionCodecs({ keyring: { current: "k1", keys: { k1: KEY } }, store: "chats" });

/** Stores sessions as they are, valid or not (the stored form, without validation). */
const unchecked: SessionCodec = {
  serialize: (session) => serializeSession(session, { validate: false }),
  deserialize: (text) => JSON.parse(text).session,
};

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  tmp.cleanup();
});

const ALICE = "alice@example.com";
/** An owner whose id holds both characters the 0.1.0 ids escape. */
const BOB = "bob/50%";
const CAROL = "carol";

const text = (role: "user" | "assistant", value: string, messageId: string) => ({
  role,
  messageId,
  contents: [{ $type: "text" as const, text: value }],
});

function chat(id: string, messages: ReturnType<typeof text>[]): any {
  return {
    id,
    kind: "local",
    stateBag: {
      "statebag.chatHistory": { $type: "InMemoryChatHistoryState", $version: 2, messages, droppedMessageCount: 0 },
    },
  };
}

function index(owner: string, chats: { id: string; title: string; updatedAt: string }[]): any {
  return {
    id: `ui-chat-index/${escapeSegment(owner)}`,
    stateBag: { "statebag.http.chats": { $type: "statebag.http.ChatIndex", $version: 1, chats } },
  };
}

const old = (owner: string, chatId: string) => `ui-chat/${escapeSegment(owner)}/${escapeSegment(chatId)}`;
const LONG = `${"word ".repeat(30)}end`;
const HOUR = 3_600_000;

/** What statebag 0.1.0 left in a store: three chats of alice (one listed without a title, one unlisted), one of bob. */
async function seed(store: SessionStore): Promise<void> {
  await store.save(chat(old(ALICE, "c1"), [text("user", "hi", "m1"), text("assistant", "hello", "m2")]), {
    expectedRevision: null,
  });
  await store.save(chat(old(ALICE, "a/b"), [text("user", "second chat", "m3")]), { expectedRevision: null });
  await store.save(chat(old(ALICE, "c2"), [text("user", `  ${LONG}\n`, "m4")]), { expectedRevision: null });
  // Saved with a time to live: the moved chat expires when this one would have.
  await store.save(chat(old(BOB, "c9"), [text("user", "bob's chat", "m5")]), {
    expectedRevision: null,
    ttlMs: HOUR,
  });
  await store.save(
    index(ALICE, [
      { id: "a/b", title: "", updatedAt: "2026-01-03T00:00:00.000Z" },
      { id: "c1", title: "Greeting", updatedAt: "2026-01-02T00:00:00.000Z" },
      // Listed, but its row is gone (expired or deleted): nothing to move.
      { id: "gone", title: "Gone", updatedAt: "2026-01-01T00:00:00.000Z" },
    ]),
    { expectedRevision: null },
  );
  await store.save(index(BOB, [{ id: "c9", title: "Bob's", updatedAt: "2026-01-01T00:00:00.000Z" }]), {
    expectedRevision: null,
  });
  // Under the index documents' prefix, but no index document: an app's own session, never removed.
  await store.save(chat(`ui-chat-index/not-an-index`, []), { expectedRevision: null });
  // A chat already in the current layout, and a session that is no chat: both left alone.
  await store.save(chat("ui-chat/c7", [text("user", "current", "m7")]), {
    expectedRevision: null,
    meta: { owner: CAROL, title: "current", labels: { "statebag.type": "chat" } },
  });
  await store.save(chat("unrelated", []), { expectedRevision: null });
}

/** Every row as id -> revision. */
async function rows(store: SessionStore): Promise<Record<string, number>> {
  const all: Record<string, number> = {};
  let cursor: string | undefined;
  do {
    const page = await store.scan({ cursor, limit: 1000 });
    for (const item of page.items) all[item.id] = item.revision;
    cursor = page.cursor;
  } while (cursor);
  return all;
}

const historyOf = (s: any) => s.stateBag["statebag.chatHistory"].messages;

interface Backend {
  name: string;
  /** A fresh, empty store URL (cleaned up after the file), or undefined when the server is down. */
  url(): Promise<string | undefined>;
  codecs?: () => ReturnType<typeof encrypted>;
  args?: string[];
}

async function reachable(url: string): Promise<boolean> {
  const store = await openStore(url, { connectTimeoutMs: 1000 });
  try {
    await store.setup();
    return true;
  } catch {
    return false;
  } finally {
    await store.close().catch(() => undefined);
  }
}

let n = 0;
const BACKENDS: Backend[] = [
  { name: "SQLite", url: async () => `sqlite:${tmp.dir}/chats-${n++}.db` },
  {
    name: "SQLite, encrypted",
    url: async () => `sqlite:${tmp.dir}/chats-enc-${n++}.db`,
    codecs: encrypted,
    args: ["--keyring", KEYRING],
  },
  {
    name: "PostgreSQL",
    async url() {
      const schema = `chats_upgrade_${RUN}_${n++}`;
      const url = `${PG}?schema=${schema}`;
      if (!(await reachable(url))) return undefined;
      cleanups.push(async () => {
        const pg = await import("pg");
        const client = new pg.default.Client({ connectionString: PG });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      });
      return url;
    },
  },
  {
    name: "Redis",
    async url() {
      const prefix = `chats-upgrade-${RUN}-${n++}:`;
      const url = `${REDIS}?prefix=${prefix}`;
      if (!(await reachable(url))) return undefined;
      cleanups.push(async () => {
        const { Redis } = await import("ioredis");
        const redis = new Redis(REDIS);
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length) await redis.del(...keys);
        redis.disconnect();
      });
      return url;
    },
  },
];

describe.each(BACKENDS)("statebag chats upgrade on $name", (backend) => {
  const open = (url: string) => openStore(url, backend.codecs ? backend.codecs() : {});
  const run = (url: string, ...args: string[]) =>
    cli(["chats", "upgrade", "--store", url, ...(backend.args ?? []), ...args]);

  async function seeded(): Promise<string | undefined> {
    const url = await backend.url();
    if (url === undefined) return undefined;
    const store = await open(url);
    try {
      await store.setup();
      await seed(store);
    } finally {
      await store.close();
    }
    return url;
  }

  it("a dry run lists the moves and writes nothing; --apply moves every chat; a rerun is a no-op", async (ctx) => {
    const url = await seeded();
    if (url === undefined) return ctx.skip();
    const store = await open(url);
    try {
      const before = await rows(store);

      const dry = await run(url, "--json");
      expect(dry.stderr).toBe("");
      expect(dry.code).toBe(0);
      const plan = dry.json();
      expect(plan).toMatchObject({ ok: true, dryRun: true, found: 4, owners: 2, moved: 4, finished: 0, collisions: 0 });
      expect(plan.chats.map((c: any) => [c.from, c.to, c.action, c.title])).toEqual([
        [old(ALICE, "c1"), "ui-chat/c1", "would-move", "Greeting"],
        [old(ALICE, "a/b"), "ui-chat/a%2Fb", "would-move", "second chat"],
        [old(ALICE, "c2"), "ui-chat/c2", "would-move", `${LONG.slice(0, 79)}…`],
        [old(BOB, "c9"), "ui-chat/c9", "would-move", "Bob's"],
      ]);
      expect(plan.indexDocuments).toEqual([
        { id: `ui-chat-index/${escapeSegment(ALICE)}`, action: "would-remove" },
        { id: `ui-chat-index/${escapeSegment(BOB)}`, action: "would-remove" },
      ]);
      expect(await rows(store)).toEqual(before);
      const printed = await run(url);
      expect(printed.code).toBe(0);
      expect(printed.stdout).toContain("dry run: 4 0.1.0 chats of 2 owners");
      expect(printed.stdout).toContain(`${old(BOB, "c9")} -> ui-chat/c9`);
      expect(printed.stdout).toContain("nothing written: run again with --apply");
      expect(await rows(store)).toEqual(before);

      const applied = await run(url, "--apply", "--json");
      expect(applied.code).toBe(0);
      const report = applied.json();
      expect(report).toMatchObject({ ok: true, dryRun: false, found: 4, moved: 4, collisions: 0, failed: 0 });
      expect(report.chats.map((c: any) => c.action)).toEqual(["moved", "moved", "moved", "moved"]);
      expect(report.indexDocuments.map((d: any) => d.action)).toEqual(["removed", "removed"]);
      expect(Object.keys(await rows(store)).sort()).toEqual(
        [
          "ui-chat-index/not-an-index",
          "ui-chat/a%2Fb",
          "ui-chat/c1",
          "ui-chat/c2",
          "ui-chat/c7",
          "ui-chat/c9",
          "unrelated",
        ].sort(),
      );

      const c1 = (await store.get("ui-chat/c1"))!;
      expect(c1.session.id).toBe("ui-chat/c1");
      expect(historyOf(c1.session)).toEqual([text("user", "hi", "m1"), text("assistant", "hello", "m2")]);
      expect(c1.meta).toMatchObject({ owner: ALICE, title: "Greeting", labels: { "statebag.type": "chat" } });
      const listed = await store.list({ owner: ALICE, labels: { "statebag.type": "chat" }, order: "updatedAt desc" });
      const byId = Object.fromEntries(listed.items.map((i) => [i.id, i.meta]));
      expect(Object.keys(byId).sort()).toEqual(["ui-chat/a%2Fb", "ui-chat/c1", "ui-chat/c2"]);
      // Moved oldest first (by the 0.1.0 index), so the new list keeps the old order.
      expect(byId["ui-chat/c1"].updatedAt <= byId["ui-chat/a%2Fb"].updatedAt).toBe(true);
      expect(byId["ui-chat/a%2Fb"].updatedAt <= byId["ui-chat/c2"].updatedAt).toBe(true);
      const bobs = (await store.list({ owner: BOB })).items;
      expect(bobs.map((i) => [i.id, i.meta.title])).toEqual([["ui-chat/c9", "Bob's"]]);
      expect(bobs[0].ttlMs).toBeGreaterThan(0);
      expect(bobs[0].ttlMs).toBeLessThanOrEqual(HOUR);
      expect(c1.meta).not.toHaveProperty("ttlMs");
      expect((await store.list({ owner: ALICE })).items.every((i) => i.ttlMs === undefined)).toBe(true);
      // Erasure now finds the owner's chats.
      expect(await store.eraseOwner(BOB)).toMatchObject({ sessions: 1 });

      const after = await rows(store);
      const again = await run(url, "--apply", "--json");
      expect(again.code).toBe(0);
      expect(again.json()).toMatchObject({ found: 0, moved: 0, chats: [], indexDocuments: [] });
      expect(await rows(store)).toEqual(after);
    } finally {
      await store.close();
    }
  });

  it("finishes an interrupted run (new row written, old one not yet deleted), and reports collisions, losing nothing", async (ctx) => {
    const url = await seeded();
    if (url === undefined) return ctx.skip();
    const store = await open(url);
    try {
      // Interrupted after the copy of alice's c1; her a/b was copied, then written to by a 0.1.0 server.
      const c1 = (await store.get(old(ALICE, "c1")))!;
      const copied = await store.save(
        { ...c1.session, id: "ui-chat/c1" },
        { expectedRevision: null, meta: { owner: ALICE, title: "Greeting", labels: { "statebag.type": "chat" } } },
      );
      const ab = (await store.get(old(ALICE, "a/b")))!;
      await store.save(
        { ...ab.session, id: "ui-chat/a%2Fb" },
        { expectedRevision: null, meta: { owner: ALICE, labels: { "statebag.type": "chat" } } },
      );
      const longer = structuredClone(ab.session);
      historyOf(longer).push(text("assistant", "an answer written after the copy", "m6"));
      await store.save(longer, { expectedRevision: ab.revision });
      // c2's new id is held by a different chat of alice, bob's by carol.
      await store.save(chat("ui-chat/c2", [text("user", "another chat", "x1")]), {
        expectedRevision: null,
        meta: { owner: ALICE },
      });
      await store.save(chat("ui-chat/c9", [text("user", "carol's", "x2")]), {
        expectedRevision: null,
        meta: { owner: CAROL },
      });
      const before = await rows(store);

      const dry = await run(url, "--json");
      expect(dry.code).toBe(1);
      expect(dry.json().chats.map((c: any) => c.action)).toEqual([
        "would-finish",
        "would-finish",
        "collision",
        "collision",
      ]);
      expect(await rows(store)).toEqual(before);

      const applied = await run(url, "--apply");
      expect(applied.code).toBe(1);
      expect(applied.stdout).toContain("2 finished (moved by an interrupted run), 2 collisions kept at the old id");
      expect(applied.stdout).toContain(
        `${old(ALICE, "c2")} -> ui-chat/c2: the new id is held by a different chat of the same owner`,
      );
      expect(applied.stdout).toContain(
        `${old(BOB, "c9")} -> ui-chat/c9: the new id is held by a chat of another owner`,
      );
      const after = await rows(store);
      // The copy of c1 was complete: left as it was, its old row deleted.
      expect(after["ui-chat/c1"]).toBe(copied);
      expect(after[old(ALICE, "c1")]).toBeUndefined();
      // The copy of a/b was behind its old row: brought up to date, then the old row deleted.
      expect(historyOf((await store.get("ui-chat/a%2Fb"))!.session)).toEqual(historyOf(longer));
      expect(after[old(ALICE, "a/b")]).toBeUndefined();
      // Collisions: both chats kept at their old ids, the rows holding the new ids untouched, index documents kept.
      expect(after[old(ALICE, "c2")]).toBe(before[old(ALICE, "c2")]);
      expect(after[old(BOB, "c9")]).toBe(before[old(BOB, "c9")]);
      expect(after["ui-chat/c2"]).toBe(before["ui-chat/c2"]);
      expect(after["ui-chat/c9"]).toBe(before["ui-chat/c9"]);
      expect((await store.get("ui-chat/c9"))!.meta.owner).toBe(CAROL);
      expect(after[`ui-chat-index/${escapeSegment(ALICE)}`]).toBeDefined();
      expect(after[`ui-chat-index/${escapeSegment(BOB)}`]).toBeDefined();

      // Once the rows in the way are gone, a rerun moves the rest and removes the index documents.
      await store.delete("ui-chat/c2");
      await store.delete("ui-chat/c9");
      const rerun = await run(url, "--apply", "--json");
      expect(rerun.code).toBe(0);
      expect(rerun.json()).toMatchObject({ found: 2, moved: 2, collisions: 0 });
      expect(rerun.json().indexDocuments.map((d: any) => d.action)).toEqual(["removed", "removed"]);
      expect((await store.get("ui-chat/c9"))!.meta).toMatchObject({ owner: BOB, title: "Bob's" });
    } finally {
      await store.close();
    }
  });
});

describe("statebag chats upgrade, edges", () => {
  it("escapes ids exactly as the chat server does", () => {
    for (const id of ["plain", "a/b", "50%", "%2F", "a%2Fb/c%25", "", "//%%"])
      expect(escapeSegment(id)).toBe(serverEscape(id));
  });

  it("is listed in the help, with its own usage", async () => {
    expect((await cli(["--help"])).stdout).toMatch(/^\s+chats\b/m);
    const help = await cli(["chats", "upgrade", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: statebag chats upgrade");
    expect(help.stdout).toContain("--apply");
  });

  it("refuses --apply with --dry-run (exit 2); an encrypted store without its keyring is exit 2, nothing moved", async () => {
    const url = `sqlite:${tmp.dir}/chats-edges.db`;
    const both = await cli(["chats", "upgrade", "--store", url, "--apply", "--dry-run"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--apply and --dry-run do not go together");
    const store = await openStore(url, encrypted());
    await seed(store);
    const before = await rows(store);
    const noKey = await cli(["chats", "upgrade", "--store", url, "--apply"]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("is encrypted, and no keyring was given");
    expect(await rows(store)).toEqual(before);
    await store.close();
  });

  it("two owners' chats with one id: the dry run says what --apply does (the first in id order moves, the other is a collision)", async () => {
    const url = `sqlite:${tmp.dir}/chats-same-id.db`;
    const store = await openStore(url);
    await store.save(chat(old(ALICE, "c1"), [text("user", "alice's", "m1")]), { expectedRevision: null });
    await store.save(chat(old(BOB, "c1"), [text("user", "bob's", "m2")]), { expectedRevision: null });
    const dry = await cli(["chats", "upgrade", "--store", url, "--json"]);
    expect(dry.code).toBe(1);
    const applied = await cli(["chats", "upgrade", "--store", url, "--apply", "--json"]);
    expect(applied.code).toBe(1);
    const actions = (r: typeof dry) => r.json().chats.map((c: any) => [c.from, c.action.replace("would-", "")]);
    expect(actions(applied)).toEqual([
      [old(ALICE, "c1"), "moved"],
      [old(BOB, "c1"), "collision"],
    ]);
    expect(actions(dry).map(([from, a]: string[]) => [from, a === "move" ? "moved" : a])).toEqual(actions(applied));
    expect(applied.json().chats[1].reason).toContain("held by a chat of another owner");
    expect((await store.get("ui-chat/c1"))!.meta.owner).toBe(ALICE);
    expect(await store.get(old(BOB, "c1"))).toBeDefined();
    await store.close();
  });

  it("a chat that does not load is reported as failed and kept; the others move; the owner's index document stays (exit 1)", async () => {
    const url = `sqlite:${tmp.dir}/chats-invalid.db`;
    // Written as stored text, unvalidated: a history message whose content is not one statebag knows.
    const raw = new SqliteSessionStore({ path: url.slice("sqlite:".length), codec: unchecked });
    const broken = chat(old("u1", "bad"), [text("user", "fine", "m1")]);
    broken.stateBag["statebag.chatHistory"].messages[0].contents = [{ $type: "text", text: 42 }];
    await raw.save(broken, { expectedRevision: null });
    await raw.close();
    const store = await openStore(url);
    await store.save(chat(old("u1", "good"), [text("user", "hello", "m2")]), { expectedRevision: null });
    await store.save(index("u1", [{ id: "good", title: "Good", updatedAt: "2026-01-01T00:00:00.000Z" }]), {
      expectedRevision: null,
    });
    const r = await cli(["chats", "upgrade", "--store", url, "--apply", "--json"]);
    expect(r.code).toBe(1);
    const report = r.json();
    expect(report).toMatchObject({ ok: false, found: 2, moved: 1, failed: 1 });
    const bad = report.chats.find((c: any) => c.from === old("u1", "bad"));
    expect(bad.action).toBe("failed");
    expect(bad.reason).toMatch(/text/);
    expect(report.indexDocuments).toEqual([
      { id: "ui-chat-index/u1", action: "kept", reason: expect.stringContaining("still at their 0.1.0 ids") },
    ]);
    expect(Object.keys(await rows(store)).sort()).toEqual(
      [old("u1", "bad"), "ui-chat-index/u1", "ui-chat/good"].sort(),
    );
    await store.close();
  });

  it("exits 3 when the store cannot be reached, with a fix", async () => {
    const r = await cli(["chats", "upgrade", "--store", "postgres://nobody@127.0.0.1:1/none", "--apply"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("fix:");
  });

  it("with --id-prefix, moves the chats of a handler given another idPrefix", async () => {
    const url = `sqlite:${tmp.dir}/chats-prefix.db`;
    const store = await openStore(url);
    await store.save(chat("support/u1/c1", [text("user", "help", "m1")]), { expectedRevision: null });
    await store.save(chat(old("u1", "c1"), [text("user", "other handler", "m2")]), { expectedRevision: null });
    const r = await cli(["chats", "upgrade", "--store", url, "--id-prefix", "support", "--apply", "--json"]);
    expect(r.json()).toMatchObject({ idPrefix: "support", found: 1, moved: 1 });
    expect(Object.keys(await rows(store)).sort()).toEqual(["support/c1", old("u1", "c1")]);
    expect((await store.get("support/c1"))!.meta).toMatchObject({ owner: "u1", title: "help" });
    // A prefix with a slash in it (idPrefix: "tenant-a/chats").
    await store.save(chat("tenant-a/chats/u2/c2", [text("user", "nested", "m3")]), { expectedRevision: null });
    await store.save(index("u2", [{ id: "c2", title: "Nested", updatedAt: "2026-01-01T00:00:00.000Z" }]), {
      expectedRevision: null,
    });
    await store.save({ ...index("u2", []), id: "tenant-a/chats-index/u2" }, { expectedRevision: null });
    const nested = await cli([
      "chats",
      "upgrade",
      "--store",
      url,
      "--id-prefix",
      "tenant-a/chats",
      "--apply",
      "--json",
    ]);
    expect(nested.json()).toMatchObject({
      found: 1,
      moved: 1,
      indexDocuments: [{ id: "tenant-a/chats-index/u2", action: "removed" }],
    });
    expect((await store.get("tenant-a/chats/c2"))!.meta).toMatchObject({ owner: "u2", title: "nested" });
    // Another handler's index document is not this prefix's.
    expect(await store.get("ui-chat-index/u2")).toBeDefined();
    // Seen from the prefix "tenant-a", the chat just moved looks like <prefix>/<owner>/<chat>: its
    // owner says it is no 0.1.0 chat, and it stays where it is.
    const outer = await cli(["chats", "upgrade", "--store", url, "--id-prefix", "tenant-a", "--apply", "--json"]);
    expect(outer.json()).toMatchObject({ found: 0, moved: 0 });
    expect(await store.get("tenant-a/chats/c2")).toBeDefined();
    expect((await cli(["chats", "upgrade", "--store", url, "--id-prefix", "chats/"])).code).toBe(2);
    await store.close();
  });
});
