/**
 * Store URLs and connection failures give typed, safe errors: a malformed URL never leaves its
 * password in any error, cause or property; unknown options are refused with the allowed list;
 * a refused login names the user; overlapping Redis prefixes are caught; the PostgreSQL query
 * timeout is set from the URL.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import { InvalidIdError, StoreAuthenticationError, StoreKeyConflictError, StoreUnavailableError } from "../../src/runtime/stores/errors.js";
import { openStore } from "../../src/runtime/stores/open.js";
import { PostgresSessionStore } from "../../src/runtime/stores/postgres.js";
import { RedisSessionStore } from "../../src/runtime/stores/redis.js";
import { redactUrl } from "../../src/runtime/stores/url.js";
import { counterSession, PG_URL, REDIS_URL, serverUp, uniqueName } from "./helpers.js";

const SECRET = "Tr0ub4dor-x9";

/** Every string reachable from `value` (own properties, enumerable or not, `cause` included). */
function reachableStrings(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object" || seen.has(value)) return [];
  seen.add(value);
  const out: string[] = [];
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor && "value" in descriptor) out.push(...reachableStrings(descriptor.value, seen));
  }
  if (value instanceof Error) out.push(value.message, String(value.stack ?? ""));
  return out;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe("store URLs", () => {
  it.each([
    ["a port out of range", `postgres://app:${SECRET}@db.example:99999/prod`],
    ["a broken IPv6 host", `redis://:${SECRET}@[::1/0`],
    ["a space in the host", `postgresql://app:${SECRET}@db host/prod`],
    ["a malformed %-escape in the password", `postgres://app:${SECRET}%zz@db.example/prod`],
    ["a malformed %-escape in the user", `redis://us%zzer:${SECRET}@cache.example:6379`],
  ])("%s is a ConfigurationError that keeps no trace of the password", async (_label, url) => {
    const error = await failure(openStore(url));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe("configuration");
    expect(error.message).toMatch(/store URL/);
    for (const text of reachableStrings(error)) expect(text).not.toContain(SECRET);
  });

  it("redacts an unparseable URL up to its last @", () => {
    expect(redactUrl(`postgres://app:pa@ss${SECRET}@db host/x`)).toBe("postgres://***@db host/x");
    expect(redactUrl(`redis://h:99999?password=${SECRET}&db=1`)).toBe("redis://h:99999?password=***&db=1");
  });

  it("refuses unknown options, listing the allowed ones, and checks numeric ones", async () => {
    const pg = await failure(openStore(`postgres://app:${SECRET}@db.example/prod?schema=s&foo=1`));
    expect(pg).toBeInstanceOf(ConfigurationError);
    expect(pg.message).toContain("?foo=");
    expect(pg.message).toContain("app:***@db.example");
    expect((pg as ConfigurationError).hint).toMatch(/\?schema=.*\?queryTimeout=.*\?sslmode=.*\?statement_timeout=/);
    const redis = await failure(openStore("redis://cache.example:6379?prefix=a:&prefx=b:"));
    expect(redis.message).toContain("?prefx=");
    expect((redis as ConfigurationError).hint).toContain("?prefix=");
    await expect(openStore("postgres://db.example/prod?queryTimeout=soon")).rejects.toThrow(/queryTimeout.*whole number/);
    await expect(openStore("postgres://db.example/prod?statement_timeout=-5")).rejects.toBeInstanceOf(ConfigurationError);
    const ok = await openStore("postgres://db.example/prod?schema=s&sslmode=disable&application_name=x&queryTimeout=250");
    expect(ok).toBeInstanceOf(PostgresSessionStore);
    await ok.close();
  });
});

describe.skipIf(!serverUp.postgres)("PostgreSQL connections", () => {
  const schema = `sbtest_${uniqueName()}`;
  const admin = new PostgresSessionStore({ connectionString: PG_URL, schema, max: 1 });
  afterAll(async () => {
    await admin.dropSchema();
    await admin.close();
  });

  it("a refused login is a StoreAuthenticationError naming the user, not the password", async () => {
    const url = new URL(PG_URL);
    url.username = "statebag_no_such_role";
    url.password = SECRET;
    const store = await openStore(url.toString());
    const error = await failure(store.get("x"));
    expect(error).toBeInstanceOf(StoreAuthenticationError);
    expect((error as StoreAuthenticationError).code).toBe("store-authentication");
    expect(error.message).toContain('user "statebag_no_such_role"');
    expect(error.message).toContain("statebag_no_such_role:***@");
    expect((error as StoreAuthenticationError).hint).toMatch(/password.*pg_hba/s);
    for (const text of reachableStrings(error)) expect(text).not.toContain(SECRET);
    await store.close();
  });

  it("?queryTimeout= limits each statement on the client, ?statement_timeout= on the server", async () => {
    await admin.setup();
    const sep = PG_URL.includes("?") ? "&" : "?";
    const timed = (await openStore(`${PG_URL}${sep}schema=${schema}&queryTimeout=300`)) as PostgresSessionStore;
    // Without the client-side limit the 3 s sleep would succeed; the error says the limit ended it.
    const error = await failure(timed.withClient("sleep", false, (c) => c.query("SELECT pg_sleep(3)")));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toContain("Query read timeout");
    await timed.close();
    const server = (await openStore(`${PG_URL}${sep}schema=${schema}&statement_timeout=150`)) as PostgresSessionStore;
    const { rows } = await server.withClient("show", false, (c) => c.query("SHOW statement_timeout"));
    expect(rows[0].statement_timeout).toBe("150ms");
    await server.close();
  });

  it("a NUL id is refused before it reaches the server", async () => {
    await admin.setup();
    await expect(admin.get("a\u0000b")).rejects.toBeInstanceOf(InvalidIdError);
    await expect(admin.save(counterSession("a\u0000b"), { expectedRevision: null })).rejects.toBeInstanceOf(InvalidIdError);
  });
});

describe.skipIf(!serverUp.redis)("Redis key prefixes", () => {
  const base = `sbtest:${uniqueName()}:`;
  const stores: RedisSessionStore[] = [];
  const open = (prefix: string) => {
    const store = new RedisSessionStore({ url: REDIS_URL, prefix });
    stores.push(store);
    return store;
  };
  afterAll(async () => {
    await open(base).deleteAll();
    for (const store of stores) await store.close();
  });

  it("a store whose prefix lies inside a used store's keys is refused with a typed error", async () => {
    const outer = open(`${base}a:`);
    await outer.save(counterSession("s1"), { expectedRevision: null });
    const inner = open(`${base}a:s:tenant:`);
    const error = await failure(inner.get("x"));
    expect(error).toBeInstanceOf(StoreKeyConflictError);
    expect((error as StoreKeyConflictError).code).toBe("store-key-conflict");
    expect(error.message).toContain(`"${base}a:"`);
    expect((error as StoreKeyConflictError).hint).toMatch(/own key prefix/);
  });

  it("a key of another shape under the prefix is a typed error, not a raw WRONGTYPE", async () => {
    // The inner store is used first, so the outer one finds its keys where its sessions go.
    const inner = open(`${base}b:s:`);
    await inner.save(counterSession("x"), { expectedRevision: null });
    const outer = open(`${base}b:`);
    const error = await failure(outer.get("rev"));
    expect(error).toBeInstanceOf(StoreKeyConflictError);
    expect(error.message).toMatch(/another type of value/);
    await expect(outer.save(counterSession("rev"), { expectedRevision: null })).rejects.toBeInstanceOf(StoreKeyConflictError);
  });
});
