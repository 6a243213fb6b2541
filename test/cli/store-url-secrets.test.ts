/**
 * Issue #21.9 through the CLI: a sqlite:// URL with a login is refused (exit 2) before anything is
 * created, and a bad PostgreSQL option value is a usage error (exit 2) naming the option, not an
 * "unexpected error" (exit 3). In no output mode does the password appear.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, spawnCli } from "./helpers.js";

const SECRET = "Tr0ub4dor-x9";
const cwd = mkdtempSync(join(tmpdir(), "statebag-url-secrets-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Every way the CLI reports: text, --json, colours forced on, and the debug stack traces. */
const MODES: { label: string; args: string[]; env: Record<string, string> }[] = [
  { label: "text", args: [], env: {} },
  { label: "--json", args: ["--json"], env: {} },
  { label: "FORCE_COLOR=1", args: [], env: { FORCE_COLOR: "1" } },
  { label: "STATEBAG_DEBUG=1", args: [], env: { STATEBAG_DEBUG: "1" } },
];

describe("statebag with a sqlite:// URL holding credentials", () => {
  it.each(MODES)("is refused in $label mode: exit 2, nothing created, the password nowhere", async ({ args, env }) => {
    for (const command of [["inspect"], ["store", "setup"]]) {
      // A child process in an empty directory: the old code created "u:<password>@host/" there.
      const r = await spawnCli([...command, "--store", `sqlite://u:${SECRET}@host/x.db`, ...args], { cwd, env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/credentials/);
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      expect(readdirSync(cwd)).toEqual([]);
    }
  });

  it("is refused when written without // (sqlite:user:pass@host/x.db), relative paths being resolved by the CLI", async () => {
    const r = await spawnCli(["store", "setup", "--store", `sqlite:u:${SECRET}@host/x.db`], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/looks like credentials/);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("is refused from $STATEBAG_STORE too", async () => {
    const r = await spawnCli(["inspect", "--json"], {
      cwd,
      env: { STATEBAG_STORE: `sqlite:file://u:${SECRET}@host/x.db` },
    });
    expect(r.code).toBe(2);
    expect(r.json().error.code).toBe("configuration");
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe("statebag with a PostgreSQL URL whose option value pg does not accept", () => {
  it.each(MODES)(
    "is a usage error in $label mode naming the option and its values, the password nowhere",
    async ({ args, env }) => {
      // Port 1: nothing listens there, so only the URL check can give exit 2.
      const r = await cli(["inspect", "--store", `postgres://app:${SECRET}@127.0.0.1:1/db?sslmode=bogus`, ...args], {
        env,
        cwd,
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("?sslmode=");
      expect(r.stderr).toContain("disable, prefer, require, verify-ca, verify-full, no-verify");
      expect(r.stderr).not.toContain("unexpected error");
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      if (args.includes("--json")) expect(r.json().error.code).toBe("configuration");
    },
  );
});
