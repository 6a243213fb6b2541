import fs from "node:fs";
import path from "node:path";
import { Ajv } from "ajv";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type CheckOptions,
  type DeclaredMigration,
  type Failure,
  checkCompatibility,
  formatFailure,
  formatFailures,
  runCompatibilityCheck,
  validateFixture,
} from "../../generator/compat/check.js";
import {
  frozenHash,
  readLock,
  readRetired,
  recordFrozen,
  retireType,
  unfreeze,
} from "../../generator/compat/history.js";
import { TempProject, typeSchema } from "./helpers.js";

let p: TempProject;
beforeEach(() => {
  p = new TempProject();
});
afterEach(() => {
  p.cleanup();
});

function check(migrations: DeclaredMigration[] = [], extra: Partial<CheckOptions> = {}): Failure[] {
  return checkCompatibility({
    schemasDir: p.schemasDir,
    fixturesDir: p.fixturesDir,
    migrations,
    cwd: p.root,
    ...extra,
  });
}

function validateWith(schema: Record<string, unknown>, value: unknown): boolean {
  return new Ajv({ strict: false }).compile(schema)(value) as boolean;
}

function summary(failures: Failure[]): string[] {
  return failures.map((f) => `${f.type} ${f.rule} ${f.pointer}`);
}

const summaryV1 = (): Record<string, unknown> =>
  typeSchema("SummaryState", 1, { summary: { type: "string" } }, ["summary"]);
const summaryV2 = (props: Record<string, unknown> = {}, required: string[] = []): Record<string, unknown> =>
  typeSchema("SummaryState", 2, { summary: { type: "string" }, turns: { type: "integer" }, ...props }, [
    "turns",
    ...required,
  ]);

/** SummaryState at v1 then v2, generated, locked, with fixtures and the 1 -> 2 migration. */
function setUpTwoVersions(): DeclaredMigration[] {
  p.generate(summaryV1());
  p.generate(summaryV2());
  p.fixture("SummaryState", "v1.json", { $type: "SummaryState", summary: "hi" });
  p.fixture("SummaryState", "v2.json", { $type: "SummaryState", $version: 2, turns: 3 });
  recordFrozen(p.schemasDir);
  return [{ type: "SummaryState", from: 1, to: 2 }];
}

describe("a healthy history", () => {
  it("passes: frozen versions locked, current matches, migrations and fixtures present", () => {
    const migrations = setUpTwoVersions();
    expect(check(migrations)).toEqual([]);
  });

  it("a compatible change without a version bump passes", () => {
    const migrations = setUpTwoVersions();
    p.current(summaryV2({ note: { type: "string" } }));
    const report = runCompatibilityCheck({
      schemasDir: p.schemasDir,
      fixturesDir: p.fixturesDir,
      migrations,
      cwd: p.root,
    });
    expect(report.failures).toEqual([]);
    expect(report.compared).toHaveLength(1);
    expect(report.compared[0].changes.map((c) => c.rule)).toEqual(["add-optional-property"]);
  });
});

