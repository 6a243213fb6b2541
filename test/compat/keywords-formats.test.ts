/**
 * Formats decided like the runtime asserts them (issues #26, #34): every format of ajv-formats' set
 * the runtime checks is a constraint (added: a break with a witness; removed: compatible); a format
 * the runtime does not know, or one that accepts every value (`password`, `binary`, `float`,
 * `double`), is an annotation. Every witness is validated by ajv with the runtime's formats.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { assessCompatibility } from "../../generator/compat/assess.js";
import { diffSchemas } from "../../generator/compat/diff.js";
import { ASSERTED_FORMATS, FORMAT_EXAMPLES, NEAR_MISSES, formatAccepts } from "../../generator/compat/formats.js";
import { FORMAT_SHAPES } from "../../generator/compat/regex.js";
import type { Change, ChangeKind } from "../../generator/compat/rule-catalogue.js";
import type { JsonSchema } from "../../generator/compat/schema.js";
import { FORMATS } from "../../src/runtime/registry/formats.js";

function verdict(changes: readonly Change[]): ChangeKind {
  if (changes.some((c) => c.kind === "breaking")) return "breaking";
  if (changes.some((c) => c.kind === "undecided")) return "undecided";
  return "compatible";
}
const v = (a: unknown, b: unknown): ChangeKind => verdict(diffSchemas(a as JsonSchema, b as JsonSchema));

const runtime = new Ajv({ strict: false, formats: { ...FORMATS } });
runtime.addFormat("acme-color", true);

/** The assessed verdict; a break's witness is checked against both schemas by the runtime's ajv. */
function judge(old: unknown, next: unknown): { verdict: string; witness?: unknown } {
  const a = assessCompatibility(old as JsonSchema, next as JsonSchema, { samples: 40 });
  if (a.verdict !== "breaking") return { verdict: a.verdict };
  const witness = a.changes.find((c) => c.kind === "breaking" && c.witness)!.witness!.document;
  expect(runtime.validate(old as object, witness)).toBe(true);
  expect(runtime.validate(next as object, witness)).toBe(false);
  return { verdict: a.verdict, witness };
}

const STRING_FORMATS = [
  "date",
  "time",
  "date-time",
  "duration",
  "uri",
  "uri-reference",
  "uri-template",
  "url",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "regex",
  "uuid",
  "json-pointer",
  "relative-json-pointer",
  "byte",
];

