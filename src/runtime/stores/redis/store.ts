/**
 * Redis store (ioredis), for many machines and for sessions that should expire; standalone Redis
 * (or one primary) and Redis Cluster (`redis+cluster://h1:p1,h2:p2` or `?cluster=true`).
 *
 * The storage format is the key layout (keys.ts) and the Lua scripts that read and change it
 * (scripts.ts); connecting is connection.ts, the message log message-log.ts, and moving keys of
 * the format-1 layout upgrade.ts. On a cluster, `scan` merges the buckets' pages in byte order,
 * which visits every master. Moving a standalone store into a cluster is a copy through the API
 * (README, "Redis Cluster"), not a key-level import: a cluster store refuses a prefix that holds
 * standalone-layout keys.
 */
import { quoted, shownText } from "../../core/json.js";
import type { AgentSession } from "../../core/session.js";
import {
  binaryRowsOf,
  defaultMessageCodec,
  defaultSessionCodec,
  loadStoredSession,
  serializeRow,
  storedText,
} from "../codec.js";
import { isBinaryRow } from "../encryption/envelope.js";
import { checkDelete, checkId, checkSave, checkScan, compareIds, scanItem, scanPage, sessionId } from "../common.js";
import {
  ConflictError,
  SessionOwnerError,
  StoreKeyConflictError,
  StoreNotSetUpError,
  StoreUnavailableError,
} from "../errors.js";
import { eraseOwnerSessions } from "../erasure.js";
import type { SessionMetaProtection } from "../encryption/meta.js";
import {
  checkList,
  checkMeta,
  encodeCursor,
  labelsMatch,
  metaProtectionOf,
  plaintextMeta,
  plaintextOwnerError,
  readMeta,
  storedMeta,
  usesContext,
} from "../listing.js";
import { checkRetention, purgeRetention } from "../retention.js";
import type {
  DeleteOptions,
  EraseOptions,
  EraseReceipt,
  ListItem,
  ListOptions,
  ListPage,
  MessageCodec,
  MessageLog,
  RetentionOptions,
  RetentionPolicy,
  SaveOptions,
  ScanOptions,
  ScanPage,
  SessionCodec,
  SessionStore,
  SetupResult,
  StoredSession,
  StoredSessionMeta,
} from "../types.js";
import { redactUrl } from "../url.js";
import { isUnavailable, RedisConnector } from "./connection.js";
import { RedisStreamBuffer } from "./stream-buffer.js";
import type { BlobOptions, BlobStore } from "../../blobs/blob-store.js";
import { storeBlobs } from "../blobs.js";
import { RedisBlobBackend } from "./blobs.js";
import { chunkCodec } from "../stream-common.js";
import { enclosingPrefixes, keySlot, RedisKeys, type Bucket, type OwnerKeys } from "./keys.js";
import { RedisMessageLog } from "./message-log.js";
import { SAVE_BATCH, type BatchSaveEntry, type BatchSaveResult, type SaveBatch } from "../batch-save.js";
import { saveInOneTransaction, sendSaves } from "./batch-save.js";
import {
  type ExpiredOwnerEntry,
  type IndexScriptOp,
  type MetaScriptReply,
  runDelete,
  runDraw,
  runIndex,
  runList,
  runMetas,
  runOuter,
  runProtect,
  runPurge,
  runSave,
  runScan,
  runText,
  type SaveScriptInput,
  type SaveScriptReply,
  type ScriptedClient,
  type SessionFields,
  sessionFields,
} from "./scripts.js";
import type { RedisClientLike, RedisClusterDriverOptions, RedisClusterLike, RedisDriverOptions } from "./types.js";
import { upgradeLegacyLayout } from "./upgrade.js";
import { parseRedisStoreUrl, type RedisClusterNode } from "./url.js";

export { parseRedisStoreUrl, type RedisClusterNode };

/**
 * 3: session metadata and the per-owner index (keys.ts); format-2 data reads as it is (its
 * sessions are unowned), so 2 -> 3 moves nothing: `store setup` only records 3, which makes
 * releases that do not keep the owner index refuse the store. 2: standalone keys under `P{}`
 * (prefix-free); 1: standalone keys right after the prefix (read no more: `store setup` moves
 * them). The cluster layout is the same in 1 and 2.
 */
export const REDIS_FORMAT_VERSION = 3;

/** The largest updatedAt the owner index's 15 digits hold. */
const MAX_POSITION = 999_999_999_999_999;

/** The 15-digit updatedAt that starts an owner's `ou` member (keys.ts). */
function position(updatedAt: number): string {
  return String(updatedAt).padStart(15, "0");
}

/** `get`'s read: the metadata fields as `sessionFields` takes them, then the body (one HMGET). */
function readSession(c: ScriptedClient, key: string): Promise<(string | null)[]> {
  return c.hmget(key, "r", "o", "t", "l", "c", "u", "d");
}

/** `get`'s read for a codec of binary rows: the hash as bytes, the body kept as bytes when it is a binary row. */
async function readSessionBytes(c: ScriptedClient, key: string): Promise<(string | Buffer | null)[]> {
  const values = await c.hmgetBuffer(key, "r", "o", "t", "l", "c", "u", "d");
  return values.map((value, index) =>
    value === null || (index === 6 && isBinaryRow(value)) ? value : value.toString("utf8"),
  );
}

/** The save script, `nowMs` taken as it is sent (after a connect, if any): the expiry index is scored from it. */
function runSaveNow(c: ScriptedClient, input: SaveScriptInput): Promise<SaveScriptReply> {
  input.nowMs = Date.now();
  return runSave(c, input);
}

/** The labels a session hash holds (JSON), parsed. */
function labelsOf(json: string | null): Record<string, string> | undefined {
  return json === null ? undefined : (JSON.parse(json) as Record<string, string>);
}