describe("frozen files and the lock", () => {
  it("update mode records new frozen files in frozen.lock.json (canonical sha256)", () => {
    p.generate(summaryV1());
    p.fixture("SummaryState", "v1.json", { $type: "SummaryState", summary: "hi" });
    const report = runCompatibilityCheck({
      schemasDir: p.schemasDir,
      fixturesDir: p.fixturesDir,
      migrations: [],
      update: true,
      cwd: p.root,
    });
    expect(report.failures).toEqual([]);
    expect(report.recorded).toEqual(["ProviderState/SummaryState/v1.schema.json"]);
    const lock = readLock(p.schemasDir);
    const text = fs.readFileSync(p.frozenPath("ProviderState", "SummaryState", 1), "utf8");
    expect(lock.files).toEqual({ "ProviderState/SummaryState/v1.schema.json": frozenHash(text) });
    expect(lock.files["ProviderState/SummaryState/v1.schema.json"]).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("check mode fails on a frozen file missing from the lock", () => {
    p.generate(summaryV1());
    p.fixture("SummaryState", "v1.json", { $type: "SummaryState", summary: "hi" });
    const failures = check();
    expect(summary(failures)).toEqual(["SummaryState frozen-unlocked "]);
    expect(failures[0].fix).toContain("npm run gen");
    expect(fs.existsSync(path.join(p.schemasDir, "history", "frozen.lock.json"))).toBe(false);
  });

  it("fails when a frozen schema file was edited", () => {
    const migrations = setUpTwoVersions();
    const file = p.frozenPath("ProviderState", "SummaryState", 1);
    const edited = JSON.parse(fs.readFileSync(file, "utf8"));
    edited.properties.summary.maxLength = 100;
    fs.writeFileSync(file, JSON.stringify(edited));
    const failures = check(migrations);
    expect(summary(failures)).toEqual(["SummaryState frozen-edited "]);
    expect(failures[0].message).toContain("schemas/history/ProviderState/SummaryState/v1.schema.json was edited");
    expect(failures[0].fix).toContain("git checkout -- schemas/history/ProviderState/SummaryState/v1.schema.json");
    // update mode never overwrites an existing lock entry
    expect(summary(check(migrations, { update: true }))).toEqual(["SummaryState frozen-edited "]);
  });

  it("reformatting a frozen file (whitespace, key order) is not an edit", () => {
    const migrations = setUpTwoVersions();
    const file = p.frozenPath("ProviderState", "SummaryState", 1);
    const value = JSON.parse(fs.readFileSync(file, "utf8"));
    const reordered = Object.fromEntries(Object.entries(value).reverse());
    fs.writeFileSync(file, JSON.stringify(reordered, null, 4).replace(/\n/g, "\r\n"));
    expect(check(migrations)).toEqual([]);
  });

  it("unfreeze drops an unreleased latest version (file and lock entry), never an older one", () => {
    const migrations = setUpTwoVersions();
    p.current(summaryV2({}, ["summary"])); // still editing v2 before release: breaking vs frozen v2
    p.fixture("SummaryState", "v2.json", { $type: "SummaryState", $version: 2, turns: 3, summary: "s" });
    expect(summary(check(migrations))).toEqual(["SummaryState make-required /summary"]);
    expect(() => unfreeze(p.schemasDir, "ProviderState", "SummaryState", 1)).toThrow(/not the latest/);
    expect(unfreeze(p.schemasDir, "ProviderState", "SummaryState", 2)).toBe(true);
    expect(Object.keys(readLock(p.schemasDir).files)).toEqual(["ProviderState/SummaryState/v1.schema.json"]);
    p.generate(summaryV2({}, ["summary"]));
    recordFrozen(p.schemasDir);
    expect(check(migrations)).toEqual([]);
  });

  it("fails when a locked frozen file was deleted", () => {
    const migrations = setUpTwoVersions();
    fs.rmSync(p.frozenPath("ProviderState", "SummaryState", 1));
    const failures = check(migrations);
    expect(summary(failures)).toContain("SummaryState frozen-deleted ");
  });
});

describe("breaking changes without a version bump", () => {
  it("names the type, pointer, rule and the fix (bump + defineMigration)", () => {
    const migrations = setUpTwoVersions();
    p.current(summaryV2({}, ["summary"])); // summary: optional -> required, still version 2
    // the v2 golden fixture has no summary: it is a stored value the change would reject
    expect(summary(check(migrations))).toEqual([
      "SummaryState invalid-fixture /summary",
      "SummaryState make-required /summary",
    ]);
    p.fixture("SummaryState", "v2.json", { $type: "SummaryState", $version: 2, turns: 3, summary: "s" });
    const failures = check(migrations);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ type: "SummaryState", pointer: "/summary", rule: "make-required" });
    expect(formatFailure(failures[0])).toBe(
      'SummaryState: /summary: optional property made required (rule: make-required). Fix: bump SummaryState to version 3 and add a migration 2 -> 3 (defineMigration({ type: "SummaryState", from: 2, to: 3, up }))',
    );
  });

  it("the example from the issue: a required property added at the same version", () => {
    p.generate(typeSchema("SummaryState", 2, { turns: { type: "integer" } }, ["turns"]));
    p.current(
      typeSchema("SummaryState", 2, { turns: { type: "integer" }, summary: { type: "string" } }, ["turns", "summary"]),
    );
    p.fixture("SummaryState", "v2.json", { $type: "SummaryState", $version: 2, turns: 1 });
    recordFrozen(p.schemasDir);
    // v2 has no history before it here, so only the breaking change (and the now-invalid fixture) fail.
    const failures = check();
    expect(failures.map(formatFailure)).toContain(
      'SummaryState: /summary: required property added (rule: add-required). Fix: bump SummaryState to version 3 and add a migration 2 -> 3 (defineMigration({ type: "SummaryState", from: 2, to: 3, up }))',
    );
    expect(summary(failures)).toEqual(["SummaryState add-required /summary", "SummaryState invalid-fixture /summary"]);
  });

  it("reports one failure per breaking change, nested pointers included", () => {
    const migrations = setUpTwoVersions();
    p.current(
      typeSchema(
        "SummaryState",
        2,
        { turns: { type: "integer", minimum: 1 }, summary: { type: "string", format: "date-time" } },
        ["turns"],
      ),
    );
    expect(summary(check(migrations))).toEqual([
      "SummaryState tighten-constraint /summary",
      "SummaryState tighten-constraint /turns",
    ]);
  });
});

