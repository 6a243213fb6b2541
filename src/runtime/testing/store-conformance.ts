/**
 * The `SessionStore` contract as code: `storeConformance` registers statebag's store conformance
 * suite (the one its own memory, SQLite, PostgreSQL and Redis stores pass) on whatever test runner
 * the caller uses, so a store written elsewhere (DynamoDB, Cosmos DB, MongoDB...) is checked
 * against the same clauses.
 *
 * Runner-agnostic: the caller passes its runner's `describe`, `it` and once-per-suite hooks
 * (`beforeAll`/`afterAll` on vitest, jest and bun; `before`/`after` on node:test), and the cases
 * assert with `node:assert/strict`, each failure naming the clause it broke. The cases use only
 * statebag's public API (`statebag`, `statebag/stores`).
 */
import { ConfigurationError } from "../../index.js";
import type { BlobOptions, MessageCodec, SessionCodec, SessionStore } from "../../stores.js";
import { STORE_CAPABILITIES, type CaseContext, type ContractCase, type StoreCapability } from "./conformance/case.js";
import { blobCases } from "./conformance/blobs.js";
import { Clause } from "./conformance/check.js";
import { codecCases, scanCases, ttlCases } from "./conformance/codec-scan-ttl.js";
import { erasureCases, retentionCases, scanMetaCases } from "./conformance/erasure.js";
import { idCases } from "./conformance/ids.js";
import { listingCases } from "./conformance/listing.js";
import { messageLogCases } from "./conformance/message-log.js";
import { sessionCases } from "./conformance/sessions.js";
import { streamCases } from "./conformance/streams.js";

type Body = () => Promise<void>;
type Hook = (fn: Body) => unknown;

/**
 * The test runner's functions. Pass the runner's module itself (`import * as vitest from "vitest"`,
 * `import * as nodeTest from "node:test"`) or the functions one by one; jest's and bun's globals
 * work too. `it.skip`, when there, reports the cases of capabilities the store declared it lacks.
 */
export interface StoreConformanceRunner {
  describe(name: string, body: () => void): unknown;
  it: ((name: string, body: Body) => unknown) & { skip?: (name: string, body: Body) => unknown };
  /** Once before the suite's cases (vitest, jest, bun). */
  beforeAll?: Hook;
  /** Once after them. */
  afterAll?: Hook;
  /** node:test's name for `beforeAll`. */
  before?: Hook;
  /** node:test's name for `afterAll`. */
  after?: Hook;
}

export interface StoreConformanceOptions {
  /** The store's name, in the suite's title. */
  name: string;
  runner: StoreConformanceRunner;
  /**
   * Opens a store on a fresh, empty location (its own table, schema, key prefix or database),
   * using `options.codec` as its session codec when given (the default: `defaultSessionCodec()`),
   * `options.messageCodec` as its message codec when given (the listing area's codec-context case),
   * and `options.blobs` as the options of its `blobs` when given (the blob budget case).
   * Called once for the suite and again by the cases that need an empty store of their own.
   */
  open(options: {
    codec?: SessionCodec;
    messageCodec?: MessageCodec;
    blobs?: BlobOptions;
  }): SessionStore | Promise<SessionStore>;
  /** Closes a store `open` returned and removes its location. Default: `store.close()`. */
  close?(store: SessionStore): void | Promise<void>;
  /**
   * Capabilities the store does not offer, each with the reason. Their cases are reported as
   * skipped (with the reason) rather than run; nothing is left out without being declared here.
   */
  skip?: Partial<Record<StoreCapability, string>>;
}

/** Every case of the contract, by area, in the order they run. */
const AREAS: ReadonlyArray<readonly [string, readonly ContractCase[]]> = [
  ["ids", idCases],
  ["sessions", sessionCases],
  ["codec", codecCases],
  ["scan", scanCases],
  ["ttl", ttlCases],
  ["message log", messageLogCases],
  ["listing", listingCases],
  ["scan metadata", scanMetaCases],
  ["retention", retentionCases],
  ["erasure", erasureCases],
  ["streams", streamCases],
  ["blobs", blobCases],
];

function hook(runner: StoreConformanceRunner, preferred: "beforeAll" | "afterAll", alias: "before" | "after"): Hook {
  const fn = runner[preferred] ?? runner[alias];
  if (typeof fn !== "function") {
    throw new ConfigurationError(
      `storeConformance: runner.${preferred} (or runner.${alias}) is not a function`,
      `pass your test runner's functions: { describe, it, beforeAll, afterAll } from vitest or jest, { describe, it, before, after } from node:test`,
    );
  }
  return fn;
}

