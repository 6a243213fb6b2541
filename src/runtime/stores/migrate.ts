/**
 * `migrateStore(store, options)`: brings every stored session to the latest version of its types,
 * so old documents do not wait for their next save (loading migrates lazily anyway).
 *
 * For each session, page by page through `store.scan({ includeText: true })`:
 * 1. read its stored text and revision (nothing else is held: memory stays flat whatever the
 *    store's size, about one page of texts);
 * 2. load it exactly as `store.get` would (`deserializeSession`: safe parse, envelope check,
 *    migrations, validation of every tagged value), with the registry given;
 * 3. if a migration changed something, save the result with compare-and-swap on the revision read
 *    (`store.save(session, { expectedRevision })`, which validates again and keeps the session's
 *    remaining time to live). If the application saved the session meanwhile, the save is refused
 *    and the session is re-read and migrated again from its new revision.
 *
 * On a store that saves a batch in one unit of work (SQLite and PostgreSQL: one transaction per
 * page, so one commit per page instead of one per session; see batch-save.ts), step 3 is done for the whole
 * page at once, and is the same save for every session in it: validated and serialized by the
 * store's codec, compare-and-swap on its own revision, each session refused alone (a conflict is
 * counted, re-read and retried on its own; any other refusal fails that session only). Progress is
 * then reported for the page's sessions, in order, once the batch is written. A traced store, a
 * dry run and the other stores (memory, Redis) go one session at a time.
 *
 * A session that does not load or does not migrate is left exactly as stored and reported with
 * its id and the error. `dryRun` does steps 1-2 only and reports what would change.
 *
 * Why an interrupted run (a crash, SIGKILL, a deploy) loses nothing and can simply be run again:
 * - each session is written by one `save`, a single atomic compare-and-swap write in every backend
 *   (or by one row of a batch: a transaction holding complete rows only, committed or not as a
 *   whole): after a kill it is either at its old revision with its old text, or at a new revision
 *   with the complete migrated text; never in between;
 * - a save only ever replaces the revision that was read, so a migrated copy of stale data never
 *   overwrites an application write (the CAS refuses it and the session is re-read);
 * - migrations run from the version found in the stored value: a value already at the latest
 *   version is returned as it is (`registry.upgrade` applies no step), so a session migrated by an
 *   earlier, killed run is reported `unchanged` by the next one and never migrated twice;
 * - `unchanged` sessions are never written (no revision bump, no wasted writes on a re-run).
 * A re-run therefore converges: every session ends at the latest versions exactly once.
 * `startAfter` (the `cursor` of the last progress report) skips what a killed run already did: a
 * session is reported only once its save (its batch's) is done.
 *
 * An encrypted store (`encryptionCodecs`) stores envelopes, not documents: give `readText`, which
 * returns each session's decrypted text with the revision it was read at (e.g. through `store.get`
 * with an inner codec that hands over the plaintext, as `statebag migrate` does); the
 * compare-and-swap save is on that revision, and `save` encrypts through the store's codec.
 * Without `readText`, an encrypted row fails with `decryption-failed` and is left as stored.
 */
import { StatebagError } from "../core/errors.js";
import type { TypeRegistry } from "../registry/registry.js";
import { defaultRegistry } from "../validation/default-registry.js";
import { SessionValidationError, deserializeSession, type MigratedValue } from "../persistence/serialization.js";
import type { JsonLimits } from "../json/safe-json.js";
import type { AgentSession } from "../core/session.js";
import { StoredSessionIdError } from "./codec.js";
import { type BatchSaveResult, type SaveBatch, saveBatchOf } from "./batch-save.js";
import { type BulkAttempt, eachScanned, rescan, retryChanged } from "./bulk-pass.js";
import { MAX_SCAN_LIMIT } from "./common.js";
import { ConflictError, StoreUnavailableError } from "./errors.js";
import { isEncryptedText } from "./encryption/envelope.js";
import type { SaveOptions, ScanItem, SessionStore } from "./types.js";
import { tracingOf, type MigrationProbe, type StoreTracing } from "../core/tracing-hooks.js";
import { pointerSegment } from "../core/json.js";
import type { ChatMessage } from "../core/messages.js";
import { type BlobWriter, blobWriter, offloadDataContents, sha256Hex } from "../blobs/references.js";

