/**
 * The texts a session codec wrote recently, to recognize a row read back unchanged.
 *
 * A chat turn reads the row the turn before it wrote: in one process that row's text is what this
 * codec produced after checking every value (the fused check accepted it: every value valid at its
 * latest version, nothing to migrate or preserve). A read whose text is exactly that text (string
 * equality: a memory compare, ~0.02 ms for 300 KB) needs no check again; any other text, written
 * by another process, another version or by hand, is checked in full. Only the text's equality
 * counts, never where it came from, so a stale entry can cost time but never let anything through.
 *
 * Bounded: by characters held (least recently written first out) and by age (an entry older than
 * `maxAgeMs` is dropped when met), so the text of a deleted or erased session does not outlive
 * it in memory by more than that.
 */
import { ConfigurationError } from "../core/errors.js";

/** How much the codec keeps: `false` keeps nothing (every read checked). */
export type WrittenCacheOptions = false | { maxChars?: number; maxAgeMs?: number };

/** 16 Mi characters (one-byte strings: 16 MiB), at most 5 minutes each. */
export const DEFAULT_WRITTEN_CACHE = { maxChars: 16 * 1024 * 1024, maxAgeMs: 5 * 60_000 } as const;

interface Entry {
  text: string;
  at: number;
}

export class WrittenTexts {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;
  private readonly maxChars: number;
  private readonly maxAgeMs: number;

  constructor(options: { maxChars?: number; maxAgeMs?: number } = {}) {
    this.maxChars = checkedBound(options.maxChars, DEFAULT_WRITTEN_CACHE.maxChars, "maxChars");
    this.maxAgeMs = checkedBound(options.maxAgeMs, DEFAULT_WRITTEN_CACHE.maxAgeMs, "maxAgeMs");
  }

  /** Notes `text` as the checked text last written for `key` (replacing what was noted for it). */
  remember(key: string, text: string): void {
    this.forget(key);
    // A text that would take more than a quarter of the budget is not kept: it would push out the rest.
    if (text.length > this.maxChars / 4 || this.maxAgeMs === 0) return;
    const now = Date.now();
    this.entries.set(key, { text, at: now });
    this.chars += text.length;
    // Oldest first: Map keeps insertion order, and `remember` re-inserts.
    for (const [oldKey, entry] of this.entries) {
      if (this.chars <= this.maxChars && now - entry.at <= this.maxAgeMs) break;
      this.drop(oldKey, entry);
    }
  }

  /** Whether `text` is exactly the checked text last written for `key`, within its age. */
  holds(key: string, text: string): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    if (Date.now() - entry.at > this.maxAgeMs) {
      this.drop(key, entry);
      return false;
    }
    return entry.text === text;
  }

  /** Drops what was noted for `key`. */
  forget(key: string): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) this.drop(key, entry);
  }

  /** The number of characters held (for tests and diagnostics). */
  get size(): number {
    return this.chars;
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.chars -= entry.text.length;
  }
}

function checkedBound(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value >= 0) || !Number.isFinite(value))
    throw new ConfigurationError(
      `writtenCache.${name} must be a finite number >= 0, got ${typeof value === "number" ? String(value) : typeof value}`,
      "pass a number of characters (maxChars) or milliseconds (maxAgeMs), or writtenCache: false to keep nothing",
    );
  return value;
}
