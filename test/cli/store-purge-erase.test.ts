/** `statebag store purge` and `statebag store erase` against a SQLite store. */
import { createHash } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/stores.js";
import { cli, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const session = (id: string) => ({ id, stateBag: {} });
const user = (text: string) => ({ role: "user" as const, contents: [{ $type: "text" as const, text }] });

let n = 0;
async function seeded(): Promise<string> {
  const url = `sqlite:${tmp.dir}/purge-erase-${n++}.db`;
  const store = await openStore(url);
  await store.save(session("old-1"), { expectedRevision: null, meta: { owner: "u1" } });
  await store.save(session("old-2"), { expectedRevision: null });
  await store.messages.appendMessages("old-1", [user("hi")], { operationId: "op" });
  await store.save(session("new-1"), { expectedRevision: null, meta: { owner: "u1" } });
  await store.save(session("new-2"), { expectedRevision: null, meta: { owner: "u2" } });
  await store.close();
  // The old sessions are made an hour older in the file itself, so the policies below (ten minutes)
  // split old from new however long the CLI takes to start on a loaded machine.
  const { DatabaseSync } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");
  const db = new DatabaseSync(url.slice("sqlite:".length));
  db.prepare(
    "UPDATE statebag_sessions SET created_at = created_at - ?, updated_at = updated_at - ? WHERE id IN ('old-1', 'old-2')",
  ).run(HOUR, HOUR);
  db.close();
  return url;
}

const HOUR = 3_600_000;
/** The retention policy of these tests, in ms: between the new sessions' age and the old ones'. */
const POLICY = "600000";

async function ids(url: string): Promise<string[]> {
  const store = await openStore(url);
  try {
    return (await store.scan()).items.map((i) => i.id);
  } finally {
    await store.close();
  }
}

describe("statebag store purge", () => {
  it("--dry-run counts, then removes sessions idle longer than --idle-for with their logs; a re-run finds nothing", async () => {
    const url = await seeded();
    const dry = await cli(["store", "purge", "--store", url, "--idle-for", POLICY, "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(dry.json()).toMatchObject({
      ok: true,
      dryRun: true,
      scanned: 4,
      sessions: 2,
      retention: { default: { maxIdleMs: 600_000 } },
    });
    expect(await ids(url)).toEqual(["new-1", "new-2", "old-1", "old-2"]);
    const run = await cli(["store", "purge", "--store", url, "--idle-for", POLICY, "--json"]);
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({
      ok: true,
      expired: 0,
      scanned: 4,
      sessions: 2,
      messageLogs: 1,
      skipped: 0,
      cursor: "old-2",
    });
    expect(await ids(url)).toEqual(["new-1", "new-2"]);
    const again = await cli(["store", "purge", "--store", url, "--idle-for", POLICY]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("0 of 2 sessions removed by the retention policy");
  });

  it("takes the policy from the store URL (?retentionMaxAge=), and --start-after skips what was scanned", async () => {
    const url = await seeded();
    const skip = await cli([
      "store",
      "purge",
      "--store",
      `${url}?retentionMaxAge=${POLICY}`,
      "--start-after",
      "old-1",
      "--json",
    ]);
    expect(skip.json()).toMatchObject({ scanned: 1, sessions: 1, retention: { default: { maxAgeMs: 600_000 } } });
    expect(await ids(url)).toEqual(["new-1", "new-2", "old-1"]);
    const rest = await cli(["store", "purge", "--store", `${url}?retentionMaxAge=${POLICY}`, "--json"]);
    expect(rest.json()).toMatchObject({ scanned: 3, sessions: 1 });
    expect(await ids(url)).toEqual(["new-1", "new-2"]);
  });

  it("without a policy removes only expired sessions, and refuses a bad duration (exit 2)", async () => {
    const url = await seeded();
    const plain = await cli(["store", "purge", "--store", url]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("no retention policy");
    expect(await ids(url)).toHaveLength(4);
    const bad = await cli(["store", "purge", "--store", url, "--older-than", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--older-than");
  });
});

describe("statebag store erase", () => {
  it("--dry-run counts; erase prints the receipt as JSON (owner as SHA-256); a re-run removes nothing", async () => {
    const url = await seeded();
    const store = await openStore(url);
    await store.blobs!.put(new TextEncoder().encode("hello"), { owner: "u1", mediaType: "text/plain" });
    await store.blobs!.put(new TextEncoder().encode("other"), { owner: "u2", mediaType: "text/plain" });
    await store.close();
    const dry = await cli(["store", "erase", "--store", url, "--owner", "u1", "--dry-run"]);
    expect(dry.code).toBe(0);
    const digest = createHash("sha256").update("u1").digest("hex");
    expect(JSON.parse(dry.stdout)).toEqual({
      owner: digest,
      sessions: 2,
      messageLogs: 1,
      blobs: 1,
      blobBytes: 5,
      dryRun: true,
    });
    expect(await ids(url)).toHaveLength(4);

    const run = await cli(["store", "erase", "--store", url, "--owner", "u1"]);
    expect(run.code).toBe(0);
    const receipt = JSON.parse(run.stdout);
    expect(receipt).toMatchObject({ owner: digest, sessions: 2, messageLogs: 1, blobs: 1, complete: true });
    expect(run.stdout).not.toContain('"u1"');
    expect(await ids(url)).toEqual(["new-2", "old-2"]);

    const again = await cli(["store", "erase", "--store", url, "--owner", "u1", "--json"]);
    expect(again.json()).toMatchObject({ owner: digest, sessions: 0, messageLogs: 0, blobs: 0, complete: true });
    const after = await openStore(url);
    expect((await after.blobs!.usage({ owner: "u2" })).blobs).toBe(1);
    await after.close();
    expect((await cli(["store", "erase", "--store", url])).code).toBe(2);
  });
});
