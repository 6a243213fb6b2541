/**
 * The CLI never echoes input raw: control characters in ids, keys and `$type` values are escaped
 * (no terminal escape sequence, no newline forging a "✔ valid" line), long values are cut with
 * their length, and the problem list is bounded.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { echo } from "../../src/cli/io.js";
import { cli } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "statebag-hostile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, doc: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

const FORGED = "\n✔ forged.json: 1 session valid";
const ESCAPES = "\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202e";

/** No terminal control sequence and no line that starts a verdict except the real ones. */
function expectSafe(output: string, realVerdicts: number): void {
  expect(output).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
  expect(output.split("\n").filter((line) => /^\s*✔/.test(line))).toHaveLength(realVerdicts);
}

describe("hostile strings in CLI output", () => {
  it("escapes keys and $type values in validate's problems and kept-as-is lines", async () => {
    const path = file("evil.json", {
      id: `s1${ESCAPES}`,
      stateBag: {
        [`k${FORGED}${ESCAPES}`]: { $type: `x${FORGED}${ESCAPES}`, $version: 1 },
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          messages: 5,
          droppedMessageCount: 0,
          branches: [],
          branchPoints: [],
        },
      },
    });
    for (const args of [
      ["validate", path],
      ["validate", "--strict", path],
    ]) {
      const { code, stdout, stderr } = await cli(args);
      expect(code).toBe(1);
      expectSafe(stdout + stderr, 0);
      expect(stdout).toContain("\\n✔ forged.json");
      expect(stdout).toContain("\\u001b[2J");
    }
  });

  it("escapes ids and keys of a valid document", async () => {
    const path = file("valid.json", {
      id: `s2${FORGED}`,
      stateBag: {
        [`note${FORGED}\u001b[8m`]: {
          $type: "InMemoryChatHistoryState",
          $version: 2,
          messages: [],
          droppedMessageCount: 0,
        },
      },
    });
    const { code, stdout } = await cli(["validate", path]);
    expect(code).toBe(0);
    expectSafe(stdout, 1);
  });

  it("cuts a huge key, saying its length, so the output stays small", async () => {
    const key = "K".repeat(5_000_000);
    const path = file("big.json", {
      id: "s3",
      stateBag: {
        [key]: {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          messages: 1,
          droppedMessageCount: 0,
          branches: [],
          branchPoints: [],
        },
      },
    });
    const { code, stdout } = await cli(["validate", path]);
    expect(code).toBe(1);
    expect(stdout.length).toBeLessThan(1_500);
    expect(stdout).toMatch(/\.\.\. \(\d+ characters\)/);
  });

  it("cuts a huge session id in validate's verdict, valid or not", async () => {
    const id = `s${"I".repeat(5_000_000)}${ESCAPES}`;
    const history = {
      $type: "InMemoryChatHistoryState",
      $version: 3,
      messages: [],
      droppedMessageCount: 0,
      branches: [],
      branchPoints: [],
    };
    for (const [name, messages, exit] of [
      ["big-id.json", [], 0],
      ["big-id-bad.json", 1, 1],
    ] as const) {
      const { code, stdout } = await cli([
        "validate",
        file(name, { id, stateBag: { "statebag.chatHistory": { ...history, messages } } }),
      ]);
      expect(code).toBe(exit);
      expect(stdout.length).toBeLessThan(5_000);
      expectSafe(stdout, exit === 0 ? 1 : 0);
      if (exit === 0) expect(stdout).toContain(`(${id.length} chars)`);
    }
  });

  it("lists a bounded number of problems, then how many more", async () => {
    const stateBag: Record<string, unknown> = {};
    for (let i = 0; i < 500; i++)
      stateBag[`h${i}`] = {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: i,
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      };
    const { code, stdout } = await cli(["validate", file("many.json", { id: "s4", stateBag })]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/\.\.\. and \d+ more \(use --json for all\)/);
    expect(stdout.split("\n").length).toBeLessThan(250);
  });

  it("a bad store URL is a usage error (exit 2) that does not print the password", async () => {
    const { code, stderr, stdout } = await cli([
      "inspect",
      "--store",
      "postgres://app:Tr0ub4dor-x9@db.example:99999/prod",
    ]);
    expect(code).toBe(2);
    expect(stderr + stdout).not.toContain("Tr0ub4dor-x9");
    expect(stderr).toContain("postgres://***@db.example");
    const unknown = await cli(["inspect", "--store", "redis://cache.invalid:6379?prefx=a:"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("?prefix=");
  });

  it("an ill-formed id on the command line is a usage error, printed escaped", async () => {
    const { code, stderr } = await cli(["inspect", "--store", "memory:", `bad\u0000id${ESCAPES}`]);
    expect(code).toBe(2);
    expectSafe(stderr, 0);
    expect(stderr).toMatch(/NUL/);
  });

  it("echo() escapes controls and invisible characters and cuts without splitting a pair", () => {
    expect(echo("a\nb\u001b[31m\u202e")).toBe("a\\nb\\u001b[31m\\u202e");
    expect(echo(`${"x".repeat(9)}\u{1F600}`, 10)).toBe(`${"x".repeat(9)}... (11 characters)`);
  });
});
