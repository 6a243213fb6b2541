import { describe, expect, it } from "vitest";
import { ANSI, cli, envelope, sampleSession, spawnCli } from "./helpers.js";

const COMMANDS = [
  ["gen"],
  ["validate"],
  ["inspect"],
  ["migrate"],
  ["store"],
  ["store", "setup"],
  ["diff"],
  ["import"],
  ["export"],
];

describe("the program", () => {
  it("prints help with no arguments and exits 0", async () => {
    const r = await cli([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: statebag");
    for (const name of ["gen", "validate", "inspect", "migrate", "store", "diff", "import", "export"])
      expect(r.stdout).toContain(name);
    expect(r.stdout).toContain("Exit codes");
  });

  it.each(COMMANDS)("%s %s --help exits 0 with usage", async (...command) => {
    const args = command.filter((a): a is string => typeof a === "string");
    const r = await cli([...args, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: statebag ${args.join(" ")}`);
  });

  it("prints its version", async () => {
    const r = await cli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("maps usage errors to exit 2 with a hint", async () => {
    for (const args of [
      ["bogus"],
      ["validate"],
      ["validate", "--nope", "x.json"],
      ["diff", "only-one.json"],
      ["import", "x.json"],
      ["import", "--from", "java", "x.json"],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toMatch(/error/);
    }
  });

  it("colours output on a terminal only, and never with NO_COLOR", async () => {
    const file = ["-"];
    const stdin = JSON.stringify(envelope(sampleSession()));
    expect((await cli(["validate", ...file], { stdin, tty: true })).stdout).toMatch(ANSI);
    expect((await cli(["validate", ...file], { stdin, tty: false })).stdout).not.toMatch(ANSI);
    expect((await cli(["validate", ...file], { stdin, tty: true, env: { NO_COLOR: "1" } })).stdout).not.toMatch(ANSI);
  });

  it("shows no stack trace unless STATEBAG_DEBUG=1", async () => {
    const plain = await cli(["store", "setup", "--store", "redis://127.0.0.1:1/0"]);
    expect(plain.code).toBe(3);
    expect(plain.stderr).toMatch(/unavailable/);
    expect(plain.stderr).toMatch(/fix:/);
    expect(plain.stderr).not.toMatch(/\n\s+at /);
    const debug = await cli(["store", "setup", "--store", "redis://127.0.0.1:1/0"], { env: { STATEBAG_DEBUG: "1" } });
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});

describe("bin/statebag.mjs (child process)", () => {
  it("runs from the sources without a build: help, stdin validation, usage error", async () => {
    const [help, valid, usage] = await Promise.all([
      spawnCli(["--help"]),
      spawnCli(["validate", "-", "--json"], { stdin: JSON.stringify(envelope(sampleSession("piped"))) }),
      spawnCli(["validate", "--bogus"]),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: statebag");
    expect(valid.code).toBe(0);
    expect(valid.json().files[0].sessions[0].id).toBe("piped");
    expect(valid.stdout).not.toMatch(ANSI);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("unknown option '--bogus'");
  });
});

describe("progress bars", () => {
  it("show on a terminal for long work, never in --json mode or on CI", async () => {
    const { tempDir } = await import("./helpers.js");
    const tmp = tempDir();
    try {
      const files = Array.from({ length: 25 }, (_, i) => tmp.file(`s${i}.json`, envelope(sampleSession(`p${i}`))));
      const { Capture } = await import("../../src/cli/io.js");
      const { runCli } = await import("../../src/cli/main.js");
      const { Readable } = await import("node:stream");
      const run = async (args: string[], env: Record<string, string>) => {
        const stdout = new Capture(true);
        const stderr = new Capture(true);
        const code = await runCli(args, { stdout, stderr, stdin: Readable.from([]), env, cwd: tmp.dir });
        return { code, stderr: stderr.text };
      };
      const bar = await run(["validate", "-q", ...files], {});
      expect(bar.code).toBe(0);
      expect(bar.stderr).toContain("validating [");
      expect((await run(["validate", "--json", ...files], {})).stderr).toBe("");
      expect((await run(["validate", "-q", ...files], { CI: "true" })).stderr).toBe("");
    } finally {
      tmp.cleanup();
    }
  });
});
