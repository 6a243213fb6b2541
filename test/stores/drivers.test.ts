/**
 * Optional database drivers are loaded only for the store URL that needs them, and a missing or
 * unloadable one is a typed error naming the package and the command, never a resolution trace.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  DriverMissingError,
  driverResolution,
  loadDriver,
  type OptionalDriver,
} from "../../src/runtime/stores/drivers.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";

const real = { ...driverResolution };
afterEach(() => Object.assign(driverResolution, real));

/** Makes every driver resolve to a package name that does not exist. */
function simulateMissing(): void {
  driverResolution.moduleName = (driver) => `statebag-test-not-installed-${driver}`;
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

describe("optional drivers", () => {
  it.each([
    ["pg", "postgres://db.invalid/app"],
    ["ioredis", "redis://cache.invalid:6379"],
    ["better-sqlite3", "sqlite:SQLITE_PATH?driver=better-sqlite3"],
  ] as [OptionalDriver, string][])(
    "a missing %s fails openStore with DriverMissingError and the npm command",
    async (driver, url) => {
      const dir = mkdtempSync(join(tmpdir(), "statebag-drivers-"));
      try {
        simulateMissing();
        const error = await errorOf(openStore(url.replace("SQLITE_PATH", join(dir, "s.db"))));
        expect(error).toBeInstanceOf(DriverMissingError);
        expect((error as DriverMissingError).code).toBe("driver-missing");
        expect((error as DriverMissingError).driver).toBe(driver);
        expect((error as Error).message).toContain(`the database driver "${driver}"`);
        expect((error as Error).message).toMatch(/is not installed/);
        expect((error as DriverMissingError).hint).toContain(`npm i ${driver}`);
        expect((error as Error).message).not.toMatch(/Cannot find module|Require stack/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("suggests the built-in driver when better-sqlite3 is missing, and still opens the default", async () => {
    simulateMissing();
    const error = await errorOf(new SqliteSessionStore({ path: ":memory:", driver: "better-sqlite3" }).setup());
    expect((error as DriverMissingError).hint).toMatch(
      /drop \?driver=better-sqlite3 to use the built-in node:sqlite driver/,
    );
    const store = await openStore("sqlite::memory:");
    expect(await store.get("x")).toBeUndefined();
    await store.close();
  });

  it("a driver that is installed but cannot load (a native build for another Node) says how to rebuild it", () => {
    driverResolution.require = () => {
      throw new Error(
        "Could not locate the bindings file. Tried:\n → /app/node_modules/better-sqlite3/build/better_sqlite3.node",
      );
    };
    let error: unknown;
    try {
      loadDriver("better-sqlite3");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DriverMissingError);
    expect((error as DriverMissingError).code).toBe("driver-unloadable");
    expect((error as Error).message).toMatch(/is installed but cannot be loaded on Node \d+/);
    expect((error as DriverMissingError).hint).toMatch(/npm rebuild better-sqlite3/);
    expect((error as Error).message).not.toMatch(/bindings file/);
    expect(((error as Error).cause as Error).message).toMatch(/bindings file/); // kept for debugging
  });

  it("a file missing inside an installed package is a broken install, not a missing one", () => {
    driverResolution.require = (id) => {
      throw Object.assign(new Error(`Cannot find module './lib/client' from '/app/node_modules/${id}/index.js'`), {
        code: "MODULE_NOT_FOUND",
      });
    };
    expect(() => loadDriver("pg")).toThrow(expect.objectContaining({ code: "driver-unloadable" }));
    driverResolution.require = (id) => {
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
    };
    expect(() => loadDriver("pg")).toThrow(expect.objectContaining({ code: "driver-missing" }));
  });

  it("a default SQLite store loads none of pg, ioredis or better-sqlite3", async () => {
    const dir = mkdtempSync(join(tmpdir(), "statebag-drivers-"));
    try {
      const script = fileURLToPath(new URL("./workers/loaded-drivers.ts", import.meta.url));
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", "tsx", script, join(dir, "s.db")], {
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("exit", (code) =>
          code === 0 ? resolve(stdout) : reject(new Error(`exited with ${code}: ${stderr}`)),
        );
      });
      expect(JSON.parse(out)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
