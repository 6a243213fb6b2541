/**
 * Encryption at rest in the CLI (#23): the keyring from --keyring, $STATEBAG_KEYRING or the
 * config's "keyring"; encrypted rows refused without one (exit 2, no ciphertext printed);
 * `migrate --encrypt` / `--reencrypt` (dry run, real run, every row encrypted in SQLite); type
 * migrations on an encrypted store; key material never in any output.
 */
import { randomBytes } from "node:crypto";
import { chmodSync } from "node:fs";
import { join, relative } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { serializeSession } from "../../src/runtime/persistence/serialization.js";
import { encryptionCodecs } from "../../src/runtime/stores/encryption/index.js";
import type { SessionCodec } from "../../src/runtime/stores/types.js";
import { openStore } from "../../src/stores.js";
import { cli, REPO, sampleSession, tempDir, type RunOptions, type RunResult } from "./helpers.js";

const tmp = tempDir("statebag-enc-cli-");
afterAll(() => tmp.cleanup());

const K1 = randomBytes(32);
const K2 = randomBytes(32);
const STORE_NAME = "sessions";

/** Every output of every run, scanned for key material at the end. */
const outputs: string[] = [];
async function run(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const r = await cli(args, options);
  outputs.push(r.stdout, r.stderr);
  return r;
}

function keyringFile(name: string, keys: Record<string, Buffer>, current: string): string {
  const path = tmp.file(name, {
    current,
    keys: Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, v.toString("base64")])),
    store: STORE_NAME,
  });
  chmodSync(path, 0o600);
  return path;
}
const KEYRING1 = keyringFile("keyring1.json", { k1: K1 }, "k1");
const KEYRING2 = keyringFile("keyring2.json", { k1: K1, k2: K2 }, "k2");

/** Stores sessions as given (the stored form, not validated): old type versions stay old. */
const unchecked: SessionCodec = {
  serialize: (session) => serializeSession(session, { validate: false }),
  deserialize: (text) => JSON.parse(text).session,
};

/** A session as the previous release stored it: history state version 1. */
function v1(id: string): any {
  const s = sampleSession(id);
  s.stateBag["statebag.chatHistory"] = {
    $type: "InMemoryChatHistoryState",
    messages: s.stateBag["statebag.chatHistory"].messages,
  };
  return s;
}

const message = (text: string) => ({ role: "user", contents: [{ $type: "text", text }] }) as never;

/** A SQLite store with sessions a (owned by alice), b (v1 types), c, and a message log under a. */
async function seed(name: string, encrypted: boolean): Promise<string> {
  const path = join(tmp.dir, `${name}.db`);
  const store = await openStore(
    `sqlite:${path}`,
    encrypted
      ? encryptionCodecs({ keyring: { current: "k1", keys: { k1: K1 } }, store: STORE_NAME, inner: unchecked })
      : { codec: unchecked },
  );
  await store.setup();
  await store.save(sampleSession("a"), { expectedRevision: null, meta: { owner: "alice" } } as never);
  await store.save(v1("b"), { expectedRevision: null });
  await store.save(sampleSession("c"), { expectedRevision: null });
  await store.messages.appendMessages("a", [message("first"), message("second")], { operationId: "seed" });
  await store.close();
  return path;
}

function raw(path: string): { sessions: Record<string, string>; messages: string[] } {
  const db = new DatabaseSync(path);
  try {
    const sessions = Object.fromEntries(
      (
        db.prepare("SELECT id, data FROM statebag_sessions ORDER BY id").all() as {
          id: string;
          data: string | Uint8Array;
        }[]
      ).map((r) => [r.id, typeof r.data === "string" ? r.data : Buffer.from(r.data).toString("latin1")]),
    );
    const messages = (
      db.prepare("SELECT body FROM statebag_messages ORDER BY storage_id, seq").all() as { body: string }[]
    ).map((r) => r.body);
    return { sessions, messages };
  } finally {
    db.close();
  }
}
/** The key id of a stored row: a text envelope, or a binary row (a BLOB, read as its binary string). */
const kid = (text: string) =>
  text.startsWith("\u0000SBE")
    ? text.slice(7, 7 + text.charCodeAt(6))
    : /^\{"format":"statebag\.encrypted","v":\d+,"kid":"([^"]+)"/.exec(text)?.[1];