export interface MigrateStoreOptions {
  /**
   * The types and migrations to load with (default `defaultRegistry()`). Open the store with the
   * same registry (`openStore(url, { codec: defaultSessionCodec({ registry }) })`): its codec
   * validates what `save` writes.
   */
  registry?: TypeRegistry;
  /** Load every session and report, write nothing. */
  dryRun?: boolean;
  /**
   * Sessions per `scan` page, 1..1000 (default 100). Memory use is about one page of stored texts
   * (and, on a store that saves in batches, the migrated sessions of up to 100 of them).
   */
  batchSize?: number;
  /**
   * Called after each session, in scan order, once it is done (saved, on a store that saves in
   * batches: after its batch). `total` is unknown (stores do not count): always undefined.
   */
  onProgress?: (done: number, total: number | undefined, progress: MigrateStoreProgress) => void;
  /**
   * Stops before the next session (once the sessions already read are saved: their batch is
   * written); the report has `aborted: true` and the `cursor` to resume from.
   */
  signal?: AbortSignal;
  /** Unknown `$type`s and newer versions fail the session instead of being kept verbatim (default false). */
  strict?: boolean;
  /** Parse limits for stored texts (default: `parseJson`'s). */
  limits?: JsonLimits;
  /** Start after this session id: a `cursor` from an earlier run's progress or report. */
  startAfter?: string;
  /** Re-reads of a session the application keeps changing before giving up on it (default 10). */
  maxConflictRetries?: number;
  /** Failures listed in the report (all are counted in `failedCount`). Default 1000. */
  maxReportedFailures?: number;
  /**
   * The text to migrate for a scanned session, in place of the scanned text: for an encrypted
   * store, the decrypted text and the revision it was read at (the save is compare-and-swap on
   * that revision). Undefined: the session is gone. A `StatebagError` fails the session (left as
   * stored); any other error stops the run.
   */
  readText?: (item: ScanItem) => Promise<ScanItem | undefined>;
  /**
   * Also move inline files (base64 `data` contents of at least `thresholdBytes`, default 4096, in
   * any history of the session's state bag) into the store's blob store (`store.blobs`, under the
   * session's owner) and keep references in their place. Puts are idempotent (content-addressed),
   * so an interrupted run simply runs again; a dry run counts them and puts nothing.
   */
  offloadBlobs?: { thresholdBytes?: number };
}

export interface MigrateStoreProgress {
  done: number;
  migrated: number;
  unchanged: number;
  failed: number;
  /** Every session up to and including this id is done: pass it as `startAfter` to resume. */
  cursor: string;
}

/** A session that could not be migrated (it is left exactly as stored). */
export interface MigrateStoreFailure {
  id: string;
  /** The revision it was read at (and is still at, unless the application saved it since). */
  revision: number;
  message: string;
  /** JSON pointer of the first problem in the stored document, when there is one. */
  pointer?: string;
  /** The problem or error code (`old-version`, `migration-failed`, `schema`, `json`, `conflict`, ...). */
  code?: string;
}

/**
 * Provider state values by type and version, before -> after (`from === to`: already current).
 * Values kept verbatim (unknown types, newer versions) count under their own version.
 */
export interface StateVersionCount {
  type: string;
  from: number;
  toType: string;
  to: number;
  /** State values (one per session and key) with this transition. */
  count: number;
}

