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
import { bundleSchema, compileBundled, normalizeIds } from "./bundle.js";
import { type DiffOptions, diffSchemas } from "./diff.js";
import { budgetOf, type Change, type Witness } from "./rule-catalogue.js";
import { sampleDocuments } from "./sampling.js";
import { type JsonSchema, canonicalJson, childPointer } from "./schema.js";
import { type WitnessContext, DEFAULT_WITNESS_WORK, searchWitness } from "./witness.js";

export type Verdict = "compatible" | "breaking" | "undecided";

export interface AssessOptions extends DiffOptions {
  /** Seed of every random draw (default 1): the same seed gives the same documents. */
  seed?: number;
  /** Documents drawn from the old schema for a compatible change (default 300; 0 turns sampling off). */
  samples?: number;
  /** Milliseconds sampling may take (default 1000). */
  timeBudgetMs?: number;
  /** Work one witness search may spend (default `DEFAULT_WITNESS_WORK`): ends the search on a huge schema, not a fixed depth. */
  witnessWork?: number;
  /** Why `samples` is 0, when the caller turned sampling off (said in the warning; e.g. a check's time budget spent). */
  samplingOffReason?: string;
}

/** A budget the check ran out of: why an `undecided` (or a thin sampling) verdict is not a decision. */
export type Budget = "witness-work" | "automaton-size" | "sampling";

/** A change as assessed: an `undecided` one names the budget that ran out, when one did. */
export type AssessedChange = Change & { budget?: Budget };

export interface SamplingReport {
  seed: number;
  /** Documents drawn (valid under the old schema) and validated against the new one. */
  drawn: number;
  /** Of those, how many the new schema accepts (`drawn` unless a counterexample was found). */
  accepted: number;
  /** True when the time budget ended the draw early. */
  timedOut: boolean;
  /** Set when the old schema could not be sampled at all (the verdict then rests on the analysis). */
  error?: string;
  /** Set when no document was drawn (sampling off, out of time, or the schema can not be sampled): the verdict rests on the analysis alone. */
  warning?: string;
  /** `"sampling"` when its time budget ran out before enough documents were drawn. */
  budget?: Budget;
}

export interface Assessment {
  verdict: Verdict;
  /** Every change; breaking ones carry a `witness`, sampled counterexamples are added as changes. */
  changes: AssessedChange[];
  /** Set whenever the analysis found the change compatible (and the schemas are not identical): what sampling drew, or why it drew nothing. */
  sampling?: SamplingReport;
}

/** Rules about references the validators leave open (family slots, unresolvable files): no document can show them. */
const WITNESS_NOT_EXPRESSIBLE = new Set<string>(["change-slot-family", "ref-change"]);

export const DEFAULT_SEED = 1;
export const DEFAULT_SAMPLES = 300;
export const DEFAULT_TIME_BUDGET_MS = 1000;

