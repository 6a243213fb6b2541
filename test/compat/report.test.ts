import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diffSchemas } from "../../generator/compat/diff.js";
import { assessCompatibility } from "../../generator/compat/assess.js";
import { formatDiffReport, runDiff } from "../../generator/compat/report.js";
import { TempProject } from "./helpers.js";

const old = {
  type: "object",
  properties: { role: { type: "string" }, note: { type: "string" } },
  required: ["role"],
  additionalProperties: false,
};
const breaking = {
  ...old,
  properties: { ...old.properties, summary: { type: "string" } },
  required: ["role", "summary"],
};
const compatible = { ...old, properties: { ...old.properties, extra: { type: "number" } } };

describe("formatDiffReport", () => {
  it("lists breaking changes first, one per line, with pointer, message and rule", () => {
    const changes = diffSchemas(old, {
      ...breaking,
      properties: { ...breaking.properties, extra: { type: "number" } },
    });
    expect(formatDiffReport(changes)).toBe(
      [
        "BREAKING    /summary  required property added (rule: add-required)",
        "compatible  /extra    optional property added (rule: add-optional-property)",
        "",
        "1 breaking, 1 compatible changes: values stored with the old schema may be rejected; bump the type's version and add a migration.",
      ].join("\n"),
    );
  });

  it("says so when nothing changed or everything is compatible", () => {
    expect(formatDiffReport([])).toMatch(/^No changes/);
    expect(formatDiffReport(diffSchemas(old, compatible))).toContain(
      "1 compatible change: every value the old schema accepts",
    );
  });

  it("can hide compatible changes", () => {
    const changes = diffSchemas(old, {
      ...breaking,
      properties: { ...breaking.properties, extra: { type: "number" } },
    });
    expect(formatDiffReport(changes, { compatible: false })).not.toContain("/extra");
  });
});

describe("formatDiffReport: verdicts by meaning", () => {
  it("prints the witness under each breaking change, escaped and bounded", () => {
    const next = { ...old, properties: { ...old.properties, role: { type: "string", maxLength: 3 } } };
    const { changes } = assessCompatibility(old, next, { samples: 0 });
    const lines = formatDiffReport(changes).split("\n");
    expect(lines[0]).toMatch(/^BREAKING\s+\/role\s+maxLength/);
    expect(lines[1]).toBe('            witness (old accepts, new rejects): {"role":"aaaa"}');
    const hostile = [
      { ...changes[0], witness: { document: { role: "\u001b[2J" + "x".repeat(500) }, source: "constructed" as const } },
    ];
    const shown = formatDiffReport(hostile).split("\n")[1];
    expect(shown).toContain("\\u001b[2J");
    expect(shown).not.toContain("\u001b");
    // Cut at ~500 characters of the document, with its total length (issue #26).
    expect(shown.length).toBeLessThan(600);
    expect(shown).toMatch(/\.\.\. \(520 characters\)$/);
  });

  it("lists undecided changes after breaking ones and says what to do", () => {
    const { changes } = assessCompatibility({ type: "string", "acme-rule": 1 }, { type: "string", "acme-rule": 2 });
    const report = formatDiffReport(changes);
    expect(report).toMatch(/^UNDECIDED\s+\(root\)\s+unknown keyword "acme-rule" changed/);
    expect(report).toContain("1 undecided, 0 compatible change: the check can not tell");
    expect(formatDiffReport(changes, { compatible: false })).toContain("UNDECIDED");
  });

  it("names the seed of the sampled documents", () => {
    const report = formatDiffReport(diffSchemas(old, compatible), {
      sampling: { seed: 42, drawn: 300, accepted: 300, timedOut: false },
    });
    expect(report.split("\n").at(-1)).toBe(
      "Sampling: 300 documents drawn from the old schema (seed 42), all accepted by the new one.",
    );
  });
});

describe("runDiff", () => {
  let p: TempProject;
  beforeEach(() => {
    p = new TempProject();
  });
  afterEach(() => p.cleanup());

  function write(name: string, value: unknown): string {
    const file = p.file(name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(value));
    return file;
  }

  it("exits 1 when a change is breaking", () => {
    const r = runDiff(write("old.schema.json", old), write("new.schema.json", breaking));
    expect(r.exitCode).toBe(1);
    expect(r.changes.map((c) => c.rule)).toEqual(["add-required"]);
    expect(r.report).toContain("BREAKING");
    expect(r.verdict).toBe("breaking");
    expect(r.changes[0].witness).toEqual({ document: { role: "" }, source: "constructed" });
    expect(r.report).toContain('witness (old accepts, new rejects): {"role":""}');
  });

  it("exits 1 when a change is undecided, and samples compatible changes with the given seed", () => {
    const undecided = runDiff(
      write("u1.schema.json", { type: "string", "acme-rule": 1 }),
      write("u2.schema.json", { type: "string", "acme-rule": 2 }),
    );
    expect(undecided).toMatchObject({ exitCode: 1, verdict: "undecided" });
    const sampled = runDiff(write("old.schema.json", old), write("new.schema.json", compatible), {
      seed: 5,
      samples: 20,
    });
    expect(sampled).toMatchObject({ exitCode: 0, verdict: "compatible", sampling: { seed: 5 } });
    expect(sampled.report).toContain("(seed 5)");
  });

  it("exits 0 when every change is compatible (or there is none)", () => {
    expect(runDiff(write("old.schema.json", old), write("new.schema.json", compatible)).exitCode).toBe(0);
    expect(runDiff(write("a.schema.json", old), write("b.schema.json", old))).toMatchObject({
      exitCode: 0,
      changes: [],
    });
  });

  it("exits 2 with a message when a file can not be read or parsed", () => {
    const missing = runDiff(p.file("nope.json"), write("b.schema.json", old));
    expect(missing.exitCode).toBe(2);
    expect(missing.report).toContain("cannot read");
    fs.writeFileSync(p.file("bad.json"), "{");
    expect(runDiff(p.file("bad.json"), p.file("b.schema.json")).report).toContain("not valid JSON");
  });

  it("follows refs to other files relative to each schema file", () => {
    write("v1/Content.schema.json", { type: "object", properties: { text: { type: "string" } } });
    write("v2/Content.schema.json", { type: "object", properties: { text: { type: "string", minLength: 1 } } });
    const schema = {
      type: "object",
      properties: { contents: { type: "array", items: { $ref: "Content.schema.json" } } },
    };
    const r = runDiff(write("v1/State.schema.json", schema), write("v2/State.schema.json", schema));
    expect(r.exitCode).toBe(1);
    expect(r.changes).toMatchObject([
      { pointer: "/contents/*/text", rule: "tighten-constraint", keyword: "minLength" },
    ]);
  });
});
