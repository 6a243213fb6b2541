/**
 * Quick local measurement of the serialization path (not the full bench suite):
 *   load     deserializeSession(text)      vs JSON.parse(text)            target <= 1.3x
 *   save     serializeSession(session)     vs JSON.stringify(envelope)    target <= 1.1x
 *            (default: structural check; also shown with validate: true, what stores use)
 *   validate validateSession(session)      vs zod 4 sessionSchema.parse   target >= 10x faster
 * on a 1,000-message session (bench/sessions.ts), with the hand-made ajv registry of
 * test/serialization/model.ts, or with `--generated` the generated one (src/generated/registry.ts).
 * Times are process CPU time (medians of interleaved samples), steadier than wall time when
 * other work shares the machine.
 *
 * One process is not one measurement: how V8 tiers the code and how the heap has grown differ
 * from process to process (zod's time moved by up to 1.5x between identical runs here, and
 * earlier comparisons in the same process slow later ones). `--processes N` runs every
 * comparison alone in N fresh processes and reports the median ratio with its range.
 *
 * Run: npx tsx bench/serialization-probe.ts [messages] [--generated] [--processes N] [--only name]
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { TypeRegistry, defaultRegistry } from "../src/runtime/persistence/registry.js";
import { parseJson } from "../src/runtime/persistence/safe-json.js";
import { deserializeSession, serializeSession } from "../src/runtime/persistence/serialization.js";
import { validateSession } from "../src/runtime/persistence/validate.js";
import { makeModelTypes } from "../test/serialization/model.js";
import { makeSession } from "./sessions.js";
import { sessionSchema } from "./zod-session.js";

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const messages = Number(args.find((a, i) => /^\d+$/.test(a) && !/^--(processes|only)$/.test(args[i - 1] ?? "")) ?? 1000);
const generated = args.includes("--generated");
const processes = Number(option("--processes") ?? 0);
const only = option("--only");
const child = args.includes("--child");

// `--generated`: the generated registry (src/generated/registry.ts) instead of the hand-made one.
const registry = generated ? defaultRegistry() : new TypeRegistry({ source: "probe", types: makeModelTypes() });
const session = makeSession({ messages });
const envelope = { format: "statebag.session", formatVersion: 1, session };
const text = JSON.stringify(envelope);

// Sanity: the document is valid under the probe registry and zod.
const check = validateSession(session, { registry });
if (!check.ok) throw new Error("probe session invalid:\n" + JSON.stringify(check.problems.slice(0, 3), null, 2));
sessionSchema.parse(session);

/** name -> [label, ours, baseline] */
const COMPARISONS: Record<string, [string, () => unknown, () => unknown]> = {
  load: ["load  vs JSON.parse", () => deserializeSession(text, { registry }), () => JSON.parse(text)],
  parse: ["parseJson vs JSON.parse", () => parseJson(text), () => JSON.parse(text)],
  save: ["save vs JSON.stringify", () => serializeSession(session, { registry }), () => JSON.stringify(envelope)],
  "save-validate": ["save(validate) vs stringify", () => serializeSession(session, { registry, validate: true }), () => JSON.stringify(envelope)],
  validate: ["validate vs zod 4", () => validateSession(session, { registry }), () => sessionSchema.parse(session)],
};

/** Median CPU ms per op over interleaved samples of a and b. */
function measure(ours: () => unknown, base: () => unknown, samples = 60): { ours: number; base: number } {
  const a: number[] = [];
  const b: number[] = [];
  const minMs = 20;
  // CPU time of the process (user + system), less disturbed than wall time on a busy machine.
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const sample = (f: () => unknown) => {
    let n = 0;
    const t0 = cpuMs();
    let t = t0;
    do {
      f();
      n++;
      t = cpuMs();
    } while (t - t0 < minMs);
    return (t - t0) / n;
  };
  for (let i = 0; i < 10; i++) {
    sample(ours);
    sample(base);
  }
  for (let i = 0; i < samples; i++) {
    if (i % 2 === 0) {
      a.push(sample(ours));
      b.push(sample(base));
    } else {
      b.push(sample(base));
      a.push(sample(ours));
    }
  }
  return { ours: median(a), base: median(b) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 === 1 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function line(label: string, r: { ours: number; base: number }, extra = ""): void {
  console.log(`${label.padEnd(28)} ours ${r.ours.toFixed(3).padStart(8)} ms   baseline ${r.base.toFixed(3).padStart(8)} ms   ratio ${(r.ours / r.base).toFixed(3)}x${extra}`);
}

const names = only !== undefined ? [only] : Object.keys(COMPARISONS);
for (const name of names) if (!(name in COMPARISONS)) throw new Error(`unknown comparison "${name}" (one of ${Object.keys(COMPARISONS).join(", ")})`);

if (child) {
  // One comparison, one line of JSON for the parent.
  const [, ours, base] = COMPARISONS[names[0]];
  console.log(JSON.stringify(measure(ours, base)));
} else if (processes > 0) {
  const script = fileURLToPath(import.meta.url);
  const passOn = [String(messages), ...(generated ? ["--generated"] : [])];
  console.log(`registry: ${registry.size} types; session: ${messages} messages, ${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB stored; ${processes} fresh process(es) per comparison`);
  let validateRatios: number[] = [];
  for (const name of names) {
    const runs: { ours: number; base: number }[] = [];
    for (let k = 0; k < processes; k++) {
      const r = spawnSync(process.execPath, [...process.execArgv, script, ...passOn, "--only", name, "--child"], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`probe child for "${name}" failed:\n${r.stderr}`);
      runs.push(JSON.parse(r.stdout.trim().split("\n").pop()!));
    }
    const ratios = runs.map((r) => r.ours / r.base);
    const med = { ours: median(runs.map((r) => r.ours)), base: median(runs.map((r) => r.base)) };
    line(COMPARISONS[name][0], med, `   (median ratio ${median(ratios).toFixed(3)}x, range ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`);
    if (name === "validate") validateRatios = ratios;
  }
  if (validateRatios.length > 0) {
    const speedups = validateRatios.map((r) => 1 / r);
    console.log(`validation speed-up over zod: ${median(speedups).toFixed(1)}x (range ${Math.min(...speedups).toFixed(1)}-${Math.max(...speedups).toFixed(1)}x)`);
  }
} else {
  console.log(`registry: ${registry.size} types; session: ${messages} messages, ${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB stored`);
  for (const name of names) {
    const [label, ours, base] = COMPARISONS[name];
    const r = measure(ours, base);
    line(label, r);
    if (name === "validate") console.log(`validation speed-up over zod: ${(r.base / r.ours).toFixed(1)}x`);
  }
}
