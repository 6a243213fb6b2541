/**
 * The Redis key layout: the storage format of the Redis store (with the Lua scripts in scripts.ts
 * that read and write these keys). Every key name the store builds comes from here.
 *
 * Under the key prefix `P` (default `statebag:`) on a standalone server:
 *   P{}s:<id>   hash {r: revision, d: serialized session}; TTL via PEXPIRE
 *   P{}rev      revision counter (INCR), shared by sessions and message logs
 *   P{}idx      sorted set (all scores 0) of session ids: `scan` pages through it with ZRANGEBYLEX
 *   P{}exp      sorted set of ids with a TTL, scored by expiry time, to drop expired ids from `idx`
 *   P{}ml:<id>  list of serialized messages; P{}mh:<id> hash {v: version}; P{}mo:<id> set of operation ids
 *   P meta      hash {format}
 * Format 3 adds the session metadata and the per-owner index (issue #23):
 *   P{}s:<id>   also {o: owner, t: title, l: labels JSON, c: createdAt ms, u: updatedAt ms} (no `o`: unowned;
 *               no `c`/`u`: stored before format 3, shown as the epoch until its next save)
 *   P{}xo       hash id -> owner NUL revision, for owned sessions with a TTL (their owner is gone with the hash
 *               when they expire; the sweep and `purgeExpired` read it to drop the owner's index entry)
 *   P{}ou:<o>   owner o's sessions, newest first: members inv(updatedAt) (15 digits) + id, all scores 0
 *   P{}oi:<o>   owner o's session ids (scores 0, byte order, for `order: "id"`)
 *   P{}om:<o>   hash id -> JSON array of index candidates {u, r, l, w} (see scripts.ts); labels for filtering
 * `list` reads the owner's index for a page of candidates and each candidate's metadata fields
 * (never `d`): standalone in the same script (one slot), on a cluster one read per session after
 * it, batched per node; it returns only those whose stored owner, updatedAt and labels match: the
 * session hash is the truth, the index a superset of it.
 * Stream buffers (`store.streams`; no format change: new keys only), in the SESSION's bucket so one
 * script changes a stream and its session's set, on a cluster too:
 *   P{}st:<stream>  hash {sid: session, st: status, n: length, sr: stop requested 0/1, le: lease end ms,
 *                   o: the owner as the encrypting codec sealed it}; PEXPIRE lease + a day while running,
 *                   keepMs once finished
 *   P{}sx:<stream>  Redis Stream of the chunks: entry 0-(p+1) = {c: chunk p}; finish adds 0-(n+1) = {end: status}
 *                   (what wakes XREAD BLOCK followers); same expiry as the hash
 *   P{}ss:<session> set of the session's stream ids (members whose hash expired are dropped at each open)
 *   P{}sl:<stream>  string: the stream's session id, in the STREAM id's bucket (a call naming only the
 *                   stream finds its session's bucket through it); expires with the stream
 * `{}` ends the prefix (a prefix may not contain it), so no store's keys start with another
 * store's `P{}`: the stores `p:` and `p:tenant2:` never see, scan or delete each other's keys.
 * Format 1 (earlier releases) had no `{}`; `store setup` moves such keys (upgrade.ts), and
 * until then the store refuses to run (`StoreNotSetUpError`) rather than miss them.
 *
 * On a Redis Cluster a script may only touch keys of one hash slot, so the same layout is split
 * into 1,024 buckets, each under its own hash tag:
 * `P{n}s:<id>`, `P{n}rev`, `P{n}idx`, `P{n}exp`, `P{n}ml:<id>`, ... with n = CRC16(id) mod 1024.
 * A session, its revision counter, its index entries and its message log (same id) share one
 * slot, so every script runs unchanged inside one bucket; revisions still increase across
 * delete and re-create (the counter is per bucket, never deleted). A cluster prefix has no
 * braces, so `P{` is prefix-free too.
 *
 * The owner index lives in the owner's bucket, n = CRC16(owner) mod 1024 (`P{n}ou:<owner>`, ...), so
 * one page is one script in one slot however many sessions the owner has, never a key scan. A
 * session's keys live in its id's bucket, so on a cluster (unless both buckets are the same slot)
 * no script can change both; standalone, every script changes both atomically. The cluster order:
 *   create: 1. `add` a pending candidate (r = 0) to the owner's index; 2. the CAS save; 3. `commit`
 *           the stored revision, updatedAt and labels (or `abort` the pending one on a conflict).
 *   update: 1. the CAS save (a session never changes owner, so it is already in its owner's index);
 *           2. `commit`.
 *   delete / expiry: 1. the session goes (the script returns its owner and revision; expiring
 *           sessions keep theirs in `P{n}xo`); 2. `drop` that revision's candidates.
 * Repair rule: a crash between the steps leaves the index a superset (an extra or outdated
 * candidate), never a subset: an id is indexed before its session exists under that owner and
 * leaves the index only after the session is gone. `list` shows a candidate only when the
 * session hash agrees (same owner, and for the newest-first order the same updatedAt), so a
 * leftover never shows another owner's session nor a session twice; it then `repair`s the
 * entry from the session (compare-and-set on the entry it read): the session's own candidate
 * is written, candidates of gone revisions are dropped, pending ones younger than 5 minutes
 * (a create between its steps) are kept.
 */
