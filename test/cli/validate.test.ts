import { afterAll, describe, expect, it } from "vitest";
import { cli, envelope, sampleSession, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const invalid = () => {
  const s = sampleSession("bad");
  s.stateBag["statebag.chatHistory"].messages[0].createdAt = "2025-02-30T10:00:00Z";
  return envelope(s);
};

describe("statebag validate", () => {
  it("accepts the stored form, a bare session and a sessions document", async () => {
    const stored = tmp.file("stored.json", envelope(sampleSession("a")));
    const bare = tmp.file("bare.json", sampleSession("b"));
    const many = tmp.file("many.json", {
      format: "statebag.sessions",
      formatVersion: 1,
      sessions: [sampleSession("c"), sampleSession("d")],
    });
    const r = await cli(["validate", stored, bare, many]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('session "a" valid');
    expect(r.stdout).toContain("statebag.chatHistory: InMemoryChatHistoryState v3 (2 messages)");
    expect(r.stdout).toContain("2 sessions valid");
    expect(r.stdout).toContain("3 of 3 valid");
  });

  it("reports every problem with its JSON pointer and exits 1", async () => {
    const r = await cli(["validate", tmp.file("bad.json", invalid())]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("/session/stateBag/statebag.chatHistory/messages/0/createdAt");
    expect(r.stdout).toMatch(/date-time/);
  });

  it("reports malformed JSON with line and column (exit 1)", async () => {
    const r = await cli(["validate", tmp.file("broken.json", '{"format": "statebag.session",\n  "session": }')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/line 2, column/);
  });

  it("exits 2 for a file it cannot read, and still checks the others", async () => {
    const ok = tmp.file("ok2.json", envelope(sampleSession()));
    const r = await cli(["validate", ok, "/nonexistent/session.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("cannot read /nonexistent/session.json: no such file");
    expect(r.stderr).toContain("fix:");
    expect(r.stdout).toContain("1 of 2 valid");
  });

  it("reads stdin with - and prints JSON with --json", async () => {
    const r = await cli(["validate", "-", "--json"], { stdin: JSON.stringify(invalid()) });
    expect(r.code).toBe(1);
    const out = r.json();
    expect(out.ok).toBe(false);
    expect(out.files[0].file).toBe("(stdin)");
    expect(out.files[0].problems[0]).toMatchObject({
      pointer: "/session/stateBag/statebag.chatHistory/messages/0/createdAt",
      code: "schema",
    });
  });

  it("never calls a value of an unknown type valid: not checked, exit 1, how to fix; --allow-unknown accepts it; --strict fails the load", async () => {
    const s = sampleSession("u");
    s.stateBag["acme.notes"] = { $type: "acme.NotesState", notes: ["x"] };
    const file = tmp.file("unknown.json", envelope(s));
    const unchecked = await cli(["validate", file]);
    expect(unchecked.code).toBe(1);
    expect(unchecked.stdout).not.toContain("valid");
    expect(unchecked.stdout).toContain(
      'not fully checked: 1 value of a type the CLI does not know ("acme.NotesState") was not checked',
    );
    expect(unchecked.stdout).toContain("kept as is: /session/stateBag/acme.notes");
    expect(unchecked.stdout).toContain('fix: give the CLI your registry: set "registry" in statebag.config.json');
    const json = await cli(["validate", file, "--json"]);
    expect(json.json()).toMatchObject({ ok: false, valid: 0, unchecked: 1, files: [{ ok: true, unchecked: 1 }] });
    const allowed = await cli(["validate", file, "--allow-unknown"]);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain("not fully checked");
    const strict = await cli(["validate", file, "--strict", "--json"]);
    expect(strict.code).toBe(1);
    expect(strict.json().files[0].problems[0].code).toBe("unknown-type");
  });

  it("checks your own types with --registry, including migrations of older versions", async () => {
    const registry = tmp.file(
      "registry.ts",
      `import { TypeRegistry } from ${JSON.stringify(new URL("../../src/runtime/registry/registry.js", import.meta.url).pathname)};
import { defaultRegistry } from ${JSON.stringify(new URL("../../src/runtime/validation/default-registry.js", import.meta.url).pathname)};
import { defineMigration } from ${JSON.stringify(new URL("../../src/runtime/registry/migrations.js", import.meta.url).pathname)};
export const registry = TypeRegistry.compose(defaultRegistry());
registry.register({ $type: "acme.NotesState", version: 2, schema: { type: "object", properties: { lines: { type: "array", items: { type: "string" } } }, required: ["lines"] } });
registry.addMigration(defineMigration({ type: "acme.NotesState", from: 1, to: 2, up: (v: any) => ({ lines: v.notes }) }));
`,
    );
    tmp.file("package.json", { type: "module" });
    const s = sampleSession("m");
    s.stateBag["acme.notes"] = { $type: "acme.NotesState", notes: ["x"] };
    const file = tmp.file("old.json", envelope(s));
    const r = await cli(["validate", file, "--strict", "--registry", registry]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("migrated on load");
    expect(r.stdout).toContain("acme.notes: acme.NotesState v2");
    const missing = await cli(["validate", file, "--registry", "nope.ts"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--registry nope.ts: no such file");
  });

  it("refuses stdin twice", async () => {
    expect((await cli(["validate", "-", "-"])).code).toBe(2);
  });
});
