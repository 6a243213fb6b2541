/**
 * Issue #20: statebag's declarations stand alone. An app that installs statebag without the
 * optional database drivers and compiles with `skipLibCheck: false` must not meet an import of
 * "pg", "ioredis", "better-sqlite3" or "node:sqlite" (whose types need @types/node 22.13+) in
 * the `statebag/stores` declarations. The store uses structural types for pg instead; a real
 * pg.Pool still fits them.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { PgPool, PgPoolClient } from "../../src/runtime/stores/postgres/driver.js";
import { PostgresSessionStore } from "../../src/runtime/stores/postgres/store.js";
import { counterSession, PG_URL, serverUp, uniqueName } from "./helpers.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const TSC = join(REPO, "node_modules/typescript/bin/tsc");
const OPTIONAL = /(?:from\s+|import\()\s*"(pg|ioredis|better-sqlite3|node:sqlite)(?:\/[^"]*)?"/;

// Compile-time: pg's own classes fit the structural types (tsc --noEmit checks this file).
const fitsPool: (pool: pg.Pool) => PgPool = (pool) => pool;
const fitsClient: (client: pg.PoolClient) => PgPoolClient = (client) => client;
void fitsPool;
void fitsClient;

const work = mkdtempSync(join(tmpdir(), "statebag-dts-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function tsc(args: string[], cwd: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [TSC, ...args], { cwd, encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Every declaration file reachable from `entry` through relative imports and re-exports. */
function declarationGraph(entry: string): Map<string, string> {
  const files = new Map<string, string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file) || !existsSync(file)) continue;
    const text = readFileSync(file, "utf8");
    files.set(file, text);
    for (const m of text.matchAll(/(?:from\s+|import\()\s*"(\.{1,2}\/[^"]+)"/g))
      queue.push(resolve(dirname(file), m[1].replace(/\.js$/, ".d.ts")));
  }
  return files;
}

describe("the statebag/stores declarations (#20)", () => {
  it("import no optional driver, and compile in an app without them with skipLibCheck: false", {
    timeout: 240_000,
  }, () => {
    const out = join(work, "statebag");
    const emitted = tsc(
      ["-p", "tsconfig.build.json", "--outDir", out, "--emitDeclarationOnly", "--noEmitOnError", "false"],
      REPO,
    );
    const entry = join(out, "src/stores.d.ts");
    expect(existsSync(entry), emitted.output).toBe(true);

    const graph = declarationGraph(entry);
    expect(graph.size).toBeGreaterThan(5);
    const leaks = [...graph]
      .filter(([, text]) => OPTIONAL.test(text))
      .map(([file, text]) => `${file.slice(out.length)}: ${OPTIONAL.exec(text)![0]}`);
    expect(leaks).toEqual([]);

    // An app outside the repository: only statebag's dependencies and @types/node are installed.
    const app = join(work, "app");
    mkdirSync(join(app, "node_modules/@types"), { recursive: true });
    cpSync(out, join(app, "statebag"), { recursive: true });
    for (const dep of [
      "ajv",
      "commander",
      "picocolors",
      "cli-progress",
      "fast-deep-equal",
      "json-schema-traverse",
      "fast-uri",
      "require-from-string",
    ]) {
      if (existsSync(join(REPO, "node_modules", dep)))
        symlinkSync(join(REPO, "node_modules", dep), join(app, "node_modules", dep));
    }
    symlinkSync(join(REPO, "node_modules/@types/node"), join(app, "node_modules/@types/node"));
    writeFileSync(
      join(app, "app.ts"),
      'import { openStore, PostgresSessionStore, SqliteSessionStore, withSession } from "./statebag/src/stores.js";\n' +
        'export const store = openStore("memory:");\nexport { PostgresSessionStore, SqliteSessionStore, withSession };\n',
    );
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          noEmit: true,
          types: ["node"],
        },
        files: ["app.ts"],
      }),
    );
    const compiled = tsc(["-p", "tsconfig.json"], app);
    expect(compiled.output).toBe("");
    expect(compiled.status).toBe(0);
  });
});

describe.skipIf(!serverUp.postgres)("a pg.Pool of your own", () => {
  it("is used through the structural types", async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    const schema = `sbtest_${uniqueName()}`;
    const store = new PostgresSessionStore({ pool, schema });
    try {
      await store.setup();
      const revision = await store.save(counterSession("mine", 1), { expectedRevision: null });
      expect((await store.get("mine"))?.revision).toBe(revision);
    } finally {
      await store.dropSchema();
      await store.close();
      await pool.end();
    }
  });
});
