/**
 * Which `format`s constrain stored values: exactly those statebag's validators assert. Generated
 * validators check only the formats in `SUPPORTED_FORMATS` (`date-time`, with the runtime's own
 * `isDateTime`, src/runtime/persistence/formats.ts); the generator refuses a schema with any other
 * format. Any other format is an annotation to the validators that checked the stored values
 * (ajv with `strict: false` ignores it), so adding, removing or changing one is compatible.
 */
import { isDateTime } from "../runtime.js";
import { SUPPORTED_FORMATS } from "../slots.js";

/** The formats the runtime asserts. */
export const ASSERTED_FORMATS: ReadonlySet<string> = SUPPORTED_FORMATS;

/** Whether the runtime's check for `format` accepts `value` (an annotation format accepts every string). */
export function formatAccepts(format: string, value: string): boolean {
  if (!ASSERTED_FORMATS.has(format)) return true;
  if (format === "date-time") return isDateTime(value);
  return true;
}

/**
 * Strings shaped like `format` that its check rejects (impossible dates, hours, offsets): a witness
 * for a format added to strings the old constraints only shape like it.
 */
export const NEAR_MISSES: Readonly<Record<string, readonly string[]>> = {
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
  ],
};
