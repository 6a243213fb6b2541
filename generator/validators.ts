/**
 * Precompiles the runtime schemas with ajv standalone, so nothing compiles at start-up.
 *
 * Formats are the runtime's `FORMATS` (src/runtime/registry/formats.ts: ajv-formats' set, `date-time`
 * by `isDateTime`). The generated module imports the table with a plain ESM import and ajv's
 * `code.formats` points at it (a RegExp format is inlined by ajv), so it works the same under tsx,
 * vitest and tsc-compiled dist (no `require` of a .ts file).
 *
 * The generated code is the hot path of every load (one call per tagged value), so it is shaped
 * for speed (the measurements are in bench/README.md):
 * - `allErrors: false`: stop at the first error. On the error path the runtime recompiles the
 *   type's schema with `allErrors` to report every problem (`TypeRegistry.reportValidator`).
 * - Validators take `(data, options?)` instead of ajv's destructured
 *   `(data, {instancePath = "", parentData, ...} = {})`: the walker calls each validator with one
 *   argument through a megamorphic call site, where the default object and the destructuring are
 *   real work. Per validator, when it reads no other option.
 * - Own properties only where it matters: a schema with a property named like an
 *   `Object.prototype` member (`constructor`, `toString`, ...) is compiled with `ownProperties`,
 *   so a missing `constructor` is not "found" on the prototype. Everywhere, it would slow every
 *   schema down for the few that can be fooled that way.
 * Tried and not used, as they made no difference: `messages: false` (messages are built on
 * failure only), `code.optimize` passes beyond the default.
 */
import { FORMATS } from "./runtime.js";
import type { Schema } from "./schemas.js";

export interface ValidatorInput {
  /** Export name of the validator (a JS identifier). */
  exportName: string;
  schema: Schema;
}

export interface ValidatorsOutput {
  /** Module body (without the generated-file header). */
  code: string;
  /** Schemas ajv rejected, by export name. */
  failures: { exportName: string; message: string }[];
}

const FORMATS_VAR = "statebagFormats";

