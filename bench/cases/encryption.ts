/**
 * store.sqlite.saveload.encrypted: one 1,000-message session saved (compare-and-swap update) and
 * loaded through a SQLite store whose codec encrypts (AES-256-GCM, encryptedSessionCodec), against
 * the same store with the default codec. The ratio is the cost of encryption at rest.
 *
 * Each save writes a changed session (1,000 and 1,001 messages in turn, the same on both sides), as
 * a real save does. Re-saving identical text would flatter the baseline: SQLite overwrites a row of
 * the same size page by page and skips the pages whose bytes did not change, so a plain re-save
 * dirties almost nothing, while an encrypted row is all new bytes every time (a fresh nonce).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encryptedSessionCodec, openStore, type SessionStore } from "../../src/stores.js";
import { compare, result, type BenchContext, type CaseOutcome } from "../harness.js";
import { makeSession } from "../sessions.js";

export async function encryptionCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-bench-enc-"));
  const stores: SessionStore[] = [];
  try {
    const session = makeSession({ messages: 1000, id: "bench-enc" });
    const sessions = [session, makeSession({ messages: 1001, id: "bench-enc" })];
    const codec = encryptedSessionCodec({ keyring: { current: "k1", keys: { k1: randomBytes(32) } }, store: "bench" });
    const encrypted = await openStore(`sqlite:${join(dir, "encrypted.db")}`, { codec });
    const plain = await openStore(`sqlite:${join(dir, "plain.db")}`);
    stores.push(encrypted, plain);
    const revisions = new Map<SessionStore, number>();
    const saves = new Map<SessionStore, number>();
    for (const store of stores) {
      revisions.set(store, await store.save(session, { expectedRevision: null }));
      saves.set(store, 1);
    }
    const saveLoad = (store: SessionStore) => async () => {
      const saveCount = saves.get(store)!;
      saves.set(store, saveCount + 1);
      revisions.set(store, await store.save(sessions[saveCount % 2], { expectedRevision: revisions.get(store)! }));
      return store.get(session.id);
    };
    ctx.log("store.sqlite.saveload.encrypted (1 session x 1,000/1,001 messages in turn, save + load)");
    const timing = await compare(saveLoad(encrypted), saveLoad(plain), {
      samples: ctx.quick ? 5 : 15,
      warmup: 3,
      minSampleMs: 0,
    });
    return [result("store.sqlite.saveload.encrypted", "same store, unencrypted codec", timing)];
  } finally {
    for (const store of stores) await store.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
