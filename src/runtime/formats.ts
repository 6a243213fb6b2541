/**
 * String formats used by generated validators. Generated ajv code calls these functions directly
 * (see generator/validators.ts), so nothing here may depend on ajv.
 */

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function digits(s: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * RFC 3339 `date-time` (JSON Schema's `format: "date-time"`), checked exactly but cheaply:
 * `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`, with real calendar days (no `2025-02-30`),
 * an offset or `Z` required, and a leap second only at 23:59:60 UTC.
 *
 * Hand-rolled instead of a regex plus `Date.parse`: message-heavy documents carry one timestamp
 * per message, and full format checking dominated validation time with the usual libraries.
 */
export function isDateTime(s: string): boolean {
  const len = s.length;
  // Shortest: 2025-01-01T00:00:00Z (20 chars).
  if (len < 20) return false;
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false; // '-'
  const sep = s.charCodeAt(10);
  if (sep !== 84 && sep !== 116) return false; // 'T' | 't'
  if (s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return false; // ':'

  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month]!)) return false;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return false;

  let i = 19;
  if (s.charCodeAt(i) === 46) {
    // '.' then at least one digit
    const start = ++i;
    while (i < len) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      i++;
    }
    if (i === start) return false;
  }

  let offsetMinutes = 0;
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) {
    // 'Z' | 'z'
    if (i + 1 !== len) return false;
  } else if (z === 43 || z === 45) {
    // '+' | '-' HH:MM
    if (i + 6 !== len || s.charCodeAt(i + 3) !== 58) return false;
    const oh = digits(s, i + 1, 2);
    const om = digits(s, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return false;
    offsetMinutes = (z === 43 ? 1 : -1) * (oh * 60 + om);
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
