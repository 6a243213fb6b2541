/**
 * The `format`s statebag asserts, the same in every path that checks a value: the generated ajv
 * validators and the registry's reporting ajv (`FORMATS`), the generated fused check and the
 * compatibility check (`formatCheck`). The set is ajv-formats' "full" set (its own definitions,
 * imported, not copied: a well-kept library, already ajv's companion, no dependency of its own but
 * ajv), with one deliberate difference: `date-time` is `isDateTime` below, which is RFC 3339 exactly
 * (ajv-formats also accepts a space for the `T` and an offset without its colon or minutes).
 *
 * Only ajv-formats' plain definitions module is imported (no ajv plugin code), and only types from
 * ajv: generated validators import this module, and stay free of ajv at run time.
 */
import type { Format } from "ajv";
import { fullFormats } from "ajv-formats/dist/formats.js";

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * RFC 3339 `date-time` (JSON Schema's `format: "date-time"`), checked exactly but cheaply:
 * `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`, with real calendar days (no `2025-02-30`),
 * an offset or `Z` required, and a leap second only at 23:59:60 UTC.
 *
 * Hand-rolled instead of a regex plus `Date.parse`: message-heavy documents carry one timestamp
 * per message, and full format checking dominated validation time with the usual libraries.
 * Each character is read once (the reads are most of the cost), every digit tested against the
 * largest first digit its field allows with one unsigned compare (a character below "0" wraps
 * around), and the month length is looked up only for days past the 28th.
 */
export function isDateTime(s: string): boolean {
  const len = s.length;
  // Shortest: 2025-01-01T00:00:00Z (20 chars).
  if (len < 20) return false;
  // '-' '-' 'T'|'t' ':' ':' (x | 0x20 folds 'T' to 't'; only 'T' and 't' give 't')
  if (
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    (s.charCodeAt(10) | 0x20) !== 116 ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58
  )
    return false;
  // Each digit as 0..9; the first digit of a field at most its largest first digit (month 0-1,
  // day 0-3, hour 0-2, minute 0-5, second 0-6); the exact ranges follow.
  const y0 = s.charCodeAt(0) - 48;
  const y1 = s.charCodeAt(1) - 48;
  const y2 = s.charCodeAt(2) - 48;
  const y3 = s.charCodeAt(3) - 48;
  const m0 = s.charCodeAt(5) - 48;
  const m1 = s.charCodeAt(6) - 48;
  const d0 = s.charCodeAt(8) - 48;
  const d1 = s.charCodeAt(9) - 48;
  const h0 = s.charCodeAt(11) - 48;
  const h1 = s.charCodeAt(12) - 48;
  const i0 = s.charCodeAt(14) - 48;
  const i1 = s.charCodeAt(15) - 48;
  const s0 = s.charCodeAt(17) - 48;
  const s1 = s.charCodeAt(18) - 48;
  if (
    y0 >>> 0 > 9 ||
    y1 >>> 0 > 9 ||
    y2 >>> 0 > 9 ||
    y3 >>> 0 > 9 ||
    m0 >>> 0 > 1 ||
    m1 >>> 0 > 9 ||
    d0 >>> 0 > 3 ||
    d1 >>> 0 > 9 ||
    h0 >>> 0 > 2 ||
    h1 >>> 0 > 9 ||
    i0 >>> 0 > 5 ||
    i1 >>> 0 > 9 ||
    s0 >>> 0 > 6 ||
    s1 >>> 0 > 9
  )
    return false;
  const month = m0 * 10 + m1;
  const day = d0 * 10 + d1;
  const hour = h0 * 10 + h1;
  const second = s0 * 10 + s1;
  if (month === 0 || month > 12 || day === 0 || hour > 23 || second > 60) return false;
  if (day > 28) {
    // Leap year: divisible by 4, and by 400 when it is a century (year % 4 === yy % 4 since 100 % 4 === 0).
    const yy = y2 * 10 + y3;
    const leap = yy !== 0 ? (yy & 3) === 0 : ((y0 * 10 + y1) & 3) === 0;
    if (day > (month === 2 ? (leap ? 29 : 28) : DAYS_IN_MONTH[month]!)) return false;
  }

  let pos = 19;
  let code = s.charCodeAt(pos);
  if (code === 46) {
    // '.' then at least one digit
    const start = ++pos;
    while (pos < len) {
      code = s.charCodeAt(pos);
      if ((code - 48) >>> 0 > 9) break;
      pos++;
    }
    if (pos === start || pos === len) return false;
  }

  let offsetMinutes = 0;
  if ((code | 0x20) === 122) {
    // 'Z' | 'z'
    if (pos + 1 !== len) return false;
  } else if (code === 43 || code === 45) {
    // '+' | '-' HH:MM
    if (pos + 6 !== len || s.charCodeAt(pos + 3) !== 58) return false;
    const oh0 = s.charCodeAt(pos + 1) - 48;
    const oh1 = s.charCodeAt(pos + 2) - 48;
    const om0 = s.charCodeAt(pos + 4) - 48;
    const om1 = s.charCodeAt(pos + 5) - 48;
    if (oh0 >>> 0 > 2 || oh1 >>> 0 > 9 || om0 >>> 0 > 5 || om1 >>> 0 > 9) return false;
    const oh = oh0 * 10 + oh1;
    if (oh > 23) return false;
    offsetMinutes = (code === 43 ? 1 : -1) * (oh * 60 + om0 * 10 + om1);
  } else {
    return false;
  }

  if (second === 60) {
    // A leap second is only ever inserted at the end of a UTC day.
    const utcMinutes = (((hour * 60 + i0 * 10 + i1 - offsetMinutes) % 1440) + 1440) % 1440;
    if (utcMinutes !== 23 * 60 + 59) return false;
  }
  return true;
}

/** What a format constrains: ajv checks a format only on values of its type and lets others pass. */
export type FormatType = "string" | "number";

/**
 * Every format the runtime knows, as ajv takes them (`new Ajv({ formats: FORMATS })`): ajv-formats'
 * full set with `date-time` replaced by `isDateTime`. A format outside it is unknown to statebag: the
 * generator warns and leaves it unasserted.
 */
export const FORMATS: Readonly<Record<string, Format>> = Object.freeze({ ...fullFormats, "date-time": isDateTime });

/** A format's check, read once from its definition: a RegExp, a function, or `{ type, validate }`. */
export interface FormatCheck {
  /** The values it applies to (others pass, as in ajv). */
  type: FormatType;
  /** Whether a value of that type is valid. */
  test: (value: never) => boolean;
}

const checks = new Map<string, FormatCheck | null>();

/**
 * The check of a format the runtime asserts, or undefined: for an unknown format, and for the ones
 * ajv-formats defines as accepting every value (`password`, `binary`, `float`, `double`), which
 * constrain nothing. The fused check and the compatibility check call this, so they decide exactly
 * as the validators do.
 */
export function formatCheck(name: string): FormatCheck | undefined {
  let check = checks.get(name);
  if (check === undefined) {
    check = readFormat(name);
    checks.set(name, check);
  }
  return check ?? undefined;
}

function readFormat(name: string): FormatCheck | null {
  if (!Object.hasOwn(FORMATS, name)) return null;
  const def = FORMATS[name];
  if (def === true || def === undefined) return null;
  if (name === "float" || name === "double") return null; // ajv-formats: any number
  if (def instanceof RegExp) return { type: "string", test: (v: string) => def.test(v) };
  if (typeof def === "function") return { type: "string", test: def as (v: never) => boolean };
  if (typeof def === "object" && def !== null && "validate" in def) {
    const type: FormatType = def.type === "number" ? "number" : "string";
    const validateFn = def.validate;
    if (validateFn instanceof RegExp) return { type, test: (x: string) => validateFn.test(x) };
    if (typeof validateFn === "function") return { type, test: validateFn as (x: never) => boolean };
  }
  return null;
}

/** Whether the runtime knows the format (asserted, or defined as accepting everything). */
export function isKnownFormat(name: string): boolean {
  return Object.hasOwn(FORMATS, name);
}
