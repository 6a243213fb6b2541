/**
 * Binary rows are built and read through buffers the envelope reuses (the plaintext encoded into
 * and decrypted into one zeroed buffer; the SQLite store's rows built in another, "transient"
 * rows). These tests hold the fast paths to the documented format and to each other: rows of
 * different sizes in sequence never carry bytes of another row, the reused plaintext buffer holds
 * no plaintext between calls (after a failed decryption too), and a store writes and reads back
 * exactly each session it was given.
 */
import { createDecipheriv, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { makeSession } from "../../bench/sessions.js";
import type { AgentSession } from "../../src/index.js";
import {
  type Binding,
  openBinary,
  plaintextScratchIsClear,
  sealBinary,
} from "../../src/runtime/stores/encryption/envelope.js";
import {
  createKeyring,
  DecryptionError,
  encryptedSessionCodec,
  openStore,
  type SessionStore,
} from "../../src/stores.js";

const keyring = createKeyring({ current: "k1", keys: { k1: randomBytes(32) } });
const binding: Binding = { kind: "session", store: "app", id: "s-1", owner: "ada", revision: 7 };

/**
 * Reads a binary row the slow, documented way (envelope.ts: the header field by field, the
 * associated data as the JSON array, one whole-buffer decryption), independent of the code under test.
 */
function referenceOpen(row: Uint8Array, b: Binding): string {
  const bytes = Buffer.from(row);
  expect(bytes.subarray(0, 5)).toEqual(Buffer.from([0x00, 0x53, 0x42, 0x45, 3]));
  const flags = bytes[5];
  const kidLength = bytes[6];
  const kid = bytes.toString("latin1", 7, 7 + kidLength);
  let at = 7 + kidLength;
  const iv = bytes.subarray(at, at + 12);
  const tag = bytes.subarray(at + 12, at + 28);
  at += 28 + 9 * (flags & 4 ? 3 : 2);
  let position: number | null = null;
  let revision: number | null = null;
  if (flags & 1) {
    position = Number(bytes.readBigUInt64BE(at));
    at += 8;
  }
  if (flags & 2) {
    revision = Number(bytes.readBigUInt64BE(at));
    at += 8;
  }
  const aad = ["statebag.encrypted", 3, kid, b.kind, b.store, b.id, position, b.owner ?? null, revision];
  const decipher = createDecipheriv("aes-256-gcm", keyring.key(kid)!.cipher, iv);
  decipher.setAAD(Buffer.from(JSON.stringify(aad)));
  decipher.setAuthTag(tag);
  const plain = Buffer.concat([decipher.update(bytes.subarray(at)), decipher.final()]);
  return plain.toString("utf8");
}

/** The header length of a row for `binding` (key id "k1", owner and revision bound). */
const HEADER = 7 + 2 + 12 + 16 + 27 + 8;

/** Texts of sizes around the cipher's 64 KiB pieces and the reused buffers' sizes, in an order that shrinks and grows. */
function texts(): string[] {
  const sizes = [300_001, 10, 0, 65_536, 65_537, 131_079, 1, 65_535, 200_000, 3];
  const out: string[] = [];
  for (const [i, size] of sizes.entries()) {
    // ASCII, Latin-1, three-byte and four-byte UTF-8, and a lone surrogate (written as U+FFFD).
    const unit = ["a", "é", "€", "😀", "x\ud800"][i % 5];
    out.push(unit.repeat(Math.ceil(size / unit.length)).slice(0, size));
  }
  return out;
}

function decryptionReason(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DecryptionError);
    return (error as DecryptionError).reason;
  }
  throw new Error("expected a DecryptionError");
}

