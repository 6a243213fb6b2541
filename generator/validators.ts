/**
 * Precompiles the runtime schemas with ajv standalone, so nothing compiles at start-up.
 *
 * `date-time` is checked by `isDateTime` (src/runtime/formats.ts): exact but cheap. The generated
 * module imports it with a plain ESM import and ajv's `code.formats` points at a local object, so
 * it works the same under tsx, vitest and tsc-compiled dist (no `require` of a .ts file).
 */
import { isDateTime } from "../src/runtime/formats.js";
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

export async function buildValidators(inputs: readonly ValidatorInput[], formatsImport: string): Promise<ValidatorsOutput> {
  const { Ajv, _ } = await import("ajv");
  const standaloneCode = (await import("ajv/dist/standalone/index.js")).default as unknown as (
    ajv: InstanceType<typeof Ajv>,
    refs: Record<string, string>,
  ) => string;

  const newAjv = () =>
    new Ajv({
      // strict catches schema mistakes at generation time instead of silently ignoring keywords.
      strict: true,
      allowUnionTypes: true,
      allErrors: false,
      code: { source: true, esm: true, lines: true, formats: _`statebagFormats` }, // must equal FORMATS_VAR
      formats: { "date-time": isDateTime },
    });

  const compileAll = (inputs: readonly ValidatorInput[]) => {
    const ajv = newAjv();
    for (const input of inputs) ajv.addSchema(input.schema, input.exportName);
    for (const input of inputs) ajv.getSchema(input.exportName);
    return ajv;
  };

  const failures: ValidatorsOutput["failures"] = [];
  let good: readonly ValidatorInput[] = inputs;
  let ajv: InstanceType<typeof Ajv>;
  try {
    ajv = compileAll(inputs);
  } catch {
    // Only on failure: compile each schema alone so every bad one names itself.
    good = inputs.filter((input) => {
      try {
        newAjv().compile(input.schema);
        return true;
      } catch (e) {
        failures.push({ exportName: input.exportName, message: (e as Error).message });
        return false;
      }
    });
    ajv = compileAll(good);
  }
  const refs: Record<string, string> = {};
  for (const input of good) refs[input.exportName] = input.exportName;
  // ES modules are strict already; ajv's leading directive would sit after our imports.
  const body = good.length > 0 ? standaloneCode(ajv, refs).replace(/^"use strict";\n?/, "") : "";
  const needsRequire = /\brequire\(/.test(body);
  const usesFormats = body.includes(FORMATS_VAR);

  const lines: string[] = [];
  if (needsRequire) {
    // ajv standalone still emits require(...) for its runtime helpers, even with esm: true.
    lines.push(`import { createRequire } from "node:module";`);
  }
  if (usesFormats) lines.push(`import { isDateTime } from ${JSON.stringify(formatsImport)};`);
  if (needsRequire) lines.push("", "const require = createRequire(import.meta.url);");
  if (usesFormats) lines.push(`const ${FORMATS_VAR} = { "date-time": isDateTime };`);
  lines.push("", body.trim(), "");
  return { code: lines.join("\n"), failures };
}
