/**
 * Turning ajv errors into validation problems (error path only): one problem per distinct
 * mistake, with a JSON pointer from the document root, what was expected, what was found and a
 * hint. Alternatives (`anyOf`/`oneOf`) are merged into one report. Linear in the number of errors.
 */
import { describeValue, pointerSegment, quoted, unescapeSegment } from "../core/json.js";
import {
  detailText,
  pointerLabel,
  type JsonTypeName,
  type OtherSchemaKeyword,
  type SchemaProblemDetails,
  type ValidationProblem,
} from "../core/problems.js";
import type { TypeDefinition, ValidatorError } from "../registry/registry-types.js";

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * The problems of one value its type's validator rejected: `errors` are the validator's (from an
 * `allErrors` validator when there is one), `base` the value's pointer. Calls `emit` per problem.
 */
export function emitSchemaProblems(
  def: TypeDefinition,
  value: unknown,
  errors: readonly ValidatorError[] | null | undefined,
  base: string,
  emit: (problem: ValidationProblem) => void,
): void {
  if (!errors || errors.length === 0) {
    emit({
      code: "schema",
      pointer: base,
      $type: def.$type,
      expected: `a valid "${def.$type}" v${def.version}`,
      found: describeValue(value),
      message: `${pointerLabel(base)} is not a valid "${def.$type}" v${def.version}`,
      reason: `is not a valid "${def.$type}" v${def.version}`,
      details: { kind: "schema", keyword: "unknown", params: {} },
    });
    return;
  }
  for (const error of reduceAjvErrors(errors)) emit(problemFromAjv(error, base, value, def));
}

/** Reads the value at an ajv `instancePath` (own properties only). */
function resolveInstancePath(root: unknown, instancePath: string): unknown {
  if (instancePath === "") return root;
  let node: unknown = root;
  for (const raw of instancePath.slice(1).split("/")) {
    const seg = unescapeSegment(raw);
    if (typeof node !== "object" || node === null || !hasOwn.call(node, seg)) return undefined;
    node = (node as Record<string, unknown>)[seg];
  }
  return node;
}

/** Reads a node of a schema by an ajv `schemaPath` (`#/properties/x/type`). */
function resolveSchemaPath(schema: unknown, schemaPath: string): unknown {
  if (!schemaPath.startsWith("#")) return undefined;
  let node: unknown = schema;
  for (const raw of schemaPath.slice(2).split("/")) {
    if (raw === "") continue;
    const seg = unescapeSegment(decodeURIComponent(raw));
    if (typeof node !== "object" || node === null || !hasOwn.call(node, seg)) return undefined;
    node = (node as Record<string, unknown>)[seg];
  }
  return node;
}

function parentSchemaPath(schemaPath: string): string {
  const slash = schemaPath.lastIndexOf("/");
  return slash < 0 ? schemaPath : schemaPath.slice(0, slash);
}

/** True when `inner` is `outer` or a position inside it (pointer segments, not string prefixes). */
function within(inner: string, outer: string): boolean {
  return (
    outer === "" ||
    inner === outer ||
    (inner.length > outer.length && inner.charCodeAt(outer.length) === 47 && inner.startsWith(outer))
  );
}

function depthOf(instancePath: string): number {
  let depth = 0;
  for (let i = 0; i < instancePath.length; i++) if (instancePath.charCodeAt(i) === 47) depth++;
  return depth;
}

/**
 * With `allErrors`, a failed `anyOf`/`oneOf` reports every branch's errors plus its own. Keep
 * one report per alternative set: the branch errors when they all sit at the alternative's own
 * position (merged into one "expected a or b"), else the branch that got furthest into the data.
 *
 * Linear in the number of errors (times the nesting of the data): ajv pushes a failed
 * combinator's error right after the errors of its evaluation, and every error of that evaluation
 * lies at or below the combinator's position, so its branch errors are found by scanning back from
 * it while errors stay inside that position, never by searching the whole list per combinator.
 */
