/**
 * `migrateEncryption(store, { codec, messageCodec, mode })`: rewrites every stored row that is not
 * encrypted under the keyring's current key. `mode: "encrypt"` also encrypts plaintext rows (the
 * codecs must be in their `acceptPlaintext` window) and closes that window; `"reencrypt"` rewrites
 * rows under older keys (after a rotation), session rows whose envelope binds no revision
 * (version 1), session rows still in the text envelope (versions 1 and 2) where the store keeps
 * binary rows (version 3: the built-in stores), and session rows whose owner or title is still plaintext in the store's metadata
 * (the store writes them in their protected forms on that save), and reports plaintext rows as failures.
 *
 * Like `migrateStore`: page by page through `scan({ includeText: true })`, each session rewritten
 * by one compare-and-swap `save` on the revision read (a session the application saved meanwhile
 * is re-read and retried: the application's write, already encrypted under the current key, is
 * never overwritten), time to live kept, `dryRun`, progress, `signal`, `startAfter` to resume.
 * Each session's message log (the log under the session's id, or `logIds(id)`) is read through
 * the store and, when it held a plaintext or older-key message, replaced with compare-and-swap on
 * the version read (`replaceMessages({ expectedVersion })`): a message appended meanwhile makes
 * the replace fail and the log is read again, so nothing appended is ever dropped.
 *
 * The store must have been opened with these very codec objects (`openStore(url, { codec,
 * messageCodec })`): the first rewritten row is read back, and a store that wrote it some other
 * way stops the run.
 */
import type { BlobReencryptFailure, BlobReencryptOptions, BlobReencryptReport } from "../../blobs/chunked.js";
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import { type BulkAttempt, eachScanned, rescan, retryChanged } from "../bulk-pass.js";
import { MAX_SCAN_LIMIT } from "../common.js";
import { ConflictError, StoreUnavailableError } from "../errors.js";
import type { AgentSession } from "../../core/session.js";
import type { MessageLogSnapshot, ScanItem, SessionStore, StoredSession } from "../types.js";
import type { EncryptedMessageCodec, EncryptedSessionCodec, EncryptionReads } from "./codec.js";
import { encryptedKeyId, envelopeBindsRevision, isBinaryRow, isEncryptedText } from "./envelope.js";

export interface EncryptionMigrationOptions {
  /** The encrypting session codec the store was opened with. */
  codec: EncryptedSessionCodec;
  /** The encrypting message codec the store was opened with; without it message logs are not touched. */
  messageCodec?: EncryptedMessageCodec;
  /** `encrypt`: plaintext and older-key rows; `reencrypt`: older-key rows only. */
  mode: "encrypt" | "reencrypt";
  dryRun?: boolean;
  /** Sessions per scan page, 1..1000 (default 100). */
  batchSize?: number;
  startAfter?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, progress: EncryptionMigrationProgress) => void;
  /** The message logs that belong to a session (default: the log under the session's id). */
  logIds?: (sessionId: string) => readonly string[];
  /** Re-reads of a row the application keeps changing before giving up on it (default 10). */
  maxConflictRetries?: number;
  /** Failures listed in the report (all are counted). Default 1000. */
  maxReportedFailures?: number;
  /**
   * Also rewrite the store's blobs (`store.blobs`: chat files) sealed under an older key or stored
   * under an older key's owner and hash forms (`encrypt`: and blobs stored before the store
   * encrypted), after the sessions (default true; a store whose blobs are not encrypted has none
   * to rewrite). False: sessions and logs only.
   */
  blobs?: boolean;
  /** Resume the blobs after this cursor (the report's `blobs.cursor`). */
  blobsStartAfter?: string;
  onBlobProgress?: (progress: { scanned: number; rewritten: number; failed: number; cursor: string }) => void;
}

/** What the blob pass did (`report.blobs`). */
export interface EncryptionMigrationBlobs {
  /** Blobs looked at. */
  scanned: number;
  /** Blobs rewritten under the current key (dry run: that would be). */
  rewritten: number;
  /** Blobs already current. */
  current: number;
  /** Blobs that did not open (a changed chunk, a key the keyring lacks), left as they are: see `failed`. */
  failed: number;
  /** Blobs deleted meanwhile. */
  vanished: number;
  /** Where the blob pass stopped: `blobsStartAfter` for the next run. */
  cursor?: string;
}