function checkOptions(options: StoreConformanceOptions): Required<Pick<StoreConformanceOptions, "skip">> {
  const { runner, open, close, skip = {} } = options ?? ({} as StoreConformanceOptions);
  if (!options?.name || typeof options.name !== "string")
    throw new ConfigurationError("storeConformance: options.name must be a non-empty string (the store's name)");
  if (!runner || typeof runner.describe !== "function" || typeof runner.it !== "function") {
    throw new ConfigurationError(
      "storeConformance: options.runner must have your test runner's describe and it",
      'for example runner: await import("vitest"), or runner: await import("node:test")',
    );
  }
  if (typeof open !== "function")
    throw new ConfigurationError(
      "storeConformance: options.open must be a function returning a store on a fresh, empty location",
    );
  if (close !== undefined && typeof close !== "function")
    throw new ConfigurationError("storeConformance: options.close must be a function");
  for (const [capability, reason] of Object.entries(skip)) {
    if (!STORE_CAPABILITIES.includes(capability as StoreCapability)) {
      throw new ConfigurationError(
        `storeConformance: skip.${capability} is not a store capability`,
        `the capabilities a store may lack: ${STORE_CAPABILITIES.join(", ")}`,
      );
    }
    if (typeof reason !== "string" || reason.trim() === "") {
      throw new ConfigurationError(
        `storeConformance: skip.${capability} must be the reason the store lacks it (a non-empty string)`,
      );
    }
  }
  return { skip };
}

/**
 * Registers the `SessionStore` contract on the caller's test runner, as one `describe` block per
 * contract area (ids, sessions, codec, scan, ttl, message log, listing, scan metadata, retention, erasure, streams, blobs). Call it at the top level of a
 * test file (or inside a `describe`), once per store configuration.
 *
 * ```ts
 * import * as vitest from "vitest";
 * import { storeConformance } from "statebag/testing";
 *
 * storeConformance({
 *   name: "dynamodb",
 *   runner: vitest,
 *   open: ({ codec }) => DynamoSessionStore.open({ table: freshTable(), codec }),
 *   close: async (store) => { await store.close(); await dropTable(store); },
 *   skip: { ttl: "expiry is left to DynamoDB's TTL sweeper" },
 * });
 * ```
 */
export function storeConformance(options: StoreConformanceOptions): void {
  const { skip } = checkOptions(options);
  const { runner, name } = options;
  const beforeAll = hook(runner, "beforeAll", "before");
  const afterAll = hook(runner, "afterAll", "after");
  const open = async (
    codec?: SessionCodec,
    messageCodec?: MessageCodec,
    blobs?: BlobOptions,
  ): Promise<SessionStore> => {
    const store = await options.open({
      ...(codec ? { codec } : {}),
      ...(messageCodec ? { messageCodec } : {}),
      ...(blobs ? { blobs } : {}),
    });
    if (!store || typeof store.get !== "function")
      throw new ConfigurationError(`storeConformance(${name}): open() returned ${String(store)}, not a SessionStore`);
    return store;
  };
  const close = async (store: SessionStore): Promise<void> => {
    await (options.close ? options.close(store) : store.close());
  };

  runner.describe(`${name}: statebag SessionStore contract`, () => {
    let shared: SessionStore | undefined;
    let idCounter = 0;
    beforeAll(async () => {
      shared = await open();
    });
    afterAll(async () => {
      if (shared) await close(shared);
      shared = undefined;
    });

    for (const [area, cases] of AREAS) {
      runner.describe(area, () => {
        for (const contractCase of cases) {
          const lacking = (contractCase.requires ?? []).filter((capability) => skip[capability] !== undefined);
          if (lacking.length > 0) {
            const title = `${contractCase.clause} (skipped: ${lacking.map((c) => `the store declares no ${c}: ${skip[c]}`).join("; ")})`;
            const noop = async () => undefined;
            if (typeof runner.it.skip === "function") runner.it.skip(title, noop);
            else runner.it(title, noop);
            continue;
          }
          runner.it(contractCase.clause, async () => {
            const check = new Clause(`store contract violated: ${name} › ${area} › ${contractCase.clause}`);
            if (!shared)
              throw check.violation(
                "the suite's store was not opened (did open() fail in beforeAll?)",
                new Error("no store"),
              );
            const context: CaseContext = {
              store: shared,
              open: (o) => open(o?.codec, o?.messageCodec, o?.blobs),
              close,
              id: (label) => `${label}-${++idCounter}`,
              check,
            };
            try {
              await contractCase.run(context);
            } catch (error) {
              throw check.violation("the store threw instead of following the contract", error);
            }
          });
        }
      });
    }
  });
}