export async function buildValidators(
  inputs: readonly ValidatorInput[],
  formatsImport: string,
): Promise<ValidatorsOutput> {
  const { Ajv, _: ajvCode } = await import("ajv");
  const standaloneCode = (await import("ajv/dist/standalone/index.js")).default as unknown as (
    ajv: InstanceType<typeof Ajv>,
    refs: Record<string, string>,
  ) => string;

  const newAjv = (ownProperties: boolean) =>
    new Ajv({
      // strict catches schema mistakes at generation time instead of silently ignoring keywords.
      strict: true,
      allowUnionTypes: true,
      allErrors: false,
      ownProperties,
      code: { source: true, esm: true, lines: true, formats: ajvCode`statebagFormats` }, // must equal FORMATS_VAR
      formats: { ...FORMATS },
    });

  const prepared = inputs.map((input) => ({
    exportName: input.exportName,
    schema: input.schema,
    own: readsPrototypeNames(input.schema),
  }));

  const compileAll = (inputs: readonly { exportName: string; schema: Schema }[], own: boolean) => {
    const ajv = newAjv(own);
    for (const input of inputs) ajv.addSchema(input.schema, input.exportName);
    for (const input of inputs) ajv.getSchema(input.exportName);
    return ajv;
  };

  const failures: ValidatorsOutput["failures"] = [];
  const bodies: string[] = [];
  for (const own of [false, true]) {
    const group = prepared.filter((p) => p.own === own);
    if (group.length === 0) continue;
    let good: readonly (typeof prepared)[number][] = group;
    let ajv: InstanceType<typeof Ajv>;
    try {
      ajv = compileAll(group, own);
    } catch {
      // Only on failure: compile each schema alone so every bad one names itself.
      good = group.filter((input) => {
        try {
          newAjv(own).compile(input.schema);
          return true;
        } catch (e) {
          failures.push({ exportName: input.exportName, message: (e as Error).message });
          return false;
        }
      });
      if (good.length === 0) continue;
      ajv = compileAll(good, own);
    }
    const refs: Record<string, string> = {};
    for (const input of good) refs[input.exportName] = input.exportName;
    // ES modules are strict already; ajv's leading directive would sit after our imports.
    const body = leanSignatures(standaloneCode(ajv, refs).replace(/^"use strict";\n?/, "")).trim();
    // A second ajv output reuses the first one's names (validate10, schema11, ...): give it a scope.
    bodies.push(
      bodies.length === 0
        ? body
        : scoped(
            body,
            good.map((g) => g.exportName),
          ),
    );
  }
  const body = bodies.join("\n\n");
  const needsRequire = /\brequire\(/.test(body);
  const usesFormats = body.includes(FORMATS_VAR);

  const lines: string[] = [];
  if (needsRequire) {
    // ajv standalone still emits require(...) for its runtime helpers, even with esm: true.
    lines.push(`import { createRequire } from "node:module";`);
  }
  if (usesFormats) lines.push(`import { FORMATS } from ${JSON.stringify(formatsImport)};`);
  if (needsRequire) lines.push("", "const require = createRequire(import.meta.url);");
  if (usesFormats) lines.push(`const ${FORMATS_VAR} = FORMATS;`);
  lines.push("", body, "");
  return { code: lines.join("\n"), failures };
}

// -------------------------------------------------------------------------------------------------
// Schema and code transforms (each checked to apply exactly, or left alone).

/** A name every object inherits (`constructor`, `toString`, `__proto__`, ...). */
function isPrototypeName(name: string): boolean {
  return name === "__proto__" || Object.hasOwn(Object.prototype, name);
}

/**
 * True when the schema reads a property by a name that ajv's plain `data.name` would also find on
 * `Object.prototype` (declared or required properties, dependencies, a discriminator).
 */
function readsPrototypeNames(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(readsPrototypeNames);
  if (typeof schema !== "object" || schema === null) return false;
  const names = (list: unknown) => Array.isArray(list) && list.some((n) => typeof n === "string" && isPrototypeName(n));
  const mapValuesReadPrototypeNames = (map: object) =>
    Object.values(map).some((sub) => (Array.isArray(sub) ? names(sub) : readsPrototypeNames(sub)));
  for (const [key, value] of Object.entries(schema as Schema)) {
    if (typeof value !== "object" || value === null) continue;
    switch (key) {
      case "const":
      case "enum":
      case "default":
      case "examples":
        continue; // data, not schemas
      case "required":
        if (names(value)) return true;
        continue;
      case "discriminator":
        if (isPrototypeName(String((value as Schema).propertyName))) return true;
        continue;
      case "properties":
      case "dependencies":
      case "dependentRequired":
      case "dependentSchemas":
        // The keys are property names; the values are schemas (or, for dependencies, lists of names).
        if (Object.keys(value).some(isPrototypeName) || mapValuesReadPrototypeNames(value)) return true;
        continue;
      case "patternProperties":
      case "definitions":
      case "$defs":
        if (mapValuesReadPrototypeNames(value)) return true;
        continue;
      default:
        if (readsPrototypeNames(value)) return true;
    }
  }
  return false;
}

const AJV_SIGNATURE =
  /^function (validate\d+)\(data, \{instancePath="", parentData, parentDataProperty, rootData=data\}=\{\}\)\{/;

/**
 * `function validateN(data, {instancePath="", parentData, parentDataProperty, rootData=data}={})`
 * -> `function validateN(data, options)` reading `instancePath` only, for each validator that
 * reads nothing else (one that does, e.g. to pass `rootData` on to a recursive reference, keeps
 * ajv's signature; it still calls the lean ones correctly, they read `options.instancePath`).
 */
function leanSignatures(code: string): string {
  // With `code.lines`, every validator starts a line with `function validateN(`; nothing else does.
  return code
    .split(/^(?=function validate\d+\()/m)
    .map((chunk) => {
      const match = AJV_SIGNATURE.exec(chunk);
      if (match === null) return chunk;
      const body = chunk.slice(match[0].length);
      if (/\b(parentData|parentDataProperty|rootData)\b/.test(body)) return chunk;
      return `function ${match[1]}(data, options){\nconst instancePath = options === undefined || options.instancePath === undefined ? "" : options.instancePath;${body}`;
    })
    .join("");
}

/** Wraps an ajv standalone body in its own scope, re-exporting its validators. */
function scoped(body: string, exportNames: readonly string[]): string {
  const inner = body.replace(/^export const (\w+) = /gm, "const $1 = ");
  const names = exportNames.join(", ");
  return [`const { ${names} } = (() => {`, inner, `return { ${names} };`, `})();`, `export { ${names} };`].join("\n");
}
