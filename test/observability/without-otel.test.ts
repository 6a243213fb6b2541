/**
 * #23: `@opentelemetry/api` is an optional peer. An app without it opens and uses stores exactly as
 * before (tracing off), `tracing: true` says what to install, and statebag/stores bundles without
 * resolving it. Simulated in a child process whose module resolution hook refuses
 * `@opentelemetry/*`, and in process through statebag's own resolution hook.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build, type Plugin } from "esbuild";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { tracingOf } from "../../src/runtime/core/tracing-hooks.js";
import { otelResolution, resetOtel } from "../../src/runtime/observability/otel.js";
import { openStore, withSession } from "../../src/stores.js";

const REPO = join(import.meta.dirname, "../..");
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "statebag-no-otel-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Node's module resolution, refusing @opentelemetry/* as if it were not installed. */
const BLOCK = `
import { registerHooks } from "node:module";
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith("@opentelemetry/")) {
      const error = new Error("Cannot find package '" + specifier + "'");
      error.code = "ERR_MODULE_NOT_FOUND";
      throw error;
    }
    return next(specifier, context);
  },
});
`;

const APP = `
const { openStore, withSession, migrateStore } = await import(${JSON.stringify(join(REPO, "src/stores.ts"))});
const out = {};
try { await import("@opentelemetry/api"); out.api = "resolved"; } catch (error) { out.api = error.code; }
for (const url of ["memory:", "sqlite:" + ${JSON.stringify(join(dir, "app.db"))}]) {
  const store = await openStore(url);
  const first = await withSession(store, "s1", () => "hi", { owner: "o" });
  const again = await withSession(store, "s1", () => "hi", { owner: "o" });
  const listed = await store.list({ owner: "o" });
  const report = await migrateStore(store);
  out[url.slice(0, 6)] = { revisions: [first.revision, again.revision], listed: listed.items.length, scanned: report.scanned, plain: Object.getPrototypeOf(store).constructor.name };
  await store.close();
}
try { await openStore("memory:", { tracing: true }); } catch (error) { out.tracingTrue = { code: error.code, hint: error.hint }; }
console.log(JSON.stringify(out));
`;

describe("without @opentelemetry/api", () => {
  afterEach(() => {
    otelResolution.load = (specifier) => import(specifier);
    resetOtel();
  });

  it("an app whose resolver cannot find it uses stores as before; tracing: true names the package", async () => {
    writeFileSync(join(dir, "block.mjs"), BLOCK);
    writeFileSync(join(dir, "app.mts"), APP);
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "--import", join(dir, "block.mjs"), join(dir, "app.mts")],
      { cwd: REPO },
    );
    const out = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect(out.api).toBe("ERR_MODULE_NOT_FOUND");
    expect(out.memory).toEqual({ revisions: [1, 2], listed: 1, scanned: 1, plain: "MemorySessionStore" });
    expect(out.sqlite).toEqual({ revisions: [1, 2], listed: 1, scanned: 1, plain: "SqliteSessionStore" });
    expect(out.tracingTrue).toEqual({ code: "missing-dependency", hint: "npm i @opentelemetry/api" });
  }, 60_000);

  it("in process, through statebag's resolution hook", async () => {
    otelResolution.load = () =>
      Promise.reject(
        Object.assign(new Error("Cannot find package '@opentelemetry/api'"), { code: "ERR_MODULE_NOT_FOUND" }),
      );
    resetOtel();
    const store = await openStore("memory:");
    expect(tracingOf(store)).toBeUndefined();
    expect((await withSession(store, "s", () => 1)).revision).toBe(1);
    await expect(openStore("memory:", { tracing: true })).rejects.toMatchObject({ code: "missing-dependency" });
  });

  it("statebag/stores bundles without resolving it, and no source names its types", async () => {
    const absent: Plugin = {
      name: "otel-absent",
      setup(b) {
        b.onResolve({ filter: /^@opentelemetry\// }, (args) => ({
          errors: [{ text: `Could not resolve "${args.path}" (not installed)` }],
        }));
      },
    };
    const result = await build({
      entryPoints: [join(REPO, "src/stores.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      write: false,
      logLevel: "silent",
      plugins: [absent],
    });
    expect(result.errors).toEqual([]);
    const files = (function walk(d: string): string[] {
      return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith(".ts") ? [join(d, e.name)] : [],
      );
    })(join(REPO, "src"));
    for (const file of files)
      expect(readFileSync(file, "utf8"), file).not.toMatch(
        /from\s+["']@opentelemetry\/|import\(\s*["']@opentelemetry\//,
      );
  }, 60_000);
});