describe("verdicts by meaning: witnesses, undecided changes, sampling", () => {
  it("a breaking change carries a witness the frozen schema accepts and the current one rejects, printed under the failure", () => {
    const migrations = setUpTwoVersions();
    p.current(summaryV2({ summary: { type: "string", maxLength: 3 } }));
    const failures = check(migrations);
    expect(summary(failures)).toEqual(["SummaryState tighten-constraint /summary"]);
    const witness = failures[0].witness!;
    expect(witness.source).toBe("constructed");
    const doc = witness.document as Record<string, unknown>;
    expect(doc).toMatchObject({ $type: "SummaryState", $version: 2 });
    expect(String(doc.summary).length).toBe(4);
    expect(validateWith(summaryV2(), doc)).toBe(true);
    expect(validateWith(summaryV2({ summary: { type: "string", maxLength: 3 } }), doc)).toBe(false);
    expect(formatFailures(failures)).toMatch(
      /\n {4}witness \(built from the change; the old schema accepts it, the new one rejects it\): \{.*"summary":"aaaa"/,
    );
  });

  it("a change the check can not decide fails with its keyword and pointer, and says so", () => {
    // A backreference to a group of any length: no finite automaton reads it, so the two can not be compared.
    p.generate(summaryV2({ summary: { type: "string", pattern: "^([a-z]+)\\1$" } }));
    p.fixture("SummaryState", "v2.json", { $type: "SummaryState", $version: 2, turns: 3, summary: "abab" });
    recordFrozen(p.schemasDir);
    p.current(summaryV2({ summary: { type: "string", pattern: "^[a-z]+$" } }));
    const failures = check();
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      pointer: "/summary",
      rule: "cannot-decide",
      change: { keyword: "pattern", kind: "undecided" },
    });
    expect(failures[0].witness).toBeUndefined();
    expect(failures[0].fix).toContain("can not tell whether every stored value still validates");
    expect(failures[0].fix).toContain("bump SummaryState to version 3");
  });

  it("a compatible change is sampled (seed reported); a zero time budget skips sampling", () => {
    const migrations = setUpTwoVersions();
    p.current(summaryV2({ note: { type: "string" } }));
    const options = { schemasDir: p.schemasDir, fixturesDir: p.fixturesDir, migrations, cwd: p.root };
    const sampled = runCompatibilityCheck({ ...options, sampling: { seed: 11, samples: 25 } });
    expect(sampled.failures).toEqual([]);
    expect(sampled.compared[0]).toMatchObject({ verdict: "compatible", sampling: { seed: 11 } });
    expect(sampled.compared[0].sampling!.drawn).toBeGreaterThan(0);
    const skipped = runCompatibilityCheck({ ...options, sampling: { totalTimeBudgetMs: 0 } });
    expect(skipped.compared[0].verdict).toBe("compatible");
    // Skipped sampling is reported, never silent (issue #26).
    expect(skipped.compared[0].sampling).toMatchObject({
      drawn: 0,
      budget: "sampling",
      warning: expect.stringContaining("time budget"),
    });
    expect(skipped.warnings).toEqual([expect.stringContaining("no document was sampled")]);
  });
});

