/**
 * The envelope's strict parsing and its format: every character outside the base64url alphabet in
 * `iv`, `ct` or `tag` is a malformed row (the check is no longer a regex, so this is tested over
 * every UTF-16 code unit), and rows written by earlier releases (version 1, no revision bound)
 * keep loading.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSessionData } from "../../src/index.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { decodeBase64url, open, seal } from "../../src/runtime/stores/encryption/envelope.js";
import { createKeyring, DecryptionError, encryptedMessageCodec, encryptedSessionCodec } from "../../src/stores.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const inAlphabet = (c: number) => ALPHABET.includes(String.fromCharCode(c));
/** Code units Node's lenient decoder could take for a valid character: '+', '/', or a low byte that is one. */
const lookalike = (c: number) => !inAlphabet(c) && (inAlphabet(c & 0xff) || (c & 0xff) === 0x2b || (c & 0xff) === 0x2f);

function reason(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof DecryptionError) return error.reason;
    throw error;
  }
  return undefined;
}

describe("decodeBase64url", () => {
  it("decodes every length unpadded base64url can have, exactly as Node encodes it", () => {
    for (let n = 0; n <= 64; n++) {
      const bytes = randomBytes(n);
      expect(decodeBase64url(bytes.toString("base64url"))).toEqual(bytes);
    }
  });

  it("refuses lengths that are not unpadded base64url, and padding", () => {
    for (const text of ["A", "AAAAA", "AAAAAAAAA", "AA==", "AAA=", "AAAA===="])
      expect(decodeBase64url(text)).toBe(undefined);
  });

  it("refuses every UTF-16 code unit outside the alphabet, at every position modulo 4", () => {
    const accepted: string[] = [];
    for (const valid of [
      randomBytes(15).toString("base64url"),
      randomBytes(16).toString("base64url"),
      randomBytes(17).toString("base64url"),
    ]) {
      expect(valid.length % 4).not.toBe(1);
      for (const at of [0, 1, 2, 3, valid.length - 1]) {
        for (let c = 0; c < 0x10000; c++) {
          if (inAlphabet(c)) continue;
          const text = valid.slice(0, at) + String.fromCharCode(c) + valid.slice(at + 1);
          if (decodeBase64url(text) !== undefined) accepted.push(`U+${c.toString(16)} at ${at} of ${valid.length}`);
        }
      }
    }
    expect(accepted).toEqual([]);
  });

  it("refuses a character outside the alphabet inside a long text (the two-byte string path)", () => {
    const valid = randomBytes(3000).toString("base64url");
    for (const c of [
      0x2b, 0x2f, 0x3d, 0x20, 0x0a, 0x00, 0x80, 0xff, 0x141, 0x12b, 0x12f, 0x3141, 0xd800, 0xdc00, 0xffff,
    ]) {
      expect(decodeBase64url(`${valid.slice(0, 1000)}${String.fromCharCode(c)}${valid.slice(1001)}`)).toBe(undefined);
      expect(decodeBase64url(`${valid}${String.fromCharCode(c)}`)).toBe(undefined);
    }
  });
});

describe("seal and open", () => {
  const keyring = createKeyring({ current: "k1", keys: { k1: randomBytes(32) } });
  const binding = { kind: "message" as const, store: "app", id: "log-a", position: 2 };

  it("round-trip texts of every size around the base64 chunks, ASCII or not, in canonical base64url", () => {
    // seal writes the ciphertext's base64url 49,152 bytes at a time.
    for (const size of [0, 1, 2, 3, 4, 49151, 49152, 49153, 98303, 98304, 98305, 150001]) {
      for (const text of ["x".repeat(size), `é${"y".repeat(Math.max(0, size - 2))}`, "€✓".repeat(size >> 3)]) {
        const sealed = seal(keyring, binding, text);
        const doc = JSON.parse(sealed) as { ct: string; iv: string; tag: string };
        expect(doc.ct).toBe(Buffer.from(doc.ct, "base64url").toString("base64url"));
        expect(Buffer.from(doc.ct, "base64url")).toHaveLength(Buffer.byteLength(text));
        expect(open(keyring, binding, sealed, "a row")).toBe(text);
      }
    }
  });
});

