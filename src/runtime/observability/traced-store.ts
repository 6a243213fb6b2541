/**
 * OpenTelemetry spans for session stores: `tracedStore(store, tracer)` wraps a store so that each
 * load, save, delete, scan, list, purge and erase is a span, and `withSession` / `migrateStore` on
 * the wrapped store open their own spans around those (nested through the active context).
 * `openStore(url, { tracing })` applies it, and by default does so when `@opentelemetry/api` is
 * installed and a global tracer provider is registered (otherwise the store is returned as it is:
 * tracing off costs nothing per call).
 *
 * Attributes follow the database semantic conventions (`db.system.name`, `db.operation.name`,
 * `db.collection.name`, `db.response.returned_rows`, `error.type`) plus statebag's own
 * (`statebag.*`). Never recorded: session contents, session ids, owners, labels, URLs with
 * passwords, error messages (they may quote ids). A session is named by `statebag.session.id_hash`,
 * the first 16 hex digits of the SHA-256 (or, with `idHashKey`, HMAC-SHA-256) of its id.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash, createHmac } from "node:crypto";
import { MissingDependencyError } from "../core/optional-dependency.js";
import { defaultSessionCodec } from "../stores/codec.js";
import { ConflictError, SessionNotFoundError } from "../stores/errors.js";
import { markContextFree, metaProtectionOf, usesContext } from "../stores/listing.js";
import type { EraseReceipt, SessionCodec, SessionStore, StoredSession } from "../stores/types.js";
import type { StreamBuffer } from "../stores/stream-buffer.js";
import type { BlobRead, BlobStore, BlobUsage, PutBlobResult } from "../blobs/blob-store.js";
import type { BlobReencryptOptions, BlobReencryptReport } from "../blobs/chunked.js";
import {
  observeLoad,
  STORE_TRACING,
  tracingOf,
  type MigrationProbe,
  type SessionProbe,
  type StoreTracing,
} from "../core/tracing-hooks.js";
import {
  loadedOtel,
  loadOtel,
  type OtelAttributes,
  type OtelContext,
  type OtelSpan,
  type OtelTracer,
  type OtelTracerProvider,
} from "./otel.js";

/** The name statebag's tracer is registered under (the instrumentation scope). */
export const TRACER_NAME = "statebag";

/** `openStore(url, { tracing })`: `true`, `false`, or where spans go. */
export interface TracingOptions {
  /** The provider to take statebag's tracer from (default: the global one of `@opentelemetry/api`). */
  tracerProvider?: OtelTracerProvider;
  /** Key for `statebag.session.id_hash` (HMAC-SHA-256); default: plain SHA-256 of the id. */
  idHashKey?: string | Uint8Array;
}

export interface TracedStoreOptions {
  /** Key for `statebag.session.id_hash` (HMAC-SHA-256); default: plain SHA-256 of the id. */
  idHashKey?: string | Uint8Array;
}

/** `statebag.outcome` */
type Outcome = "ok" | "conflict" | "not-found" | "error";

const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;
/** Entries of `statebag.types` at most. */
const MAX_TYPES = 16;
const MAX_TYPE_LENGTH = 128;

const SYSTEM: Record<string, string> = { memory: "memory", sqlite: "sqlite", postgres: "postgresql", redis: "redis" };

/** What one span's asynchronous work sees (through AsyncLocalStorage, with or without an OpenTelemetry context manager). */
interface Frame {
  span: OtelSpan;
  /** The OpenTelemetry context holding `span` (undefined when `@opentelemetry/api` is not loaded). */
  context?: OtelContext;
  /** The store operation, for the codec wrapper. */
  op?: string;
  /** The compare-and-swap attempt of the enclosing `withSession` or migration. */
  attempt?: { n: number };
}

/** One tracer's spans for one store. */
class Tracing implements StoreTracing {
  private readonly frames = new AsyncLocalStorage<Frame>();
  /** The traced stream buffer of each traced store (see `methods`). */
  readonly tracedStreams = new WeakMap<object, StreamBuffer>();
  /** The traced blob store of each traced store (see `methods`). */
  readonly tracedBlobs = new WeakMap<object, BlobStore>();
  private base: OtelAttributes = {};

  constructor(
    private readonly tracer: OtelTracer,
    private readonly idHashKey: string | Uint8Array | undefined,
  ) {}

