/**
 * A process killed (SIGKILL) in the middle of a put leaves no blob anyone can see: not by hash,
 * not listed, not counted; its partial chunks are removed by the next sweep, and the same bytes
 * can be put again. On SQLite and PostgreSQL (chunks no blob row points to), Redis (an upload's
 * chunk list) and a folder on disk (an upload file).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { PostgresSessionStore } from "../../src/runtime/stores/postgres/store.js";
import { postgresBackend, REDIS_URL, redisBackend } from "../stores/helpers.js";

const script = fileURLToPath(new URL("./workers/slow-put.ts", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function killMidPut(url: string, owner: string, blobsUrl?: string): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", script, url, owner, ...(blobsUrl ? [blobsUrl] : [])], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      if (d.toString().includes("writing")) {
        setTimeout(() => child.kill("SIGKILL"), Math.random() * 50);
        resolve();
      }
    });
    child.on("exit", () => reject(new Error(`the putting process exited before it wrote: ${stderr}`)));
  });
  expect(await exited).toBe("SIGKILL");
}

describe("a process killed in the middle of a put", () => {
  it("SQLite: leaves no blob; the sweep removes its chunks", async () => {
    const dir = mkdtempSync(join(tmpdir(), "statebag-blob-kill-"));
    dirs.push(dir);
    const url = `sqlite:${join(dir, "sessions.db")}`;
    await killMidPut(url, "ann");
    const store = await openStore(url);
    try {
      const blobs = store.blobs!;
      expect(await blobs.list({ owner: "ann" })).toEqual({ items: [] });
      expect(await blobs.usage({ allOwners: true })).toEqual({ blobs: 0, bytes: 0 });
      const { DatabaseSync } = await import("node:sqlite");
      const raw = new DatabaseSync(join(dir, "sessions.db"));
      const count = () => (raw.prepare("SELECT count(*) AS n FROM statebag_blob_chunks").get() as { n: number }).n;
      const orphans = count();
      expect(orphans).toBeGreaterThan(0); // the killed put's chunks, which no blob row points to
      expect(await blobs.sweep({ owner: "ann", referenced: new Set(), graceMs: 0 })).toEqual({ blobs: 0, bytes: 0 });
      expect(count()).toBe(0);
      raw.close();
      const again = await blobs.put(new Uint8Array(70_000).fill(7), { owner: "ann", mediaType: "image/png" });
      expect(again.created).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("PostgreSQL: leaves no blob; the sweep removes its chunks", async () => {
    const { url, cleanup } = await postgresBackend().location();
    try {
      await killMidPut(url, "cat");
      const store = await openStore(url);
      try {
        const blobs = store.blobs!;
        expect(await blobs.list({ owner: "cat" })).toEqual({ items: [] });
        expect(await blobs.usage({ allOwners: true })).toEqual({ blobs: 0, bytes: 0 });
        const schema = new URL(url).searchParams.get("schema")!;
        const count = async () =>
          Number(
            (
              await (store as unknown as PostgresSessionStore).withClient("count", false, (c) =>
                c.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".statebag_blob_chunks`),
              )
            ).rows[0]?.n,
          );
        expect(await count()).toBeGreaterThan(0);
        await blobs.sweep({ owner: "cat", referenced: new Set(), graceMs: 0 });
        expect(await count()).toBe(0);
      } finally {
        await store.close();
      }
    } finally {
      await cleanup();
    }
  });

  it("Redis: leaves no blob; the sweep removes the upload's chunk list", async () => {
    const { url, cleanup } = await redisBackend().location();
    try {
      await killMidPut(url, "dan");
      const store = await openStore(url);
      try {
        const blobs = store.blobs!;
        expect(await blobs.list({ owner: "dan" })).toEqual({ items: [] });
        expect(await blobs.usage({ allOwners: true })).toEqual({ blobs: 0, bytes: 0 });
        const prefix = new URL(url).searchParams.get("prefix")!;
        const Redis = (await import("ioredis")).Redis;
        const client = new Redis(REDIS_URL);
        try {
          const chunkLists = async () => (await client.keys(`${prefix}{}bc:*`)).length;
          expect(await chunkLists()).toBe(1); // the killed put's, expiring in a day if nobody sweeps
          await blobs.sweep({ owner: "dan", referenced: new Set(), graceMs: 0 });
          expect(await chunkLists()).toBe(0);
        } finally {
          client.disconnect();
        }
      } finally {
        await store.close();
      }
    } finally {
      await cleanup();
    }
  });

  it("a folder: leaves no blob file; the sweep removes the upload file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "statebag-blob-kill-"));
    dirs.push(dir);
    const blobsUrl = pathToFileURL(join(dir, "blobs")).href;
    const url = `sqlite:${join(dir, "sessions.db")}`;
    await killMidPut(url, "bob", blobsUrl);
    const store = await openStore(url, { blobs: { url: blobsUrl } });
    try {
      const blobs = store.blobs!;
      expect(await blobs.list({ owner: "bob" })).toEqual({ items: [] });
      expect(await blobs.usage({ allOwners: true })).toEqual({ blobs: 0, bytes: 0 });
      const [ownerDir] = readdirSync(join(dir, "blobs"));
      expect(readdirSync(join(dir, "blobs", ownerDir!, "blobs"))).toEqual([]);
      expect(readdirSync(join(dir, "blobs", ownerDir!, "uploads"))).toHaveLength(1);
      await blobs.sweep({ allOwners: true, referenced: new Set(), graceMs: 0 });
      expect(readdirSync(join(dir, "blobs", ownerDir!, "uploads"))).toEqual([]);
      expect(existsSync(join(dir, "blobs", ownerDir!, "owner"))).toBe(true);
    } finally {
      await store.close();
    }
  });
});
