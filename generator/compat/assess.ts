/**
 * `assessCompatibility(old, new)`: the verdict on a schema change, by meaning. "Compatible" means
 * every document the old schema accepts, the new one accepts too.
 *
 * 1. `diffSchemas` explains the change keyword by keyword (patterns as automata, integer bounds,
 *    implied constraints, oneOf overlap...).
 * 2. Every breaking change gets a witness: a document the old schema accepts and the new one
 *    rejects, checked with the validators. A breaking rule with no witness found is reported as
 *    undecided, never as a guess (except where the change sits in a reference the validators
 *    leave open, like a family slot: that verdict is about the member types).
 * 3. A change judged compatible is sampled: documents drawn from the old schema (seeded, bounded
 *    in count and time) are validated against the new one; a counterexample makes it breaking,
 *    with the seed that draws it again.
 */
import type { ValidateFunction } from "ajv";
import { bundleSchema, compileBundled } from "./bundle.js";
import { type DiffOptions, diffSchemas } from "./diff.js";
import type { Change, Witness } from "./rule-catalogue.js";
import { sampleDocuments } from "./sampling.js";
import { type JsonSchema, canonicalJson, childPointer } from "./schema.js";
import { type WitnessContext, findWitness } from "./witness.js";

export type Verdict = "compatible" | "breaking" | "undecided";

export interface AssessOptions extends DiffOptions {
  /** Seed of every random draw (default 1): the same seed gives the same documents. */
  seed?: number;
  /** Documents drawn from the old schema for a compatible change (default 300; 0 turns sampling off). */
  samples?: number;
  /** Milliseconds sampling may take (default 1000). */
  timeBudgetMs?: number;
}

export interface SamplingReport {
  seed: number;
  /** Documents drawn (valid under the old schema) and validated against the new one. */
  drawn: number;
  /** True when the time budget ended the draw early. */
  timedOut: boolean;
  /** Set when the old schema could not be sampled at all (the verdict then rests on the analysis). */
  error?: string;
}

export interface Assessment {
  verdict: Verdict;
  /** Every change; breaking ones carry a `witness`, sampled counterexamples are added as changes. */
  changes: Change[];
  /** Set when sampling ran (the verdict was compatible before it). */
  sampling?: SamplingReport;
}

/** Rules about references the validators leave open (family slots, unresolvable files): no document can show them. */
const WITNESS_NOT_EXPRESSIBLE = new Set<string>(["change-slot-family", "ref-change"]);

export const DEFAULT_SEED = 1;
export const DEFAULT_SAMPLES = 300;
export const DEFAULT_TIME_BUDGET_MS = 1000;

export function assessCompatibility(oldSchema: JsonSchema, newSchema: JsonSchema, options: AssessOptions = {}): Assessment {
  const seed = options.seed ?? DEFAULT_SEED;
  const changes = diffSchemas(oldSchema, newSchema, options);
  if (!changes.some((c) => c.kind === "breaking") && (changes.length === 0 || (options.samples ?? DEFAULT_SAMPLES) <= 0)) {
    return { verdict: verdictOf(changes), changes };
  }
  const bundledOld = bundleSchema(oldSchema, options.oldBase, options.resolveExternalRef);
  const bundledNew = bundleSchema(newSchema, options.newBase, options.resolveExternalRef);
  const oldValidator = compileBundled(bundledOld);
  const newValidator = compileBundled(bundledNew);
  if ("error" in oldValidator || "error" in newValidator) {
    const error = "error" in oldValidator ? `old schema: ${oldValidator.error}` : `new schema: ${(newValidator as { error: string }).error}`;
    const all = changes.map((c) => (c.kind === "breaking" ? undecided(c, `the schemas can not be compiled to check a witness (${error})`) : c));
    return { verdict: verdictOf(all), changes: all };
  }
  const ctx: WitnessContext = { oldSchema: bundledOld, validOld: oldValidator.validate, validNew: newValidator.validate };
  const witnessed = changes.map((c) => withWitness(c, ctx));
  const verdict = verdictOf(witnessed);
  if (verdict !== "compatible" || (options.samples ?? DEFAULT_SAMPLES) <= 0) return { verdict, changes: witnessed };

  // The analysis found no break: look for one among documents drawn from the old schema.
  const drawn = sampleDocuments(oldSchema, {
    seed,
    count: options.samples ?? DEFAULT_SAMPLES,
    timeBudgetMs: options.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS,
    base: options.oldBase,
    resolveExternalRef: options.resolveExternalRef,
  });
  const sampling: SamplingReport = { seed, drawn: drawn.documents.length, timedOut: drawn.timedOut };
  if (drawn.error !== undefined) sampling.error = drawn.error;
  let counter: unknown;
  for (const document of drawn.documents) {
    if (newValidator.validate(document)) continue;
    if (counter === undefined || canonicalJson(document).length < canonicalJson(counter).length) counter = document;
  }
  if (counter === undefined) return { verdict, changes: witnessed, sampling };
  const problem = firstProblem(newValidator.validate, counter);
  const change: Change = {
    pointer: problem.pointer,
    rule: "sampled-counterexample",
    kind: "breaking",
    message: `a document drawn from the old schema (seed ${seed}) is rejected by the new one: ${problem.message}`,
    witness: { document: counter, source: "sampled", seed },
  };
  return { verdict: "breaking", changes: [...witnessed, change], sampling };
}

/** A breaking change keeps its verdict only with a witness; without one it is undecided. */
function withWitness(change: Change, ctx: WitnessContext): Change {
  if (change.kind !== "breaking" || WITNESS_NOT_EXPRESSIBLE.has(change.rule)) return change;
  const document = findWitness(change, ctx);
  if (document !== undefined) {
    const witness: Witness = { document, source: "constructed" };
    return { ...change, witness };
  }
  return undecided(change, "no document was found that the old schema accepts and the new one rejects");
}

function undecided(change: Change, why: string): Change {
  return { ...change, kind: "undecided", message: `${change.message} (cannot decide: ${why})` };
}

/** Where and why the new schema rejects a document (the first error, as a value pointer). */
function firstProblem(validate: ValidateFunction, document: unknown): { pointer: string; message: string } {
  validate(document);
  const e = validate.errors?.[0];
  if (!e) return { pointer: "", message: "rejected" };
  if (e.keyword === "required") return { pointer: childPointer(e.instancePath, String(e.params.missingProperty)), message: "missing property" };
  if (e.keyword === "additionalProperties") {
    return { pointer: childPointer(e.instancePath, String(e.params.additionalProperty)), message: "property not allowed" };
  }
  return { pointer: e.instancePath, message: e.message ?? e.keyword };
}

export function verdictOf(changes: readonly Change[]): Verdict {
  if (changes.some((c) => c.kind === "breaking")) return "breaking";
  if (changes.some((c) => c.kind === "undecided")) return "undecided";
  return "compatible";
}
