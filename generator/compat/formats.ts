/**
 * Which `format`s constrain stored values: exactly those statebag's validators assert, decided by the
 * runtime's own checks (`formatCheck`, src/runtime/registry/formats.ts: ajv-formats' set, with
 * `date-time` by `isDateTime`). A format the runtime does not know is not asserted (the generator
 * warns and leaves it out of the validators), and neither are the ones ajv-formats defines as
 * accepting every value (`password`, `binary`, `float`, `double`): adding, removing or changing one
 * of those is an annotation change.
 */
import { FORMATS, type FormatType, formatCheck } from "../runtime.js";

/** Whether the runtime asserts `format` on values of some type (a check that can say no). */
export function isAssertedFormat(format: string): boolean {
  return formatCheck(format) !== undefined;
}

/** The value type an asserted format constrains (`string`, or `number` for int32/int64). */
export function formatType(format: string): FormatType | undefined {
  return formatCheck(format)?.type;
}

/** The formats the runtime asserts on strings (the ones the string-language rules read). */
export const ASSERTED_FORMATS: ReadonlySet<string> = new Set(
  Object.keys(FORMATS).filter((format) => formatCheck(format)?.type === "string"),
);

/** Whether the runtime's check for `format` accepts `value` (a value of another type, or an unasserted format: yes). */
export function formatAccepts(format: string, value: unknown): boolean {
  const check = formatCheck(format);
  if (check === undefined) return true;
  if (check.type === "string") return typeof value !== "string" || (check.test as (v: string) => boolean)(value);
  return typeof value !== "number" || (check.test as (v: number) => boolean)(value);
}

/**
 * Valid values of each asserted format, a few spellings each: what a document built from a schema
 * with that format holds (a witness must first be accepted by the old schema), and candidates when
 * a new pattern or format may reject some of them.
 */
export const FORMAT_EXAMPLES: Readonly<Record<string, readonly (string | number)[]>> = {
  date: ["2000-01-01", "2024-02-29", "1999-12-31"],
  time: ["00:00:00Z", "12:34:56.5+01:00", "23:59:59z", "12:34:56+0100"],
  "date-time": ["2000-01-01T00:00:00Z", "2000-01-01T00:00:00+00:00", "2000-01-01T00:00:00.5Z", "2000-01-01t00:00:00z"],
  "iso-time": ["00:00:00", "12:34:56Z"],
  "iso-date-time": ["2000-01-01T00:00:00", "2000-01-01 00:00:00Z"],
  duration: ["P1D", "PT1H", "P1Y2M3DT4H5M6S", "P2W"],
  uri: ["https://example.com/a", "urn:isbn:0451450523", "mailto:a@example.com"],
  "uri-reference": ["https://example.com/a", "a/b", "#frag", ""],
  "uri-template": ["https://example.com/{id}", "a", ""],
  url: ["https://example.com/a", "http://example.com"],
  email: ["a@example.com", "first.last@example.co"],
  hostname: ["example.com", "a", "localhost"],
  ipv4: ["127.0.0.1", "10.0.0.255"],
  ipv6: ["::1", "2001:db8::1"],
  regex: ["^a$", "", "[a-z]+"],
  uuid: ["3f1c2a4e-1111-4222-8333-944455556666", "00000000-0000-0000-0000-000000000000"],
  "json-pointer": ["", "/a", "/a~1b/0"],
  "json-pointer-uri-fragment": ["#", "#/a"],
  "relative-json-pointer": ["0", "1/a", "0#"],
  byte: ["", "YQ==", "YWJj"],
  int32: [0, 1, -2147483648, 2147483647],
  int64: [0, 1, 9007199254740991],
};

/**
 * Values that `format` rejects, the first ones shaped like it (impossible dates, hours, offsets): a
 * witness for a format added to values the old constraints only shape like it. Each list is
 * filtered by the format's own check where it is used, so a spelling it accepts is never a witness.
 */
export const NEAR_MISSES: Readonly<Record<string, readonly (string | number)[]>> = {
  "date-time": [
    "2025-02-30T00:00:00Z",
    "0000-00-00T00:00:00Z",
    "2025-13-01T00:00:00Z",
    "2025-01-01T24:00:00Z",
    "2025-01-01T00:60:00Z",
    "2025-01-01T00:00:00+24:00",
    "9999-99-99T99:99:99Z",
    "2025-02-30T00:00:00+00:00",
    "2025-02-30t00:00:00z",
    "2025-02-30T00:00:00.0Z",
    "2025-01-01 00:00:00Z",
    "2025-01-01T00:00:00",
  ],
  date: ["2025-02-30", "2023-02-29", "2025-13-01", "2025-00-10", "0000-00-00", "9999-99-99", "2025-1-01"],
  time: ["24:00:00Z", "12:60:00Z", "12:00:00", "12:00:60Z", "1:00:00Z"],
  "iso-time": ["24:00:00", "12:60:00"],
  "iso-date-time": ["2025-02-30T00:00:00", "2025-01-01T24:00:00"],
  duration: ["P", "PT", "P1", "1D", "P1H"],
  uri: ["a", "example.com", "/a/b", "a b:c", "https://exa mple.com"],
  "uri-reference": ["a b", "\\", "%zz"],
  "uri-template": ["{", "}", "a{b", "a b"],
  url: ["a", "example.com", "ftp:/x", "https://", "https://localhost"],
  email: ["a", "a@", "@example.com", "a@b", "a b@example.com"],
  hostname: ["-a", "a..b", "a_b", "a b", "a".repeat(64)],
  ipv4: ["256.0.0.1", "1.2.3", "01.2.3.4", "a.b.c.d"],
  ipv6: [":", "1:2:3", "12345::1", "g::1"],
  regex: ["(", "[", "a{2,1}", "\\"],
  uuid: ["3f1c2a4e-1111-4222-8333-94445555666", "not-a-uuid", "3f1c2a4e111142228333944455556666"],
  "json-pointer": ["a", "/~2", "#/a"],
  "json-pointer-uri-fragment": ["", "a", "#a"],
  "relative-json-pointer": ["", "/a", "-1", "01"],
  byte: ["a", "YQ=", "Y===", "!!!!"],
  int32: [0.5, 2147483648, -2147483649],
  int64: [0.5, -0.5, 1.5],
};