export interface EncryptionMigrationProgress {
  done: number;
  rewritten: number;
  failed: number;
  /** Every session up to and including this id is done: pass it as `startAfter` to resume. */
  cursor: string;
}

export interface EncryptionMigrationFailure {
  /** The session's id; for a blob, `"blob"`. */
  id: string;
  /** Set when the failure is a blob (a chat file): its hash, and its owner when it has one. */
  blob?: { hash?: string; owner?: string };
  /** Set when the failure is the session's message log. */
  logId?: string;
  message: string;
  code?: string;
}

export interface EncryptionMigrationReport {
  mode: "encrypt" | "reencrypt";
  dryRun: boolean;
  scanned: number;
  /**
   * Sessions found in plaintext / under an older key, in an envelope that binds no revision
   * (version 1, written before revisions were bound), in the text envelope where the store keeps
   * binary rows (written before rows were kept as bytes), or with their owner or title still in
   * plaintext in the store's metadata (written before owners and titles were protected), before the run.
   */
  plaintext: number;
  stale: number;
  /** Sessions rewritten under the current key (dry run: that would be). */
  rewritten: number;
  /** Sessions already under the current key: not written. */
  current: number;
  /** Message logs read, and those rewritten (dry run: that would be); messages in rewritten logs. */
  logs: { read: number; rewritten: number; messages: number };
  /** The store's blobs (`store.blobs`), when it has any and `blobs` was not false. */
  blobs?: EncryptionMigrationBlobs;
  failed: EncryptionMigrationFailure[];
  failedCount: number;
  vanished: number;
  conflicts: number;
  aborted: boolean;
  cursor?: string;
  /** The key id every rewritten row is now under. */
  currentKey: string;
  durationMs: number;
}

function delta(after: EncryptionReads, before: EncryptionReads): EncryptionReads {
  return {
    plaintext: after.plaintext - before.plaintext,
    stale: after.stale - before.stale,
    current: after.current - before.current,
  };
}

