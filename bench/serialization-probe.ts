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
 * Run: npx tsx bench/serialization-probe.ts [messages] [--generated]
 */
import { TypeRegistry, defaultRegistry } from "../src/runtime/registry.js";
import { parseJson } from "../src/runtime/safe-json.js";
import { deserializeSession, serializeSession } from "../src/runtime/serialization.js";
import { validateSession } from "../src/runtime/validate.js";
import { makeModelTypes } from "../test/serialization/model.js";
import { makeSession } from "./sessions.js";
import { sessionSchema } from "./zod-session.js";

const messages = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 1000);
// `--generated`: the generated registry (src/generated/registry.ts) instead of the hand-made one.
const registry = process.argv.includes("--generated") ? defaultRegistry() : new TypeRegistry({ source: "probe", types: makeModelTypes() });
const session = makeSession({ messages });
const envelope = { format: "statebag.session", formatVersion: 1, session };
const text = JSON.stringify(envelope);

// Sanity: the document is valid under the probe registry and zod.
const check = validateSession(session, { registry });
if (!check.ok) throw new Error("probe session invalid:\n" + JSON.stringify(check.problems.slice(0, 3), null, 2));
sessionSchema.parse(session);

/** Median CPU ms per op over interleaved samples of a and b. */
function compare(name: string, ours: () => unknown, base: () => unknown, samples = 60): { ours: number; base: number } {
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
  const med = (xs: number[]) => xs.sort((x, y) => x - y)[xs.length >> 1];
  const r = { ours: med(a), base: med(b) };
  console.log(`${name.padEnd(28)} ours ${r.ours.toFixed(3).padStart(8)} ms   baseline ${r.base.toFixed(3).padStart(8)} ms   ratio ${(r.ours / r.base).toFixed(3)}x`);
  return r;
}

console.log(`registry: ${registry.size} types; session: ${messages} messages, ${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB stored`);
compare("load  vs JSON.parse", () => deserializeSession(text, { registry }), () => JSON.parse(text));
compare("parseJson vs JSON.parse", () => parseJson(text), () => JSON.parse(text));
compare("save vs JSON.stringify", () => serializeSession(session, { registry }), () => JSON.stringify(envelope));
compare("save(validate) vs stringify", () => serializeSession(session, { registry, validate: true }), () => JSON.stringify(envelope));
const v = compare("validate vs zod 4", () => validateSession(session, { registry }), () => sessionSchema.parse(session));
console.log(`validation speed-up over zod: ${(v.base / v.ours).toFixed(1)}x`);
