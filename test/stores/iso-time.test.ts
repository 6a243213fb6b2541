/**
 * isoTime (src/runtime/stores/listing.ts): the fast formatter every store's metadata times
 * (createdAt, updatedAt of get and list) go through must write exactly what
 * `Date#toISOString` writes, for every time a store can hold, and take its behaviour outside
 * the range it formats itself.
 */
import { describe, expect, it } from "vitest";
import { isoTime, storedMeta } from "../../src/runtime/stores/listing.js";

const iso = (ms: number) => new Date(ms).toISOString();

describe("isoTime", () => {
  it("writes what toISOString writes at every boundary: epoch, leap days, month and year ends, century rules", () => {
    const times = [
      0,
      1,
      999,
      86_399_999,
      86_400_000,
      Date.UTC(1972, 1, 29, 23, 59, 59, 999),
      Date.UTC(2000, 1, 29),
      Date.UTC(2000, 2, 1),
      Date.UTC(2100, 1, 28, 12),
      Date.UTC(2100, 2, 1),
      Date.UTC(2024, 11, 31, 23, 59, 59, 999),
      Date.UTC(2025, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    for (const ms of times) expect(isoTime(ms), String(ms)).toBe(iso(ms));
  });

  it("agrees with toISOString on 200,000 random times from 1970 to 9999, as numbers and as Dates", () => {
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 200_000; i++) {
      const ms = Math.floor(next() * 253_402_300_800_000);
      const expected = iso(ms);
      if (isoTime(ms) !== expected || isoTime(new Date(ms)) !== expected)
        expect({ ms, got: isoTime(ms) }).toEqual({ ms, got: expected });
    }
  });

  it("outside its range it is toISOString: times before 1970, from year 10000, fractions; an invalid time throws as before", () => {
    for (const ms of [
      -1,
      -86_400_001,
      Date.UTC(1969, 11, 31, 23, 59, 59, 999),
      Date.UTC(-50, 0, 1),
      253_402_300_800_000,
      8.64e15,
      1.5,
    ])
      expect(isoTime(ms), String(ms)).toBe(iso(ms));
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });

  it("storedMeta writes both times with it", () => {
    const meta = storedMeta(
      "ada",
      null,
      null,
      Date.UTC(2026, 10, 28, 4, 5, 6, 7),
      new Date(Date.UTC(2026, 10, 28, 4, 5, 6, 8)),
    );
    expect(meta).toEqual({
      owner: "ada",
      createdAt: "2026-11-28T04:05:06.007Z",
      updatedAt: "2026-11-28T04:05:06.008Z",
    });
  });
});