import { ConfigurationError } from "../../core/errors.js";
import { quoted } from "../../core/json.js";

/** Buckets of the cluster layout. Part of the storage format: changing it would hide existing keys. */
export const REDIS_CLUSTER_BUCKETS = 1024;

/** CRC16-XMODEM, the hash Redis Cluster uses for slots; here only to spread ids over buckets. */
const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let j = 0; j < 8; j++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, "utf8")) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc;
}

/**
 * A key's Redis Cluster hash slot (CRC16 of its hash tag, or of the whole key without one, mod
 * 16,384), as the server computes it: to group reads by the node that serves them.
 */
export function keySlot(key: string): number {
  const open = key.indexOf("{");
  if (open >= 0) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) return crc16(key.slice(open + 1, close)) & 16383;
  }
  return crc16(key) & 16383;
}

/** The keys one bucket shares: its revision counter and its index sets. */
export interface Bucket {
  /** Prefix of the bucket's keys: `P` standalone, `P{n}` on a cluster. */
  prefix: string;
  rev: string;
  idx: string;
  exp: string;
  /** Owned sessions with a TTL: id -> owner NUL revision. */
  xo: string;
  /** Prefix of session keys in this bucket (the scripts append the id). */
  sessionPrefix: string;
}

function bucketAt(prefix: string): Bucket {
  return {
    prefix,
    rev: `${prefix}rev`,
    idx: `${prefix}idx`,
    exp: `${prefix}exp`,
    xo: `${prefix}xo`,
    sessionPrefix: `${prefix}s:`,
  };
}

/** Every key of one id, with its bucket's shared keys. */
export interface RedisIdKeys extends Bucket {
  session: string;
  list: string;
  hdr: string;
  ops: string;
}

/**
 * What a standalone store's keys start with: the prefix and `{}`. A prefix may not contain `{}`,
 * so no store's `P{}` starts another's (`p:{}` vs `p:tenant2:{}`), and a key scan of one store
 * (`P{}*`) never matches another store's keys. A cluster store's `P{n}` is prefix-free the same
 * way (its prefix has no braces at all).
 */
const STANDALONE_TAG = "{}";

/** Format-1 key tags before an id, with the type each key holds. */
export const LEGACY_TAGS = [
  ["s:", "hash"],
  ["ml:", "list"],
  ["mh:", "hash"],
  ["mo:", "set"],
] as const;

/**
 * The prefixes of format-1 stores whose id-keyed keys would contain this prefix's keys: for
 * `app:s:x:`, the store `app:` (its session `x:...` is this store's `...`). Format-2 keys never
 * nest, but a format-1 store's upgrade would take such keys for its own.
 */
export function enclosingPrefixes(prefix: string): string[] {
  const out: string[] = [];
  for (const [tag] of LEGACY_TAGS) {
    for (let at = prefix.indexOf(tag); at >= 0; at = prefix.indexOf(tag, at + 1)) out.push(prefix.slice(0, at));
  }
  return out;
}

export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}

/** The keys of one store: its buckets, each id's keys, the format marker. */
export class RedisKeys {
  /** One bucket (the prefix and `{}`) standalone, `REDIS_CLUSTER_BUCKETS` (`P{n}`) on a cluster. */
  readonly buckets: readonly Bucket[];
  /** The format marker, a hash {format}. */
  readonly meta: string;
  /** What every key of this store but `meta` starts with: `P{}` standalone, `P{` on a cluster. */
  readonly root: string;

  constructor(
    readonly prefix: string,
    readonly cluster: boolean,
  ) {
    const keyPrefix = prefix;
    if (cluster && /[{}]/.test(keyPrefix)) {
      // A brace in the prefix would become (part of) the hash tag and put keys of one id in different slots.
      throw new ConfigurationError(
        `the Redis Cluster key prefix ${quoted(keyPrefix, 200)} contains "{" or "}"`,
        "use a prefix without braces (statebag adds its own hash tags on a cluster)",
      );
    }
    if (keyPrefix.includes(STANDALONE_TAG)) {
      // `{}` ends the prefix in every key: inside it, one store's keys could start another's.
      throw new ConfigurationError(
        `the Redis key prefix ${quoted(keyPrefix, 200)} contains "{}"`,
        'use a prefix without "{}" (statebag puts "{}" after the prefix to keep stores apart)',
      );
    }
    this.buckets = cluster
      ? Array.from({ length: REDIS_CLUSTER_BUCKETS }, (_, n) => bucketAt(`${keyPrefix}{${n}}`))
      : [bucketAt(`${keyPrefix}${STANDALONE_TAG}`)];
    this.meta = `${keyPrefix}meta`;
    this.root = `${keyPrefix}${cluster ? "{" : STANDALONE_TAG}`;
  }

