/**
 * load.N, save.1000, validate.1000: statebag's serialization path against what an application
 * would do without it, on the same documents.
 *
 *   load.N         deserializeSession(text): safe parse + envelope + every tagged value validated
 *                  vs JSON.parse(text) (no checks at all)
 *   save.1000      serializeSession(session): validates every tagged value, then stringifies
 *                  vs JSON.stringify of the same envelope
 *   validate.1000  validateSession(session) (one precompiled validator per $type)
 *                  vs a zod 4 schema of the same model (bench/zod-session.ts)
 *
 * N is the number of history messages in the session (bench/sessions.ts).
 */
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { validateSession } from "../../src/runtime/persistence/validate.js";
import { compare, result, type BenchContext, type CaseOutcome } from "../harness.js";
import { makeSession } from "../sessions.js";
import { sessionSchema } from "../zod-session.js";

function fixture(messages: number) {
  const session = makeSession({ messages });
  const envelope = { format: "statebag.session", formatVersion: 1, session };
  const text = serializeSession(session);
  // Both sides must accept the document, or the comparison means nothing.
  const check = validateSession(session, { strict: true });
  if (!check.ok) throw new Error(`bench session (${messages} messages) is invalid: ${JSON.stringify(check.problems.slice(0, 2))}`);
  sessionSchema.parse(session);
  return { session, envelope, text };
}

export async function serializationCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  for (const n of [10, 1000, 10000]) {
    const { text } = fixture(n);
    ctx.log(`load.${n} (${(text.length / 1024).toFixed(0)} KiB)`);
    out.push(result(`load.${n}`, "JSON.parse", await compare(() => deserializeSession(text), () => JSON.parse(text), ctx.fast)));
  }
  const { session, envelope } = fixture(1000);
  ctx.log("save.1000");
  out.push(result("save.1000", "JSON.stringify", await compare(() => serializeSession(session), () => JSON.stringify(envelope), ctx.fast)));
  ctx.log("validate.1000");
  out.push(result("validate.1000", "zod 4 schema", await compare(() => validateSession(session), () => sessionSchema.parse(session), ctx.fast)));
  return out;
}
