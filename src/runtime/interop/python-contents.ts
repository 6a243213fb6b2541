/**
 * The field mapping of Python `Content.to_dict()` dicts to statebag (MEAI-shaped) contents: one
 * table serves both directions. Each content type lists its fields as (Python name, statebag
 * name, how the value converts); `contentIn` reads the table Python -> statebag, `contentOut`
 * statebag -> Python. Checking that an item maps back unchanged, and keeping the original when it
 * does not, is the caller's part (`python.ts`).
 */
import type { JsonObject } from "../core/tagged.js";
import { parseJson } from "../json/safe-json.js";
import { foreignContent, isForeignContent } from "./foreign.js";
import { cloneJson, defineOwn, isPlainObject, type JsonRecord } from "./json-util.js";

export type Path = (string | number)[];

export const str = (v: unknown): v is string => typeof v === "string";
const num = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** A field's `read` result meaning "this content cannot be mapped": it is kept foreign. */
const UNMAPPABLE = Symbol("unmappable");

interface Field {
  python: string;
  /** Absent for a field only Python has (derived from the item when written, ignored when read). */
  statebag?: string;
  /** The Python value -> the statebag value; `undefined` leaves the field out. Default: a string is kept, anything else left out. */
  read?: (value: unknown) => unknown;
  /** The statebag value -> the Python value (then copied); `undefined` leaves it out. Default: the value as it is. */
  write?: (value: unknown, item: JsonRecord) => unknown;
}

/** A tagged object: Python's `type` tag, statebag's `$type` tag, and the fields in between. */
interface Shape {
  python: string;
  statebag: string;
  /** In the order Python's `to_dict()` writes them. */
  fields: readonly Field[];
}

const text = (python: string, statebag: string): Field => ({ python, statebag });
const requiredText = (python: string, statebag: string): Field => ({
  python,
  statebag,
  read: (v) => (str(v) ? v : UNMAPPABLE),
});
const number = (python: string, statebag: string): Field => ({
  python,
  statebag,
  read: (v) => (num(v) ? v : undefined),
});

/** A list of `shape` objects; entries of any other type are left out (the saved original keeps them). */
const listOf = (python: string, statebag: string, shape: Shape): Field => ({
  python,
  statebag,
  read: (list) =>
    Array.isArray(list)
      ? list.filter((x): x is JsonRecord => isPlainObject(x) && x.type === shape.python).map((x) => readShape(shape, x))
      : undefined,
  write: (list) =>
    Array.isArray(list)
      ? list
          .filter((x): x is JsonRecord => isPlainObject(x) && x.$type === shape.statebag)
          .map((x) => writeShape(shape, x))
      : undefined,
});

const ADDITIONAL_PROPERTIES: Field = {
  python: "additional_properties",
  statebag: "additionalProperties",
  read: (v) => (isPlainObject(v) ? cloneJson(v) : undefined),
};

/** Copies `fields` of the Python dict `from` into `into`; false when one of them cannot be mapped. */
function readFields(fields: readonly Field[], from: JsonRecord, into: JsonRecord): boolean {
  for (const field of fields) {
    if (field.statebag === undefined) continue;
    const raw = from[field.python];
    const value = field.read ? field.read(raw) : str(raw) ? raw : undefined;
    if (value === UNMAPPABLE) return false;
    if (value !== undefined) defineOwn(into, field.statebag, value);
  }
  return true;
}

function writeFields(fields: readonly Field[], from: JsonRecord, into: JsonRecord): void {
  for (const field of fields) {
    const raw = field.statebag === undefined ? undefined : from[field.statebag];
    const value = field.write ? field.write(raw, from) : raw;
    if (value !== undefined) defineOwn(into, field.python, cloneJson(value));
  }
}

function readShape(shape: Shape, from: JsonRecord): JsonRecord {
  const out: JsonRecord = { $type: shape.statebag };
  readFields(shape.fields, from, out);
  return out;
}

