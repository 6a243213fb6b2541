/** The runtime's format checks: isDateTime exactly, and every other format as ajv-formats decides it. */
import { Ajv } from "ajv";
import { fullFormats } from "ajv-formats/dist/formats.js";
import { describe, expect, it } from "vitest";
import { FORMAT_EXAMPLES, NEAR_MISSES } from "../../generator/compat/formats.js";
import { FORMATS, formatCheck, isDateTime, isKnownFormat } from "../../src/runtime/registry/formats.js";

describe("isDateTime (RFC 3339 date-time)", () => {
  it.each([
    "2025-01-31T12:34:56Z",
    "2025-01-31t12:34:56z",
    "2025-01-31T12:34:56.1Z",
    "2025-01-31T12:34:56.123456789+05:30",
    "2025-01-31T00:00:00-12:00",
    "2024-02-29T00:00:00Z", // leap year
    "2000-02-29T00:00:00Z", // divisible by 400
    "1998-12-31T23:59:60Z", // leap second at the end of a UTC day
    "1998-12-31T15:59:60-08:00", // the same leap second, seen from UTC-8
  ])("accepts %s", (s) => {
    expect(isDateTime(s)).toBe(true);
  });

  it.each([
    "2025-02-30T00:00:00Z", // no such day
    "2023-02-29T00:00:00Z", // not a leap year
    "1900-02-29T00:00:00Z", // divisible by 100, not by 400
    "2025-04-31T00:00:00Z",
    "2025-13-01T00:00:00Z",
    "2025-00-01T00:00:00Z",
    "2025-01-00T00:00:00Z",
    "2025-01-31T24:00:00Z",
    "2025-01-31T23:60:00Z",
    "2025-01-31T12:00:60Z", // leap second not at 23:59 UTC
    "2025-01-31T12:34:56", // no offset
    "2025-01-31 12:34:56Z", // space separator
    "2025-01-31T12:34:56.Z", // empty fraction
    "2025-01-31T12:34:56+0530", // offset without colon
    "2025-01-31T12:34:56+24:00",
    "2025-01-31T12:34:56Z ",
    "2025-01-31",
    "25-01-31T12:34:56Z",
    "2025-1-31T12:34:56Z",
    "２０２５-01-31T12:34:56Z",
    "",
  ])("rejects %j", (s) => {
    expect(isDateTime(s)).toBe(false);
  });
});

describe("the runtime's formats against ajv-formats (issue #34)", () => {
  // ajv-formats itself, as its README uses it: the reference every path must agree with.
  const reference = new Ajv({ strict: false, formats: fullFormats });
  const STRING_FORMATS = Object.keys(FORMAT_EXAMPLES).filter((f) => formatCheck(f)?.type === "string");

  /** Valid spellings, near misses, and every single-character edit of them with a few characters. */
  function probes(format: string): string[] {
    const seeds = [...(FORMAT_EXAMPLES[format] ?? []), ...(NEAR_MISSES[format] ?? [])].filter(
      (v): v is string => typeof v === "string",
    );
    const out = new Set<string>(seeds);
    for (const s of seeds)
      for (let i = 0; i <= s.length; i++)
        for (const c of ["", "a", "0", "-", ":", "/", " ", "Z", "%", "\u00e9"]) {
          out.add(s.slice(0, i) + c + s.slice(i + 1));
          out.add(s.slice(0, i) + c + s.slice(i));
        }
    return [...out];
  }

  it.each(STRING_FORMATS.filter((f) => f !== "date-time"))(
    "%s: formatCheck answers as ajv-formats on every probe",
    (f) => {
      const check = formatCheck(f)!;
      const validate = reference.compile({ type: "string", format: f });
      const runtime = new Ajv({ strict: false, formats: { ...FORMATS } }).compile({ type: "string", format: f });
      for (const s of probes(f)) {
        const expected = validate(s);
        expect((check.test as (v: string) => boolean)(s), `${f} ${JSON.stringify(s)}`).toBe(expected);
        expect(runtime(s), `${f} ${JSON.stringify(s)} (runtime ajv)`).toBe(expected);
      }
    },
  );

  it("date-time is stricter than ajv-formats' (RFC 3339 exactly), never looser", () => {
    const validate = reference.compile({ type: "string", format: "date-time" });
    let stricter = 0;
    for (const s of probes("date-time")) {
      if (isDateTime(s)) expect(validate(s), s).toBe(true);
      else if (validate(s)) stricter++;
    }
    // A space for T, an offset without its colon: accepted by ajv-formats, refused here.
    expect(validate("2025-01-01 00:00:00Z") && !isDateTime("2025-01-01 00:00:00Z")).toBe(true);
    expect(stricter).toBeGreaterThan(0);
  });

  it("number formats: int32 and int64 as ajv-formats; float, double, password, binary assert nothing", () => {
    const validate = reference.compile({ type: "number", format: "int32" });
    for (const n of [0, 1, -1, 0.5, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 1e20])
      expect((formatCheck("int32")!.test as (v: number) => boolean)(n), String(n)).toBe(validate(n));
    expect((formatCheck("int64")!.test as (v: number) => boolean)(0.5)).toBe(false);
    for (const f of ["float", "double", "password", "binary", "acme-color"]) expect(formatCheck(f), f).toBeUndefined();
    expect(isKnownFormat("password")).toBe(true);
    expect(isKnownFormat("acme-color")).toBe(false);
  });
});
