/** Formats decided like the runtime asserts them (issue #26). */
import type { JsonSchema } from "../../generator/compat/schema.js";
import { describe, expect, it } from "vitest";
import { assessCompatibility } from "../../generator/compat/assess.js";
import { diffSchemas } from "../../generator/compat/diff.js";
import type { Change, ChangeKind } from "../../generator/compat/rule-catalogue.js";
import { ASSERTED_FORMATS, formatAccepts } from "../../generator/compat/formats.js";

function verdict(changes: readonly Change[]): ChangeKind {
  if (changes.some((c) => c.kind === "breaking")) return "breaking";
  if (changes.some((c) => c.kind === "undecided")) return "undecided";
  return "compatible";
}
const v = (a: unknown, b: unknown): ChangeKind => verdict(diffSchemas(a as JsonSchema, b as JsonSchema));

describe("formats", () => {
  it("the runtime asserts exactly date-time", () => {
    expect([...ASSERTED_FORMATS]).toEqual(["date-time"]);
    expect(formatAccepts("date-time", "2025-02-30T00:00:00Z")).toBe(false);
    expect(formatAccepts("email", "not an email")).toBe(true);
  });
  it("a format the runtime does not assert is an annotation: adding, changing or removing it is compatible", () => {
    expect(v({ type: "string" }, { type: "string", format: "email" })).toBe("compatible");
    expect(v({ type: "string", format: "email" }, { type: "string", format: "uri" })).toBe("compatible");
    expect(v({ type: "string", format: "date" }, { type: "string" })).toBe("compatible");
    // ...and bounds nothing: the old language is not narrowed by it.
    expect(v({ type: "string", format: "date" }, { type: "string", format: "date", pattern: "^\\d" })).toBe("breaking");
  });
  it("an asserted format removed is compatible, added is breaking with a witness outside it", () => {
    expect(v({ type: "string", format: "date-time" }, { type: "string" })).toBe("compatible");
    expect(v({ type: "string", format: "date-time" }, { type: "string", format: "email" })).toBe("compatible");
    const r = assessCompatibility(
      { type: "string", minLength: 2 },
      { type: "string", minLength: 2, format: "date-time" },
      { samples: 0 },
    );
    expect(r.verdict).toBe("breaking");
    const w = r.changes.find((c) => c.witness)!.witness!.document as string;
    expect(w.length).toBeGreaterThanOrEqual(2);
    expect(formatAccepts("date-time", w)).toBe(false);
  });
  it("added to strings only shaped like it: a near miss the runtime rejects is the witness", () => {
    const shaped = { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$" };
    const r = assessCompatibility(shaped, { ...shaped, format: "date-time" }, { samples: 0 });
    expect(r.verdict).toBe("breaking");
    expect(r.changes.find((c) => c.witness)!.witness!.document).toBe("2025-02-30T00:00:00Z");
  });
});
