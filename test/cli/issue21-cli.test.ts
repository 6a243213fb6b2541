/**
 * CLI defects of issue #21: dry runs that wrote (4), whole files and rows read into memory and
 * lenient UTF-8 (10), lone chat messages imported as sessions (15), unstorable ids and silently
 * skipped links at import (17).
 */
import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { deserializeSession, type SessionValidationError } from "../../src/runtime/persistence/serialization.js";
import { SHAPE_NAMES } from "../../src/runtime/interop/shapes.js";
import { openStore } from "../../src/stores.js";
import { cli, envelope, FIXTURES, sampleSession, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-21-");
afterAll(() => tmp.cleanup());

const PG = process.env.STATEBAG_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const THREAD = join(FIXTURES, "21_dotnet_thread_conversation_id.json");

async function pgClient() {
  const pg = await import("pg");
  const client = new pg.default.Client({ connectionString: PG, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    return client;
  } catch {
    return undefined;
  }
}

describe("--dry-run opens nothing for writing (#21.4)", () => {
  it("import --dry-run into a SQLite file that does not exist creates neither the file nor its folder", async () => {
    const folder = join(tmp.dir, "dry-import", "nested");
    const url = `sqlite:${join(folder, "sessions.db")}`;
    const r = await cli(["import", THREAD, "--store", url, "--dry-run", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({
      ok: true,
      dryRun: true,
      imported: 1,
      emptyStore: `there is no SQLite file at ${join(folder, "sessions.db")} yet`,
    });
    expect(existsSync(join(tmp.dir, "dry-import"))).toBe(false);
    const text = await cli(["import", THREAD, "--store", url, "--dry-run"]);
    expect(text.stdout).toContain("read as an empty store, nothing created");
    expect(existsSync(join(tmp.dir, "dry-import"))).toBe(false);
    // Nor a file of its own.
    const out = join(tmp.dir, "dry-out.json");
    const withOut = await cli(["import", THREAD, "--store", url, "--dry-run", "-o", out]);
    expect(withOut.code).toBe(2);
    expect(withOut.stderr).toContain("--dry-run writes nothing, and --out writes a file");
    expect(existsSync(out)).toBe(false);
  });

  it("migrate --dry-run on a missing SQLite file, and on a file without tables, creates and changes nothing", async () => {
    const folder = join(tmp.dir, "dry-migrate");
    const r = await cli(["migrate", "--store", `sqlite:${join(folder, "x", "sessions.db")}`, "--dry-run", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({
      ok: true,
      dryRun: true,
      scanned: 0,
      emptyStore: expect.stringContaining("there is no SQLite file"),
    });
    expect(existsSync(folder)).toBe(false);
    // The default store (no --store) is a file under ./.statebag: no folder either.
    const cwd = join(tmp.dir, "project");
    mkdirSync(cwd);
    expect((await cli(["migrate", "--dry-run"], { cwd })).code).toBe(0);
    expect(readdirSync(cwd)).toEqual([]);

    const empty = join(tmp.dir, "empty.db");
    writeFileSync(empty, "");
    const onEmpty = await cli(["import", THREAD, "--store", `sqlite:${empty}`, "--dry-run", "--json"]);
    expect(onEmpty.code, onEmpty.stderr).toBe(0);
    expect(onEmpty.json().emptyStore).toBe("the SQLite file has no statebag tables yet");
    expect(statSync(empty).size).toBe(0);
    expect(readdirSync(tmp.dir).filter((f) => f.startsWith("empty.db"))).toEqual(["empty.db"]);
  });

  it("a dry run on an existing SQLite store reads it (sessions already there are found)", async () => {
    const path = join(tmp.dir, "existing.db");
    const url = `sqlite:${path}`;
    expect((await cli(["import", THREAD, "--store", url])).code).toBe(0);
    const r = await cli(["import", THREAD, "--store", url, "--dry-run", "--json"]);
    expect(r.json()).toMatchObject({ ok: true, imported: 0, unchanged: 1 });
    expect(r.json().emptyStore).toBeUndefined();
  });

  it("PostgreSQL: a dry run on a schema never set up creates no schema or table", async (ctx) => {
    const client = await pgClient();
    if (!client) return ctx.skip();
    const schema = `sb_dry_${process.pid}_${Date.now() % 100000}`;
    const url = `${PG}?schema=${schema}`;
    try {
      const imported = await cli(["import", THREAD, "--store", url, "--dry-run", "--json"]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.json()).toMatchObject({
        ok: true,
        imported: 1,
        emptyStore: expect.stringContaining("no statebag tables"),
      });
      const migrated = await cli(["migrate", "--store", url, "--dry-run", "--json"]);
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(migrated.json()).toMatchObject({
        ok: true,
        scanned: 0,
        emptyStore: expect.stringContaining("no statebag tables"),
      });
      const { rows } = await client.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema]);
      expect(rows).toEqual([]);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  });
});

describe("sizes are checked before reading; output is bounded; UTF-8 is the loader's rule (#21.10)", () => {
  it("validate refuses a 600 MB file from its size, without reading it", async () => {
    const big = join(tmp.dir, "big.json");
    writeFileSync(big, "");
    truncateSync(big, 600 * 1024 * 1024); // sparse: no disk used
    const r = await cli(["validate", big, "--json"]);
    expect(r.code).toBe(1);
    const problem = r.json().files[0].problems[0];
    expect(problem.message).toBe(`${big} is 600.0 MiB (629145600 bytes), over the 64.0 MiB document limit`);
    expect(problem.hint).toMatch(/^the CLI reads documents of at most 512\.0 MiB .*split the document$/);
    const text = await cli(["validate", big, "--max-bytes", "1GiB"]);
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/--max-bytes.*expected a size from 1 byte to 512\.0 MiB/);
  });

  it("a 100 MB file says how to raise the limit; import and export refuse it the same way", async () => {
    const big = join(tmp.dir, "hundred.json");
    writeFileSync(big, "");
    truncateSync(big, 100 * 1024 * 1024);
    const v = await cli(["validate", big]);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain("over the 64.0 MiB document limit");
    expect(v.stdout).toContain("--max-bytes 128MiB");
    const i = await cli(["import", big]);
    expect(i.code).toBe(1);
    expect(i.stderr).toContain(`${big} is 100.0 MiB (104857600 bytes), over the 64.0 MiB document limit`);
    const e = await cli(["export", "--to", "dotnet", big]);
    expect(e.code).toBe(1);
    expect(e.stderr).toContain("over the 64.0 MiB document limit");
  });

  it("--max-bytes lowers and raises the limit; stdin is cut at it", async () => {
    const file = tmp.file("small.json", envelope(sampleSession("small")));
    expect((await cli(["validate", file])).code).toBe(0);
    const low = await cli(["validate", file, "--max-bytes", "100"]);
    expect(low.code).toBe(1);
    expect(low.stdout).toMatch(/over the 100 bytes document limit/);
    const stdin = await cli(["validate", "-", "--max-bytes", "100"], {
      stdin: JSON.stringify(envelope(sampleSession("small"))),
    });
    expect(stdin.code).toBe(1);
    expect(stdin.stdout).toContain("(stdin): over the 100 bytes document limit");
  });

  it("validate refuses invalid UTF-8 with the loader's own error (it used to read it as U+FFFD)", async () => {
    const text = JSON.stringify(envelope(sampleSession("utf8"))).replace("Ada.", "Ada\u0000");
    const bytes = Buffer.from(text);
    const bad = Buffer.from(bytes.toString("latin1").replace("\u0000", "\u00ff"), "latin1"); // a lone 0xFF byte
    const file = join(tmp.dir, "bad-utf8.json");
    writeFileSync(file, bad);
    let loaderError = "";
    try {
      deserializeSession(new Uint8Array(bad));
    } catch (error) {
      loaderError = (error as SessionValidationError).problems[0].message;
    }
    expect(loaderError).toBe("JSON input is not valid UTF-8");
    const r = await cli(["validate", file, "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().files[0].problems[0].message).toBe(loaderError);
    const imported = await cli(["import", "--from", "dotnet-thread", file]);
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain("JSON input is not valid UTF-8");
  });

  it("lists of state entries and kept values are bounded (validate, inspect), the rest counted", async () => {
    const session = sampleSession("many");
    for (let i = 0; i < 200; i++) session.stateBag[`custom.${i}`] = { $type: "Custom.Unknown", $version: 1, n: i };
    const file = tmp.file("many.json", envelope(session));
    const v = await cli(["validate", file, "--allow-unknown"]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout.match(/kept as is:/g)).toHaveLength(50);
    expect(v.stdout).toContain("... and 150 more (use --json for all)");
    const all = await cli(["validate", file, "--allow-unknown", "--json"]);
    expect(all.json().files[0].preserved).toHaveLength(200);
    const path = join(tmp.dir, "many.db");
    const store = await openStore(`sqlite:${path}`);
    await store.save(session, { expectedRevision: null });
    await store.close();
    const i = await cli(["inspect", "many", "--store", `sqlite:${path}`, "--allow-unknown", "--brief"]);
    expect(i.code, i.stderr).toBe(0);
    expect(i.stdout.match(/kept as is:/g)).toHaveLength(50);
    expect(i.stdout.split("\n").length).toBeLessThan(120);
  });

  it("inspect prints a bounded preview of a big row (strings cut with their length), --full all of it", async () => {
    const path = join(tmp.dir, "big-row.db");
    const store = await openStore(`sqlite:${path}`);
    const session = sampleSession("big");
    session.stateBag["statebag.chatHistory"].messages[0].contents[0].text = "x".repeat(5_000_000);
    await store.save(session, { expectedRevision: null });
    await store.close();
    const r = await cli(["inspect", "big", "--store", `sqlite:${path}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.length).toBeLessThan(25_000);
    expect(r.stdout).toContain("... (5000000 characters)");
    expect(r.stdout).toContain("--full prints all");
    expect(r.stdout).toContain("✔ valid");
    const json = (await cli(["inspect", "big", "--store", `sqlite:${path}`, "--json"])).json();
    expect(json.document).toBeUndefined();
    expect(json).toMatchObject({ ok: true, previewCut: true });
    expect(json.preview.length).toBeLessThanOrEqual(20_000);
    const full = await cli(["inspect", "big", "--store", `sqlite:${path}`, "--full"]);
    expect(full.stdout.length).toBeGreaterThan(5_000_000);
  });

  it("inspect of a row over the loader's limit prints the start of its text, bounded, and says it does not load", async () => {
    const path = join(tmp.dir, "huge-row.db");
    const store = await openStore(`sqlite:${path}`);
    await store.save(sampleSession("huge"), { expectedRevision: null });
    await store.close();
    const db = new DatabaseSync(path);
    const pad = "y".repeat(65 * 1024 * 1024);
    db.prepare("UPDATE statebag_sessions SET data = ? WHERE id = 'huge'").run(
      `{"format":"statebag.session","formatVersion":1,"session":{"id":"huge","stateBag":{},"pad":"${pad}"}}`,
    );
    db.close();
    const r = await cli(["inspect", "huge", "--store", `sqlite:${path}`]);
    expect(r.code).toBe(1);
    expect(r.stdout.length).toBeLessThan(25_000);
    expect(r.stdout).toContain("over the limit of 64 MiB");
    expect(r.stdout).toContain("the text was not parsed");
    expect(r.stdout).toContain("check it with --max-bytes <size>");
  });
});

describe("a chat message is not a session (#21.15)", () => {
  const message = { role: "user", contents: [{ $type: "text", text: "Hello" }] };
  it.each(SHAPE_NAMES)("import --from %s refuses a lone message and an array of messages (exit 1)", async (from) => {
    const one = tmp.file(`message-${from}.json`, message);
    const r = await cli(["import", "--from", from, one]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("this is a single chat message, not a session");
    expect(r.stderr).toContain("no --from reads a lone message");
    const many = tmp.file(`messages-${from}.json`, [message, message, message]);
    const m = await cli(["import", "--from", from, many]);
    expect(m.code).toBe(1);
    expect(m.stderr).toContain("this is an array of 3 chat messages, not a session");
  });

  it("without --from, the message says what the document is", async () => {
    const r = await cli(["import", tmp.file("message-auto.json", message)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error: this is a single chat message, not a session");
    expect(r.stderr).toMatch(/fix: .*\{"stateBag": \{"InMemoryChatHistoryProvider"/);
  });
});

describe("import checks ids with the stores' rule and lists what it skips (#21.17)", () => {
  const lone = '{"type": "session", "session_id": "a\\ud800b", "state": {}}';

  it("a session id with a lone surrogate is refused before anything is written, naming the file", async () => {
    const file = tmp.file("lone.json", lone);
    const out = join(tmp.dir, "lone.statebag.json");
    const r = await cli(["import", file, "-o", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the session id from this document cannot be stored: session id");
    expect(r.stderr).toContain("lone surrogate (\\uD800) at index 1");
    expect(r.stderr).toContain(`where: ${file}`);
    expect(existsSync(out)).toBe(false);

    const path = join(tmp.dir, "lone.db");
    const stored = await cli(["import", file, "--store", `sqlite:${path}`, "--json"]);
    expect(stored.code).toBe(1);
    expect(stored.json().failed).toEqual([{ file, message: expect.stringContaining("lone surrogate") }]);
  });

  it("--id is checked the same way (usage error)", async () => {
    const r = await cli(["import", THREAD, "--id", "x\udc00"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--id: session id");
  });

  it("links and other entries in a directory are skipped and listed with the reason", async () => {
    const dir = join(tmp.dir, "links");
    mkdirSync(join(dir, "folder.json"), { recursive: true });
    writeFileSync(join(dir, "real.json"), JSON.stringify({ conversationId: "c1" }));
    writeFileSync(join(tmp.dir, "outside.json"), JSON.stringify({ conversationId: "c2" }));
    symlinkSync(join(tmp.dir, "outside.json"), join(dir, "link.json"));
    symlinkSync(join(dir, "real.json"), join(dir, "inside.json"));
    const url = `sqlite:${join(tmp.dir, "links.db")}`;
    const r = await cli(["import", dir, "--store", url, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ imported: 1, documents: 1 });
    expect(r.json().skipped).toEqual([
      { file: join(dir, "folder.json"), reason: "a directory (directories are not searched recursively)" },
      {
        file: join(dir, "inside.json"),
        reason: "a symbolic link (not followed: pass the file it points to by its path)",
      },
      {
        file: join(dir, "link.json"),
        reason: "a symbolic link (not followed: pass the file it points to by its path)",
      },
    ]);
    const text = await cli(["import", dir, "--store", url, "--dry-run"]);
    expect(text.stdout).toContain(`${join(dir, "link.json")}: skipped, a symbolic link`);
    expect(text.stdout).toContain("skipped 3");
  });
});