/** `save`'s plan before its script (`planSave`); the owners are updated as a draw or a reply tells. */
interface SavePlan {
  id: string;
  expected: number | null;
  ttlMs: number | undefined;
  meta: ReturnType<typeof checkMeta>;
  keys: ReturnType<RedisKeys["of"]>;
  /** The owner the body is serialized for (plaintext). */
  codecOwner: string | undefined;
  /** The owner argument of the script (its stored form), if one is given. */
  ownerArg: string | undefined;
  /** The owner as stored, as far as known: what a context-using codec's body is checked against. */
  storedOwner: string | undefined;
  titleArg: string | undefined;
  /** The labels as JSON ("" when none are given). */
  labels: string;
}

/** A row written before with plaintext owner or title: the forms `runProtect` moves it to after the save. */
interface SaveProtect {
  from: string;
  to: string;
  title: string;
}

export interface RedisStoreOptions {
  /** `redis://[:password@]host:port[/db]` or `rediss://...` (with `cluster`: any one node, for its credentials and TLS). */
  url: string;
  /**
   * Redis Cluster: `true` to start from the node in `url`, or the nodes to start from. Keys are
   * hash-tagged per bucket (keys.ts); the prefix may not contain `{` or `}`.
   */
  cluster?: boolean | readonly RedisClusterNode[];
  /** Key prefix (default `statebag:`). */
  prefix?: string;
  codec?: SessionCodec;
  messageCodec?: MessageCodec;
  /** Time one connection attempt may take (default 2000 ms; `?connectTimeout=` in the URL). */
  connectTimeoutMs?: number;
  /**
   * Extra connection attempts when one fails (default 1, so 2 in all, 100 ms then 200 ms ... apart;
   * `?connectRetries=` in the URL). After the last, the call fails with `StoreUnavailableError`.
   */
  connectRetries?: number;
  /** Per-command timeout in ms, a whole number from 1 to a day (default 10000). */
  commandTimeoutMs?: number;
  /** Extra Redis driver options (merged last; on a cluster, into every node's options). */
  redisOptions?: RedisDriverOptions;
  /** Extra Redis Cluster driver options (merged last). */
  clusterOptions?: RedisClusterDriverOptions;
  /** The URL to show in errors (default: `url`, password redacted). */
  displayUrl?: string;
  /** What `purgeExpired()` removes besides expired sessions. */
  retention?: RetentionOptions;
  /** The budgets and chunk size of `store.blobs` (kept under the same prefix), or `url` to keep them elsewhere. */
  blobs?: BlobOptions;
}

export class RedisSessionStore implements SessionStore {
  readonly kind = "redis" as const;
  readonly url: string;
  readonly prefix: string;
  readonly messages: MessageLog;
  readonly streams: RedisStreamBuffer;
  readonly blobs: BlobStore;
  readonly retention?: RetentionPolicy;
  private readonly codec: SessionCodec;
  /** How owners and titles are kept at rest (an encrypting codec's protection), if at all. */
  private readonly protection: SessionMetaProtection | undefined;
  /** The codec writes binary rows (an encrypting codec): bodies are kept as binary strings. */
  private readonly binaryRows: boolean;
  /** The codec reads its context (owner, revision): `usesContext(codec)`, taken once. */
  private readonly contextual: boolean;
  /** The driver's client, connected on demand. */
  private readonly connector: RedisConnector;
  /** The format marker under `P meta` was read once and is one this code can use (or absent). */
  private formatOk = false;
  /** The format check in flight, shared by the calls that wait for it. */
  private formatCheck: Promise<void> | undefined;
  /** True on a Redis Cluster (hash-tagged buckets). */
  readonly cluster: boolean;
  /** The buckets: one (the prefix itself) standalone, `REDIS_CLUSTER_BUCKETS` on a cluster. @internal */
  readonly buckets: readonly Bucket[];
  /** @internal */
  readonly keys: RedisKeys;

  constructor(options: RedisStoreOptions) {
    this.url = options.displayUrl ?? redactUrl(options.url);
    this.prefix = options.prefix ?? "statebag:";
    this.cluster = Boolean(options.cluster);
    // The prefix is checked first (keys.ts), then every part of the URL (connection.ts), before any connection.
    this.keys = new RedisKeys(this.prefix, this.cluster);
    this.connector = new RedisConnector(options, this.url);
    this.codec = options.codec ?? defaultSessionCodec();
    this.protection = metaProtectionOf(this.codec);
    this.binaryRows = binaryRowsOf(this.codec) !== undefined;
    this.contextual = usesContext(this.codec);
    this.buckets = this.keys.buckets;
    this.messages = new RedisMessageLog(this, options.messageCodec ?? defaultMessageCodec);
    this.streams = new RedisStreamBuffer(this, chunkCodec(this.codec), () => this.duplicateConnection());
    this.blobs = storeBlobs(options.blobs, this.codec, { backend: new RedisBlobBackend(this), where: this.url });
    this.retention = checkRetention(options.retention);
    // A page of a bulk migration in one round trip, where a save is one script: standalone, and a
    // codec that ignores its context (no revision drawn first). Elsewhere, one save at a time.
    if (!this.cluster && !this.contextual) this[SAVE_BATCH] = (entries) => this.saveBatch(entries);
  }

  /** The batch save (batch-save.ts), on a store where a save is one script; undefined elsewhere. @internal */
  readonly [SAVE_BATCH]?: SaveBatch;