describe("the keyring", () => {
  it('comes from --keyring, $STATEBAG_KEYRING or the config\'s "keyring" (in that order)', async () => {
    const path = await seed("sources", true);
    const url = `sqlite:${path}`;
    const flag = await run(["inspect", "a", "--store", url, "--keyring", KEYRING1]);
    expect(flag.code).toBe(0);
    expect(flag.stdout).toContain("Hi, my name is Ada.");
    expect(flag.stdout).toContain("encrypted at rest");
    expect(flag.stdout).toContain("✔ valid");

    const env = await run(["inspect", "c", "--store", url, "--json"], {
      env: { STATEBAG_KEYRING: "keyring1.json" },
      cwd: tmp.dir,
    });
    expect(env.code).toBe(0);
    expect(env.json()).toMatchObject({ ok: true, id: "c", encrypted: { store: STORE_NAME } });

    const project = tempDir("statebag-enc-project-");
    // statebag's own registry: the project has generated none.
    const registry = relative(project.dir, join(REPO, "src/generated/registry.ts"));
    try {
      project.file("statebag.config.json", { store: url, registry, keyring: KEYRING1 });
      const configured = await run(["inspect", "a", "--json"], { cwd: project.dir });
      expect(configured.stderr).toBe("");
      expect(configured.code).toBe(0);
      expect(configured.json().document.session.id).toBe("a");
      // --keyring wins over the environment, which wins over the config.
      project.file("bad.json", { current: "k1", keys: { k1: randomBytes(32).toString("base64") }, store: STORE_NAME });
      expect(
        (
          await run(["inspect", "a", "--keyring", KEYRING1], {
            cwd: project.dir,
            env: { STATEBAG_KEYRING: "bad.json" },
          })
        ).code,
      ).toBe(0);
      const wrong = await run(["inspect", "a"], { cwd: project.dir, env: { STATEBAG_KEYRING: "bad.json" } });
      expect(wrong.code).not.toBe(0);
      expect(wrong.stderr).toMatch(/failed to decrypt/);
      // A relative "keyring" is relative to the config's folder; a wrong type is a config error.
      project.file("statebag.config.json", {
        store: url,
        registry,
        keyring: "../" + KEYRING1.split("/").slice(-2).join("/"),
      });
      expect((await run(["inspect", "c"], { cwd: project.dir })).code).toBe(0);
      project.file("statebag.config.json", { keyring: 7 });
      const typed = await run(["inspect"], { cwd: project.dir });
      expect(typed.code).toBe(2);
      expect(typed.stderr).toContain('"keyring" must be a non-empty string');
    } finally {
      project.cleanup();
    }
  });

  it("without a keyring, an encrypted row is a configuration error (exit 2) and no ciphertext is printed", async () => {
    const path = await seed("nokeyring", true);
    const url = `sqlite:${path}`;
    const text = await run(["inspect", "a", "--store", url]);
    expect(text.code).toBe(2);
    expect(text.stderr).toContain('the session "a"');
    expect(text.stderr).toContain("is encrypted, and no keyring was given");
    expect(text.stderr).toContain("--keyring <file>");
    expect(text.stderr).toContain("STATEBAG_KEYRING");
    const json = await run(["inspect", "a", "--store", url, "--json"]);
    expect(json.code).toBe(2);
    expect(json.json()).toMatchObject({ ok: false, error: { code: "encryption-key" } });
    const exported = await run(["export", "--to", "python", "--id", "a", "--store", url]);
    expect(exported.code).toBe(2);
    for (const r of [text, json, exported]) expect(r.stdout + r.stderr).not.toMatch(/statebag\.encrypted|"ct"|"iv"/);
    // Listing reads no bodies: it still works.
    expect((await run(["inspect", "--store", url])).stdout).toMatch(/^a {2}revision \d+$/m);
    // Plain migrate stops, writing nothing.
    const before = raw(path);
    const migrate = await run(["migrate", "--store", url]);
    expect(migrate.code).toBe(2);
    expect(migrate.stderr).toContain("is encrypted, and no keyring was given");
    expect(raw(path)).toEqual(before);
  });

  it("a keyring file that is not usable is a usage error that prints no key material", async () => {
    const path = await seed("badkeyring", true);
    const url = `sqlite:${path}`;
    const secret = K1.toString("base64");
    const broken = tmp.file("broken.json", `{"current": "k1", "keys": {"k1": "${secret}" ,,}, "store": "sessions"}`);
    const r1 = await run(["inspect", "a", "--store", url, "--keyring", broken]);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toContain("is not valid JSON");
    const noStore = tmp.file("nostore.json", { current: "k1", keys: { k1: secret } });
    const r2 = await run(["inspect", "a", "--store", url, "--keyring", noStore]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('has no "store"');
    const short = tmp.file("short.json", { current: "k1", keys: { k1: secret.slice(0, 20) }, store: STORE_NAME });
    const r3 = await run(["inspect", "a", "--store", url, "--keyring", short]);
    expect(r3.code).toBe(2);
    expect(r3.stderr).toMatch(/the key "k1" is \d+ bytes/);
    const r4 = await run(["inspect", "a", "--store", url, "--keyring", join(tmp.dir, "absent.json")]);
    expect(r4.code).toBe(2);
    // "ownerKey" pins the key owners are formed with: it must be a key id of the file.
    const badOwnerKey = tmp.file("ownerkey.json", {
      current: "k1",
      keys: { k1: secret },
      store: STORE_NAME,
      ownerKey: "k9",
    });
    const r6 = await run(["inspect", "a", "--store", url, "--keyring", badOwnerKey]);
    expect(r6.code).toBe(2);
    expect(r6.stderr).toContain('"ownerKey" that is not a key id');
    const pinned = tmp.file("pinned.json", { current: "k1", keys: { k1: secret }, store: STORE_NAME, ownerKey: "k1" });
    expect((await run(["inspect", "a", "--store", url, "--keyring", pinned])).code).toBe(0);
    // A keyring readable by others is used, with a warning.
    const open = tmp.file("open.json", { current: "k1", keys: { k1: secret }, store: STORE_NAME });
    chmodSync(open, 0o644);
    const r5 = await run(["inspect", "a", "--store", url, "--keyring", open]);
    expect(r5.code).toBe(0);
    expect(r5.stderr).toContain("chmod 600");
  });
});

describe("statebag migrate --encrypt / --reencrypt", () => {
  it("encrypts a plaintext store: a dry run writes nothing, the run encrypts every row, a re-run rewrites nothing", async () => {
    const path = await seed("encrypt", false);
    const url = `sqlite:${path}`;
    const before = raw(path);
    expect(Object.values(before.sessions).some((t) => kid(t) !== undefined)).toBe(false);

    expect((await run(["migrate", "--encrypt", "--store", url])).code).toBe(2); // no keyring
    expect((await run(["migrate", "--encrypt", "--reencrypt", "--store", url, "--keyring", KEYRING1])).code).toBe(2);

    const dry = await run(["migrate", "--encrypt", "--dry-run", "--store", url, "--keyring", KEYRING1, "--json"]);
    expect(dry.code).toBe(0);
    expect(dry.json()).toMatchObject({
      ok: true,
      mode: "encrypt",
      dryRun: true,
      scanned: 3,
      plaintext: 3,
      rewritten: 3,
      current: 0,
      failedCount: 0,
      currentKey: "k1",
      storeName: STORE_NAME,
      logs: { rewritten: 1, messages: 2 },
    });
    expect(raw(path)).toEqual(before);

    // Resumable: --start-after skips what an earlier run did.
    const partial = await run([
      "migrate",
      "--encrypt",
      "--start-after",
      "a",
      "--store",
      url,
      "--keyring",
      KEYRING1,
      "--json",
    ]);
    expect(partial.json()).toMatchObject({ scanned: 2, rewritten: 2 });
    expect(kid(raw(path).sessions.a)).toBeUndefined();

    const real = await run(["migrate", "--encrypt", "--store", url, "--keyring", KEYRING1]);
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(
      /3 sessions in .*\(store name "sessions"\): 1 encrypted, 2 already under k1, 1 found in plaintext/,
    );
    expect(real.stdout).toContain("remove acceptPlaintext");
    const after = raw(path);
    for (const text of Object.values(after.sessions)) expect(kid(text)).toBe("k1");
    expect(after.messages).toHaveLength(2);
    for (const text of after.messages) expect(kid(text)).toBe("k1");
    // The seeded plaintext, long enough that random ciphertext bytes never spell it (a three-letter
    // word does, about once in ten thousand runs of the binary rows).
    expect(JSON.stringify(before)).toContain("my name is Ada");
    expect(JSON.stringify(after)).not.toContain("my name is Ada");

    const again = await run(["migrate", "--encrypt", "--store", url, "--keyring", KEYRING1, "--json"]);
    expect(again.json()).toMatchObject({ rewritten: 0, current: 3 });
    expect((await run(["inspect", "a", "--store", url, "--keyring", KEYRING1])).code).toBe(0);
  });

  it("--reencrypt after a rotation rewrites every row under the new current key", async () => {
    const path = await seed("reencrypt", true);
    const url = `sqlite:${path}`;
    const dry = await run(["migrate", "--reencrypt", "--dry-run", "--store", url, "--keyring", KEYRING2, "--json"]);
    expect(dry.json()).toMatchObject({
      ok: true,
      mode: "reencrypt",
      dryRun: true,
      stale: 3,
      rewritten: 3,
      currentKey: "k2",
    });
    for (const text of Object.values(raw(path).sessions)) expect(kid(text)).toBe("k1");

    const r = await run(["migrate", "--reencrypt", "--store", url, "--keyring", KEYRING2]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/3 re-encrypted, 0 already under k2, 3 under older keys/);
    const after = raw(path);
    for (const text of [...Object.values(after.sessions), ...after.messages]) expect(kid(text)).toBe("k2");
    // k1 can go: a keyring of k2 alone reads every row.
    const onlyK2 = keyringFile("keyring-k2.json", { k2: K2 }, "k2");
    expect((await run(["inspect", "a", "--store", url, "--keyring", onlyK2])).code).toBe(0);
  });
});

describe("statebag migrate (type migrations) on an encrypted store", () => {
  it("decrypts, migrates with compare-and-swap, and writes encrypted rows", async () => {
    const path = await seed("types", true);
    const url = `sqlite:${path}`;
    const before = raw(path);
    const dry = await run(["migrate", "--dry-run", "--store", url, "--keyring", KEYRING1, "--json"]);
    expect(dry.code).toBe(0);
    expect(dry.json()).toMatchObject({ ok: true, dryRun: true, scanned: 3, migrated: 1, unchanged: 2, failedCount: 0 });
    expect(raw(path)).toEqual(before);

    const r = await run(["migrate", "--store", url, "--keyring", KEYRING1]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/3 sessions in .*: 1 migrated, 2 already current/);
    expect(r.stdout).toContain("InMemoryChatHistoryState v1 -> v3: 1");
    const after = raw(path);
    expect(after.sessions.a).toBe(before.sessions.a);
    expect(after.sessions.b).not.toBe(before.sessions.b);
    expect(kid(after.sessions.b)).toBe("k1");
    const b = (await run(["inspect", "b", "--store", url, "--keyring", KEYRING1, "--json"])).json();
    expect(b.validation.migrated).toBe(false);
    expect(b.document.session.stateBag["statebag.chatHistory"]).toMatchObject({ $version: 3, droppedMessageCount: 0 });
    expect((await run(["migrate", "--store", url, "--keyring", KEYRING1, "--json"])).json()).toMatchObject({
      migrated: 0,
      unchanged: 3,
    });
  });

  it("a row the keyring cannot decrypt fails that session only, named", async () => {
    const path = await seed("types-bad", true);
    const db = new DatabaseSync(path);
    const a = (db.prepare("SELECT data FROM statebag_sessions WHERE id = 'a'").get() as { data: string }).data;
    db.prepare("UPDATE statebag_sessions SET data = ? WHERE id = 'c'").run(a); // a's row copied onto c
    db.close();
    const r = await run(["migrate", "--store", `sqlite:${path}`, "--keyring", KEYRING1]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/1 migrated, 1 already current, 1 cannot be migrated/);
    expect(r.stdout).toMatch(/✖ c: .*failed to decrypt/);
  });
});

describe("key material", () => {
  it("never appears in stdout or stderr", () => {
    expect(outputs.length).toBeGreaterThan(20);
    const all = outputs.join("\n");
    for (const key of [K1, K2]) {
      for (const form of [
        key.toString("base64"),
        key.toString("base64url"),
        key.toString("hex"),
        key.toString("base64").slice(0, 16),
        key.toString("hex").slice(0, 16),
      ]) {
        expect(all).not.toContain(form);
      }
    }
  });
});