function writeShape(shape: Shape, from: JsonRecord): JsonRecord {
  const out: JsonRecord = { type: shape.python };
  writeFields(shape.fields, from, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Annotations and usage

const TEXT_SPAN: Shape = {
  python: "text_span",
  statebag: "textSpan",
  fields: [number("start_index", "start"), number("end_index", "end")],
};

const CITATION: Shape = {
  python: "citation",
  statebag: "citation",
  fields: [
    text("title", "title"),
    text("url", "url"),
    text("file_id", "fileId"),
    text("tool_name", "toolName"),
    text("snippet", "snippet"),
    listOf("annotated_regions", "annotatedRegions", TEXT_SPAN),
    ADDITIONAL_PROPERTIES,
  ],
};

const ANNOTATIONS = listOf("annotations", "annotations", CITATION);

const USAGE_KEYS: [py: string, sb: string][] = [
  ["input_token_count", "inputTokenCount"],
  ["output_token_count", "outputTokenCount"],
  ["total_token_count", "totalTokenCount"],
  ["cached_input_token_count", "cachedInputTokenCount"],
  ["reasoning_token_count", "reasoningTokenCount"],
];

/** Python's usage dict -> statebag's: known counts by name, other counts under `additionalCounts`. */
function usageIn(details: JsonRecord): JsonRecord {
  const out: JsonRecord = {};
  const extra: JsonRecord = {};
  for (const key of Object.keys(details)) {
    const value = details[key];
    if (!num(value)) continue; // not a count: kept by the original, not modelled
    const known = USAGE_KEYS.find(([py]) => py === key);
    if (known) defineOwn(out, known[1], value);
    else defineOwn(extra, key, value);
  }
  if (Object.keys(extra).length > 0) out.additionalCounts = extra;
  return out;
}

function usageOut(details: JsonRecord): JsonRecord {
  const out: JsonRecord = {};
  for (const [py, sb] of USAGE_KEYS) if (details[sb] !== undefined) defineOwn(out, py, details[sb]);
  if (isPlainObject(details.additionalCounts))
    for (const key of Object.keys(details.additionalCounts))
      if (!Object.hasOwn(out, key)) defineOwn(out, key, details.additionalCounts[key]);
  return out;
}

/** The media type inside a `data:` URI (`data:image/png;base64,...` -> `image/png`). */
function dataUriMediaType(uri: string): string | undefined {
  const end = uri.search(/[;,]/);
  const type = end < 0 ? "" : uri.slice(5, end);
  return type === "" ? undefined : type;
}

// ---------------------------------------------------------------------------------------------
// Content types

interface ContentType extends Shape {
  /**
   * The approvals' nested call (Python `function_call`, statebag `toolCall`), mapped by the
   * caller's hook so that each level is mapped once. Python writes it right after `type`,
   * statebag last.
   */
  nested?: "required" | "optional";
  /** statebag's field order, where it differs from Python's. */
  statebagOrder?: readonly string[];
}

const CONTENT_TYPES: readonly ContentType[] = [
  { python: "text", statebag: "text", fields: [requiredText("text", "text")] },
  {
    python: "text_reasoning",
    statebag: "reasoning",
    fields: [text("text", "text"), text("protected_data", "protectedData")],
  },
  {
    python: "data",
    statebag: "data",
    fields: [
      { python: "uri", statebag: "uri", read: (v) => (str(v) && v.startsWith("data:") ? v : UNMAPPABLE) },
      // statebag keeps the media type inside the data: URI only.
      { python: "media_type", write: (_, item) => (str(item.uri) ? dataUriMediaType(item.uri) : undefined) },
      text("name", "name"),
    ],
  },
  { python: "uri", statebag: "uri", fields: [requiredText("uri", "uri"), requiredText("media_type", "mediaType")] },
  {
    python: "error",
    statebag: "error",
    fields: [requiredText("message", "message"), text("error_code", "errorCode"), text("error_details", "details")],
  },
  {
    python: "usage",
    statebag: "usage",
    fields: [
      {
        python: "usage_details",
        statebag: "details",
        read: (v) => (isPlainObject(v) ? usageIn(v) : UNMAPPABLE),
        write: (v) => (isPlainObject(v) ? usageOut(v) : undefined),
      },
    ],
  },
  {
    python: "function_call",
    statebag: "functionCall",
    fields: [
      requiredText("call_id", "callId"),
      requiredText("name", "name"),
      {
        python: "arguments",
        statebag: "arguments",
        read: (value) => {
          let args = value;
          if (str(args)) {
            // Python allows the arguments as JSON text; statebag (like MEAI) holds the parsed object.
            // Text that is not JSON, or breaks the parse limits (depth, `__proto__`), stays foreign.
            try {
              args = parseJson(args);
            } catch {
              return UNMAPPABLE;
            }
          }
          if (isPlainObject(args)) return cloneJson(args);
          return args === undefined || args === null ? undefined : UNMAPPABLE;
        },
      },
    ],
  },
  {
    python: "function_result",
    statebag: "functionResult",
    fields: [
      requiredText("call_id", "callId"),
      {
        python: "result",
        statebag: "result",
        read: (v) => (v === undefined ? undefined : cloneJson(v)),
        write: (v) => (v === null ? undefined : v),
      }, // Python drops None members
    ],
  },
  {
    python: "hosted_file",
    statebag: "hostedFile",
    fields: [text("media_type", "mediaType"), text("name", "name"), requiredText("file_id", "fileId")],
    statebagOrder: ["fileId", "mediaType", "name"],
  },
  {
    python: "function_approval_request",
    statebag: "toolApprovalRequest",
    nested: "required",
    fields: [{ python: "user_input_request", write: () => true }, requiredText("id", "requestId")],
  },
  {
    python: "function_approval_response",
    statebag: "toolApprovalResponse",
    nested: "optional",
    fields: [
      { python: "approved", statebag: "approved", read: (v) => (typeof v === "boolean" ? v : UNMAPPABLE) },
      requiredText("id", "requestId"),
    ],
    statebagOrder: ["requestId", "approved"],
  },
];

/** The fields every content has after its own: each side in its own library's order. */
const CONTENT_TAIL_IN: readonly Field[] = [ANNOTATIONS, ADDITIONAL_PROPERTIES];
const CONTENT_TAIL_OUT: readonly Field[] = [ADDITIONAL_PROPERTIES, ANNOTATIONS];

const NESTED_PYTHON = "function_call";
const NESTED_STATEBAG = "toolCall";

/** Each content type with its fields in statebag's order, for reading. */
const BY_PYTHON_TYPE = new Map(
  CONTENT_TYPES.map((type) => [
    type.python,
    {
      type,
      readOrder: type.statebagOrder?.map((name) => type.fields.find((f) => f.statebag === name)!) ?? type.fields,
    },
  ]),
);
const BY_STATEBAG_TYPE = new Map(CONTENT_TYPES.map((type) => [type.statebag, type]));

/** Maps a nested content (an approval's `function_call` / `toolCall`) one way or the other. */
export type NestedIn = (raw: unknown, path: Path) => JsonRecord;
export type NestedOut = (content: JsonRecord) => JsonRecord;

/**
 * Mapping of one Python content dict's own fields to statebag; a nested content goes through
 * `nested`. Types statebag has no counterpart for, and known types missing a field statebag
 * requires, become a `statebag.foreign` content.
 */
export function contentIn(p: JsonRecord, path: Path, nested: NestedIn): JsonRecord {
  const foreign = () => foreignContent("python", cloneJson(p) as JsonObject) as unknown as JsonRecord;
  const known = BY_PYTHON_TYPE.get(p.type as string);
  if (known === undefined) return foreign();
  const { type, readOrder } = known;
  const mapped: JsonRecord = { $type: type.statebag };
  if (!readFields(readOrder, p, mapped)) return foreign();
  // Checked before the nested content is mapped: a content kept foreign never maps (or fails on) its child.
  const rawChild = p[NESTED_PYTHON];
  if (type.nested === "required" && !isPlainObject(rawChild)) return foreign();
  if (type.nested !== undefined && isPlainObject(rawChild))
    mapped[NESTED_STATEBAG] = nested(rawChild, [...path, NESTED_PYTHON]);
  readFields(CONTENT_TAIL_IN, p, mapped);
  return mapped;
}

/** Mapping of one statebag content's own fields to a Python content dict (field order as `Content.to_dict`). */
export function contentOut(m: JsonRecord, nested: NestedOut): JsonRecord {
  if (isForeignContent(m, "python")) return cloneJson(m.value) as JsonRecord;
  const mapped: JsonRecord = {};
  const type = BY_STATEBAG_TYPE.get(m.$type as string);
  if (type === undefined) {
    // No Python counterpart: Python keeps a content of an unknown type with its
    // additional_properties, which will carry the statebag original.
    if (m.$type !== undefined) mapped.type = cloneJson(m.$type);
  } else {
    mapped.type = type.python;
    if (type.nested !== undefined && isPlainObject(m[NESTED_STATEBAG]))
      defineOwn(mapped, NESTED_PYTHON, nested(m[NESTED_STATEBAG]));
    writeFields(type.fields, m, mapped);
  }
  writeFields(CONTENT_TAIL_OUT, m, mapped);
  return mapped;
}