describe("binary rows through the reused buffers", () => {
  it("seal rows of shrinking and growing sizes, transient or not, each exactly its own text in the documented format", () => {
    const kept: { row: Buffer; copy: Buffer; text: string }[] = [];
    for (const text of texts()) {
      const expected = Buffer.from(text, "utf8");
      for (const transient of [false, true]) {
        const row = sealBinary(keyring, binding, text, transient);
        expect(row.length).toBe(HEADER + expected.length);
        expect(referenceOpen(row, binding)).toBe(expected.toString("utf8"));
        expect(openBinary(keyring, binding, row, "a row")).toBe(expected.toString("utf8"));
        expect(plaintextScratchIsClear()).toBe(true);
        if (!transient) kept.push({ row, copy: Buffer.from(row), text: expected.toString("utf8") });
      }
    }
    // A row that is not transient is a buffer of its own: later seals (transient or not) never touch it.
    for (const { row, copy, text } of kept) {
      expect(row.equals(copy)).toBe(true);
      expect(openBinary(keyring, binding, row, "a row")).toBe(text);
    }
  });

  it("a transient row is the reused buffer: valid until the next transient seal, which another row overwrites", () => {
    const first = sealBinary(keyring, binding, "first ".repeat(1000), true);
    const copy = Buffer.from(first);
    sealBinary(keyring, binding, "second", false); // not transient: leaves it alone
    expect(first.equals(copy)).toBe(true);
    const second = sealBinary(keyring, binding, "second ".repeat(10), true);
    expect(second.buffer).toBe(first.buffer);
    expect(second.length).toBe(HEADER + 70);
    expect(openBinary(keyring, binding, second, "a row")).toBe("second ".repeat(10));
    expect(openBinary(keyring, binding, copy, "a row")).toBe("first ".repeat(1000));
  });

  it("open rows of shrinking and growing sizes, with failed decryptions in between: each is its own text, the buffer left clear", () => {
    const rows = texts().map((text) => ({
      text: Buffer.from(text).toString("utf8"),
      row: sealBinary(keyring, binding, text),
    }));
    for (const [i, { text, row }] of rows.entries()) {
      expect(openBinary(keyring, binding, row, "a row")).toBe(text);
      expect(plaintextScratchIsClear()).toBe(true);
      // A tampered row (last ciphertext byte, or the tag) and a row read as another revision fail
      // after their plaintext went through the reused buffer: it is zeroed all the same.
      const tampered = Buffer.from(row);
      tampered[tampered.length > HEADER ? tampered.length - 1 : 7 + 2 + 12] ^= 1;
      expect(decryptionReason(() => openBinary(keyring, binding, tampered, "a row"))).toBe("tampered");
      expect(plaintextScratchIsClear()).toBe(true);
      expect(decryptionReason(() => openBinary(keyring, { ...binding, revision: 8 }, row, "a row"))).toBe("binding");
      expect(plaintextScratchIsClear()).toBe(true);
      // The next (smaller or larger) row after a failure reads as itself.
      const next = rows[(i + 1) % rows.length];
      expect(openBinary(keyring, binding, next.row, "a row")).toBe(next.text);
    }
  });

  it("plaintexts above the reused buffer's size (4 MiB) take buffers of their own, in the same format", () => {
    for (const text of ["z".repeat((4 << 20) + 3), "é".repeat((2 << 20) + 1), "€".repeat(1_400_000)]) {
      for (const transient of [false, true]) {
        const row = sealBinary(keyring, binding, text, transient);
        expect(row.length).toBe(HEADER + Buffer.byteLength(text));
        expect(referenceOpen(row, binding)).toBe(text);
        expect(openBinary(keyring, binding, row, "a row")).toBe(text);
        expect(plaintextScratchIsClear()).toBe(true);
      }
    }
  });
});

describe("SQLite stores writing transient rows", () => {
  let dir: string | undefined;
  const stores: SessionStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("two encrypted stores saving sessions of different sizes in turn each load back exactly what was saved", async () => {
    dir = mkdtempSync(join(tmpdir(), "statebag-reuse-"));
    const open = async (name: string) => {
      const codec = encryptedSessionCodec({ keyring: { current: "k", keys: { k: randomBytes(32) } }, store: name });
      const store = await openStore(`sqlite:${join(dir!, `${name}.db`)}`, { codec });
      stores.push(store);
      return store;
    };
    const [a, b] = [await open("a"), await open("b")];
    const withText = (session: AgentSession, text: string): AgentSession => {
      const copy = structuredClone(session);
      const history = copy.stateBag["statebag.chatHistory"] as unknown as {
        messages: { contents: { text?: string }[] }[];
      };
      history.messages[0].contents[0].text = text;
      return copy;
    };
    const sizes = [1000, 3, 400, 0, 1001, 20];
    const revisions = new Map<string, number | null>();
    const latest = new Map<string, AgentSession>();
    for (const [round, messages] of sizes.entries()) {
      for (const [store, name] of [
        [a, "a"],
        [b, "b"],
      ] as const) {
        for (const id of ["s-1", "s-2"]) {
          const key = `${name}/${id}`;
          let session = makeSession({ messages, id, seed: round });
          if (messages > 0) session = withText(session, `${name} ${id} ${round} é€😀`);
          const owner = id === "s-1" ? "ada" : undefined;
          revisions.set(
            key,
            await store.save(session, { expectedRevision: revisions.get(key) ?? null, ...(owner ? { owner } : {}) }),
          );
          latest.set(key, session);
        }
      }
      // Every row of both stores, written in between, reads back as its own latest session.
      for (const [store, name] of [
        [a, "a"],
        [b, "b"],
      ] as const) {
        for (const id of ["s-1", "s-2"]) {
          const loaded = await store.get(id);
          expect(loaded?.revision).toBe(revisions.get(`${name}/${id}`));
          expect(loaded?.session).toEqual(latest.get(`${name}/${id}`));
        }
      }
    }
    expect(plaintextScratchIsClear()).toBe(true);
    // At rest, each row is a binary row of exactly its header and ciphertext: the tag covers all of it.
    await a.close();
    const db = new DatabaseSync(join(dir, "a.db"), { readOnly: true });
    try {
      const rows = db.prepare("SELECT id, data FROM statebag_sessions ORDER BY id").all() as {
        id: string;
        data: Uint8Array;
      }[];
      expect(rows.map((row) => row.id)).toEqual(["s-1", "s-2"]);
      for (const row of rows) {
        expect(row.data).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(row.data).subarray(0, 4)).toEqual(Buffer.from("\u0000SBE", "latin1"));
      }
    } finally {
      db.close();
    }
  });
});
