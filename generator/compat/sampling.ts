/**
 * Sampling: documents drawn from a schema with json-schema-faker (seeded, so a run reproduces),
 * kept only when they validate against that schema. The compatibility check uses them as a second
 * line of defence after the analysis judged a change compatible; the same function serves any
 * check that needs realistic documents of a frozen version (e.g. running them through migrations).
 */
import { createGeneratorSync } from "json-schema-faker";
import { bundleSchema, compileBundled } from "./bundle.js";
import type { ExternalRefResolver, JsonSchema } from "./schema.js";

export interface SampleOptions {
  /** Seed of the first draw; each further draw uses the next seed. Report it so a failure reproduces. */
  seed: number;
  /** Documents wanted (valid ones). */
  count: number;
  /** Stop drawing after this long, with what was drawn so far. */
  timeBudgetMs: number;
  /** Location of the schema and a resolver for `$ref`s to other files (unresolvable refs accept any value). */
  base?: string;
  resolveExternalRef?: ExternalRefResolver;
}

export interface Samples {
  documents: unknown[];
  /** Draws made (some may have been invalid under the schema and dropped). */
  drawn: number;
  /** True when the time budget ran out before `count` valid documents. */
  timedOut: boolean;
  seed: number;
  /** Set when the schema could not be compiled or sampled at all. */
  error?: string;
}

/** Draws up to `count` documents that validate against `schema`. */
export function sampleDocuments(schema: JsonSchema, options: SampleOptions): Samples {
  const bundled = bundleSchema(schema, options.base, options.resolveExternalRef);
  const compiled = compileBundled(bundled);
  const result: Samples = { documents: [], drawn: 0, timedOut: false, seed: options.seed };
  if ("error" in compiled) return { ...result, error: `schema can not be compiled: ${compiled.error}` };
  const generator = createGeneratorSync({
    seed: options.seed,
    maxDepth: 4,
    maxDefaultItems: 3,
    optionalsProbability: 0.5,
  });
  const deadline = Date.now() + options.timeBudgetMs;
  const maxDraws = options.count * 3;
  let failures = 0;
  while (result.documents.length < options.count && result.drawn < maxDraws) {
    if (Date.now() > deadline) {
      result.timedOut = true;
      break;
    }
    result.drawn++;
    let doc: unknown;
    try {
      doc = generator.generate(bundled as never);
    } catch (error) {
      if (++failures >= 3)
        return { ...result, error: `json-schema-faker can not sample this schema: ${(error as Error).message}` };
      continue;
    }
    if (compiled.validate(doc)) result.documents.push(doc);
  }
  return result;
}
