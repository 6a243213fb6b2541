/**
 * load.N, save.1000, validate.1000: statebag's serialization path against what an application
 * would do without it, on the same documents.
 *
 *   load.N         deserializeSession(text): safe parse + envelope + every tagged value validated
 *                  vs JSON.parse(text) (no checks at all); N up to 100,000 shows the cost is linear
 *   load.100000.peak  growth of peak RSS during one load (fresh process each, bench/heap-probe.ts)
 *                  vs the same for JSON.parse: what a memory limit sees
 *   save.1000      serializeSession(session): checks the session's shape and tags, then stringifies
 *                  vs JSON.stringify of the same envelope
 *   save.validated.1000  serializeSession(session, { validate: true }), what stores call: every
 *                  tagged value validated and the save-side limits checked, then stringified
 *                  vs JSON.stringify of the same envelope
 *   validate.1000  validateSession(session) (one precompiled validator per $type)
 *                  vs a zod 4 schema of the same model (bench/zod-session.ts)
 *
 * N is the number of history messages in the session (bench/sessions.ts).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { validateSession } from "../../src/runtime/validation/validate.js";
import { fileURLToPath } from "node:url";
import { compare, median, result, type BenchContext, type CaseOutcome } from "../harness.js";
import { makeSession } from "../sessions.js";
import { sessionSchema } from "../zod-session.js";

function fixture(messages: number) {
  const session = makeSession({ messages });
  const envelope = { format: "statebag.session", formatVersion: 1, session };
  const text = serializeSession(session);
  // Both sides must accept the document, or the comparison means nothing.
  const check = validateSession(session, { strict: true });
  if (!check.ok)
    throw new Error(`bench session (${messages} messages) is invalid: ${JSON.stringify(check.problems.slice(0, 2))}`);
  sessionSchema.parse(session);
  return { session, envelope, text };
}

/** Median peak-RSS growth of one load in fresh processes, ours vs JSON.parse (reported in MiB). */
function peakMemory(ctx: BenchContext, text: string) {
  const dir = mkdtempSync(join(tmpdir(), "statebag-heap-"));
  const file = join(dir, "session.json");
  writeFileSync(file, text);
  const probe = fileURLToPath(new URL("../heap-probe.ts", import.meta.url));
  const run = (mode: string): number => {
    const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", probe, file, mode], {
      cwd: ctx.root,
      encoding: "utf8",
    });
    if (child.status !== 0) throw new Error(`heap probe (${mode}) failed: ${child.stderr.slice(0, 500)}`);
    return (JSON.parse(child.stdout) as { peakGrowth: number }).peakGrowth / (1024 * 1024);
  };
  try {
    ctx.log("load.100000.peak (fresh process per sample)");
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < (ctx.quick ? 1 : 3); i++) {
      ours.push(run("statebag"));
      base.push(run("json"));
    }
    return result("load.100000.peak", "JSON.parse peak RSS growth (MiB, not ms)", {
      ours_ms: median(ours),
      baseline_ms: median(base),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function serializationCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  for (const size of [10, 1000, 10000, 100000]) {
    const { text } = fixture(size);
    ctx.log(`load.${size} (${(text.length / 1024).toFixed(0)} KiB)`);
    // 100,000 messages take ~0.1 s a load: fewer, longer samples.
    const timing =
      size >= 100000 ? { ...ctx.fast, samples: Math.min(ctx.fast.samples, 9), warmup: 2, minSampleMs: 0 } : ctx.fast;
    out.push(
      result(
        `load.${size}`,
        "JSON.parse",
        await compare(
          () => deserializeSession(text),
          () => JSON.parse(text),
          timing,
        ),
      ),
    );
    if (size === 100000) out.push(peakMemory(ctx, text));
  }
  const { session, envelope } = fixture(1000);
  ctx.log("save.1000");
  out.push(
    result(
      "save.1000",
      "JSON.stringify",
      await compare(
        () => serializeSession(session),
        () => JSON.stringify(envelope),
        ctx.fast,
      ),
    ),
  );
  // What stores call: full validation and the save-side limits, then the text.
  ctx.log("save.validated.1000");
  if (serializeSession(session, { validate: true }) !== JSON.stringify(envelope))
    throw new Error("save.validated.1000: the validated save writes other text than JSON.stringify");
  out.push(
    result(
      "save.validated.1000",
      "JSON.stringify",
      await compare(
        () => serializeSession(session, { validate: true }),
        () => JSON.stringify(envelope),
        ctx.fast,
      ),
    ),
  );
  ctx.log("validate.1000");
  out.push(
    result(
      "validate.1000",
      "zod 4 schema",
      await compare(
        () => validateSession(session),
        () => sessionSchema.parse(session),
        ctx.fast,
      ),
    ),
  );
  return out;
}