export interface MigrateStoreReport {
  dryRun: boolean;
  /** Sessions read. */
  scanned: number;
  /** Sessions rewritten at the latest versions (dry run: that would be). */
  migrated: number;
  /** Sessions already current: not written. */
  unchanged: number;
  /** Sessions that could not be migrated, left as stored (at most `maxReportedFailures` listed). */
  failed: MigrateStoreFailure[];
  failedCount: number;
  /** Sessions deleted or expired between the scan and the save. */
  vanished: number;
  /** Saves refused because the application saved the session meanwhile (each was re-read and retried). */
  conflicts: number;
  /** Sessions holding values this registry does not know (kept verbatim, not an error unless strict). */
  preserved: number;
  /** Provider state values by type and version, before -> after. */
  states: StateVersionCount[];
  /** Every migrated value, nested ones included (message contents, ...), by type and version. */
  values: StateVersionCount[];
  /** True when `signal` stopped the run before the end. */
  aborted: boolean;
  /** With `offloadBlobs`: inline files moved into the blob store (dry run: that would be), and their bytes. */
  offloaded?: { contents: number; bytes: number };
  /** The last session done: `startAfter` for a resumed run (absent when none was read). */
  cursor?: string;
  durationMs: number;
}

/** A session a bulk migration was asked to migrate but the store would not take. */
export class BulkMigrationError extends StatebagError {
  constructor(message: string, hint: string, cause?: unknown) {
    super("bulk-migration", message, { hint, cause });
  }
}

type Outcome = "migrated" | "unchanged" | "failed" | "vanished";

interface Plan {
  session: AgentSession;
  changed: boolean;
  migrated: MigratedValue[];
  preserved: boolean;
}

/** A session loaded and migrated, to be saved with compare-and-swap on the revision it was read at. */
interface PendingSave {
  item: ScanItem;
  plan: Plan;
  /** With `offloadBlobs`: what was moved into the blob store (counted once the save is done). */
  moved?: { contents: number; bytes: number };
}

/** One attempt up to its save: finished (nothing to write, or failed), or a save to make. */
type Prepared = { kind: "done"; value: Outcome } | { kind: "save"; save: PendingSave };

/** A session visited on a batched pass, waiting for its page's batch save (in scan order). */
interface BatchEntry {
  item: ScanItem;
  pageCursor: string | undefined;
  prepared: Prepared;
  /** Its failures, reported when its turn comes (so the report lists them in scan order). */
  failures: MigrateStoreFailure[];
}

/**
 * The most sessions a batched pass holds before saving them: one page at the default batch size.
 * Bounds the memory of migrated sessions and how long one transaction holds its locks (SQLite's
 * write lock, PostgreSQL's row locks).
 */
const MAX_BATCH = 100;

/** Upgrades every stored session to the latest versions of its types. See the module comment. */
export async function migrateStore(
  store: SessionStore,
  options: MigrateStoreOptions = {},
): Promise<MigrateStoreReport> {
  const batchSize = options.batchSize ?? 100;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_SCAN_LIMIT) {
    throw new BulkMigrationError(
      `batchSize must be an integer from 1 to ${MAX_SCAN_LIMIT}, got ${JSON.stringify(options.batchSize)}`,
      "pass a page size such as 100",
    );
  }
  const migration = new StoreMigration(store, options, batchSize);
  const tracing = tracingOf(store);
  if (tracing === undefined) return migration.run();
  migration.tracing = tracing;
  return tracing.migrateStore(() => migration.run());
}

/** One `migrateStore` run: its options, its running report and the steps of one session. */
class StoreMigration {
  private readonly started = performance.now();
  private readonly registry: TypeRegistry;
  private readonly dryRun: boolean;
  private readonly maxRetries: number;
  private readonly maxReported: number;
  private readonly states = new VersionTally();
  private readonly values = new VersionTally();
  private readonly report: MigrateStoreReport;
  /** The store's tracing, when it is traced, and the span of the session being migrated. */
  tracing?: StoreTracing;
  private probe?: MigrationProbe;

  constructor(
    private readonly store: SessionStore,
    private readonly options: MigrateStoreOptions,
    private readonly batchSize: number,
  ) {
    this.registry = options.registry ?? defaultRegistry();
    this.dryRun = options.dryRun === true;
    this.maxRetries = options.maxConflictRetries ?? 10;
    this.maxReported = options.maxReportedFailures ?? 1000;
    this.report = {
      dryRun: this.dryRun,
      scanned: 0,
      migrated: 0,
      unchanged: 0,
      failed: [],
      failedCount: 0,
      vanished: 0,
      conflicts: 0,
      preserved: 0,
      states: [],
      values: [],
      aborted: false,
      durationMs: 0,
    };
  }

