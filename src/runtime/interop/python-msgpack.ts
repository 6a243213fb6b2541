/**
 * MessagePack, as Agent Framework for Python writes it with msgspec: `FileSessionStore(...,
 * serialization_format="msgpack")` snapshots and `FileHistoryProvider` `.msgpack` records.
 *
 * `@msgpack/msgpack` is an optional peer dependency, loaded on first use (`loadMsgpack()`); when it
 * is absent the error says `npm i @msgpack/msgpack`. Decoding holds the bytes to the session
 * loader's limits (size first, then depth, keys and `__proto__` on the decoded value) and accepts
 * only what JSON can hold: maps with string keys, arrays, strings, finite numbers, booleans and
 * nil. Binary, extension (msgspec's datetimes) and non-finite values are refused with the JSON
 * pointer where they sit. Encoding writes what msgspec writes for JSON data (smallest integer and
 * string forms, float64 for non-integers, map keys in insertion order), so a document read and
 * written back is byte for byte the same; the one normalisation is that an integral float
 * (`1.0`) comes back as an integer, as it does through JSON.
 */
import { importOptional, importPackage } from "../core/optional-dependency.js";
import { jsonPointer } from "../core/json.js";
import { DEFAULT_JSON_LIMITS, checkJsonLimits, resolveLimits, type JsonLimits } from "../json/safe-json.js";
import { InteropError } from "./errors.js";
import type { SessionShape } from "./shapes.js";

/** What statebag uses of `@msgpack/msgpack`. */
export interface MsgpackCodec {
  encode(value: unknown): Uint8Array;
  /** Decodes one value; throws for anything JSON cannot hold, or bytes past `limits`. */
  decode(bytes: Uint8Array, limits?: JsonLimits): unknown;
}

interface MsgpackModule {
  encode(value: unknown, options?: Record<string, unknown>): Uint8Array;
  decode(bytes: Uint8Array, options?: Record<string, unknown>): unknown;
  ExtData: new (...args: never[]) => unknown;
}

const PACKAGE = "@msgpack/msgpack";
let loading: Promise<MsgpackCodec> | undefined;

/** Loads `@msgpack/msgpack` (an optional peer: `MissingDependencyError` naming `npm i @msgpack/msgpack` when absent). */
export function loadMsgpack(usedBy = "reading and writing Agent Framework's msgpack files"): Promise<MsgpackCodec> {
  loading ??= importOptional(PACKAGE, usedBy, () => importPackage<MsgpackModule>(PACKAGE)).then(
    codecOf,
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** The format name in error messages: a msgpack document is read as one of these shapes. */
type Reader = SessionShape | "python-history";

/** A msgpack decoding or content problem, as an InteropError of `shape`. */
export class MsgpackContentError extends Error {
  constructor(
    readonly pointer: string,
    readonly problem: string,
  ) {
    super(problem);
  }
}

function codecOf(module: MsgpackModule): MsgpackCodec {
  return {
    encode: (value) => module.encode(value, { ignoreUndefined: true, forceIntegerToFloat: false, sortKeys: false }),
    decode: (bytes, limits) => {
      const lim = resolveLimits(limits);
      if (bytes.byteLength > lim.maxBytes)
        throw new MsgpackContentError(
          "",
          `the msgpack data is ${bytes.byteLength} bytes, over the limit of ${lim.maxBytes}`,
        );
      let value: unknown;
      try {
        value = module.decode(bytes, {
          // Every element takes at least one byte: a header claiming more is refused before any allocation.
          maxStrLength: bytes.byteLength,
          maxBinLength: bytes.byteLength,
          maxArrayLength: bytes.byteLength,
          maxMapLength: bytes.byteLength,
          maxExtLength: bytes.byteLength,
          mapKeyConverter: (key: unknown) => {
            if (typeof key !== "string")
              throw new MsgpackContentError(
                "",
                `a map key is ${typeof key === "number" ? `the number ${key}` : `a ${typeof key}`}; Agent Framework's data has string keys only`,
              );
            return key;
          },
        });
      } catch (error) {
        if (error instanceof MsgpackContentError) throw error;
        const message = error instanceof Error ? error.message : String(error);
        throw new MsgpackContentError(
          "",
          /__proto__/.test(message)
            ? 'a map key "__proto__" (refused: it could change an object\'s prototype)'
            : `not valid msgpack: ${message.slice(0, 200)}`,
        );
      }
      checkJsonOnly(value, module.ExtData);
      checkJsonLimits(value, { ...lim, maxBytes: DEFAULT_JSON_LIMITS.maxBytes });
      return value;
    },
  };
}

/** Walks the decoded value (explicit stack: linear, any depth) and refuses what JSON cannot hold. */
function checkJsonOnly(root: unknown, ExtData: new (...args: never[]) => unknown): void {
  interface Node {
    value: unknown;
    key: string | number | undefined;
    parent: Node | undefined;
  }
  const pointerOf = (node: Node) => {
    const path: (string | number)[] = [];
    for (let n: Node | undefined = node; n?.key !== undefined; n = n.parent) path.push(n.key);
    return jsonPointer(path.reverse());
  };
  const stack: Node[] = [{ value: root, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const nodeValue = node.value;
    if (nodeValue === null || typeof nodeValue === "string" || typeof nodeValue === "boolean") continue;
    if (typeof nodeValue === "number") {
      if (!Number.isFinite(nodeValue))
        throw new MsgpackContentError(pointerOf(node), `a non-finite number (${nodeValue}) has no JSON form`);
      continue;
    }
    if (Array.isArray(nodeValue)) {
      for (let i = nodeValue.length - 1; i >= 0; i--) stack.push({ value: nodeValue[i], key: i, parent: node });
      continue;
    }
    if (nodeValue instanceof Uint8Array)
      throw new MsgpackContentError(pointerOf(node), "binary data (msgpack bin) has no JSON form");
    if (nodeValue instanceof ExtData || nodeValue instanceof Date)
      throw new MsgpackContentError(
        pointerOf(node),
        "a msgpack extension value (such as a msgspec datetime) has no JSON form",
      );
    if (typeof nodeValue === "object" && Object.getPrototypeOf(nodeValue) === Object.prototype) {
      const keys = Object.keys(nodeValue);
      for (let i = keys.length - 1; i >= 0; i--)
        stack.push({ value: (nodeValue as Record<string, unknown>)[keys[i]], key: keys[i], parent: node });
      continue;
    }
    throw new MsgpackContentError(pointerOf(node), `a value of type ${typeof nodeValue} has no JSON form`);
  }
}

/** Decodes a msgpack document for `shape`, as an InteropError (import) on any problem. */
export function decodeMsgpackDocument(
  codec: MsgpackCodec,
  bytes: Uint8Array,
  shape: Reader,
  limits?: JsonLimits,
  where = "",
): unknown {
  try {
    return codec.decode(bytes, limits);
  } catch (error) {
    if (error instanceof MsgpackContentError) {
      throw new InteropError(
        shape === "python-history" ? "python" : shape,
        "import",
        error.pointer,
        `${where}${error.problem}`,
        'give the file Agent Framework wrote with serialization_format="msgpack" (a .msgpack file)',
        error,
      );
    }
    throw error;
  }
}