describe("formats the runtime asserts", () => {
  it("ajv-formats' common set is asserted on strings; password and binary are not (they accept everything)", () => {
    for (const f of STRING_FORMATS) expect(ASSERTED_FORMATS.has(f), f).toBe(true);
    for (const f of ["password", "binary", "int32", "acme-color"]) expect(ASSERTED_FORMATS.has(f), f).toBe(false);
    expect(formatAccepts("date-time", "2025-02-30T00:00:00Z")).toBe(false);
    expect(formatAccepts("email", "not an email")).toBe(false);
    expect(formatAccepts("acme-color", "anything")).toBe(true);
    expect(formatAccepts("int32", 2 ** 31)).toBe(false);
    expect(formatAccepts("int32", "a string: another type passes")).toBe(true);
  });

  it.each(STRING_FORMATS)("%s added to a free string is breaking, with a string it rejects", (format) => {
    const r = judge({ type: "string" }, { type: "string", format });
    expect(r.verdict).toBe("breaking");
    expect(formatAccepts(format, r.witness)).toBe(false);
  });

  it.each(STRING_FORMATS)("%s removed is compatible", (format) => {
    expect(judge({ type: "string", format }, { type: "string" }).verdict).toBe("compatible");
  });

  it.each(STRING_FORMATS)("%s added inside an object property, next to a length bound", (format) => {
    const old = { type: "object", properties: { v: { type: "string", maxLength: 60 } }, required: ["v"] };
    const next = { type: "object", properties: { v: { type: "string", maxLength: 60, format } }, required: ["v"] };
    expect(judge(old, next).verdict).toBe("breaking");
  });

  it("a format the runtime does not know is not asserted: adding, changing or removing it changes nothing", () => {
    expect(v({ type: "string" }, { type: "string", format: "acme-color" })).toBe("compatible");
    expect(v({ type: "string", format: "acme-color" }, { type: "string" })).toBe("compatible");
    expect(v({ type: "string", format: "acme-color" }, { type: "string", format: "acme-size" })).toBe("compatible");
    expect(v({ type: "string" }, { type: "string", format: "password" })).toBe("compatible");
    // An asserted format replaced by an unknown one is a removal.
    expect(v({ type: "string", format: "email" }, { type: "string", format: "acme-color" })).toBe("compatible");
    // ...and an unknown one replaced by an asserted one is an addition.
    expect(judge({ type: "string", format: "acme-color" }, { type: "string", format: "email" }).verdict).toBe(
      "breaking",
    );
  });

  it("one asserted format replaced by another: a valid value of the old one the new one rejects", () => {
    const r = judge({ type: "string", format: "email" }, { type: "string", format: "uri" });
    expect(r.verdict).toBe("breaking");
    expect(formatAccepts("email", r.witness)).toBe(true);
    expect(judge({ type: "string", format: "date" }, { type: "string", format: "date-time" }).verdict).toBe("breaking");
  });

  it("added to strings only shaped like it: a near miss the runtime rejects is the witness", () => {
    const shaped = { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$" };
    const r = judge(shaped, { ...shaped, format: "date-time" });
    expect(r.witness).toBe("2025-02-30T00:00:00Z");
    const day = { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" };
    expect(judge(day, { ...day, format: "date" }).witness).toBe("2025-02-30");
  });

  it("int32 / int64 on numbers: added breaks where the old numbers reach past it; implied within bounds", () => {
    const r = judge({ type: "integer" }, { type: "integer", format: "int32" });
    expect(r.verdict).toBe("breaking");
    expect(r.witness).toBe(2147483648);
    expect(judge({ type: "number" }, { type: "number", format: "int64" }).witness).toBe(0.5);
    expect(judge({ type: "integer" }, { type: "integer", format: "int64" }).verdict).toBe("compatible");
    const bounded = { type: "integer", minimum: 0, maximum: 1000 };
    expect(judge(bounded, { ...bounded, format: "int32" }).verdict).toBe("compatible");
    expect(judge({ type: "integer", format: "int32" }, { type: "integer" }).verdict).toBe("compatible");
    // float and double accept every number.
    expect(v({ type: "number" }, { type: "number", format: "double" })).toBe("compatible");
  });

  it("a format: date replaced by a pattern: looser is compatible, tighter breaks with a real date", () => {
    const date = { type: "string", format: "date" };
    expect(judge(date, { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" }).verdict).toBe("compatible");
    expect(judge(date, { type: "string", pattern: "^\\d{4}-" }).verdict).toBe("compatible");
    expect(judge(date, { type: "string", pattern: "^[0-9-]+$" }).verdict).toBe("compatible");
    const tighter = judge(date, { type: "string", pattern: "^20\\d{2}-\\d{2}-\\d{2}$" });
    expect(tighter.verdict).toBe("breaking");
    expect(formatAccepts("date", tighter.witness)).toBe(true);
    // The same for date-time and uuid.
    expect(
      judge({ type: "string", format: "date-time" }, { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}[Tt]" }).verdict,
    ).toBe("compatible");
    const uuid = { type: "string", format: "uuid" };
    expect(
      judge(uuid, { type: "string", pattern: "^([Uu][Rr][Nn]:[Uu][Uu][Ii][Dd]:)?[0-9a-fA-F-]{36}$" }).verdict,
    ).toBe("compatible");
    // ajv-formats' uuid ignores case, its "urn:uuid:" prefix too: a lower-case-only prefix is a break.
    expect(judge(uuid, { type: "string", pattern: "^(urn:uuid:)?[0-9a-fA-F-]{36}$" }).witness).toMatch(/^URN:UUID:/);
  });
});

describe("format shapes (what the automata read a format as)", () => {
  // A shape must accept every value its format accepts: it only ever proves "the old format implies
  // the new pattern" and finds sure witnesses outside it.
  it.each(Object.keys(FORMAT_SHAPES))("%s: every valid value matches the shape", (format) => {
    const shape = new RegExp(FORMAT_SHAPES[format]!, "u");
    const seeds = [...(FORMAT_EXAMPLES[format] ?? []), ...(NEAR_MISSES[format] ?? [])].filter(
      (v): v is string => typeof v === "string",
    );
    let valid = 0;
    for (const s of seeds)
      for (let i = 0; i <= s.length; i++)
        for (const c of ["", "a", "A", "0", "9", "-", ".", ":", "/", "~", "@", "T", "Z", "+", "#", " "]) {
          for (const v of [s.slice(0, i) + c + s.slice(i + 1), s.slice(0, i) + c + s.slice(i)]) {
            if (!formatAccepts(format, v)) continue;
            valid++;
            expect(shape.test(v), `${format} ${JSON.stringify(v)}`).toBe(true);
          }
        }
    expect(valid).toBeGreaterThan(0);
  });

  it("a pattern every valid value matches replaces a format compatibly; one that misses some breaks", () => {
    expect(judge({ type: "string", format: "email" }, { type: "string", pattern: "@" }).verdict).toBe("compatible");
    expect(judge({ type: "string", format: "uri" }, { type: "string", pattern: ":" }).verdict).toBe("compatible");
    expect(judge({ type: "string", format: "ipv6" }, { type: "string", pattern: "^[0-9a-fA-F:.]+$" }).verdict).toBe(
      "compatible",
    );
    expect(
      formatAccepts(
        "email",
        judge({ type: "string", format: "email" }, { type: "string", pattern: "\\.com$" }).witness,
      ),
    ).toBe(true);
  });
});
