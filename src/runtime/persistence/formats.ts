/**
 * String formats used by generated validators. Generated ajv code calls these functions directly
 * (see generator/validators.ts), so nothing here may depend on ajv.
 */

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The two ASCII digits at `i` and `i + 1` as a number, or -1. Callers keep `i + 1` inside the string. */
function twoDigits(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  // Unsigned compare: one test per digit for "0".."9" (a character below "0" wraps around).
  return a >>> 0 > 9 || b >>> 0 > 9 ? -1 : a * 10 + b;
}

/**
 * RFC 3339 `date-time` (JSON Schema's `format: "date-time"`), checked exactly but cheaply:
 * `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`, with real calendar days (no `2025-02-30`),
 * an offset or `Z` required, and a leap second only at 23:59:60 UTC.
 *
 * Hand-rolled instead of a regex plus `Date.parse`: message-heavy documents carry one timestamp
 * per message, and full format checking dominated validation time with the usual libraries.
 * Each character is read once, digits two at a time, and the month length is looked up only for
 * days past the 28th (cheaper than a digit loop per field).
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
    // Leap year: divisible by 4, and by 400 when it is a century (year % 4 === yy % 4 since 100 % 4 === 0).
    const leap = yy !== 0 ? (yy & 3) === 0 : (century & 3) === 0;
    if (day > (month === 2 ? (leap ? 29 : 28) : DAYS_IN_MONTH[month]!)) return false;
  }

  let i = 19;
  let c = s.charCodeAt(i);
  if (c === 46) {
    // '.' then at least one digit
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
    // 'Z' | 'z'
    if (i + 1 !== len) return false;
  } else if (c === 43 || c === 45) {
    // '+' | '-' HH:MM
    if (i + 6 !== len || s.charCodeAt(i + 3) !== 58) return false;
    const oh = twoDigits(s, i + 1);
    const om = twoDigits(s, i + 4);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return false;
    offsetMinutes = (c === 43 ? 1 : -1) * (oh * 60 + om);
  } else {
    return false;
  }

  if (second === 60) {
    // A leap second is only ever inserted at the end of a UTC day.
    const utcMinutes = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
    if (utcMinutes !== 23 * 60 + 59) return false;
  }
  return true;
}
