/**
 * The Redis store's batch save (`SAVE_BATCH`, see ../batch-save.ts): a page of a bulk migration
 * sent in one round trip, one MULTI ... EXEC holding every session's SAVE script, instead of one
 * round trip per session. Offered on a standalone server with a codec that ignores its context
 * only (store.ts): there a save is its checks, serialization and one script, so a page is the
 * scripts of its sessions side by side. (A context-using codec draws the revision first, one round
 * trip per session before its script; a cluster spreads the sessions over nodes, and a transaction
 * stays on one: those stores save one session at a time.)
 *
 * - Each session goes through `save`'s own steps (the store's `planSave`, `saveInput` and
 *   `finishSave`): the same checks, owner and metadata handling and serialization before, and the
 *   same reply handling after; a session refused before its script (a bad id, a codec's refusal)
 *   is not sent. The scripts run one after the other inside the transaction, so a later session
 *   sees what an earlier one wrote, as it would one `save` after the other.
 * - The transaction starts with SCRIPT LOAD (the script's source, once per page): no other
 *   command runs between it and the EVALSHAs, so no script cache flushed meanwhile can fail some
 *   sessions with NOSCRIPT.
 * - Once EXEC answered, every session has its own result: the revision, the refusal `save` would
 *   have thrown (a compare-and-swap refused: `ConflictError`; the owner rule: `SessionOwnerError`),
 *   or the error its script replied with (mapped as `save` maps it). The batch never rejects then.
 * - Before EXEC answered, the batch rejects as a save would (`StoreUnavailableError`, the other
 *   errors of the store's `call`). When EXEC was never processed (not written: "Stream isn't
 *   writeable"; a command refused while queued: EXECABORT; the connection closed before the server
 *   reached EXEC), Redis discards the transaction: nothing of the batch is written. The one case
 *   left open is the one a single save has too: EXEC written and its reply never read (the
 *   connection lost after it, or the deadline passed while the server was still busy with it);
 *   then the whole page was written or none of it (a transaction runs whole), and the error says
 *   `outcomeUnknown`. `migrateStore` stops on that error; a re-run reads the page again and finds
 *   its sessions migrated or not.
 *
 * While the transaction runs, the server serves no other client: a page of 100 sessions holds it
 * for the time of 100 saves (well under the time of the 100 round trips it replaces).
 */
import { type BatchSaveEntry, type BatchSaveResult, prepareSaves, refusedBefore } from "../batch-save.js";
import { runSave, SAVE_SCRIPT, type SaveScriptInput, type SaveScriptReply, type ScriptedClient } from "./scripts.js";

/** One session's reply from the transaction: its script's parsed reply, or the error it replied with. */
export type SaveReplyOrError = { ok: true; reply: SaveScriptReply } | { ok: false; error: unknown };

/** What the batch needs of the store: `save` in its parts. */
export interface RedisBatchSaver<P> {
  /** `save` up to its script: the plan `finish` takes and the script's input. Throws what `save` throws before it. */
  prepare(entry: BatchSaveEntry): { plan: P; input: SaveScriptInput };
  /** Sends the scripts in one transaction through the store's `call` (`sendSaves`, errors mapped). */
  send(inputs: SaveScriptInput[]): Promise<SaveReplyOrError[]>;
  /** `save` after its script: the revision, or what `save` throws for the reply. */
  finish(plan: P, reply: SaveScriptReply): Promise<number>;
  /** `save` itself, for a session the script asked to serialize again (a context-using codec only). */
  saveAlone(entry: BatchSaveEntry): Promise<number>;
}

/** Saves `entries` as `save` would, one after the other, in one MULTI ... EXEC (see the module comment). */
export async function saveInOneTransaction<P>(
  entries: readonly BatchSaveEntry[],
  saver: RedisBatchSaver<P>,
): Promise<BatchSaveResult[]> {
  const prepared = prepareSaves(entries, (entry) => saver.prepare(entry));
  if (prepared.every((row): row is { error: unknown } => !("write" in row))) return prepared.map(refusedBefore);
  const inputs: SaveScriptInput[] = [];
  for (const row of prepared) if ("write" in row) inputs.push(row.write.input);
  const replies = await saver.send(inputs);
  // EXEC answered: from here on every session gets its own result, and nothing rejects the batch.
  const results: BatchSaveResult[] = [];
  const alone: number[] = [];
  let next = 0;
  for (const [index, row] of prepared.entries()) {
    if (!("write" in row)) {
      results.push(refusedBefore(row));
      continue;
    }
    const sent = replies[next++];
    if (!sent.ok) {
      results.push({ ok: false, error: sent.error });
      continue;
    }
    if (sent.reply.status === "codec-owner") {
      // Not written (the script refused the body). Only a context-using codec gets this reply,
      // and such a store offers no batch; should it come, the session is saved on its own below.
      results.push({ ok: false, error: undefined });
      alone.push(index);
      continue;
    }
    try {
      results.push({ ok: true, revision: await saver.finish(row.write.plan, sent.reply) });
    } catch (error) {
      results.push({ ok: false, error });
    }
  }
  for (const index of alone) {
    try {
      results[index] = { ok: true, revision: await saver.saveAlone(entries[index]) };
    } catch (error) {
      results[index] = { ok: false, error };
    }
  }
  return results;
}

/**
 * The SAVE scripts of `inputs` in one transaction, written in one round trip: MULTI, SCRIPT LOAD,
 * one EVALSHA per input, EXEC. Each input's arguments and reply are `runSave`'s own: it is given a
 * client whose `sbSave` queues the call and answers with that call's reply from EXEC. Rejects when
 * EXEC did not answer (nothing is known of the batch then); else each session's parsed reply, or
 * the error its script replied with (raw: the store maps it).
 */
export async function sendSaves(
  client: ScriptedClient,
  inputs: readonly SaveScriptInput[],
): Promise<SaveReplyOrError[]> {
  const transaction = client.multi();
  transaction.script("LOAD", SAVE_SCRIPT.lua);
  let answer!: (replies: [Error | null, unknown][]) => void;
  let fail!: (error: unknown) => void;
  const answered = new Promise<[Error | null, unknown][]>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  let queued = 0;
  const queueing = {
    sbSave(...args: (string | number | Buffer)[]): Promise<unknown> {
      // EXEC's replies: SCRIPT LOAD's first, then one per script in the order queued.
      const at = ++queued;
      transaction.evalsha(SAVE_SCRIPT.sha, SAVE_SCRIPT.numberOfKeys, ...args);
      return answered.then((replies) => {
        const reply = replies[at];
        if (reply === undefined) throw new Error(`EXEC answered ${replies.length} replies for ${queued + 1} commands`);
        if (reply[0] !== null) throw reply[0];
        return reply[1];
      });
    },
  };
  // The expiry index is scored from the time the page is sent, as a single save's from its own.
  const nowMs = Date.now();
  const parsed = inputs.map((input) => runSave(queueing, { ...input, nowMs }));
  // Handled at once: when EXEC fails, every session's promise rejects with it (the batch rejects below).
  const settled = Promise.allSettled(parsed);
  let replies: [Error | null, unknown][] | null;
  try {
    replies = await transaction.exec();
    // Only a WATCH makes EXEC answer nil (none is sent): nothing ran.
    if (replies === null) throw new Error("EXEC answered nil: the transaction did not run");
  } catch (error) {
    fail(error);
    await settled;
    throw error;
  }
  answer(replies);
  return (await settled).map((outcome) =>
    outcome.status === "fulfilled" ? { ok: true, reply: outcome.value } : { ok: false, error: outcome.reason },
  );
}
