/** `npm run demo` works offline, remembers across the "restart", and its hint command works. */
import { afterAll, describe, expect, it } from "vitest";
import { cli, runExample, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-demo-");
afterAll(() => tmp.cleanup());

const runDemo = (env: Record<string, string>) => runExample("demo.ts", [], { env });

describe("the demo", () => {
  it("runs three turns, restarts, remembers, prints the stored JSON and a valid result", async () => {
    const store = `sqlite:${tmp.dir}/demo.db`;
    const r = await runDemo({ STATEBAG_STORE: store });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const restart = r.stdout.indexOf("Restart");
    expect(restart).toBeGreaterThan(0);
    expect(r.stdout.slice(restart)).toContain("agent: Your name is Ada.");
    expect(r.stdout.slice(restart)).toMatch(/calls get_weather \{"city":"Oslo","unit":"celsius"\}/);
    expect(r.stdout).toContain('"format": "statebag.session"');
    expect(r.stdout).toContain('"$type": "example.UserProfileState"');
    expect(r.stdout).toContain("✔ valid");

    // The command the demo suggests works on what it stored.
    const hint = /npx statebag (inspect .*)$/m.exec(r.stdout)?.[1];
    expect(hint).toBeDefined();
    const args = hint!.split(" ").filter(Boolean);
    const inspected = await cli([...args, "--json"], { env: { STATEBAG_STORE: store } });
    expect(inspected.code).toBe(0);
    expect(inspected.json().validation.preserved).toEqual([]);
  }, 30_000);
});