export function assessCompatibility(
  oldSchema: JsonSchema,
  newSchema: JsonSchema,
  options: AssessOptions = {},
): Assessment {
  const seed = options.seed ?? DEFAULT_SEED;
  const samples = options.samples ?? DEFAULT_SAMPLES;
  // Refs through nested `$id`s become root pointers first, so the analysis follows the refs ajv follows.
  const changes = diffSchemas(normalizeIds(oldSchema), normalizeIds(newSchema), options).map(withBudget);
  // No change by meaning (identical schemas, or a slot's representation only): nothing to decide or sample.
  if (changes.length === 0) return { verdict: "compatible", changes };
  const bundledOld = bundleSchema(oldSchema, options.oldBase, options.resolveExternalRef);
  const bundledNew = bundleSchema(newSchema, options.newBase, options.resolveExternalRef);
  const oldValidator = compileBundled(bundledOld);
  const newValidator = compileBundled(bundledNew);
  if ("error" in oldValidator || "error" in newValidator) {
    const error =
      "error" in oldValidator
        ? `old schema: ${oldValidator.error}`
        : `new schema: ${(newValidator as { error: string }).error}`;
    const all = changes.map((c) =>
      c.kind === "breaking" ? undecided(c, `the schemas can not be compiled to check a witness (${error})`) : c,
    );
    const verdict = verdictOf(all);
    if (verdict !== "compatible") return { verdict, changes: all };
    const sampling: SamplingReport = {
      seed,
      drawn: 0,
      accepted: 0,
      timedOut: false,
      error: `the schemas can not be compiled (${error})`,
    };
    sampling.warning = `no document was sampled: ${sampling.error}; the compatible verdict rests on the analysis alone`;
    return { verdict, changes: all, sampling };
  }
  const ctx: WitnessContext = {
    oldSchema: bundledOld,
    validOld: oldValidator.validate,
    validNew: newValidator.validate,
    workBudget: options.witnessWork ?? DEFAULT_WITNESS_WORK,
  };
  const witnessed = changes.map((c) => withWitness(c, ctx));
  const verdict = verdictOf(witnessed);
  if (verdict !== "compatible") return { verdict, changes: witnessed };
  if (samples <= 0) {
    const why = options.samplingOffReason ?? "sampling was turned off (samples: 0)";
    const sampling: SamplingReport = {
      seed,
      drawn: 0,
      accepted: 0,
      timedOut: false,
      warning: `no document was sampled: ${why}; the compatible verdict rests on the analysis alone`,
    };
    if (options.samplingOffReason !== undefined) sampling.budget = "sampling";
    return { verdict, changes: witnessed, sampling };
  }

  // The analysis found no break: look for one among documents drawn from the old schema.
  const drawn = sampleDocuments(oldSchema, {
    seed,
    count: samples,
    timeBudgetMs: options.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS,
    base: options.oldBase,
    resolveExternalRef: options.resolveExternalRef,
  });
  let accepted = 0;
  let counter: unknown;
  for (const document of drawn.documents) {
    if (newValidator.validate(document)) {
      accepted++;
      continue;
    }
    if (counter === undefined || canonicalJson(document).length < canonicalJson(counter).length) counter = document;
  }
  const sampling: SamplingReport = { seed, drawn: drawn.documents.length, accepted, timedOut: drawn.timedOut };
  if (drawn.timedOut) sampling.budget = "sampling";
  if (drawn.error !== undefined) sampling.error = drawn.error;
  if (sampling.drawn === 0) {
    const why =
      drawn.error ??
      (drawn.timedOut
        ? `the sampling time budget (${options.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS} ms) ran out first`
        : `none of ${drawn.drawn} draws was valid under the old schema`);
    sampling.warning = `no document was sampled: ${why}; the compatible verdict rests on the analysis alone`;
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

/** An undecided change from the analysis names the budget it ran out of (an automaton grown past its size limit). */
function withBudget(change: Change): AssessedChange {
  if (change.kind !== "undecided" || budgetOf(change) !== "automaton-size") return change;
  return { ...change, budget: "automaton-size", message: `${change.message} (budget ran out: automaton size)` };
}

/** A breaking change keeps its verdict only with a witness; without one it is undecided (naming the budget, when it ran out). */
function withWitness(change: AssessedChange, ctx: WitnessContext): AssessedChange {
  if (change.kind !== "breaking" || WITNESS_NOT_EXPRESSIBLE.has(change.rule)) return change;
  const search = searchWitness(change, ctx);
  if (search.document !== undefined) {
    const witness: Witness = { document: search.document, source: "constructed" };
    return { ...change, witness };
  }
  if (search.exhausted) {
    return {
      ...undecided(
        change,
        `the witness search ran out of its work budget (${search.budget} steps, ${search.tried} documents tried) before finding a document the old schema accepts and the new one rejects`,
      ),
      budget: "witness-work",
    };
  }
  return undecided(change, "no document was found that the old schema accepts and the new one rejects");
}

function undecided(change: AssessedChange, why: string): AssessedChange {
  return { ...change, kind: "undecided", message: `${change.message} (cannot decide: ${why})` };
}

/** Where and why the new schema rejects a document (the first error, as a value pointer). */
function firstProblem(validate: ValidateFunction, document: unknown): { pointer: string; message: string } {
  validate(document);
  const firstError = validate.errors?.[0];
  if (!firstError) return { pointer: "", message: "rejected" };
  if (firstError.keyword === "required")
    return {
      pointer: childPointer(firstError.instancePath, String(firstError.params.missingProperty)),
      message: "missing property",
    };
  if (firstError.keyword === "additionalProperties") {
    return {
      pointer: childPointer(firstError.instancePath, String(firstError.params.additionalProperty)),
      message: "property not allowed",
    };
  }
  return { pointer: firstError.instancePath, message: firstError.message ?? firstError.keyword };
}

export function verdictOf(changes: readonly Change[]): Verdict {
  if (changes.some((c) => c.kind === "breaking")) return "breaking";
  if (changes.some((c) => c.kind === "undecided")) return "undecided";
  return "compatible";
}
