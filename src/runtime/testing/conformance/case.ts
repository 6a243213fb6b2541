/**
 * What a contract case is: one clause of the `SessionStore` contract, the capabilities it needs,
 * and its check against a store. The fixtures the cases share live here too.
 */
import type { AgentSession, ChatMessage } from "../../../index.js";
import type { BlobOptions, MessageCodec, SessionCodec, SessionStore } from "../../../stores.js";
import type { Clause } from "./check.js";

/**
 * Parts of the contract a store may not offer. A store declares the ones it lacks up front
 * (`skip`), and their cases show up as skipped, with the reason, instead of failing.
 * - `messageLog`: `store.messages` (append/get/read/replace/trim/delete messages);
 * - `scan`: `store.scan` (paging through every session; migrateStore needs it);
 * - `ttl`: `save(..., { ttlMs })` expiry and `purgeExpired`;
 * - `codec`: `open({ codec })` passing a custom `SessionCodec` through to the store;
 * - `listing`: session metadata (`SaveOptions.meta`, `StoredSession.meta`, `ScanItem.meta`) and
 *   `store.list`, the codec context (owner, log id) the store passes its codecs, and what builds on
 *   them: retention (`purgeRetention`) and erasure requests (`store.eraseOwner`);
 * - `verbatimText`: the store keeps the default codec's text byte for byte and `scan({ includeText })`
 *   returns it (a store whose codec transforms rows, e.g. encryption, lacks it: its text is an envelope);
 * - `streams`: `store.streams`, the stream buffers of running replies (resumable chat streams);
 * - `blobs`: `store.blobs`, files kept beside the sessions by SHA-256 and owner, and `open({ blobs })`
 *   passing the blob budgets through.
 */
export type StoreCapability =
  | "messageLog"
  | "scan"
  | "ttl"
  | "codec"
  | "listing"
  | "verbatimText"
  | "streams"
  | "blobs";
export const STORE_CAPABILITIES: readonly StoreCapability[] = [
  "messageLog",
  "scan",
  "ttl",
  "codec",
  "listing",
  "verbatimText",
  "streams",
  "blobs",
];

/** What a case runs with. */
export interface CaseContext {
  /** The store opened for the whole run (shared by the cases; each uses its own ids). */
  readonly store: SessionStore;
  /** Opens another store on a fresh, empty location; closed by the case with `close`. */
  open(options?: { codec?: SessionCodec; messageCodec?: MessageCodec; blobs?: BlobOptions }): Promise<SessionStore>;
  close(store: SessionStore): Promise<void>;
  /** A session id unique within the run, starting with `label`. */
  id(label: string): string;
  /** The clause's assertions. */
  readonly check: Clause;
}

export interface ContractCase {
  area: string;
  clause: string;
  requires?: readonly StoreCapability[];
  run(context: CaseContext): Promise<void>;
}

/** A session whose state is a counter (a `$type`-tagged provider state). */
export function counterSession(id: string, value = 0, extra: Record<string, unknown> = {}): AgentSession {
  return { id, stateBag: { counter: { $type: "test.Counter", value, ...extra } } };
}

export function counterOf(session: AgentSession): number {
  return (session.stateBag.counter as unknown as { value: number }).value;
}

export const user = (text: string): ChatMessage => ({ role: "user", contents: [{ $type: "text", text }] });
export const texts = (messages: ChatMessage[]): string[] =>
  messages.map((m) => (m.contents[0] as { text: string }).text);

/** The order scan returns ids in: binary order of their UTF-8 bytes. */
export function compareIds(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** Every item of a store's scan, page by page. */
export async function scanAll(store: SessionStore, options: { includeText?: boolean } = {}) {
  const items = [];
  let cursor: string | undefined;
  do {
    const page = await store.scan({ cursor, limit: 1000, ...options });
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return items;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
