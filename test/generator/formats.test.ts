import { describe, expect, it } from "vitest";
import { isDateTime } from "../../src/runtime/persistence/formats.js";

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