  /** Pages through the store, one session at a time, and returns the finished report. */
  async run(): Promise<MigrateStoreReport> {
    const { report, options } = this;
    if (options.offloadBlobs) {
      if (!this.store.blobs)
        throw new BulkMigrationError(
          `the ${this.store.kind} store has no blob store to move inline files into`,
          "open it with a blob store (a built-in store has one; ?blobs=<url> picks a folder or a bucket)",
        );
      report.offloaded = { contents: 0, bytes: 0 };
    }
    const pass = { batchSize: this.batchSize, startAfter: options.startAfter, signal: options.signal };
    // A store that saves a batch in one unit of work (SQLite: one transaction) gets each page's
    // saves at once. Not on a traced store: each session's span holds its own save.
    const saveBatch = this.dryRun || this.tracing !== undefined ? undefined : saveBatchOf(this.store);
    const end =
      saveBatch === undefined
        ? await eachScanned(this.store, pass, async (item, pageCursor) => {
            const outcome =
              this.tracing === undefined
                ? await this.migrateOne(item, pageCursor)
                : await this.tracing.migrateSession(item.id, (probe) => {
                    this.probe = probe;
                    return this.migrateOne(item, pageCursor);
                  });
            this.finished(item, outcome);
          })
        : await eachScanned(
            this.store,
            pass,
            (item, pageCursor) => this.visitBatched(item, pageCursor, saveBatch),
            () => this.flush(saveBatch),
          );
    report.aborted = end.aborted;
    if (end.cursor !== undefined) report.cursor = end.cursor;
    report.states = this.states.sorted();
    report.values = this.values.sorted();
    report.durationMs = Math.round(performance.now() - this.started);
    return report;
  }

  /** Counts a session done and reports progress. */
  private finished(item: ScanItem, outcome: Outcome): void {
    const { report } = this;
    report.scanned++;
    if (outcome === "vanished") report.vanished++;
    else if (outcome !== "failed") report[outcome]++;
    this.options.onProgress?.(report.scanned, undefined, {
      done: report.scanned,
      migrated: report.migrated,
      unchanged: report.unchanged,
      failed: report.failedCount,
      cursor: item.id,
    });
  }

  /** The sessions visited on a batched pass and not yet saved, in scan order. */
  private batch: BatchEntry[] = [];
  /** While a batched visit runs: where its failures go until its turn comes. */
  private collecting?: MigrateStoreFailure[];

  /** A batched pass: loads and migrates the session, and leaves its save to the page's batch. */
  private async visitBatched(item: ScanItem, pageCursor: string | undefined, saveBatch: SaveBatch): Promise<void> {
    const failures: MigrateStoreFailure[] = [];
    this.collecting = failures;
    let prepared: Prepared;
    try {
      prepared = await this.prepare(item, 0);
    } finally {
      this.collecting = undefined;
    }
    this.batch.push({ item, pageCursor, prepared, failures });
    if (this.batch.length >= MAX_BATCH) await this.flush(saveBatch);
  }

  /**
   * Saves the batch's migrated sessions in one unit of work, then finishes every visited session
   * in scan order exactly as the one-at-a-time pass would: a saved one is migrated; one the
   * compare-and-swap refused is counted as a conflict, re-read and retried on its own; one refused
   * otherwise fails. When the unit itself fails (nothing of it written), each session is saved on
   * its own instead; a store that is down stops the run, as a save would.
   */
  private async flush(saveBatch: SaveBatch): Promise<void> {
    const batch = this.batch;
    if (batch.length === 0) return;
    this.batch = [];
    const saves: PendingSave[] = [];
    for (const entry of batch) if (entry.prepared.kind === "save") saves.push(entry.prepared.save);
    let results: BatchSaveResult[] | undefined;
    if (saves.length > 0) {
      try {
        results = await saveBatch(
          saves.map((save) => ({ session: save.plan.session, options: saveOptions(save.item) })),
        );
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error; // the store is down: stop; a re-run resumes
        results = undefined;
      }
    }
    let next = 0;
    for (const entry of batch) {
      for (const failure of entry.failures) this.addFailure(failure);
      let outcome: Outcome;
      if (entry.prepared.kind === "done") outcome = entry.prepared.value;
      else {
        const save = entry.prepared.save;
        const result = results?.[next++];
        outcome = await this.migrateOne(entry.item, entry.pageCursor, () =>
          result === undefined ? this.save(save) : Promise.resolve(this.saved(save, result)),
        );
      }
      this.finished(entry.item, outcome);
    }
  }