describe("version bumps need migrations", () => {
  it("fails when a new version has no migration from the previous one", () => {
    p.generate(summaryV1());
    p.fixture("SummaryState", "v1.json", { $type: "SummaryState", summary: "hi" });
    p.generate(summaryV2()); // the generator froze v2 on the bump
    p.fixture("SummaryState", "v2.json", { $type: "SummaryState", $version: 2, turns: 3 });
    recordFrozen(p.schemasDir);
    const failures = check([]);
    expect(summary(failures)).toEqual(["SummaryState missing-migration "]);
    expect(failures[0].message).toBe(
      "current version 2 has no migration from version 1: sessions stored at version 1 can not be read",
    );
    expect(failures[0].fix).toBe(
      'add a migration 1 -> 2 (defineMigration({ type: "SummaryState", from: 1, to: 2, up }))',
    );
    expect(check([{ type: "SummaryState", from: 1, to: 2 }])).toEqual([]);
  });

  it("also before the generator froze the new version", () => {
    p.generate(summaryV1());
    p.fixture("SummaryState", "v1.json", { $type: "SummaryState", summary: "hi" });
    p.fixture("SummaryState", "v2.json", { $type: "SummaryState", $version: 2, turns: 3 });
    recordFrozen(p.schemasDir);
    p.current(summaryV2()); // bumped, not frozen yet
    expect(summary(check([]))).toEqual(["SummaryState missing-migration "]);
    expect(check([{ type: "SummaryState", from: 1, to: 2 }])).toEqual([]);
  });

  it("every older version must still reach the current one", () => {
    const migrations = setUpTwoVersions();
    p.generate(typeSchema("SummaryState", 3, { turns: { type: "integer" } }, ["turns"]));
    p.fixture("SummaryState", "v3.json", { $type: "SummaryState", $version: 3, turns: 3 });
    recordFrozen(p.schemasDir);
    // 2 -> 3 declared but 1 -> 2 forgotten (deleted)
    const failures = check([{ type: "SummaryState", from: 2, to: 3 }]);
    expect(summary(failures)).toEqual(["SummaryState missing-migration "]);
    expect(failures[0].fix).toContain("from: 1, to: 2");
    expect(check([...migrations, { type: "SummaryState", from: 2, to: 3 }])).toEqual([]);
    // a migration that skips a version is a valid path too...
    expect(
      check([
        { type: "SummaryState", from: 1, to: 3 },
        { type: "SummaryState", from: 2, to: 3 },
      ]),
    ).toEqual([]);
    // ...but every stored version needs one: here v2 is stranded
    const stranded = check([{ type: "SummaryState", from: 1, to: 3 }]);
    expect(summary(stranded)).toEqual(["SummaryState missing-migration "]);
    expect(stranded[0].fix).toContain("from: 2, to: 3");
  });

  it("migrations of another type do not count", () => {
    setUpTwoVersions();
    expect(summary(check([{ type: "OtherState", from: 1, to: 2 }]))).toEqual(["SummaryState missing-migration "]);
  });

  it("fails when the version went backwards", () => {
    const migrations = setUpTwoVersions();
    p.current(summaryV1());
    const failures = check(migrations);
    expect(summary(failures)).toEqual(["SummaryState version-regressed "]);
    expect(failures[0].fix).toContain("version to 3");
  });
});