  /** Every key of one id, with its bucket's shared keys. */
  of(id: string): RedisIdKeys {
    const bucket = this.bucketOf(id);
    const bp = bucket.prefix;
    return { ...bucket, session: `${bp}s:${id}`, list: `${bp}ml:${id}`, hdr: `${bp}mh:${id}`, ops: `${bp}mo:${id}` };
  }

  /** A session's hash (what `of(id).session` names, without building the id's other keys). */
  session(id: string): string {
    return `${this.bucketOf(id).prefix}s:${id}`;
  }

  /** A stream's keys, in its session's bucket (with the session's set of streams). */
  stream(sessionId: string, streamId: string): StreamKeys {
    const bp = this.bucketOf(sessionId).prefix;
    return {
      meta: `${bp}st:${streamId}`,
      chunks: `${bp}sx:${streamId}`,
      session: `${bp}ss:${sessionId}`,
      metaPrefix: `${bp}st:`,
      chunksPrefix: `${bp}sx:`,
    };
  }

  /** Where a stream's session id is kept, in the stream id's own bucket. */
  streamLocator(streamId: string): string {
    return `${this.bucketOf(streamId).prefix}sl:${streamId}`;
  }

  /** One owner's index keys, in the owner's bucket (the same single bucket standalone). */
  owner(owner: string): OwnerKeys {
    const bp = this.bucketOf(owner).prefix;
    return { prefix: bp, ou: `${bp}ou:${owner}`, oi: `${bp}oi:${owner}`, om: `${bp}om:${owner}` };
  }

  private bucketOf(text: string): Bucket {
    return this.buckets.length === 1 ? this.buckets[0] : this.buckets[crc16(text) % REDIS_CLUSTER_BUCKETS];
  }

  /** A key-scan pattern for this store's keys; it matches stores whose prefix starts with this one's too (see `owns`). */
  get pattern(): string {
    return `${escapeGlob(this.prefix)}*`;
  }

  /** Whether a key is this store's (`P*` lists `p:tenant2:...` under `p:`: only `P{...` and `P meta` are). */
  owns(key: string): boolean {
    return key.startsWith(this.root) || key === this.meta;
  }

  /** The shared keys of the format-1 layout (right after the prefix), whose presence marks a format-1 store. */
  get legacy(): Bucket {
    return bucketAt(this.prefix);
  }

  /** The keys that show a standalone layout (format 1 or 2) under the prefix (a cluster store refuses them). */
  standaloneMarkers(): string[] {
    return [bucketAt(this.prefix), bucketAt(`${this.prefix}${STANDALONE_TAG}`)].flatMap((b) => [b.idx, b.rev]);
  }

  /** What `upgradeLegacyLayout` moves from format 1 to format 2 (standalone). */
  legacyMove(): LegacyKeys {
    const old = bucketAt(this.prefix);
    const cur = this.buckets[0];
    return {
      from: this.prefix,
      to: cur.prefix,
      idx: old.idx,
      exp: old.exp,
      rev: old.rev,
      newIdx: cur.idx,
      newExp: cur.exp,
      newRev: cur.rev,
    };
  }
}

/** A stream's keys (see the module comment). */
export interface StreamKeys {
  meta: string;
  chunks: string;
  /** The session's set of stream ids. */
  session: string;
  /** `meta` and `chunks` without the stream id, for scripts that name other streams of the session. */
  metaPrefix: string;
  chunksPrefix: string;
}

/** One owner's index: newest first (`ou`), by id (`oi`), candidates (`om`); `prefix` is its bucket's. */
export interface OwnerKeys {
  prefix: string;
  ou: string;
  oi: string;
  om: string;
}

export interface LegacyKeys {
  /** The store's prefix `P` (format-1 keys start right after it). */
  from: string;
  /** The format-2 key root, `P{}`. */
  to: string;
  idx: string;
  exp: string;
  rev: string;
  newIdx: string;
  newExp: string;
  newRev: string;
}

/** A key-scan pattern for the format-1 keys of one tag (`P s:*`). */
export function legacyPattern(keys: LegacyKeys, tag: string): string {
  return `${escapeGlob(keys.from + tag)}*`;
}

/** The format-2 name of a format-1 key: the same tail, after `P{}` instead of `P`. */
export function upgradedKey(keys: LegacyKeys, key: string): string {
  return keys.to + key.slice(keys.from.length);
}