function reduceAjvErrors(errors: readonly ValidatorError[]): ValidatorError[] {
  let combinators = 0;
  for (const error of errors) if (error.keyword === "anyOf" || error.keyword === "oneOf") combinators++;
  if (combinators === 0) return errors.filter((e) => e.keyword !== "if");
  const dropped = new Set<ValidatorError>();
  const added: ValidatorError[] = [];
  for (let j = 0; j < errors.length; j++) {
    const candidate = errors[j];
    if ((candidate.keyword !== "anyOf" && candidate.keyword !== "oneOf") || dropped.has(candidate)) continue;
    const prefix = candidate.schemaPath + "/";
    const branch: ValidatorError[] = [];
    for (let k = j - 1; k >= 0 && within(errors[k].instancePath, candidate.instancePath); k--) {
      if (errors[k].schemaPath.startsWith(prefix)) branch.push(errors[k]);
    }
    if (branch.length === 0) continue;
    branch.reverse();
    for (const error of branch) dropped.add(error);
    if (
      branch.every(
        (e) =>
          e.instancePath === candidate.instancePath &&
          (e.keyword === "type" || e.keyword === "const" || e.keyword === "enum"),
      )
    ) {
      const wanted = [...new Set(branch.map(expectedOf))];
      dropped.add(candidate);
      // What the alternatives accept together, as data (for the problem's details).
      const types: JsonTypeName[] = [];
      const values: unknown[] = [];
      for (const error of branch) {
        if (error.keyword === "type") {
          for (const typeName of typeNames(error.params.type)) if (!types.includes(typeName)) types.push(typeName);
        } else if (error.keyword === "const") values.push(error.params.allowedValue);
        else if (Array.isArray(error.params.allowedValues)) values.push(...(error.params.allowedValues as unknown[]));
      }
      added.push({
        ...candidate,
        keyword: "anyOf",
        params: { ...candidate.params, expected: wanted.join(" or "), combinator: candidate.keyword, types, values },
      });
      continue;
    }
    // The branch whose errors reach deepest into the data is most likely the one intended.
    const byBranch = new Map<string, ValidatorError[]>();
    for (const error of branch) {
      const rest = error.schemaPath.slice(prefix.length);
      const slash = rest.indexOf("/");
      const idx = slash < 0 ? rest : rest.slice(0, slash);
      const list = byBranch.get(idx);
      if (list === undefined) byBranch.set(idx, [error]);
      else list.push(error);
    }
    let best: ValidatorError[] = [];
    let bestDepth = -1;
    for (const list of byBranch.values()) {
      let depth = 0;
      for (const error of list) depth = Math.max(depth, depthOf(error.instancePath) + 1);
      if (depth > bestDepth) {
        bestDepth = depth;
        best = list;
      }
    }
    if (bestDepth > depthOf(candidate.instancePath) + 1) {
      dropped.add(candidate);
      for (const error of best) dropped.delete(error);
    }
  }
  const out: ValidatorError[] = [];
  for (const error of errors) if (!dropped.has(error) && error.keyword !== "if") out.push(error);
  for (const error of added) out.push(error);
  return out;
}

