import { describe, expect, it } from "vitest";
import { isDateTime } from "../../src/runtime/registry/formats.js";

/**
 * The previous `isDateTime` (two digits at a time, each field's full range tested after), kept as
 * the reference: the faster one must accept exactly the same strings.
 */
const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function twoDigits(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >>> 0 > 9 || b >>> 0 > 9 ? -1 : a * 10 + b;
}
function reference(s: string): boolean {
  const len = s.length;
  if (len < 20) return false;
  if (
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    (s.charCodeAt(10) | 0x20) !== 116 ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58
  )
    return false;
  const century = twoDigits(s, 0);
  const yy = twoDigits(s, 2);
  const month = twoDigits(s, 5);
  const day = twoDigits(s, 8);
  const hour = twoDigits(s, 11);
  const minute = twoDigits(s, 14);
  const second = twoDigits(s, 17);
  if (
    century < 0 ||
    yy < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 60
  )
    return false;
  if (day > 28) {
    const leap = yy !== 0 ? (yy & 3) === 0 : (century & 3) === 0;
    if (day > (month === 2 ? (leap ? 29 : 28) : DAYS_IN_MONTH[month]!)) return false;
  }
  let i = 19;
  let c = s.charCodeAt(i);
  if (c === 46) {
    const start = ++i;
    while (i < len) {
      c = s.charCodeAt(i);
      if ((c - 48) >>> 0 > 9) break;
      i++;
    }
    if (i === start || i === len) return false;
  }
  let offsetMinutes = 0;
  if ((c | 0x20) === 122) {
    if (i + 1 !== len) return false;
  } else if (c === 43 || c === 45) {
    if (i + 6 !== len || s.charCodeAt(i + 3) !== 58) return false;
    const oh = twoDigits(s, i + 1);
    const om = twoDigits(s, i + 4);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return false;
    offsetMinutes = (c === 43 ? 1 : -1) * (oh * 60 + om);
  } else return false;
  if (second === 60) {
    const utcMinutes = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
    if (utcMinutes !== 23 * 60 + 59) return false;
  }
  return true;
}

const BASES = [
  "2025-01-06T09:00:37.066Z",
  "2025-01-06T09:01:25.078+00:00",
  "2024-02-29T23:59:60-00:00",
  "2000-12-31t23:59:60z",
  "1900-02-28T00:00:00+23:59",
  "2016-12-31T23:59:60.5Z",
  "2025-06-30T12:30:45-11:30",
];
// Every ASCII character, a few beyond it, and the digits twice as often.
const ALPHABET = [
  ...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)),
  "é",
  "０",
  "\u0660",
  ..."0123456789",
];

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("isDateTime accepts exactly what the previous version accepted", () => {
  it("every single-character change of valid timestamps", () => {
    let accepted = 0;
    for (const base of BASES) {
      expect(isDateTime(base)).toBe(true);
      for (let i = 0; i <= base.length; i++)
        for (const ch of ALPHABET) {
          for (const s of [base.slice(0, i) + ch + base.slice(i + 1), base.slice(0, i) + ch + base.slice(i)]) {
            const want = reference(s);
            if (isDateTime(s) !== want) expect([s, isDateTime(s)]).toEqual([s, want]);
            if (want) accepted++;
          }
        }
      for (let i = 0; i < base.length; i++) {
        const s = base.slice(0, i) + base.slice(i + 1);
        expect(isDateTime(s)).toBe(reference(s));
      }
    }
    expect(accepted).toBeGreaterThan(500);
  });

  it("every day, hour, minute and second field value, and random strings near the format", () => {
    const two = (n: number) => String(n).padStart(2, "0");
    for (const year of ["2024", "2025", "1900", "2000", "2100", "0000"])
      for (let month = 0; month <= 19; month++)
        for (let day = 0; day <= 39; day++) {
          const s = `${year}-${two(month)}-${two(day)}T00:00:00Z`;
          expect(isDateTime(s)).toBe(reference(s));
        }
    for (let h = 0; h <= 39; h++)
      for (let m = 0; m <= 69; m += 1)
        for (const sec of ["00", "59", "60", "61", "69"])
          for (const off of ["Z", "+00:00", "-00:00", `+${two(h)}:${two(m)}`, `-${two(h)}:${two(m)}`]) {
            const s = `2025-01-06T${two(h)}:${two(m)}:${sec}${off}`;
            expect(isDateTime(s)).toBe(reference(s));
          }
    const rand = prng(7);
    const near = "0123456789-:Tt.Zz+ ";
    for (let n = 0; n < 200_000; n++) {
      const base = BASES[n % BASES.length];
      const chars = [...base];
      const edits = 1 + Math.floor(rand() * 3);
      for (let e = 0; e < edits; e++) chars[Math.floor(rand() * chars.length)] = near[Math.floor(rand() * near.length)];
      const s = chars.join("");
      if (isDateTime(s) !== reference(s)) expect([s, isDateTime(s)]).toEqual([s, reference(s)]);
    }
  });
});