  /**
   * Loads, migrates and saves one session, re-reading it after each refused save. `firstAttempt`:
   * the first attempt's result when it was made already (a batch save).
   */
  private async migrateOne(
    first: ScanItem,
    pageCursor: string | undefined,
    firstAttempt?: () => Promise<BulkAttempt<Outcome>>,
  ): Promise<Outcome> {
    const outcome = await retryChanged(
      first,
      {
        maxRetries: this.maxRetries,
        reread: (item) => rescan(this.store, item.id, pageCursor, this.batchSize),
        onChange: () => this.report.conflicts++,
      },
      (scanned, attemptIndex) =>
        attemptIndex === 0 && firstAttempt !== undefined ? firstAttempt() : this.attempt(scanned, attemptIndex),
    );
    if (outcome.kind === "done") return outcome.value;
    if (outcome.kind === "vanished") return "vanished";
    this.fail(outcome.item, {
      message: `the session changed ${outcome.attempts} times while being migrated; left for the next run`,
      code: "conflict",
    });
    return "failed";
  }

  /** One attempt: read (through `readText` when given), load, migrate, save with compare-and-swap. */
  private async attempt(scanned: ScanItem, attemptIndex: number): Promise<BulkAttempt<Outcome>> {
    const prepared = await this.prepare(scanned, attemptIndex);
    return prepared.kind === "done" ? prepared : this.save(prepared.save);
  }

  /** An attempt up to its save: read, load, migrate (and move inline files), or the failure. */
  private async prepare(scanned: ScanItem, attemptIndex: number): Promise<Prepared> {
    const done = (value: Outcome): Prepared => ({ kind: "done", value });
    this.probe?.attempt(attemptIndex + 1);
    let item = scanned;
    if (this.options.readText) {
      let read: ScanItem | undefined;
      try {
        read = await this.options.readText(scanned);
      } catch (error) {
        if (error instanceof StoreUnavailableError || !(error instanceof StatebagError)) throw error;
        this.fail(scanned, { message: error.message, code: error.code });
        return done("failed");
      }
      if (read === undefined) return done("vanished");
      // The scan's time to live: a readText need not carry it.
      item = {
        ...read,
        ...(scanned.ttlMs !== undefined && read.ttlMs === undefined ? { ttlMs: scanned.ttlMs } : {}),
      };
    }
    if (typeof item.text !== "string") {
      this.fail(item, {
        message: `the store returned no text for session ${JSON.stringify(item.id)}`,
        code: "store",
      });
      return done("failed");
    }
    const plan = this.plan(item, item.text);
    if (plan === undefined) return done("failed");
    let moved: { contents: number; bytes: number } | undefined;
    if (this.options.offloadBlobs) {
      try {
        moved = await this.offload(plan.session, item.meta?.owner);
      } catch (error) {
        if (error instanceof StoreUnavailableError || !(error instanceof StatebagError)) throw error;
        this.fail(item, { message: error.message, code: error.code });
        return done("failed");
      }
      if (moved.contents > 0) plan.changed = true;
    }
    if (!plan.changed || this.dryRun) {
      this.record(plan);
      this.countMoved(moved);
      return done(plan.changed ? "migrated" : "unchanged");
    }
    return { kind: "save", save: { item, plan, ...(moved ? { moved } : {}) } };
  }