describe("envelope parsing", () => {
  const codec = encryptedSessionCodec({ keyring: { current: "k1", keys: { k1: randomBytes(32) } }, store: "app" });
  const text = codec.serialize(createSessionData({ id: "alice-1" }));
  const field = (name: "iv" | "ct" | "tag") => {
    const start = text.indexOf(`"${name}":"`) + name.length + 4;
    return { start, end: text.indexOf('"', start) };
  };

  it("a character outside the alphabet in iv, ct or tag is a malformed row, never a decryption attempt", () => {
    const notMalformed: string[] = [];
    for (const name of ["iv", "ct", "tag"] as const) {
      const { start, end } = field(name);
      for (const at of [start, start + 1, start + 2, start + 3, end - 1]) {
        for (let c = 0; c < 0x10000; c++) {
          // Every ASCII and Latin-1 character, and every code unit a lenient decoder could misread.
          if (inAlphabet(c) || (c >= 0x100 && !lookalike(c))) continue;
          const bad = text.slice(0, at) + String.fromCharCode(c) + text.slice(at + 1);
          const r = reason(() => codec.deserialize(bad, "alice-1"));
          if (r !== "malformed") notMalformed.push(`${name}: U+${c.toString(16)} at ${at - start} -> ${r}`);
        }
      }
    }
    expect(notMalformed).toEqual([]);
    expect(codec.deserialize(text, "alice-1").id).toBe("alice-1");
  });

  it("a field cut short, lengthened or emptied is malformed (impossible lengths) or fails the tag", () => {
    for (const name of ["iv", "ct", "tag"] as const) {
      const { start, end } = field(name);
      for (const bad of [text.slice(0, end - 1) + text.slice(end), `${text.slice(0, end)}A${text.slice(end)}`]) {
        expect(["malformed", "tampered"]).toContain(reason(() => codec.deserialize(bad, "alice-1")));
      }
      // An empty ct is well-formed (an empty plaintext) and fails the tag; iv and tag have fixed sizes.
      expect(reason(() => codec.deserialize(text.slice(0, start) + text.slice(end), "alice-1"))).toBe(
        name === "ct" ? "tampered" : "malformed",
      );
    }
  });
});

describe("format v1 rows written by earlier releases", () => {
  // Written by statebag before the envelope code was reworked for speed (key: 32 bytes of 7).
  const ring = { current: "k1", keys: { k1: Buffer.alloc(32, 7) } };
  const session =
    '{"format":"statebag.encrypted","v":1,"kid":"k1","iv":"EvJv13H5ugdLQkLG","ct":"Uszp0_VP1ErJyKGVODT-Wt9MkdBy7qOvkCXgGqC3yDl6U_PDlNA691hTZ1RKilsOtdf_4h8h3dT8J99dRb1NyfkGphCwaoxdm2SqvCuk-MnEC2rmwX1a1g","tag":"QVlrw0hqlL1AXWNprcACow","b":{"s":"PeK5_a9eUZrS","i":"fUsY_T5iogtW","o":"6_hcfr52Yn7E"}}';
  const message =
    '{"format":"statebag.encrypted","v":1,"kid":"k1","iv":"393zd0PsorGzJYBg","ct":"D8UE9EAPHrUnGjZXDdVnPQJtzZZ_fJGe_RV0Bdl0pn0xca_I6_4nkxKY9Im0THZfR7PcUic0nvIMHb_HAJx-OfU","tag":"i6jmj2-JN0eVUFMiHHAzQg","b":{"s":"PeK5_a9eUZrS","i":"m9XVK0hFIsys","p":3}}';

  it("load, with their binding still enforced", () => {
    const sessions = encryptedSessionCodec({ keyring: ring, store: "app" });
    expect(sessions.deserialize(session, "alice-1", { owner: "alice" })).toMatchObject({ id: "alice-1" });
    expect(reason(() => sessions.deserialize(session, "alice-1", { owner: "bob" }))).toBe("binding");
    const messages = encryptedMessageCodec({ keyring: ring, store: "app" });
    expect(messages.deserialize(message, { logId: "log-a", seq: 3 })).toEqual({
      role: "user",
      contents: [{ $type: "text", text: "héllo ✓" }],
    } as ChatMessage);
    expect(reason(() => messages.deserialize(message, { logId: "log-a", seq: 4 }))).toBe("binding");
    expect(
      reason(() => messages.deserialize(message.replace('"ct":"D8', '"ct":"D9'), { logId: "log-a", seq: 3 })),
    ).toBe("tampered");
  });

  it("load whatever revision the store reads them at (they bind none), and a v2 row cannot pose as one", () => {
    const sessions = encryptedSessionCodec({ keyring: ring, store: "app" });
    for (const revision of [1, 7, 123456])
      expect(sessions.deserialize(session, "alice-1", { owner: "alice", revision }).id).toBe("alice-1");
    const bound = sessions.serialize(createSessionData({ id: "alice-1" }), { owner: "alice", revision: 5 });
    // Relabelled as version 1, with or without its revision fingerprint: never opens.
    expect(reason(() => sessions.deserialize(bound.replace('"v":2', '"v":1'), "alice-1", { owner: "alice" }))).toBe(
      "malformed",
    );
    const unpinned = bound.replace('"v":2', '"v":1').replace(',"r":5', "");
    expect(reason(() => sessions.deserialize(unpinned, "alice-1", { owner: "alice", revision: 5 }))).toBe("tampered");
  });

  it("what is written now is version 2, with the same layout plus the bound revision, and reads back", () => {
    const sessions = encryptedSessionCodec({ keyring: ring, store: "app" });
    const text = sessions.serialize(createSessionData({ id: "alice-1" }), { owner: "alice", revision: 42 });
    expect(text).toMatch(
      /^\{"format":"statebag\.encrypted","v":2,"kid":"k1","iv":"[\w-]{16}","ct":"[\w-]+","tag":"[\w-]{22}","b":\{"s":"PeK5_a9eUZrS","i":"fUsY_T5iogtW","o":"6_hcfr52Yn7E","r":42\}\}$/,
    );
    expect(sessions.deserialize(text, "alice-1", { owner: "alice", revision: 42 }).id).toBe("alice-1");
  });
});