  /** Sets the store's attributes, carried by every span. */
  describe(store: SessionStore): void {
    const collection = store.kind === "sqlite" || store.kind === "postgres" ? "statebag_sessions" : undefined;
    this.base = {
      "db.system.name": SYSTEM[store.kind] ?? String(store.kind),
      ...(collection ? { "db.collection.name": collection } : {}),
    };
  }

  idHash(id: unknown): string | undefined {
    if (typeof id !== "string") return undefined;
    const hash = this.idHashKey === undefined ? createHash("sha256") : createHmac("sha256", this.idHashKey);
    return hash.update(id).digest("hex").slice(0, 16);
  }

  /**
   * Runs `body` in a new span, child of the active span (or of the enclosing statebag span when no
   * OpenTelemetry context manager carries it). `finish` names the outcome of a value.
   */
  async span<T>(
    name: string,
    op: string,
    kind: number,
    attributes: OtelAttributes,
    body: (frame: Frame) => Promise<T>,
    finish?: (span: OtelSpan, value: T) => Outcome,
    attempt?: { n: number },
  ): Promise<T> {
    const api = loadedOtel();
    const outer = this.frames.getStore();
    let parent: OtelContext | undefined;
    if (api !== undefined) {
      const active = api.context.active();
      parent = api.trace.getSpan(active) !== undefined || outer?.context === undefined ? active : outer.context;
    }
    const inherited = attempt ?? outer?.attempt;
    const span = this.tracer.startSpan(
      name,
      {
        kind,
        attributes: {
          ...this.base,
          "db.operation.name": op,
          ...(inherited !== undefined ? { "statebag.cas.attempt": inherited.n } : {}),
          ...attributes,
        },
      },
      parent,
    );
    const frame: Frame = {
      span,
      op,
      attempt: inherited,
      context: api !== undefined && parent !== undefined ? api.trace.setSpan(parent, span) : undefined,
    };
    try {
      const run = () => this.frames.run(frame, () => body(frame));
      const value = await (api !== undefined && frame.context !== undefined
        ? api.context.with(frame.context, run)
        : run());
      const outcome = finish ? finish(span, value) : "ok";
      span.setAttribute("statebag.outcome", outcome);
      if (outcome === "error") span.setStatus({ code: STATUS_ERROR, message: "error" });
      return value;
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  private store(
    name: string,
    op: string,
    attributes: OtelAttributes,
    body: (frame: Frame) => Promise<unknown>,
    finish?: (span: OtelSpan, value: never) => Outcome,
  ) {
    return this.span(
      name,
      op,
      SPAN_KIND_CLIENT,
      attributes,
      body,
      finish as (span: OtelSpan, value: unknown) => Outcome,
    );
  }

  /** The traced versions of the store's methods. */
  methods(store: SessionStore): Record<string, (...args: never[]) => unknown> {
    const methods: Record<string, (...args: never[]) => unknown> = {
      get: (id: string) =>
        this.store(
          "statebag.load",
          "get",
          { "statebag.session.id_hash": this.idHash(id) },
          () => store.get(id),
          (span, stored: StoredSession | undefined) => {
            if (stored === undefined) return "not-found";
            setTypes(span, stored.session);
            return "ok";
          },
        ),
      save: (...args: Parameters<SessionStore["save"]>) =>
        this.store(
          "statebag.save",
          "save",
          { "statebag.session.id_hash": this.idHash(args[0]?.id), "statebag.types": typesOf(args[0]) },
          () => store.save(...args),
        ),
      delete: (...args: Parameters<SessionStore["delete"]>) =>
        this.store(
          "statebag.delete",
          "delete",
          { "statebag.session.id_hash": this.idHash(args[0]) },
          () => store.delete(...args),
          (_span, existed: boolean) => (existed ? "ok" : "not-found"),
        ),
      scan: (...args: Parameters<SessionStore["scan"]>) =>
        this.store("statebag.scan", "scan", {}, () => store.scan(...args), rows),
      list: (...args: Parameters<SessionStore["list"]>) =>
        this.store("statebag.list", "list", {}, () => store.list(...args), rows),
      purgeExpired: () => this.store("statebag.purge", "purgeExpired", {}, () => store.purgeExpired(), deleted),
    };
    // Stream buffers: spans for what a turn does once (open, finish, stop) and for removals; not
    // for each append, renew, read or follow (one span per chunk would outweigh the chunk).
    const streams = (store as Partial<SessionStore>).streams;
    if (streams !== undefined) {
      const tracedStreams: StreamBuffer = Object.create(streams);
      const sid = (options: { sessionId?: string } | undefined) => ({
        "statebag.session.id_hash": this.idHash(options?.sessionId as string),
      });
      tracedStreams.open = (...args) =>
        this.store("statebag.stream.open", "streams.open", sid(args[1]), () => streams.open(...args)) as Promise<void>;
      tracedStreams.finish = (...args) =>
        this.store(
          "statebag.stream.finish",
          "streams.finish",
          { "statebag.stream.status": String(args[1]) },
          () => streams.finish(...args),
          (_span, ended: boolean) => (ended ? "ok" : "not-found"),
        ) as Promise<boolean>;
      // Only where the buffer has it: a traced buffer offers what the buffer does, no more.
      const finishWith = streams.finishWith?.bind(streams);
      tracedStreams.finishWith = finishWith
        ? (...args) =>
            this.store(
              "statebag.stream.finish",
              "streams.finish",
              { "statebag.stream.status": String(args[2]) },
              () => finishWith(...args),
              (_span, ended: boolean) => (ended ? "ok" : "not-found"),
            ) as Promise<boolean>
        : undefined;
      tracedStreams.requestStop = (...args) =>
        this.store(
          "statebag.stream.stop",
          "streams.requestStop",
          {},
          () => streams.requestStop(...args),
          (_span, stopped: boolean) => (stopped ? "ok" : "not-found"),
        ) as Promise<boolean>;
      tracedStreams.deleteForSession = (sessionId) =>
        this.store(
          "statebag.stream.delete",
          "streams.deleteForSession",
          sid({ sessionId }),
          () => streams.deleteForSession(sessionId),
          streamsDeleted,
        ) as Promise<number>;
      tracedStreams.purgeExpired = () =>
        this.store(
          "statebag.stream.purge",
          "streams.purgeExpired",
          {},
          () => streams.purgeExpired(),
          streamsDeleted,
        ) as Promise<number>;
      // The rest (append, renew, info, read, follow) run on the buffer itself.
      for (const key of ["append", "renew", "info", "read", "follow"] as const)
        (tracedStreams as unknown as Record<string, unknown>)[key] = (
          streams[key] as (...a: unknown[]) => unknown
        ).bind(streams);
      this.tracedStreams.set(store, tracedStreams);
    }
    // Blobs: spans for what changes or reads a blob (never its owner, hash, name or bytes); the
    // span of a get ends when its stream is handed out.
    const blobs = (store as Partial<SessionStore>).blobs;
    if (blobs !== undefined) {
      const traced: BlobStore = {
        get limits() {
          return blobs.limits;
        },
        put: (content, options) =>
          this.store(
            "statebag.blob.put",
            "blobs.put",
            {},
            () => blobs.put(content, options),
            (span, put: PutBlobResult) => {
              span.setAttribute("statebag.blob.size", put.size);
              span.setAttribute("statebag.blob.created", put.created);
              return "ok";
            },
          ) as Promise<PutBlobResult>,
        get: (hash, options) =>
          this.store(
            "statebag.blob.get",
            "blobs.get",
            {},
            () => blobs.get(hash, options),
            (span, read: BlobRead | undefined) => {
              if (read === undefined) return "not-found";
              span.setAttribute("statebag.blob.size", read.end - read.start);
              return "ok";
            },
          ) as Promise<BlobRead | undefined>,
        delete: (hash, options) =>
          this.store(
            "statebag.blob.delete",
            "blobs.delete",
            {},
            () => blobs.delete(hash, options),
            (_span, existed: boolean) => (existed ? "ok" : "not-found"),
          ) as Promise<boolean>,
        eraseOwner: (owner) =>
          this.store(
            "statebag.blob.erase",
            "blobs.eraseOwner",
            {},
            () => blobs.eraseOwner(owner),
            blobsDeleted,
          ) as Promise<BlobUsage>,
        sweep: (options) =>
          this.store(
            "statebag.blob.sweep",
            "blobs.sweep",
            {},
            () => blobs.sweep(options),
            blobsDeleted,
          ) as Promise<BlobUsage>,
        stat: (hash, options) => blobs.stat(hash, options),
        has: (hash, options) => blobs.has(hash, options),
        list: (options) => blobs.list(options),
        usage: (options) => blobs.usage(options),
        close: () => blobs.close(),
      };
      // Re-encryption after a key rotation (the built-in blob stores): passed on, with its counts.
      const reencrypt = (blobs as Partial<ReencryptingBlobStore>).reencrypt;
      if (typeof reencrypt === "function")
        (traced as ReencryptingBlobStore).reencrypt = (options) =>
          this.store(
            "statebag.blob.reencrypt",
            "blobs.reencrypt",
            {},
            () => reencrypt.call(blobs, options),
            (span, report: BlobReencryptReport) => {
              span.setAttribute("statebag.blobs.scanned", report.scanned);
              span.setAttribute("statebag.blobs.rewritten", report.rewritten);
              span.setAttribute("statebag.blobs.failed", report.failed);
              return "ok";
            },
          ) as Promise<BlobReencryptReport>;
      this.tracedBlobs.set(store, traced);
    }
    // (A store implemented before erasure existed may lack it: left as it is.)
    if (typeof (store as Partial<SessionStore>).eraseOwner === "function") {
      methods.eraseOwner = (...args: Parameters<SessionStore["eraseOwner"]>) =>
        this.store("statebag.erase", "eraseOwner", {}, () => store.eraseOwner(...args), erased);
    }
    return methods as Record<string, (...args: never[]) => unknown>;
  }

  /** `codec` with the stored size, envelope version and migration count reported to the span of the load or save using it. */
  codec(codec: SessionCodec = defaultSessionCodec()): SessionCodec {
    const frames = this.frames;
    const traced: SessionCodec = {
      serialize(session, context) {
        const text = context === undefined ? codec.serialize(session) : codec.serialize(session, context);
        const frame = frames.getStore();
        if (frame?.op === "save" && typeof text === "string") setStored(frame.span, text);
        return text;
      },
      deserialize(text, key, context) {
        const frame = frames.getStore();
        const load = () =>
          context === undefined
            ? key === undefined
              ? codec.deserialize(text)
              : codec.deserialize(text, key)
            : codec.deserialize(text, key, context);
        if (frame?.op !== "get") return load();
        if (typeof text === "string") setStored(frame.span, text);
        const record: { migrations?: number } = {};
        const session = observeLoad(record, load);
        frame.span.setAttribute("statebag.migrations.applied", record.migrations ?? 0);
        return session;
      },
    };
    // An encrypting codec's protection of owners and titles goes with it (the store looks for it on the codec).
    const protection = metaProtectionOf(codec);
    if (protection !== undefined) Object.assign(traced, { metaProtection: protection });
    // And its encryption (the store's stream buffer seals each chunk with it).
    const encryption = (codec as { encryption?: unknown }).encryption;
    if (encryption !== undefined) Object.assign(traced, { encryption });
    return usesContext(codec) ? traced : markContextFree(traced);
  }

  chat<T>(operation: string, id: string | undefined, run: () => Promise<T>): Promise<T> {
    return this.span(
      "statebag.chat",
      `chat.${operation}`,
      SPAN_KIND_INTERNAL,
      { "statebag.chat.operation": operation, "statebag.session.id_hash": this.idHash(id) },
      () => run(),
    );
  }

  withSession<T>(id: string, run: (probe: SessionProbe) => Promise<T>): Promise<T> {
    const attempt = { n: 1 };
    return this.span(
      "statebag.session",
      "withSession",
      SPAN_KIND_INTERNAL,
      { "statebag.session.id_hash": this.idHash(id) },
      (frame) =>
        run({
          attempt: (n) => {
            attempt.n = n;
            frame.span.setAttribute("statebag.cas.attempt", n);
          },
          conflict: (n) => frame.span.addEvent("statebag.cas.conflict", { "statebag.cas.attempt": n }),
        }),
      undefined,
      attempt,
    );
  }

  migrateStore<T>(run: () => Promise<T>): Promise<T> {
    return this.span("statebag.migrate", "migrateStore", SPAN_KIND_INTERNAL, {}, run, (span, report) => {
      const fields = report as Record<string, unknown>;
      for (const key of ["scanned", "migrated", "unchanged", "failedCount", "vanished", "conflicts", "aborted"]) {
        const value = fields[key];
        if (typeof value === "number" || typeof value === "boolean")
          span.setAttribute(`statebag.migrate.${key === "failedCount" ? "failed" : key}`, value);
      }
      return "ok";
    });
  }

  migrateSession<T extends string>(id: string, run: (probe: MigrationProbe) => Promise<T>): Promise<T> {
    const attempt = { n: 1 };
    let failure: string | undefined;
    return this.span(
      "statebag.migrate.session",
      "migrate",
      SPAN_KIND_INTERNAL,
      { "statebag.session.id_hash": this.idHash(id) },
      (frame) =>
        run({
          attempt: (n) => {
            attempt.n = n;
            frame.span.setAttribute("statebag.cas.attempt", n);
          },
          loaded: (text, session, migrations) => {
            setStored(frame.span, text);
            frame.span.setAttribute("statebag.migrations.applied", migrations);
            setTypes(frame.span, session);
          },
          failed: (code) => (failure = code ?? "failed"),
        }),
      (span, result) => {
        span.setAttribute("statebag.migrate.result", result);
        if (result === "vanished") return "not-found";
        if (result !== "failed") return "ok";
        span.setAttribute("error.type", errorType(failure ?? "failed"));
        return failure === "conflict" ? "conflict" : "error";
      },
      attempt,
    );
  }
}

function rows(span: OtelSpan, page: { items?: unknown[] }): Outcome {
  if (Array.isArray(page?.items)) span.setAttribute("db.response.returned_rows", page.items.length);
  return "ok";
}

/** The receipt's counts (its owner hash is not recorded: it names a person across erasures). */
function erased(span: OtelSpan, receipt: EraseReceipt): Outcome {
  if (typeof receipt?.sessions === "number") span.setAttribute("statebag.sessions.deleted", receipt.sessions);
  if (typeof receipt?.messageLogs === "number") span.setAttribute("statebag.message_logs.deleted", receipt.messageLogs);
  if (typeof receipt?.streams === "number") span.setAttribute("statebag.streams.deleted", receipt.streams);
  return "ok";
}

function streamsDeleted(span: OtelSpan, count: unknown): Outcome {
  if (typeof count === "number") span.setAttribute("statebag.streams.deleted", count);
  return "ok";
}

/** A blob store that re-encrypts its blobs (`ChunkedBlobStore`: every built-in one). */
type ReencryptingBlobStore = BlobStore & { reencrypt(options?: BlobReencryptOptions): Promise<BlobReencryptReport> };

function blobsDeleted(span: OtelSpan, usage: unknown): Outcome {
  const blobs = (usage as BlobUsage | undefined)?.blobs;
  if (typeof blobs === "number") span.setAttribute("statebag.blobs.deleted", blobs);
  return "ok";
}

function deleted(span: OtelSpan, count: unknown): Outcome {
  if (typeof count === "number") span.setAttribute("statebag.sessions.deleted", count);
  return "ok";
}

/** `statebag.session.bytes` (UTF-8) and `statebag.session.format_version` (of a statebag envelope) of a stored text. */
function setStored(span: OtelSpan, text: string): void {
  span.setAttribute("statebag.session.bytes", Buffer.byteLength(text, "utf8"));
  const version = /^\s*\{\s*"format"\s*:\s*"statebag\.session"\s*,\s*"formatVersion"\s*:\s*(\d{1,6})\b/.exec(
    text.slice(0, 128),
  )?.[1];
  if (version !== undefined) span.setAttribute("statebag.session.format_version", Number(version));
}

/** `type@version` of each state-bag value, distinct and sorted, at most `MAX_TYPES`. */
function typesOf(session: { stateBag?: Record<string, unknown> } | undefined): string[] | undefined {
  const bag = session?.stateBag;
  if (typeof bag !== "object" || bag === null) return undefined;
  const types = new Set<string>();
  for (const key in bag) {
    const value = bag[key] as { $type?: unknown; $version?: unknown } | null;
    if (typeof value?.$type !== "string") continue;
    types.add(`${value.$type.slice(0, MAX_TYPE_LENGTH)}@${typeof value.$version === "number" ? value.$version : 1}`);
  }
  return [...types].sort().slice(0, MAX_TYPES);
}

function setTypes(span: OtelSpan, session: { stateBag?: Record<string, unknown> } | undefined): void {
  const types = typesOf(session);
  if (types !== undefined) span.setAttribute("statebag.types", types);
}

/** A bounded, content-free name for an error: statebag's code, or the error class. */
function errorType(value: unknown): string {
  return typeof value === "string" && /^[A-Za-z0-9_.:-]{1,64}$/.test(value) ? value : "_OTHER";
}

function failed(span: OtelSpan, error: unknown): void {
  const outcome: Outcome =
    error instanceof ConflictError ? "conflict" : error instanceof SessionNotFoundError ? "not-found" : "error";
  const code = (error as { code?: unknown } | null)?.code;
  const type = errorType(typeof code === "string" ? code : error instanceof Error ? error.name : undefined);
  span.setAttribute("statebag.outcome", outcome);
  span.setAttribute("error.type", type);
  // The message may quote a session id: only the type is recorded.
  span.setStatus({ code: STATUS_ERROR, message: type });
}

/**
 * `store` with OpenTelemetry spans (see the module comment). Methods other than the traced ones
 * (`setup`, `close`, `messages`, a backend's own) are the store's. A store already traced is
 * returned as it is. `openStore(url, { tracing })` does this for you, and also reports stored sizes
 * and migration counts (it wraps the codec too).
 */
export function tracedStore<S extends SessionStore>(store: S, tracer: OtelTracer, options: TracedStoreOptions = {}): S {
  return wrap(store, new Tracing(tracer, options.idHashKey));
}

function wrap<S extends SessionStore>(store: S, tracing: Tracing): S {
  if (tracingOf(store) !== undefined) return store;
  void loadOtel(); // for nesting through the active context (already loaded when openStore traces)
  tracing.describe(store);
  const traced = tracing.methods(store);
  const bound = new Map<PropertyKey, { fn: unknown; bound: unknown }>();
  return new Proxy(store, {
    get(target, key) {
      if (key === STORE_TRACING) return tracing;
      if (key === "streams") return tracing.tracedStreams.get(target) ?? Reflect.get(target, key, target);
      if (key === "blobs") return tracing.tracedBlobs.get(target) ?? Reflect.get(target, key, target);
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      if (typeof key === "string" && Object.hasOwn(traced, key)) return traced[key];
      const hit = bound.get(key);
      if (hit?.fn === value) return hit.bound;
      const fn = (value as (...args: unknown[]) => unknown).bind(target);
      bound.set(key, { fn: value, bound: fn });
      return fn;
    },
  });
}

/** What `openStore` needs to trace the store it opens. @internal */
export interface OpenTracing {
  codec(codec: SessionCodec | undefined): SessionCodec;
  wrap<S extends SessionStore>(store: S): S;
}

/**
 * The tracing `openStore` applies, or undefined for none: `false` never; `true` or a provider
 * always (`true` needs `@opentelemetry/api`); absent when `@opentelemetry/api` is installed and
 * a global tracer provider is registered. @internal
 */
export async function openTracing(
  option: boolean | TracingOptions | undefined,
  version?: string,
): Promise<OpenTracing | undefined> {
  if (option === false) return undefined;
  const settings: TracingOptions = typeof option === "object" && option !== null ? option : {};
  let tracer: OtelTracer;
  if (settings.tracerProvider !== undefined) {
    await loadOtel();
    tracer = settings.tracerProvider.getTracer(TRACER_NAME, version);
  } else {
    const api = await loadOtel();
    if (api === undefined) {
      if (option === undefined) return undefined;
      throw new MissingDependencyError("@opentelemetry/api", "openStore's tracing option", undefined);
    }
    const provider = api.trace.getTracerProvider();
    // The global provider is a proxy: without a registered delegate it makes no-op spans.
    if (
      option === undefined &&
      typeof provider.getDelegateTracer === "function" &&
      provider.getDelegateTracer(TRACER_NAME, version) === undefined
    )
      return undefined;
    tracer = provider.getTracer(TRACER_NAME, version);
  }
  const tracing = new Tracing(tracer, settings.idHashKey);
  return { codec: (codec) => tracing.codec(codec), wrap: (store) => wrap(store, tracing) };
}
