/**
 * storeConformance does not depend on vitest: the same kit, given node:test's describe/it/before/
 * after, runs under `node --test` in a child process on a memory store, every case passing and the
 * declared TTL skip reported as skipped.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "../..");

describe("storeConformance under node:test", () => {
  it("runs the whole contract on a memory store with `node --test`: all pass, the declared skips are skipped", () => {
    const child = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--test",
        "--test-reporter=tap",
        join(REPO, "test/testing/fixtures/memory-store.node-test.ts"),
      ],
      {
        cwd: REPO,
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: process.env.HOME, TSX_TSCONFIG_PATH: join(REPO, "tsconfig.json") },
        timeout: 120_000,
      },
    );
    const out = child.stdout;
    const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, "m").exec(out)?.[1]);
    expect(child.status, `node --test failed:\n${out}\n${child.stderr}`).toBe(0);
    expect(count("fail")).toBe(0);
    expect(count("skipped")).toBe(2); // the two TTL cases
    expect(count("pass")).toBeGreaterThanOrEqual(23);
    expect(out).toContain("memory (node:test): statebag SessionStore contract");
    expect(out).toMatch(/ok \d+ - compare-and-swap: the loaded revision saves, a stale one conflicts/);
    expect(out).toMatch(
      /expires a session saved with a time to live \(skipped: the store declares no ttl: skipped here to show a declared skip under node:test\) # SKIP/,
    );
  }, 120_000);
});
