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
 * A session that does not load or does not migrate is left exactly as stored and reported with
 * its id and the error. `dryRun` does steps 1-2 only and reports what would change.
 *
 * Why an interrupted run (a crash, SIGKILL, a deploy) loses nothing and can simply be run again:
 * - each session is written by one `save`, a single atomic compare-and-swap write in every backend:
 *   after a kill it is either at its old revision with its old text, or at a new revision with the
 *   complete migrated text; never in between;
 * - a save only ever replaces the revision that was read, so a migrated copy of stale data never
 *   overwrites an application write (the CAS refuses it and the session is re-read);
 * - migrations run from the version found in the stored value: a value already at the latest
 *   version is returned as it is (`registry.upgrade` applies no step), so a session migrated by an
 *   earlier, killed run is reported `unchanged` by the next one and never migrated twice;
 * - `unchanged` sessions are never written (no revision bump, no wasted writes on a re-run).
 * A re-run therefore converges: every session ends at the latest versions exactly once.
 * `startAfter` (the `cursor` of the last progress report) skips what a killed run already did.
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
import { type BulkAttempt, eachScanned, rescan, retryChanged } from "./bulk-pass.js";
import { MAX_SCAN_LIMIT } from "./common.js";
import { ConflictError, StoreUnavailableError } from "./errors.js";
import { isEncryptedText } from "./encryption/envelope.js";
import type { ScanItem, SessionStore } from "./types.js";
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
  /** Sessions per `scan` page, 1..1000 (default 100). Memory use is about one page of stored texts. */
  batchSize?: number;
  /** Called after each session. `total` is unknown (stores do not count): always undefined. */
  onProgress?: (done: number, total: number | undefined, progress: MigrateStoreProgress) => void;
  /** Stops after the current session; the report has `aborted: true` and the `cursor` to resume from. */
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
    const end = await eachScanned(
      this.store,
      { batchSize: this.batchSize, startAfter: options.startAfter, signal: options.signal },
      async (item, pageCursor) => {
        report.scanned++;
        const outcome =
          this.tracing === undefined
            ? await this.migrateOne(item, pageCursor)
            : await this.tracing.migrateSession(item.id, (probe) => {
                this.probe = probe;
                return this.migrateOne(item, pageCursor);
              });
        if (outcome === "vanished") report.vanished++;
        else if (outcome !== "failed") report[outcome]++;
        options.onProgress?.(report.scanned, undefined, {
          done: report.scanned,
          migrated: report.migrated,
          unchanged: report.unchanged,
          failed: report.failedCount,
          cursor: item.id,
        });
      },
    );
    report.aborted = end.aborted;
    if (end.cursor !== undefined) report.cursor = end.cursor;
    report.states = this.states.sorted();
    report.values = this.values.sorted();
    report.durationMs = Math.round(performance.now() - this.started);
    return report;
  }

  /** Loads, migrates and saves one session, re-reading it after each refused save. */
  private async migrateOne(first: ScanItem, pageCursor: string | undefined): Promise<Outcome> {
    const outcome = await retryChanged(
      first,
      {
        maxRetries: this.maxRetries,
        reread: (item) => rescan(this.store, item.id, pageCursor, this.batchSize),
        onChange: () => this.report.conflicts++,
      },
      (scanned, attemptIndex) => this.attempt(scanned, attemptIndex),
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
    const done = (value: Outcome): BulkAttempt<Outcome> => ({ kind: "done", value });
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
    const count = () => {
      if (moved && this.report.offloaded) {
        this.report.offloaded.contents += moved.contents;
        this.report.offloaded.bytes += moved.bytes;
      }
    };
    if (!plan.changed || this.dryRun) {
      this.record(plan);
      count();
      return done(plan.changed ? "migrated" : "unchanged");
    }
    try {
      // The scanned owner (a store column): a codec binding the owner gets it without another read.
      const owner = item.meta?.owner;
      await this.store.save(plan.session, {
        expectedRevision: item.revision,
        ...(item.ttlMs !== undefined ? { ttlMs: item.ttlMs } : {}),
        ...(owner !== undefined ? { meta: { owner } } : {}),
      });
      this.record(plan);
      count();
      return done("migrated");
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error; // the store is down: stop; a re-run resumes
      if (error instanceof ConflictError) return { kind: "changed" };
      this.fail(item, {
        message: `the store refused the migrated session: ${error instanceof Error ? error.message : String(error)}`,
        code: error instanceof StatebagError ? error.code : "save",
      });
      return done("failed");
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
    this.report.failedCount++;
    this.probe?.failed(failure.code);
    if (this.report.failed.length < this.maxReported)
      this.report.failed.push({ id: item.id, revision: item.revision, ...failure });
  }
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