  /**
   * Connects if needed and runs `fn`, mapping connection failures. The first call on this store
   * object (and every call until it passes) first reads the format marker, refusing a newer format
   * with `StoreNotSetUpError`; `checkFormat: false` skips that (setup, teardown). @internal
   */
  call<T, A = undefined>(
    operation: string,
    write: boolean,
    fn: (client: ScriptedClient, arg: A) => Promise<T>,
    checkFormat = true,
    arg?: A,
  ): Promise<T> {
    // The common case (connected, database selected, format read): the command's promise with the
    // error mapping attached, no async frame of its own around it (one promise and an await per
    // call less; a call is one command, so that was a visible part of its time).
    let client: ScriptedClient;
    try {
      client = this.connector.client;
    } catch (error) {
      return Promise.reject(error);
    }
    if (client.status !== "ready" || !this.connector.selected || (checkFormat && !this.formatOk))
      return this.callSlow(operation, write, fn, checkFormat, arg);
    let sent: Promise<T>;
    try {
      sent = fn(client, arg as A);
    } catch (error) {
      return Promise.reject(this.failure(error, operation, write, true, client));
    }
    return sent.catch((error: unknown) => {
      throw this.failure(error, operation, write, true, client);
    });
  }

  /** `call` when the client must connect first or the format marker is still to be read. */
  private async callSlow<T, A>(
    operation: string,
    write: boolean,
    fn: (client: ScriptedClient, arg: A) => Promise<T>,
    checkFormat: boolean,
    arg: A | undefined,
  ): Promise<T> {
    const connector = this.connector;
    let client = connector.client;
    if (client.status !== "ready" || !connector.selected) client = await connector.connect(operation);
    let sent = false;
    try {
      if (checkFormat && !this.formatOk) await this.checkFormat(client);
      sent = true;
      return await fn(client, arg as A);
    } catch (error) {
      throw this.failure(error, operation, write, sent, client);
    }
  }