export async function migrateEncryption(
  store: SessionStore,
  options: EncryptionMigrationOptions,
): Promise<EncryptionMigrationReport> {
  const { codec, messageCodec, mode } = options;
  if (!codec?.encryption)
    throw new ConfigurationError(
      "migrateEncryption needs `codec`: the encrypting session codec the store was opened with",
      "openStore(url, encryptionCodecs({ keyring, store })) and pass the same codec objects",
    );
  if (mode !== "encrypt" && mode !== "reencrypt")
    throw new ConfigurationError(
      `migrateEncryption: mode must be "encrypt" or "reencrypt"`,
      'pass mode: "encrypt" (plaintext rows too) or "reencrypt" (after a key rotation)',
    );
  if (
    mode === "encrypt" &&
    !options.dryRun &&
    (!codec.encryption.acceptPlaintext || (messageCodec && !messageCodec.encryption.acceptPlaintext))
  ) {
    throw new ConfigurationError(
      "encrypting a store's plaintext rows needs codecs opened with `acceptPlaintext: true`",
      "open the store with encryptionCodecs({ keyring, store, acceptPlaintext: true }) for the migration; remove it afterwards",
    );
  }
  const batchSize = options.batchSize ?? 100;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_SCAN_LIMIT)
    throw new ConfigurationError(
      `batchSize must be an integer from 1 to ${MAX_SCAN_LIMIT}`,
      "pass a page size such as 100",
    );
  const started = performance.now();
  const current = codec.encryption.keyring.current;
  const maxRetries = options.maxConflictRetries ?? 10;
  const maxReported = options.maxReportedFailures ?? 1000;
  const dryRun = options.dryRun === true;
  const report: EncryptionMigrationReport = {
    mode,
    dryRun,
    scanned: 0,
    plaintext: 0,
    stale: 0,
    rewritten: 0,
    current: 0,
    logs: { read: 0, rewritten: 0, messages: 0 },
    failed: [],
    failedCount: 0,
    vanished: 0,
    conflicts: 0,
    aborted: false,
    currentKey: current,
    durationMs: 0,
  };
  let verified = false;
  /** Whether the store keeps binary rows: known once the first rewritten row is read back. */
  let storesBinary: boolean | undefined;
  const fail = (f: EncryptionMigrationFailure) => {
    report.failedCount++;
    if (report.failed.length < maxReported) report.failed.push(f);
  };
  const describe = (error: unknown) => ({
    message: error instanceof Error ? error.message : String(error),
    ...(error instanceof StatebagError ? { code: error.code } : {}),
  });

  const changed: BulkAttempt<void> = { kind: "changed" };
  const finished: BulkAttempt<void> = { kind: "done", value: undefined };
  const retrying = <I>(reread: (item: I) => Promise<I | undefined>) => ({
    maxRetries,
    reread,
    onChange: () => report.conflicts++,
  });

  const migrateSession = async (first: ScanItem, pageCursor: string | undefined): Promise<void> => {
    let counted = false;
    /** One attempt: classify the row, load it through the store and write it back with compare-and-swap. */
    const attempt = async (item: ScanItem, attemptIndex: number): Promise<BulkAttempt<void>> => {
      const text = item.text;
      if (typeof text !== "string") {
        fail({ id: item.id, message: "the store returned no text for this session", code: "store" });
        return finished;
      }
      const keyId = encryptedKeyId(text);
      const plaintext = !isEncryptedText(text);
      // Under the current key and bound to its revision (an envelope of version 1 binds none), in
      // the form the store keeps (binary rows, unless the first row rewritten came back as text),
      // with its owner and title in their protected forms (the store says when they are still plaintext).
      const done =
        keyId === current &&
        envelopeBindsRevision(text) === true &&
        (storesBinary === false || isBinaryRow(text)) &&
        item.plaintextMeta !== true;
      if (!counted) {
        counted = true;
        if (plaintext) report.plaintext++;
        else if (!done) report.stale++;
      }
      if (done) {
        if (attemptIndex === 0) report.current++;
        else report.rewritten++; // the application rewrote it under the current key meanwhile
        return finished;
      }
      if (plaintext && mode === "reencrypt") {
        fail({ id: item.id, message: "the session is stored as plaintext", code: "decryption-failed" });
        return finished;
      }
      let session: AgentSession | undefined;
      if (!(dryRun && plaintext)) {
        // Through store.get: the store passes the row's owner to the codec (a scan does not know it).
        let loaded: StoredSession | undefined;
        try {
          loaded = await store.get(item.id);
        } catch (error) {
          if (error instanceof StoreUnavailableError) throw error;
          fail({ id: item.id, ...describe(error) });
          return finished;
        }
        if (loaded === undefined) {
          report.vanished++;
          return finished;
        }
        // Saved since the scan: look at what is stored now.
        if (loaded.revision !== item.revision) return changed;
        session = loaded.session;
      }
      if (dryRun) {
        report.rewritten++;
        return finished;
      }
      try {
        await store.save(session!, {
          expectedRevision: item.revision,
          ...(item.ttlMs !== undefined ? { ttlMs: item.ttlMs } : {}),
        });
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error;
        if (error instanceof ConflictError) return changed;
        fail({ id: item.id, ...describe(error) });
        return finished;
      }
      report.rewritten++;
      if (!verified) {
        verified = true;
        const back = await rescan(store, item.id, pageCursor, batchSize);
        // A store that keeps text (a store of your own calling `serialize`) writes the text envelope:
        // that is its current form.
        if (back?.text !== undefined) storesBinary = isBinaryRow(back.text);
        if (back?.text !== undefined && encryptedKeyId(back.text) !== current) {
          throw new ConfigurationError(
            `the store did not write the session ${JSON.stringify(item.id).slice(0, 200)} under the key ${current}: it was not opened with this codec`,
            "open the store with the same codec objects you pass to migrateEncryption: openStore(url, { codec, messageCodec })",
          );
        }
      }
      return finished;
    };
    const outcome = await retryChanged(
      first,
      retrying((item: ScanItem) => rescan(store, item.id, pageCursor, batchSize)),
      attempt,
    );
    if (outcome.kind === "vanished") report.vanished++;
    else if (outcome.kind === "gave-up")
      fail({
        id: outcome.item.id,
        message: `the session changed ${outcome.attempts} times while being rewritten; left for the next run`,
        code: "conflict",
      });
  };

  const migrateLog = async (sessionId: string, logId: string): Promise<void> => {
    const codecOfLog = messageCodec!;
    /** One attempt: read the log, and replace it with compare-and-swap when it held an older form. */
    const attempt = async (_: string, attemptIndex: number): Promise<BulkAttempt<void>> => {
      const before = { ...codecOfLog.encryption.reads };
      let snapshot: MessageLogSnapshot;
      try {
        snapshot = await store.messages.readMessages(logId);
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error;
        fail({ id: sessionId, logId, ...describe(error) });
        return finished;
      }
      if (attemptIndex === 0) report.logs.read++;
      const seen = delta(codecOfLog.encryption.reads, before);
      // Concurrent reads through the same codec can only add to the counts: at worst a log is rewritten needlessly.
      if (snapshot.messages.length === 0 || (seen.plaintext === 0 && seen.stale === 0)) return finished;
      if (seen.plaintext > 0 && mode === "reencrypt") {
        fail({ id: sessionId, logId, message: "the message log holds plaintext messages", code: "decryption-failed" });
        return finished;
      }
      if (!dryRun) {
        try {
          await store.messages.replaceMessages(logId, snapshot.messages, { expectedVersion: snapshot.version });
        } catch (error) {
          if (error instanceof StoreUnavailableError) throw error;
          if (error instanceof ConflictError) return changed;
          fail({ id: sessionId, logId, ...describe(error) });
          return finished;
        }
      }
      report.logs.rewritten++;
      report.logs.messages += snapshot.messages.length;
      return finished;
    };
    // Each attempt reads the log itself: a re-read is the next attempt.
    const outcome = await retryChanged(
      logId,
      retrying(async (id: string) => id),
      attempt,
    );
    if (outcome.kind === "gave-up")
      fail({
        id: sessionId,
        logId,
        message: `the log changed ${outcome.attempts} times while being rewritten; left for the next run`,
        code: "conflict",
      });
  };

  const end = await eachScanned(
    store,
    { batchSize, startAfter: options.startAfter, signal: options.signal },
    async (item, pageCursor) => {
      report.scanned++;
      await migrateSession(item, pageCursor);
      if (messageCodec) for (const logId of options.logIds?.(item.id) ?? [item.id]) await migrateLog(item.id, logId);
      options.onProgress?.(report.scanned, {
        done: report.scanned,
        rewritten: report.rewritten,
        failed: report.failedCount,
        cursor: item.id,
      });
    },
  );
  report.aborted = end.aborted;
  const cursor = end.cursor;
  if (cursor !== undefined) report.cursor = cursor;
  if (!end.aborted && options.blobs !== false && store.blobs !== undefined) {
    const blobs = await reencryptBlobs(store, {
      dryRun,
      ...(mode === "encrypt" ? { acceptPlaintext: true } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.blobsStartAfter !== undefined ? { startAfter: options.blobsStartAfter } : {}),
      ...(options.onBlobProgress ? { onProgress: options.onBlobProgress } : {}),
      maxRetries,
      maxReportedFailures: Math.max(0, maxReported - report.failed.length),
    });
    report.blobs = {
      scanned: blobs.scanned,
      rewritten: blobs.rewritten,
      current: blobs.current,
      failed: blobs.failed,
      vanished: blobs.vanished,
      ...(blobs.cursor !== undefined ? { cursor: blobs.cursor } : {}),
    };
    for (const failure of blobs.failures) fail(blobFailure(failure));
    report.failedCount += blobs.failed - blobs.failures.length;
    report.conflicts += blobs.conflicts;
    if (blobs.aborted) report.aborted = true;
  }
  report.durationMs = Math.round(performance.now() - started);
  return report;
}