function expectedOf(e: ValidatorError): string {
  const params = e.params;
  switch (e.keyword) {
    case "type":
      return String(params.type).split(",").join(" or ");
    case "const":
      return JSON.stringify(params.allowedValue);
    case "enum":
      return `one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return e.message ?? e.keyword;
  }
}

const FORMAT_EXAMPLES: Record<string, string> = {
  "date-time":
    'ISO-8601 with an offset, e.g. "2025-01-31T12:00:00Z" or "2025-01-31T12:00:00+02:00" (and a real calendar day)',
  date: 'a real calendar day, e.g. "2025-01-31"',
  time: 'with an offset, e.g. "12:00:00Z" or "12:00:00+02:00"',
  duration: 'ISO-8601, e.g. "PT5M" or "P1DT2H"',
  uri: 'an absolute URI, e.g. "https://example.com/a"',
  "uri-reference": 'a URI or a relative reference, e.g. "https://example.com/a" or "../a"',
  "uri-template": 'RFC 6570, e.g. "https://example.com/{id}"',
  url: 'an http(s) or ftp URL with a public host, e.g. "https://example.com/a"',
  email: 'e.g. "name@example.com"',
  hostname: 'e.g. "example.com"',
  ipv4: 'e.g. "192.0.2.1"',
  ipv6: 'e.g. "2001:db8::1"',
  regex: 'a regular expression JavaScript compiles, e.g. "^[a-z]+$"',
  uuid: 'e.g. "3f1c2a4e-1111-4222-8333-944455556666"',
  "json-pointer": 'e.g. "/messages/0" (or "" for the whole document)',
  "relative-json-pointer": 'e.g. "0/a" or "1#"',
  byte: 'base64, e.g. "aGVsbG8="',
  int32: "an integer from -2147483648 to 2147483647",
  int64: "an integer",
};

function problemFromAjv(e: ValidatorError, base: string, value: unknown, def: TypeDefinition): ValidationProblem {
  const params = e.params ?? {};
  const at = resolveInstancePath(value, e.instancePath);
  const typeLabel = `"${def.$type}" v${def.version}`;
  let pointer = base + e.instancePath;
  let expected: string;
  let found = describeValue(at);
  let reason: string;
  let message: string;
  let hint: string | undefined;
  let details: SchemaProblemDetails;
  switch (e.keyword) {
    case "required": {
      const name = String(params.missingProperty);
      pointer += "/" + pointerSegment(name);
      expected = `property "${name}"`;
      found = "nothing (the property is missing)";
      reason = `required property "${name}" is missing`;
      message = `${pointerLabel(pointer)}: ${reason}`;
      hint = `${typeLabel} requires "${name}"`;
      details = { kind: "schema", keyword: "required", property: name };
      break;
    }
    case "additionalProperties": {
      const name = String(params.additionalProperty);
      pointer += "/" + pointerSegment(name);
      const parent = resolveSchemaPath(def.schema, parentSchemaPath(e.schemaPath)) as
        | { properties?: Record<string, unknown> }
        | undefined;
      const allowed = parent?.properties ? Object.keys(parent.properties) : [];
      expected =
        allowed.length > 0
          ? `only ${allowed
              .slice(0, 12)
              .map((k) => JSON.stringify(k))
              .join(", ")}${allowed.length > 12 ? ", ..." : ""}`
          : "no other properties";
      found = `property ${quoted(name)} (${describeValue(resolveInstancePath(at, "/" + pointerSegment(name)))})`;
      reason = `unknown property ${quoted(name)} in ${typeLabel}`;
      message = `${pointerLabel(pointer)}: ${reason}`;
      hint = `${typeLabel} has a closed model: remove ${quoted(name)}, or declare it in the type (and bump the version if older readers must not see it)`;
      details = { kind: "schema", keyword: "additionalProperties", property: detailText(name), allowed };
      break;
    }
    case "anyOf":
    case "oneOf": {
      expected =
        typeof params.expected === "string"
          ? params.expected
          : `a value matching ${e.keyword === "oneOf" ? "exactly " : ""}one of the alternatives`;
      reason = `must be ${expected}, found ${found}`;
      message = `${pointerLabel(pointer)} ${reason}`;
      details = {
        kind: "schema",
        keyword:
          params.combinator === "oneOf" || (params.combinator === undefined && e.keyword === "oneOf")
            ? "oneOf"
            : "anyOf",
      };
      if (Array.isArray(params.types) && params.types.length > 0) details.types = params.types as JsonTypeName[];
      if (Array.isArray(params.values) && params.values.length > 0) details.values = params.values as unknown[];
      break;
    }
    case "format": {
      const fmt = String(params.format);
      expected = fmt === "int32" || fmt === "int64" ? `an ${fmt} number` : `a "${fmt}" string`;
      reason = `must be a valid ${fmt}, found ${found}`;
      message = `${pointerLabel(pointer)} ${reason}`;
      hint = Object.hasOwn(FORMAT_EXAMPLES, fmt) ? `${fmt}: ${FORMAT_EXAMPLES[fmt]}` : undefined;
      details = { kind: "schema", keyword: "format", format: fmt };
      break;
    }
    case "pattern":
      expected = `a string matching /${String(params.pattern)}/`;
      reason = `must match /${String(params.pattern)}/, found ${found}`;
      message = `${pointerLabel(pointer)} ${reason}`;
      details = { kind: "schema", keyword: "pattern", pattern: String(params.pattern) };
      break;
    case "type":
    case "const":
    case "enum":
      expected = expectedOf(e);
      reason = `must be ${expected}, found ${found}`;
      message = `${pointerLabel(pointer)} ${reason}`;
      details =
        e.keyword === "type"
          ? { kind: "schema", keyword: "type", types: typeNames(params.type), actualType: jsonTypeOf(at) }
          : e.keyword === "const"
            ? { kind: "schema", keyword: "const", value: params.allowedValue }
            : {
                kind: "schema",
                keyword: "enum",
                values: Array.isArray(params.allowedValues) ? params.allowedValues.slice() : [],
              };
      break;
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      expected = `a number ${String(params.comparison)} ${String(params.limit)}`;
      reason = `must be ${expected}, found ${found}`;
      message = `${pointerLabel(pointer)} ${reason}`;
      details = {
        kind: "schema",
        keyword: e.keyword,
        comparison: params.comparison as ">=" | "<=" | ">" | "<",
        limit: Number(params.limit),
        actual: Number(at),
      };
      break;
    case "minLength":
    case "maxLength":
    case "minItems":
    case "maxItems":
    case "minProperties":
    case "maxProperties":
      expected = e.message ? e.message.replace(/^must (be )?/, "") : e.keyword;
      reason = `${e.message ?? `fails "${e.keyword}"`}, found ${found}`;
      message = `${pointerLabel(pointer)} ${reason}`;
      details = { kind: "schema", keyword: e.keyword, limit: Number(params.limit), actual: sizeOf(at) };
      break;
    default:
      expected = e.message ? e.message.replace(/^must (be )?/, "") : e.keyword;
      reason = `${e.message ?? `fails "${e.keyword}"`}, found ${found}`;
      message = `${pointerLabel(pointer)} ${reason}`;
      details = otherDetails(e);
  }
  const problem: ValidationProblem = {
    code: "schema",
    pointer,
    $type: def.$type,
    expected,
    found,
    message,
    reason,
    details,
  };
  if (hint !== undefined) problem.hint = hint;
  return problem;
}

// -----------------------------------------------------------------------------------------------
// Details (the problem as data).

const OTHER_KEYWORDS = new Set<string>([
  "multipleOf",
  "uniqueItems",
  "dependentRequired",
  "dependencies",
  "propertyNames",
  "additionalItems",
  "items",
  "prefixItems",
  "contains",
  "minContains",
  "maxContains",
  "not",
  "false schema",
  "unevaluatedProperties",
  "unevaluatedItems",
  "discriminator",
] satisfies OtherSchemaKeyword[]);

/** Details for a keyword without its own variant: ajv's params, input strings cut. */
function otherDetails(e: ValidatorError): SchemaProblemDetails {
  const params: Record<string, unknown> = {};
  for (const key in e.params) {
    if (!hasOwn.call(e.params, key)) continue;
    const paramValue = e.params[key];
    params[key] = typeof paramValue === "string" ? detailText(paramValue) : paramValue;
  }
  if (OTHER_KEYWORDS.has(e.keyword)) return { kind: "schema", keyword: e.keyword as OtherSchemaKeyword, params };
  params.keyword = detailText(e.keyword);
  return { kind: "schema", keyword: "unknown", params };
}

/** ajv's `type` param (`"string"`, `"string,null"` or an array) as type names. */
function typeNames(type: unknown): JsonTypeName[] {
  return (Array.isArray(type) ? type.map(String) : String(type).split(",")) as JsonTypeName[];
}

function jsonTypeOf(value: unknown): JsonTypeName | "undefined" {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "string":
      return "string";
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "undefined":
      return "undefined";
    default:
      return "object";
  }
}

/** A string's length in code points (as JSON Schema counts it), an array's items, an object's own keys. */
function sizeOf(value: unknown): number {
  if (typeof value === "string") {
    let count = value.length;
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length) {
        const low = value.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          count--;
          i++;
        }
      }
    }
    return count;
  }
  if (Array.isArray(value)) return value.length;
  if (typeof value === "object" && value !== null) {
    let count = 0;
    for (const key in value) if (hasOwn.call(value, key)) count++;
    return count;
  }
  return 0;
}