  /**
   * A call's failure as the store reports it: `sent` says whether the command itself was sent (a
   * write whose outcome is unknown), as against the format check before it.
   */
  private failure(error: unknown, operation: string, write: boolean, sent: boolean, client: ScriptedClient): unknown {
    const connector = this.connector;
    if (error instanceof StoreNotSetUpError || error instanceof StoreKeyConflictError) return error;
    if (connector.isWrongKind(error)) return connector.wrongKind(error as Error);
    if (error instanceof Error && /^WRONGTYPE\b/.test(error.message)) {
      return new StoreKeyConflictError(
        this.url,
        this.prefix,
        `a key ${operation} uses holds another type of value (${error.message.split("\n")[0]})`,
      );
    }
    if (isUnavailable(error)) {
      // A reply (LOADING, BUSY, READONLY, OOM, ...) means the server is up but refusing work; the
      // client's status is no guide: it can still read "ready" just after the socket closed.
      const refused = (error as Error).name === "ReplyError";
      // The server closed the socket (the client has not seen it yet): the next call starts a new
      // connection rather than fail on this one until ioredis notices.
      if (!this.cluster && /Stream isn't writeable/.test((error as Error).message)) connector.discard(client);
      return new StoreUnavailableError("Redis", this.url, operation, {
        cause: error,
        // "Stream isn't writeable" means it was never sent (nor was anything when the format check failed).
        outcomeUnknown: write && sent && !/Stream isn't writeable/.test((error as Error).message),
        hint: refused ? "the server answered with an error meaning it cannot serve requests right now" : undefined,
      });
    }
    return error;
  }

  /**
   * Reads the format marker once (concurrent first calls share the read). An absent marker (a
   * prefix never set up) is fine: Redis needs no setup. A newer format is refused, and checked
   * again on the next call.
   */
  private checkFormat(client: ScriptedClient): Promise<void> {
    return (this.formatCheck ??= this.readFormat(client).finally(() => {
      this.formatCheck = undefined;
    }));
  }

  private async readFormat(client: ScriptedClient): Promise<void> {
    const [format] = await Promise.all([
      client.hget(this.keys.meta, "format"),
      this.cluster ? this.standaloneKeys(client) : this.checkStandaloneLayout(client),
    ]);
    if (format !== null && Number(format) > REDIS_FORMAT_VERSION) {
      throw this.newerFormat(
        format,
        "upgrade statebag in this app to the release that wrote the store, or use another key prefix",
      );
    }
    this.formatOk = true;
  }

  /**
   * Standalone: refuses a prefix inside a format-1 store's keys (that store's upgrade would take
   * this one's keys), and a prefix that still holds format-1 keys (not moved by `store setup` yet).
   */
  private async checkStandaloneLayout(client: ScriptedClient): Promise<void> {
    const [outer, legacy] = await Promise.all([this.enclosingStore(client), this.hasLegacyKeys(client)]);
    if (outer !== null) throw this.insideLegacy(outer);
    if (legacy) {
      throw new StoreNotSetUpError(
        this.url,
        `the Redis store at ${this.url} (prefix ${quoted(this.prefix, 200)}) holds sessions in the key layout of earlier statebag releases (format 1, not isolated from stores whose prefix starts with this one), which this release does not read`,
        `stop the apps that run an earlier statebag, then run \`statebag store setup --store <this URL>\` once: it moves the keys to the current layout (nothing is lost; safe to run again if interrupted)`,
      );
    }
  }

  private insideLegacy(outer: string): StoreKeyConflictError {
    return new StoreKeyConflictError(
      this.url,
      this.prefix,
      `its keys lie inside those of the store with prefix ${quoted(outer, 200)}, which has the key layout of earlier releases (a session or message log there has an id starting with ${quoted(this.prefix.slice(outer.length), 200)}); run \`statebag store setup\` for that store first (it moves its keys to the current layout), or use another prefix`,
    );
  }

  /** Whether format-1 keys are under the prefix: its revision counter or index, right after the prefix. */
  private async hasLegacyKeys(client: RedisClientLike): Promise<boolean> {
    const old = this.keys.legacy;
    const [idx, rev] = await Promise.all([client.type(old.idx), client.type(old.rev)]);
    return idx === "zset" || rev === "string";
  }

  /**
   * On a cluster: refuses a prefix holding keys of a standalone layout (copied in at key level,
   * e.g. by `redis-cli --cluster import`), which this store would not see. Cluster stores cannot
   * nest (their keys are `P{n}...` or `Pmeta`, and a prefix has no braces), so no other check is needed.
   */
  private async standaloneKeys(client: ScriptedClient): Promise<null> {
    const keys = this.keys.standaloneMarkers();
    const counts = await Promise.all(keys.map((key) => client.exists(key)));
    const first = keys.find((_, i) => counts[i] > 0);
    if (first !== undefined) {
      throw new StoreNotSetUpError(
        this.url,
        `the Redis Cluster store at ${this.url} (prefix ${quoted(this.prefix, 200)}) holds keys of the standalone layout (${quoted(first, 200)}), which a cluster store does not read`,
        'copy the sessions and message logs through the API from a standalone store into the cluster store (README, "Redis Cluster"), or use another prefix',
      );
    }
    return null;
  }

  /** The prefix of a format-1 store whose keys would contain this one's, if one is in use. */
  private async enclosingStore(client: ScriptedClient): Promise<string | null> {
    const candidates = enclosingPrefixes(this.prefix);
    return candidates.length === 0 ? null : runOuter(client, candidates);
  }

  private newerFormat(format: string, hint: string): StoreNotSetUpError {
    return new StoreNotSetUpError(
      this.url,
      `the Redis store at ${this.url} (prefix ${quoted(this.prefix, 200)}) has storage format ${shownText(format, 40)}, newer than this statebag knows (${REDIS_FORMAT_VERSION})`,
      hint,
    );
  }

  /**
   * Records the format version under `P meta` (Redis needs no DDL). Refuses to mark a newer format
   * as older. On a standalone server, first moves keys of the format-1 layout (earlier releases) to
   * the current one (upgrade.ts).
   */
  async setup(): Promise<SetupResult> {
    const { before, moved } = await this.call(
      "setup",
      true,
      async (c) => {
        const old = await c.hget(this.keys.meta, "format");
        if (old !== null && Number(old) > REDIS_FORMAT_VERSION) return { before: old, moved: 0 };
        let moved = 0;
        if (!this.cluster) {
          const outer = await this.enclosingStore(c);
          if (outer !== null) throw this.insideLegacy(outer);
          if (await this.hasLegacyKeys(c)) moved = await this.upgrade(c);
        } else {
          await this.standaloneKeys(c);
        }
        if (old !== String(REDIS_FORMAT_VERSION)) await c.hset(this.keys.meta, "format", String(REDIS_FORMAT_VERSION));
        return { before: old, moved };
      },
      false,
    );
    if (before !== null && Number(before) > REDIS_FORMAT_VERSION) {
      throw this.newerFormat(before, "run setup with the newer statebag release that wrote it");
    }
    this.formatOk = true;
    return { version: REDIS_FORMAT_VERSION, changed: before !== String(REDIS_FORMAT_VERSION) || moved > 0 };
  }

  /** Moves this prefix's format-1 keys to format 2. */
  private upgrade(c: ScriptedClient): Promise<number> {
    return upgradeLegacyLayout(
      c,
      this.keys.legacyMove(),
      (detail) =>
        new StoreKeyConflictError(this.url, this.prefix, `upgrading its keys to the current layout: ${detail}`),
    );
  }

  async get(id: string): Promise<StoredSession | undefined> {
    checkId(id);
    // A codec of binary rows: the hash read as bytes, the body kept as bytes when it is a binary row.
    const read: (c: ScriptedClient, key: string) => Promise<(string | Buffer | null)[]> = this.binaryRows
      ? readSessionBytes
      : readSession;
    const values = await this.call("get", false, read, true, this.keys.session(id));
    const fields = sessionFields("get", values);
    const data = values[6];
    if (fields === null || data === null) return undefined;
    this.remember(id, fields.owner);
    const meta = this.metaOf(fields, id);
    // The context (owner, revision) only for a codec that reads it (the built-in codecs ignore it).
    const session = this.contextual
      ? loadStoredSession(this.codec, id, data, this.url, { owner: meta.owner, revision: fields.revision })
      : loadStoredSession(this.codec, id, data, this.url);
    return { session, revision: fields.revision, meta };
  }

  /** A session's metadata from its hash fields, the owner and title decrypted when protected. */
  private metaOf(fields: SessionFields, id: string, strict = true): StoredSessionMeta {
    if (this.protection === undefined)
      return storedMeta(fields.owner, fields.title, labelsOf(fields.labels), fields.createdAt, fields.updatedAt);
    const { owner, title } = readMeta(this.protection, id, fields.owner, fields.title, strict);
    return storedMeta(owner ?? null, title ?? null, labelsOf(fields.labels), fields.createdAt, fields.updatedAt);
  }

  /** The stored form of an owner (protected under an encrypting codec). */
  private ownerForm(owner: string): string {
    return this.protection === undefined ? owner : this.protection.owner(owner);
  }

  /** Owners seen by `get` (a context-using codec serializes an update for the stored owner without another read). */
  private readonly owners = new Map<string, string | null>();

  private remember(id: string, owner: string | null): void {
    if (!this.contextual) return;
    if (this.owners.size >= 10_000) this.owners.clear();
    this.owners.set(id, owner);
  }

  async save(session: AgentSession, options: SaveOptions): Promise<number> {
    const plan = this.planSave(session, options);
    const { id, expected, meta, keys } = plan;
    const protection = this.protection;
    // Cluster: a create names its owner index first (a pending candidate), so a crash after the
    // session is written never leaves it out of its owner's list (keys.ts).
    const pending = this.cluster && meta.owner !== undefined && expected === null ? Date.now() : undefined;
    if (pending !== undefined)
      await this.indexOp("save", this.keys.owner(plan.ownerArg!), {
        op: "add",
        id,
        updatedAt: pending,
        labels: plan.labels,
      });
    // A codec that uses its context binds the revision the row is written under: drawn first from
    // the bucket's counter (one more round trip; it also reads the stored owner and revision).
    let drawn: number | undefined;
    let protect: SaveProtect | undefined;
    if (this.contextual) {
      const draw = await this.call("save", true, (c) => runDraw(c, keys));
      if (draw.current !== expected) {
        await this.abortPending(id, pending, plan.ownerArg);
        throw new ConflictError(id, expected, draw.current);
      }
      drawn = draw.drawn;
      const stored = draw.owner;
      if (expected !== null) {
        plan.storedOwner = stored ?? undefined;
        if (meta.owner === undefined) plan.codecOwner = this.plainOwner(stored);
        // A row written before (plaintext owner or title) keeps its stored owner for this save and
        // gets the protected forms right after it.
        if (protection !== undefined && plaintextMeta(protection, stored, draw.title)) {
          if (stored !== null && meta.owner !== undefined && this.plainOwner(stored) === meta.owner)
            plan.ownerArg = stored;
          const title =
            draw.title === null || meta.title !== undefined || protection.isProtectedTitle(draw.title)
              ? ""
              : protection.title(id, protection.readTitle(id, draw.title));
          protect = { from: stored ?? "", to: stored === null ? "" : this.ownerForm(this.plainOwner(stored)!), title };
        }
      }
    }
    let reply: SaveScriptReply;
    for (let attempt = 0; ; attempt++) {
      reply = await this.call("save", true, runSaveNow, true, this.saveInput(plan, session, drawn));
      if (reply.status !== "codec-owner" || attempt > 0) break;
      plan.storedOwner = reply.storedOwner ?? undefined;
      plan.codecOwner = this.plainOwner(plan.storedOwner);
    }
    return this.finishSave(plan, reply, pending, protect);
  }

  /**
   * `save` before any round trip: the checks, the metadata as the script takes it, and the owner
   * the body is serialized for. Throws what `save` throws before its script.
   */
  private planSave(session: AgentSession, options: SaveOptions): SavePlan {
    const id = sessionId(session);
    const { expected, ttlMs } = checkSave(options);
    const meta = checkMeta(options);
    const keys = this.keys.of(id);
    // The owner the body is serialized for: the given one, else (an update) the stored one as far as
    // this store object knows; the script refuses a wrong guess (reply 3) and it is serialized again.
    // Protected owners and titles (an encrypting codec): the hash and the owner index hold their
    // protected forms (the owner's index keys are named by it); the codec sees the plaintext owner.
    const protection = this.protection;
    const codecOwner = meta.owner ?? (expected === null ? undefined : this.plainOwner(this.owners.get(id)));
    // The owner as stored, which the script compares: the given one's form, or (an update) what is stored.
    const ownerArg = meta.owner === undefined ? undefined : this.ownerForm(meta.owner);
    const storedOwner = ownerArg ?? (expected === null ? undefined : (this.owners.get(id) ?? undefined));
    const titleArg =
      meta.title === undefined || protection === undefined ? meta.title : protection.title(id, meta.title);
    const labels = meta.labels === undefined ? "" : JSON.stringify(meta.labels);
    return { id, expected, ttlMs, meta, keys, codecOwner, ownerArg, storedOwner, titleArg, labels };
  }

  /** The save script's input: the body serialized for the plan's owner (and the drawn revision, if any). */
  private saveInput(plan: SavePlan, session: AgentSession, drawn: number | undefined): SaveScriptInput {
    const { meta, codecOwner, storedOwner } = plan;
    const text =
      drawn === undefined
        ? serializeRow(this.codec, session, { owner: codecOwner })
        : serializeRow(this.codec, session, { owner: codecOwner, revision: drawn });
    return {
      keys: plan.keys,
      id: plan.id,
      expected: plan.expected,
      text,
      ttlMs: plan.ttlMs,
      nowMs: 0, // taken as the script is sent (runSaveNow)
      meta: {
        owner: plan.ownerArg,
        codecOwner: this.contextual ? (storedOwner ?? null) : undefined,
        title: plan.titleArg,
        labels: meta.labels === undefined ? undefined : plan.labels,
        inlineIndex: !this.cluster,
        ownerPrefix: this.buckets[0].prefix,
        drawnRevision: drawn,
      },
    };
  }

  /**
   * `save` after its script: the refusal the reply says (thrown), else the protected forms of a
   * row written before (`protect`), the owner remembered and, on a cluster, the owner index.
   */
  private async finishSave(
    plan: SavePlan,
    reply: SaveScriptReply,
    pending: number | undefined,
    protect: SaveProtect | undefined,
  ): Promise<number> {
    const { id, expected, meta, keys } = plan;
    if (reply.status !== "saved") {
      await this.abortPending(id, pending, plan.ownerArg);
      if (reply.status === "other-owner") throw new SessionOwnerError(id, meta.owner!);
      throw new ConflictError(id, expected, reply.status === "conflict" ? reply.current : null);
    }
    const { revision, updatedAt } = reply;
    const storedLabels = reply.labels ?? "";
    let owner = reply.owner;
    if (protect !== undefined && (owner ?? "") === protect.from) {
      // The protected forms for a row written before: the hash (if still at this revision), then
      // its owner index entry moves to the protected owner's keys (list repairs a leftover).
      const { from, to, title } = protect;
      const moved = await this.call("save", true, (c) => runProtect(c, { keys, id, revision, from, to, title }));
      if (moved && to !== from) {
        owner = to;
        await this.indexOp("save", this.keys.owner(to), {
          op: "commit",
          id,
          revision,
          updatedAt,
          labels: storedLabels,
        });
        await this.indexOp("save", this.keys.owner(from), { op: "drop", id, revision }).catch(() => undefined);
      }
    }
    this.remember(id, owner);
    if (this.cluster) {
      // The session is saved: a failure from here on is only an outdated index entry, which `list` repairs.
      const followUps: Promise<unknown>[] = [];
      if (owner !== null)
        followUps.push(
          this.indexOp("save", this.keys.owner(owner), {
            op: "commit",
            id,
            revision,
            updatedAt,
            labels: storedLabels,
            pendingUpdatedAt: pending,
          }),
        );
      followUps.push(this.dropExpired(reply.expired));
      await Promise.all(followUps.map((p) => p.catch(() => undefined)));
    }
    return revision;
  }

  /**
   * A page of a bulk migration in one round trip (one MULTI ... EXEC; see batch-save.ts), each
   * session saved by `save`'s own steps. Only a store that offers `SAVE_BATCH` (standalone, a codec
   * that ignores its context) calls it.
   */
  private saveBatch(entries: readonly BatchSaveEntry[]): Promise<BatchSaveResult[]> {
    return saveInOneTransaction(entries, {
      prepare: (entry) => {
        const plan = this.planSave(entry.session, entry.options);
        return { plan, input: this.saveInput(plan, entry.session, undefined) };
      },
      send: (inputs) =>
        this.call("saveBatch", true, async (c) =>
          // An error a session's script replied with, as `save` would report it.
          (await sendSaves(c, inputs)).map((sent) =>
            sent.ok ? sent : { ok: false as const, error: this.failure(sent.error, "save", true, true, c) },
          ),
        ),
      finish: (plan, reply) => this.finishSave(plan, reply, undefined, undefined),
      saveAlone: (entry) => this.save(entry.session, entry.options),
    });
  }

  /** A stored owner as the codec sees it (decrypted when protected); undefined for none. */
  private plainOwner(stored: string | null | undefined): string | undefined {
    return stored == null ? undefined : this.protection === undefined ? stored : this.protection.readOwner(stored);
  }

  /** Cluster: drops the pending candidate a create added to its owner's index (the save did not happen). */
  private async abortPending(id: string, pending: number | undefined, ownerArg: string | undefined): Promise<void> {
    if (pending !== undefined)
      await this.indexOp("save", this.keys.owner(ownerArg!), {
        op: "abort",
        id,
        pendingUpdatedAt: pending,
      }).catch(() => undefined);
  }

  /** One change to an owner's index (the INDEX script, scripts.ts). */
  private indexOp(operation: string, ownerKeys: OwnerKeys, change: IndexScriptOp): Promise<boolean> {
    return this.call(operation, true, (c) => runIndex(c, ownerKeys, change));
  }

  /** Cluster: drops the owner index entries of expired sessions a sweep returned. */
  private async dropExpired(entries: readonly ExpiredOwnerEntry[]): Promise<void> {
    await Promise.all(
      entries.map((entry) =>
        this.indexOp("purgeExpired", this.keys.owner(entry.owner), {
          op: "drop",
          id: entry.id,
          revision: entry.revision,
        }),
      ),
    );
  }

  async delete(id: string, options?: DeleteOptions): Promise<boolean> {
    checkId(id);
    const expected = checkDelete(options);
    const keys = this.keys.of(id);
    const reply = await this.call("delete", true, (c) =>
      runDelete(c, { keys, id, expected, inlineIndex: !this.cluster, ownerPrefix: this.buckets[0].prefix }),
    );
    if (reply.status === "conflict") throw new ConflictError(id, expected ?? null, reply.current);
    // The session's stream buffers go with it (whether or not a session was there).
    await this.streams.deleteForSession(id);
    this.owners.delete(id);
    // Cluster: the session is gone; its owner's index entry goes next (a leftover is dropped by `list`).
    if (this.cluster && reply.status === "deleted" && reply.owner !== null)
      await this.indexOp("delete", this.keys.owner(reply.owner), {
        op: "drop",
        id,
        revision: reply.revision,
      }).catch(() => undefined);
    return reply.status === "deleted";
  }

  /**
   * One page of an owner's sessions: candidates from the owner's index (one script in the owner's
   * slot) with each candidate's metadata fields from its session hash (never the body; standalone
   * read by the same script, on a cluster one read per session after it, batched per node), kept
   * only when they agree (same owner, filters, and for the newest-first order the same updatedAt).
   * Entries that disagree are repaired from the session (keys.ts) and the index is read further.
   */
  async list(options: ListOptions): Promise<ListPage> {
    const { owner, labels, updatedBefore, updatedAfter, order, cursor, limit } = checkList(options);
    const byTime = order === "updatedAt desc";
    const form = this.ownerForm(owner);
    const ownerKeys = this.keys.owner(form);
    const wantedLabels = JSON.stringify(labels);
    const want = limit + 1;
    // Standalone, the index script reads each candidate's session too: a page is one call.
    const inline = !this.cluster && this.listSessionsInline;
    return this.call("list", false, async (c) => {
      // A protecting store refuses to list an owner that still has plaintext-owner sessions: the
      // plaintext owner's index is read (first page only), each entry checked against its session.
      if (this.protection !== undefined && cursor === undefined) {
        for (const other of this.protection.otherForms(owner)) {
          const ids = await c.zrange(this.keys.owner(other).oi, 0, 99);
          const metas = await this.readMetas(c, ids);
          if (metas.some((found) => found?.owner === other)) throw plaintextOwnerError(this.url);
        }
      }
      const found: { item: ListItem; updated: number }[] = [];
      const repairs: Promise<unknown>[] = [];
      // A checked cursor's time is a safe integer; past the index's 15 digits (year 33658) it is
      // after every stored time, which the largest 15-digit position says as well.
      let after =
        cursor === undefined
          ? ""
          : byTime
            ? position(Math.min(Number(cursor.updated), MAX_POSITION)) + cursor.id
            : cursor.id;
      for (let exhausted = false; found.length < want && !exhausted; ) {
        const page = await runList(c, {
          keys: ownerKeys,
          order,
          after,
          wanted: want - found.length,
          updatedAfter,
          updatedBefore,
          labels: wantedLabels === "{}" ? undefined : wantedLabels,
          sessions: inline ? { sessionPrefix: this.buckets[0].sessionPrefix, owner: form } : undefined,
        });
        exhausted = page.exhausted;
        after = page.last;
        const metas =
          page.sessions ??
          (await this.readMetas(
            c,
            page.candidates.map((cand) => cand.id),
          ));
        for (const [index, candidate] of page.candidates.entries()) {
          const stored = metas[index];
          // The session as stored, when it is this owner's (a leftover entry may name another's or none).
          const mine = stored !== undefined && stored.owner === form ? stored : undefined;
          const updated = mine?.updatedAt ?? Number.NaN;
          const shown =
            mine !== undefined &&
            (!byTime || updated === candidate.updatedAt) &&
            labelsMatch(labelsOf(mine.labels), labels) &&
            (updatedBefore === undefined || updated < updatedBefore) &&
            (updatedAfter === undefined || updated > updatedAfter);
          if (shown) {
            const item: ListItem = {
              id: candidate.id,
              revision: mine.revision,
              meta: this.metaOf(mine, candidate.id, false),
            };
            if (mine.pttl > 0) item.ttlMs = mine.pttl;
            found.push({ item, updated });
          }
          // The entry as the session implies: one committed candidate at its revision and updatedAt.
          const exact =
            mine !== undefined &&
            (JSON.parse(candidate.entry) as { u: number; r: number }[]).every(
              (entry) => entry.r === mine.revision && entry.u === updated,
            );
          if (!exact) {
            repairs.push(
              runIndex(c, ownerKeys, {
                op: "repair",
                id: candidate.id,
                seen: candidate.entry,
                session: mine && { revision: mine.revision, updatedAt: updated, labels: mine.labels ?? "" },
              }).catch(() => undefined),
            );
          }
        }
      }
      await Promise.all(repairs);
      const items = found.slice(0, limit).map((entry) => entry.item);
      if (found.length <= limit) return { items };
      const last = found[limit - 1];
      return { items, cursor: encodeCursor({ order, updated: String(last.updated), id: last.item.id }) };
    });
  }

  /**
   * `list` reads each candidate's session in the index script (standalone). False: one read per
   * candidate after the script, as on a cluster (tests compare the two). @internal
   */
  listSessionsInline = true;

  /** The metadata of the sessions `ids` (one read each), batched per node on a cluster (runMetas). */
  private readMetas(c: ScriptedClient, ids: readonly string[]): Promise<(MetaScriptReply | undefined)[]> {
    const keys = ids.map((id) => this.keys.of(id).session);
    if (!this.cluster) return runMetas(c, keys);
    const slots = (c as unknown as RedisClusterLike).slots;
    return runMetas(c, keys, (key) => slots[keySlot(key)]?.[0]);
  }

  async scan(options?: ScanOptions): Promise<ScanPage> {
    const { cursor, limit, includeText } = checkScan(options);
    if (this.cluster) return this.call("scan", false, (c) => this.scanBuckets(c, cursor, limit, includeText));
    const bucket = this.buckets[0];
    const records = await this.call("scan", false, (c) =>
      runScan(c, { bucket, after: cursor ?? "", wanted: limit + 1, withText: includeText, binary: this.binaryRows }),
    );
    const items = [];
    for (const record of records) {
      // PTTL: -1 no expiry (a positive value is the time left).
      const pttl = record.pttl ?? 0;
      const item =
        record.text !== undefined
          ? scanItem(record.id, record.fields.revision, storedText(record.text), pttl > 0 ? pttl : undefined)
          : scanItem(record.id, record.fields.revision);
      item.meta = this.metaOf(record.fields, record.id, false);
      if (plaintextMeta(this.protection, record.fields.owner, record.fields.title)) item.plaintextMeta = true;
      items.push(item);
    }
    return scanPage(items, limit);
  }

  /**
   * One page of a cluster scan: the first `limit + 1` live ids after `cursor` over all buckets. Each
   * bucket is asked for a share (its SCAN script drops index entries of expired sessions, as on a
   * standalone server); a bucket that filled its share and might still hold ids below the page's
   * last one is asked again for more, so the merge is exact. Texts are then read per session.
   */
  private async scanBuckets(
    c: ScriptedClient,
    cursor: string | undefined,
    limit: number,
    includeText: boolean,
  ): Promise<ScanPage> {
    const want = limit + 1;
    const parts = this.buckets.map((bucket) => ({
      bucket,
      ids: [] as string[],
      revisions: [] as number[],
      metas: [] as StoredSessionMeta[],
      plain: [] as boolean[],
      full: true,
      share: Math.max(4, Math.ceil((2 * want) / this.buckets.length)),
    }));
    let pending = parts;
    for (;;) {
      await Promise.all(
        pending.map(async (part) => {
          const after = part.ids.length ? part.ids[part.ids.length - 1] : (cursor ?? "");
          const records = await runScan(c, { bucket: part.bucket, after, wanted: part.share, withText: false });
          for (const { id, fields } of records) {
            part.ids.push(id);
            part.revisions.push(fields.revision);
            part.metas.push(this.metaOf(fields, id, false));
            part.plain.push(plaintextMeta(this.protection, fields.owner, fields.title));
          }
          part.full = records.length === part.share;
          part.share *= 2;
        }),
      );
      const merged = parts.flatMap((part) => part.ids).sort(compareIds);
      const bound = merged.length >= want ? merged[want - 1] : undefined;
      pending = parts.filter(
        (part) => part.full && (bound === undefined || compareIds(part.ids[part.ids.length - 1], bound) < 0),
      );
      if (pending.length === 0) break;
    }
    const all = parts
      .flatMap((part) =>
        part.ids.map((id, i) => ({ id, revision: part.revisions[i], meta: part.metas[i], plain: part.plain[i] })),
      )
      .sort((a, b) => compareIds(a.id, b.id));
    const page = all.slice(0, limit);
    const next = all.length > limit ? page[page.length - 1].id : undefined;
    if (!includeText)
      return {
        items: page.map((x) => ({
          ...scanItem(x.id, x.revision),
          meta: x.meta,
          ...(x.plain ? { plaintextMeta: true } : {}),
        })),
        ...(next === undefined ? {} : { cursor: next }),
      };
    // A session deleted or expired since its id was listed is left out; the cursor still moves on.
    const texts = await Promise.all(page.map((entry) => runText(c, this.keys.of(entry.id).session, this.binaryRows)));
    const items = [];
    for (const [index, entry] of page.entries()) {
      const found = texts[index];
      if (!found) continue;
      const { fields, pttl } = found;
      const item = scanItem(entry.id, fields.revision, storedText(found.text), pttl > 0 ? pttl : undefined);
      item.meta = this.metaOf(fields, entry.id, false);
      if (plaintextMeta(this.protection, fields.owner, fields.title)) item.plaintextMeta = true;
      items.push(item);
    }
    return { items, ...(next === undefined ? {} : { cursor: next }) };
  }

  async purgeExpired(): Promise<number> {
    return this.call("purgeExpired", true, async (c) => {
      const nowMs = Date.now();
      const replies = await Promise.all(
        this.buckets.map((bucket) => runPurge(c, { bucket, nowMs, inlineIndex: !this.cluster })),
      );
      // Cluster: the expired sessions' owner index entries, in their owners' slots.
      if (this.cluster) await Promise.all(replies.map((reply) => this.dropExpired(reply.expired)));
      return replies.reduce((sum, reply) => sum + reply.removed, 0);
    }).then(async (removed) =>
      this.retention ? removed + (await purgeRetention(this, this.retention)).sessions : removed,
    );
  }

  /**
   * The contract's erasure (erasure.ts: `list` finds each session, repairing stale index entries),
   * then the owner's index keys, once no session of the owner is left: entries a crashed save left
   * (pending candidates, with their labels) go too.
   */
  async eraseOwner(owner: string, options?: EraseOptions): Promise<EraseReceipt> {
    const receipt = await eraseOwnerSessions(this, owner, options);
    const form = this.ownerForm(owner);
    const ownerKeys = this.keys.owner(form);
    await this.call("eraseOwner", true, async (c) => {
      const ids = await c.zrange(ownerKeys.oi, 0, -1);
      const metas = await this.readMetas(c, ids);
      // A session of the owner created meanwhile keeps the index (a later erase finds it).
      if (metas.some((found) => found?.owner === form)) return;
      await c.del(ownerKeys.ou, ownerKeys.oi, ownerKeys.om);
    });
    return { ...receipt, finishedAt: new Date().toISOString() };
  }
  async close(): Promise<void> {
    this.streams.close();
    await this.blobs.close(); // a bucket's client (blobs.url), if any
    await this.connector.close();
  }

  /** A second connection like the store's, connected and on its database (a stream follower's XREAD BLOCK). */
  private async duplicateConnection(): Promise<RedisClientLike> {
    const source = this.connector.client as unknown as { duplicate(...args: unknown[]): RedisClientLike };
    // Standalone: the driver's own command timeout, which the store's client keeps in CommandDeadlines instead (connection.ts).
    const client = this.cluster
      ? source.duplicate()
      : source.duplicate({ commandTimeout: this.connector.driverCommandTimeout });
    client.on("error", () => undefined); // failures reach the follower through its command
    try {
      await client.connect();
      if (this.connector.database !== 0) await client.select(this.connector.database);
    } catch (error) {
      client.disconnect();
      throw error;
    }
    return client;
  }

  /**
   * Deletes every key of this store (SCAN + UNLINK): `P{}*` standalone, `P{*` on a cluster, and
   * `P meta`. Never another store's keys, whatever its prefix (`P{` starts no other store's keys).
   * Keys of the format-1 layout are left alone (`store setup` moves them first). For tests and teardown only.
   */
  async deleteAll(): Promise<number> {
    return this.call(
      "deleteAll",
      true,
      async (c) => {
        let removed = 0;
        // `P*` lists other stores' keys too (`p:tenant2:...` under `p:`): only `P{...` and `P meta` are this store's.
        const pattern = this.keys.pattern;
        // On a cluster every master holds part of the keys; one UNLINK per key (a multi-key UNLINK must stay in one slot).
        const servers: RedisClientLike[] = this.cluster ? (c as unknown as RedisClusterLike).nodes("master") : [c];
        for (const server of servers) {
          let cursor = "0";
          do {
            const [next, found] = await server.scan(cursor, "MATCH", pattern, "COUNT", 1000);
            const keys = found.filter((key) => this.keys.owns(key));
            cursor = next;
            if (keys.length === 0) continue;
            if (!this.cluster) removed += await server.unlink(...keys);
            else removed += (await Promise.all(keys.map((key) => server.unlink(key)))).reduce((sum, n) => sum + n, 0);
          } while (cursor !== "0");
        }
        return removed;
      },
      false,
    );
  }
}