interface ReencryptingBlobs {
  reencrypt(options: BlobReencryptOptions): Promise<BlobReencryptReport>;
}

/** The blob pass: `store.blobs.reencrypt` (the built-in blob stores); a blob store without it is one failure. */
async function reencryptBlobs(store: SessionStore, options: BlobReencryptOptions): Promise<BlobReencryptReport> {
  const blobs = store.blobs as Partial<ReencryptingBlobs> | undefined;
  if (typeof blobs?.reencrypt === "function") return blobs.reencrypt(options);
  return {
    scanned: 0,
    rewritten: 0,
    current: 0,
    vanished: 0,
    conflicts: 0,
    failed: 1,
    failures: [
      {
        message:
          "the store's blob store cannot re-encrypt its blobs (it is not a built-in one, or it is wrapped by one that hides reencrypt)",
        code: "configuration",
      },
    ],
    aborted: false,
  };
}

function blobFailure(failure: BlobReencryptFailure): EncryptionMigrationFailure {
  return {
    id: "blob",
    blob: {
      ...(failure.hash !== undefined ? { hash: failure.hash } : {}),
      ...(failure.owner !== undefined ? { owner: failure.owner } : {}),
    },
    message: failure.message,
    ...(failure.code !== undefined ? { code: failure.code } : {}),
  };
}