  /** Saves a migrated session on its own, with compare-and-swap on the revision it was read at. */
  private async save(save: PendingSave): Promise<BulkAttempt<Outcome>> {
    let result: BatchSaveResult;
    try {
      result = { ok: true, revision: await this.store.save(save.plan.session, saveOptions(save.item)) };
    } catch (error) {
      result = { ok: false, error };
    }
    return this.saved(save, result);
  }

  /** What a save's result (alone or in a batch) makes of the session. */
  private saved(save: PendingSave, result: BatchSaveResult): BulkAttempt<Outcome> {
    if (result.ok) {
      this.record(save.plan);
      this.countMoved(save.moved);
      return { kind: "done", value: "migrated" };
    }
    const { error } = result;
    if (error instanceof StoreUnavailableError) throw error; // the store is down: stop; a re-run resumes
    if (error instanceof ConflictError) return { kind: "changed" };
    this.fail(save.item, {
      message: `the store refused the migrated session: ${error instanceof Error ? error.message : String(error)}`,
      code: error instanceof StatebagError ? error.code : "save",
    });
    return { kind: "done", value: "failed" };
  }

  private countMoved(moved: { contents: number; bytes: number } | undefined): void {
    if (moved && this.report.offloaded) {
      this.report.offloaded.contents += moved.contents;
      this.report.offloaded.bytes += moved.bytes;
    }
  }

  /**
   * Moves the session's inline files into the blob store, in place (dry run: counts them, puts
   * nothing): every `messages` array of a state bag value (the histories) goes through
   * `offloadDataContents`.
   */
  private async offload(
    session: AgentSession,
    owner: string | undefined,
  ): Promise<{ contents: number; bytes: number }> {
    const thresholdBytes = this.options.offloadBlobs?.thresholdBytes ?? 4096;
    const writer: BlobWriter = this.dryRun
      ? { write: async (bytes) => sha256Hex(bytes) }
      : blobWriter(this.store.blobs!, owner);
    let contents = 0;
    let bytes = 0;
    for (const key of Object.keys(session.stateBag)) {
      const value = session.stateBag[key] as unknown as { messages?: unknown };
      if (!Array.isArray(value?.messages)) continue;
      const result = await offloadDataContents(value.messages as ChatMessage[], writer, { thresholdBytes });
      if (result.offloaded === 0) continue;
      contents += result.offloaded;
      bytes += result.bytes;
      (value as { messages: ChatMessage[] }).messages = result.messages;
    }
    return { contents, bytes };
  }

  /** Loads one stored text the way `store.get` would, and says whether migrations changed it. */
  private plan(item: { id: string; revision: number }, text: string): Plan | undefined {
    let migrated: MigratedValue[] = [];
    let preserved = false;
    let session: AgentSession;
    if (isEncryptedText(text)) {
      this.fail(item, {
        message:
          "the session is encrypted: migrate it through the store's encrypting codec (the readText option; statebag migrate --keyring <file>)",
        code: "decryption-failed",
      });
      return undefined;
    }
    try {
      session = deserializeSession(text, {
        registry: this.registry,
        strict: this.options.strict,
        limits: this.options.limits,
        onMigrated: (m) => (migrated = m),
        onPreserved: () => (preserved = true),
      });
    } catch (error) {
      if (error instanceof SessionValidationError) {
        const first = error.problems[0];
        this.fail(item, {
          message: first ? first.message : error.message,
          ...(first ? { pointer: first.pointer, code: first.code } : {}),
        });
        return undefined;
      }
      this.fail(item, {
        message: error instanceof Error ? error.message : String(error),
        code: error instanceof StatebagError ? error.code : undefined,
      });
      return undefined;
    }
    if (session.id !== item.id) {
      // The same rule and wording as store.get (loadStoredSession).
      const problem = new StoredSessionIdError(item.id, session.id).toProblem();
      this.fail(item, { message: problem.message, pointer: problem.pointer, code: problem.code });
      return undefined;
    }
    // (When the envelope's formatVersion is raised, an older envelope will count as a change too.)
    this.probe?.loaded(text, session, migrated.length);
    return { session, changed: migrated.length > 0, migrated, preserved };
  }

