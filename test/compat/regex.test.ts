import { describe, expect, it } from "vitest";
import {
  FORMAT_SHAPES,
  lengthIncludes,
  patternIncludes,
  patternMinus,
  patternOverlap,
} from "../../generator/compat/regex.js";

describe("patternIncludes: does every string under the old constraints match the new pattern?", () => {
  it("decides on the languages, with JSON Schema's search semantics (unanchored match)", () => {
    expect(patternIncludes({ patterns: ["^[a-z]+$"] }, "^[a-z0-9]+$")).toEqual({ kind: "included" });
    expect(patternIncludes({ patterns: ["^a"] }, "a")).toEqual({ kind: "included" });
    expect(patternIncludes({ patterns: ["^\\d{4}-\\d{2}$"] }, "^[0-9-]+$")).toEqual({ kind: "included" });
  });

  it("gives a string the old constraints accept and the new pattern rejects", () => {
    const outcome = patternIncludes({ patterns: ["^[a-z0-9]+$"] }, "^[a-z]+$");
    expect(outcome.kind).toBe("excluded");
    const witness = (outcome as { witness: string }).witness;
    expect(/^[a-z0-9]+$/u.test(witness)).toBe(true);
    expect(/^[a-z]+$/u.test(witness)).toBe(false);
  });

  it("reads length bounds and known formats as part of the old language", () => {
    expect(patternIncludes({ minLength: 1 }, "[^]")).toEqual({ kind: "included" });
    expect(patternIncludes({}, "[^]")).toEqual({ kind: "excluded", witness: "" });
    // "." does not match a line terminator: a one-character string "\n" is a witness.
    expect(patternIncludes({ minLength: 1 }, ".")).toEqual({ kind: "excluded", witness: "\n" });
    expect(patternIncludes({ format: "date-time" }, "^\\d{4}-\\d{2}-\\d{2}[Tt]")).toEqual({ kind: "included" });
    // email is asserted (issue #34): every valid one has an "@"; a format the runtime does not know is no constraint.
    expect(patternIncludes({ format: "email" }, "@").kind).toBe("included");
    expect(patternIncludes({ format: "acme-color" }, "@").kind).toBe("excluded");
  });

  it("every date-time shape value the runtime accepts matches FORMAT_SHAPES (sound over-approximation)", () => {
    for (const v of ["2025-01-01T00:00:00Z", "2024-02-29t23:59:60.123+01:00", "1999-12-31T12:00:00-05:30"]) {
      expect(new RegExp(FORMAT_SHAPES["date-time"]!, "u").test(v), v).toBe(true);
    }
  });

  it("is undecided, with the reason, for what automata can not express", () => {
    const outcome = patternIncludes({ patterns: ["^(\\w+)\\1$"] }, "^\\w+$");
    expect(outcome.kind).toBe("undecided");
    expect((outcome as { reason: string }).reason).toContain("can not be analysed");
    expect(patternIncludes({}, "(").kind).toBe("undecided"); // not a valid regex
  });
});

describe("lengthIncludes: lengths implied by other constraints", () => {
  it("plain bounds", () => {
    expect(lengthIncludes({ minLength: 2, maxLength: 4 }, 1, 5)).toEqual({ kind: "included" });
    expect(lengthIncludes({ minLength: 2 }, 3, undefined)).toEqual({ kind: "excluded", witness: "aa" });
    expect(lengthIncludes({ maxLength: 9 }, 0, 5)).toEqual({ kind: "excluded", witness: "aaaaaa" });
    // the witness is an old string: at least the old minimum long
    expect(lengthIncludes({ minLength: 10, maxLength: 20 }, 0, 5)).toEqual({
      kind: "excluded",
      witness: "a".repeat(10),
    });
  });

  it("bounds implied by a pattern or a format", () => {
    expect(lengthIncludes({ patterns: ["^[a-z]{3,5}$"] }, 2, 6)).toEqual({ kind: "included" });
    expect(lengthIncludes({ format: "date-time" }, 20, undefined)).toEqual({ kind: "included" });
    const outcome = lengthIncludes({ patterns: ["^[a-z]{3,5}$"] }, 4, undefined);
    expect(outcome).toMatchObject({ kind: "excluded", witness: expect.stringMatching(/^[a-z]{3}$/) });
  });
});

describe("key patterns", () => {
  it("patternOverlap finds a key both match, or proves there is none", () => {
    expect(patternOverlap("^a", "b$")).toMatchObject({ overlap: true, witness: expect.stringMatching(/^a.*b$/) });
    expect(patternOverlap("^a", "^b")).toEqual({ overlap: false });
  });

  it("patternMinus finds a key one pattern matches and none of the others do", () => {
    expect(patternMinus("^[a-z0-9]+$", ["^[a-z]+$"])).toMatchObject({
      kind: "excluded",
      witness: expect.stringMatching(/\d/),
    });
    expect(patternMinus("^ab", ["^a"])).toEqual({ kind: "included" });
    expect(patternMinus("", []).kind).toBe("excluded");
  });
});