describe("removed, renamed, retired and reused $type names", () => {
  function setUpOld(): void {
    p.generate(typeSchema("OldState", 1, { a: { type: "string" } }, ["a"]));
    p.fixture("OldState", "v1.json", { $type: "OldState", a: "x" });
  }

  it("fails when a type was removed and not retired", () => {
    setUpOld();
    recordFrozen(p.schemasDir);
    p.removeCurrent("ProviderState", "OldState");
    const failures = check();
    expect(summary(failures)).toEqual(["OldState removed-type "]);
    expect(failures[0].message).toContain("type removed");
    // The fix names what a user can do: edit retired.json (no internal helper such as retireType).
    expect(failures[0].fix).toContain(
      'add { "$type": "OldState", "reason": "..." } to the "retired" list of schemas/history/retired.json',
    );
    expect(failures[0].fix).not.toContain("retireType");
    fs.writeFileSync(
      path.join(p.schemasDir, "history/retired.json"),
      JSON.stringify({ retired: [{ $type: "OldState", reason: "feature dropped" }] }),
    );
    expect(check()).toEqual([]);
  });

  it("a retired type may be gone; its name can never come back", () => {
    setUpOld();
    recordFrozen(p.schemasDir);
    p.removeCurrent("ProviderState", "OldState");
    const entry = retireType(p.schemasDir, { $type: "OldState", reason: "feature dropped" });
    expect(entry).toEqual({ $type: "OldState", family: "ProviderState", lastVersion: 1, reason: "feature dropped" });
    expect(check()).toEqual([]);

    // Something new takes the name.
    p.current(typeSchema("OldState", 2, { other: { type: "number" } }, ["other"]));
    p.fixture("OldState", "v2.json", { $type: "OldState", $version: 2, other: 1 });
    const failures = check([{ type: "OldState", from: 1, to: 2 }]);
    expect(summary(failures)).toEqual(["OldState reused-type-name "]);
    expect(failures[0].message).toContain("was retired (feature dropped)");
    expect(failures[0].fix).toContain("give this type a new $type");
  });

  it("a rename through former names: update records the old name as retired; reusing it then fails", () => {
    setUpOld();
    recordFrozen(p.schemasDir);
    p.removeCurrent("ProviderState", "OldState");
    p.generate(typeSchema("NewState", 2, { a: { type: "string" } }, ["a"]));
    p.fixture("NewState", "v2.json", { $type: "NewState", $version: 2, a: "x" });
    recordFrozen(p.schemasDir);
    const formerNames = { NewState: ["OldState"] };
    const rename: DeclaredMigration = { type: "NewState", from: 1, to: 2 };

    // Without update: the rename must be recorded (and it needs a migration from the old name).
    expect(summary(check([], { formerNames }))).toEqual(["NewState missing-migration ", "OldState unrecorded-rename "]);
    expect(check([], { formerNames }).find((f) => f.rule === "missing-migration")!.fix).toContain(
      'renames $type "OldState" v1 to "NewState" v2: defineMigration({ type: "OldState", from: 1, to: { type: "NewState", version: 2 }, up: (v) => v })',
    );

    const report = runCompatibilityCheck({
      schemasDir: p.schemasDir,
      fixturesDir: p.fixturesDir,
      migrations: [rename],
      formerNames,
      update: true,
      cwd: p.root,
    });
    expect(report.failures).toEqual([]);
    expect(report.retired).toEqual(["OldState"]);
    expect(readRetired(p.schemasDir)).toEqual([
      { $type: "OldState", family: "ProviderState", lastVersion: 1, renamedTo: "NewState" },
    ]);
    // former names are remembered even when no longer passed in
    expect(check([rename])).toEqual([]);

    // A new, unrelated type named like the former one.
    p.current(typeSchema("OldState", 1, { b: { type: "number" } }, ["b"]));
    const failures = check([rename]);
    expect(summary(failures)).toContain("OldState reused-type-name ");
    expect(failures.find((f) => f.rule === "reused-type-name")!.message).toContain('renamed to "NewState"');
  });

  it("a former name declared in x-statebag counts like one passed in", () => {
    setUpOld();
    recordFrozen(p.schemasDir);
    p.removeCurrent("ProviderState", "OldState");
    p.generate(typeSchema("NewState", 2, { a: { type: "string" } }, ["a"], { meta: { formerNames: ["OldState"] } }));
    p.fixture("NewState", "v2.json", { $type: "NewState", $version: 2, a: "x" });
    recordFrozen(p.schemasDir);
    expect(summary(check([{ type: "NewState", from: 1, to: 2 }]))).toEqual(["OldState unrecorded-rename "]);
  });

  it("a $type whose history is in another family is a reuse", () => {
    setUpOld();
    recordFrozen(p.schemasDir);
    p.removeCurrent("ProviderState", "OldState");
    p.current(typeSchema("OldState", 1, { a: { type: "string" } }, ["a"], { family: "AIContent" }));
    const failures = check();
    expect(summary(failures)).toEqual(["OldState reused-type-name "]);
    expect(failures[0].message).toContain("history in family ProviderState but is now declared in family AIContent");
  });

  it("a $type declared twice fails", () => {
    setUpOld();
    p.current(typeSchema("OldState", 1, { a: { type: "string" } }, ["a"], { family: "AIContent" }));
    recordFrozen(p.schemasDir);
    expect(summary(check()).filter((s) => s.includes("duplicate-type"))).toEqual(["OldState duplicate-type "]);
  });
});