  /** Counts a loaded session's values by type and version transition. */
  private record(plan: Plan): void {
    const before = new Map<string, MigratedValue>();
    for (const value of plan.migrated) {
      this.values.add(value.fromType, value.from, value.toType, value.to);
      before.set(value.pointer, value);
    }
    for (const key of Object.keys(plan.session.stateBag)) {
      const value = plan.session.stateBag[key];
      const to = value.$version ?? 1;
      const migrated = before.get(`/session/stateBag/${pointerSegment(key)}`);
      this.states.add(migrated ? migrated.fromType : value.$type, migrated ? migrated.from : to, value.$type, to);
    }
    if (plan.preserved) this.report.preserved++;
  }

  private fail(item: { id: string; revision: number }, failure: Omit<MigrateStoreFailure, "id" | "revision">): void {
    const failed = { id: item.id, revision: item.revision, ...failure };
    if (this.collecting) this.collecting.push(failed);
    else this.addFailure(failed);
  }

  private addFailure(failure: MigrateStoreFailure): void {
    this.report.failedCount++;
    this.probe?.failed(failure.code);
    if (this.report.failed.length < this.maxReported) this.report.failed.push(failure);
  }
}

/**
 * The save of a session read as `item`: compare-and-swap on the revision read, its remaining time
 * to live, and the scanned owner (a store column: a codec binding the owner gets it without
 * another read).
 */
function saveOptions(item: ScanItem): SaveOptions {
  const owner = item.meta?.owner;
  return {
    expectedRevision: item.revision,
    ...(item.ttlMs !== undefined ? { ttlMs: item.ttlMs } : {}),
    ...(owner !== undefined ? { meta: { owner } } : {}),
  };
}

/** Counts of values per (type, from, toType, to) transition. */
class VersionTally {
  private readonly counts = new Map<string, StateVersionCount>();

  add(type: string, from: number, toType: string, to: number): void {
    const key = `${type}\u0000${from}\u0000${toType}\u0000${to}`;
    const hit = this.counts.get(key);
    if (hit) hit.count++;
    else this.counts.set(key, { type, from, toType, to, count: 1 });
  }

  /** By type, then versions: a stable order for reports. */
  sorted(): StateVersionCount[] {
    const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    return [...this.counts.values()].sort(
      (a, b) => cmp(a.type, b.type) || a.from - b.from || cmp(a.toType, b.toType) || a.to - b.to,
    );
  }
}

/** "RollingSummaryState v1 -> v2: 3" or "X v2 (current): 5": one line of `report.states`. */
export function formatStateTransition(s: StateVersionCount): string {
  const changed = s.toType !== s.type || s.to !== s.from;
  return `${s.type} v${s.from}${changed ? ` -> ${s.toType === s.type ? "" : `${s.toType} `}v${s.to}` : " (current)"}: ${s.count}`;
}

/** The report as a few readable lines (for logs and the CLI). */
export function formatMigrateReport(report: MigrateStoreReport): string {
  const verb = report.dryRun ? "would migrate" : "migrated";
  const lines = [
    `${report.scanned} session(s): ${report.migrated} ${verb}, ${report.unchanged} already current, ${report.failedCount} failed` +
      (report.vanished ? `, ${report.vanished} gone meanwhile` : "") +
      (report.conflicts ? `, ${report.conflicts} concurrent change(s) retried` : "") +
      (report.aborted ? " (stopped early; resume with startAfter: " + JSON.stringify(report.cursor) + ")" : ""),
  ];
  for (const state of report.states) lines.push(`  ${formatStateTransition(state)}`);
  for (const failure of report.failed)
    lines.push(
      `  failed ${failure.id}${failure.pointer !== undefined ? ` at ${failure.pointer}` : ""}: ${failure.message}`,
    );
  if (report.failedCount > report.failed.length)
    lines.push(`  ... and ${report.failedCount - report.failed.length} more failure(s)`);
  return lines.join("\n");
}
