/** Stores for the bulk migration tests: seeding stored texts exactly as older code wrote them. */
import type { AgentSession } from "../../src/runtime/core/session.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { markContextFree } from "../../src/runtime/stores/listing.js";
import type { SessionCodec, SessionStore } from "../../src/runtime/stores/types.js";
import type { Backend } from "../stores/helpers.js";
import { envelope, testCodec } from "./helpers.js";

/**
 * The test registry's codec, except that a session whose id has a seeded raw text is written as
 * that text, byte for byte (even one no codec would write: broken, newer, bare).
 */
export class SeedingCodec implements SessionCodec {
  readonly raw = new Map<string, string>();
  private readonly inner = testCodec();
  serialize(session: AgentSession): string {
    return this.raw.get(session.id) ?? this.inner.serialize(session);
  }
  deserialize(text: string): AgentSession {
    return this.inner.deserialize(text);
  }
}

export interface SeededStore {
  store: SessionStore;
  url: string;
  codec: SeedingCodec;
  /** Writes `text` under `id` as it is (create). Returns the revision. */
  seedRaw(id: string, text: string, ttlMs?: number): Promise<number>;
  /** Writes the session in the stored form (envelope), unvalidated. */
  seed(session: AgentSession, ttlMs?: number): Promise<number>;
  /** Every stored item: id -> { revision, text }. */
  dump(): Promise<Map<string, { revision: number; text: string; ttlMs?: number }>>;
  done(): Promise<void>;
}

/**
 * `contextFree`: the codec is marked as ignoring its context, as statebag's own codecs are (a
 * store then serializes before any round trip, and the Redis store saves in batches).
 */
export async function seededStore(backend: Backend, options?: { contextFree?: boolean }): Promise<SeededStore> {
  const { url, cleanup } = await backend.location();
  const codec = new SeedingCodec();
  if (options?.contextFree) markContextFree(codec);
  const store = await openStore(url, { codec });
  const seedRaw = async (id: string, text: string, ttlMs?: number) => {
    codec.raw.set(id, text);
    try {
      return await store.save({ id, stateBag: {} }, { expectedRevision: null, ...(ttlMs ? { ttlMs } : {}) });
    } finally {
      codec.raw.delete(id);
    }
  };
  return {
    store,
    url,
    codec,
    seedRaw,
    seed: (session, ttlMs) => seedRaw(session.id, envelope(session), ttlMs),
    async dump() {
      const out = new Map<string, { revision: number; text: string; ttlMs?: number }>();
      let cursor: string | undefined;
      do {
        const page = await store.scan({ cursor, limit: 1000, includeText: true });
        for (const item of page.items)
          out.set(item.id, {
            revision: item.revision,
            text: item.text!,
            ...(item.ttlMs !== undefined ? { ttlMs: item.ttlMs } : {}),
          });
        cursor = page.cursor;
      } while (cursor !== undefined);
      return out;
    },
    async done() {
      await store.close();
      await cleanup();
    },
  };
}