describe("golden fixtures", () => {
  it("fails for each version without a fixture, with the path to add", () => {
    p.generate(summaryV1());
    p.generate(summaryV2());
    recordFrozen(p.schemasDir);
    const failures = check([{ type: "SummaryState", from: 1, to: 2 }]);
    expect(summary(failures)).toEqual(["SummaryState missing-fixture ", "SummaryState missing-fixture "]);
    expect(failures.map((f) => f.message)).toEqual([
      "version 1 has no golden fixture (test/fixtures/SummaryState/v1*.json)",
      "version 2 has no golden fixture (test/fixtures/SummaryState/v2*.json)",
    ]);
    expect(failures[1].fix).toContain("add test/fixtures/SummaryState/v2.json");
    expect(failures[1].fix).toContain("--scaffold-fixtures");
  });

  it("accepts several fixtures per version (v2-long.json) and not v20.json for v2", () => {
    p.generate(summaryV2());
    recordFrozen(p.schemasDir);
    p.fixture("SummaryState", "v20.json", { $type: "SummaryState", $version: 20, turns: 1 });
    expect(summary(check())).toEqual(["SummaryState missing-fixture "]);
    p.fixture("SummaryState", "v2-long.json", { $type: "SummaryState", $version: 2, turns: 1, summary: "s" });
    expect(check()).toEqual([]);
  });

  it("fails when a fixture does not match its version's schema", () => {
    const migrations = setUpTwoVersions();
    p.fixture("SummaryState", "v1.json", { $type: "SummaryState", summary: 5, extra: true });
    p.fixture("SummaryState", "v2.json", { $type: "SummaryState", turns: 3 }); // $version missing
    const failures = check(migrations);
    expect(failures.every((f) => f.rule === "invalid-fixture")).toBe(true);
    const text = failures.map(formatFailure);
    expect(text.some((t) => t.includes("/summary") && t.includes("v1.json does not match version 1"))).toBe(true);
    expect(text.some((t) => t.includes('unexpected property "extra"'))).toBe(true);
    expect(text.some((t) => t.includes("/$version") && t.includes("expected 2"))).toBe(true);
  });

  it("old fixtures are checked against their frozen schema, not the current one", () => {
    const migrations = setUpTwoVersions();
    // v1 fixture has no "turns" (required only from v2): valid against frozen v1.
    expect(check(migrations)).toEqual([]);
  });

  it("family slots that point at other files are left to their own types", () => {
    const schema = typeSchema(
      "History",
      1,
      { messages: { type: "array", items: { $ref: "../AIContent/AIContent.schema.json" } } },
      ["messages"],
    );
    p.generate(schema);
    recordFrozen(p.schemasDir);
    p.fixture("History", "v1.json", { $type: "History", messages: [{ $type: "text", text: "hi" }] });
    expect(check()).toEqual([]);
  });

  it("a slot whose representation changed (opaque -> members) is not a change for the containing type", () => {
    const slots = { meta: { slots: [{ family: "AIContent", path: ["contents", "*"] }] } };
    const opaque = { type: "object", properties: { $type: { type: "string" } }, required: ["$type"] };
    const members = {
      type: "object",
      oneOf: [{ $ref: "../AIContent/text.schema.json" }, { $ref: "../AIContent/data.schema.json" }],
    };
    p.generate(typeSchema("History", 1, { contents: { type: "array", items: opaque } }, ["contents"], slots));
    recordFrozen(p.schemasDir);
    p.current(typeSchema("History", 1, { contents: { type: "array", items: members } }, ["contents"], slots));
    p.fixture("History", "v1.json", { $type: "History", contents: [{ $type: "text", text: "hi" }] });
    expect(check()).toEqual([]);
  });
});

describe("fixture validation", () => {
  const stamped = (): Record<string, unknown> =>
    typeSchema("Stamped", 1, { at: { type: "string", format: "date-time" } }, ["at"]);
  function fixtureProblems(schema: Record<string, unknown>, value: unknown): string[] {
    p.fixture("Stamped", "v1.json", value);
    return validateFixture(path.join(p.fixturesDir, "Stamped", "v1.json"), "Stamped", 1, schema).map(
      (x) => `${x.pointer} ${x.message}`,
    );
  }

  it("checks date-time exactly as the runtime does (a real calendar day, a T separator)", () => {
    expect(fixtureProblems(stamped(), { $type: "Stamped", at: "2024-02-29T12:00:00Z" })).toEqual([]);
    expect(fixtureProblems(stamped(), { $type: "Stamped", at: "2025-02-30T12:00:00Z" })).toEqual([
      '/at must match format "date-time"',
    ]);
    expect(fixtureProblems(stamped(), { $type: "Stamped", at: "2025-01-31 12:00:00Z" })).toEqual([
      '/at must match format "date-time"',
    ]);
  });
});
