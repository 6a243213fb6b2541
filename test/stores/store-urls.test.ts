/**
 * Store URLs and connection failures give typed, safe errors: a malformed URL never leaves its
 * password in any error, cause or property; unknown options are refused with the allowed list;
 * a refused login names the user; the PostgreSQL query timeout is set from the URL. (Redis
 * prefixes that start one another: redis-isolation.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import { InvalidIdError, StoreAuthenticationError, StoreUnavailableError } from "../../src/runtime/stores/errors.js";
import { openStore, sqlitePath } from "../../src/runtime/open-store/open-store.js";
import { PostgresSessionStore } from "../../src/runtime/stores/postgres/store.js";
import { redactUrl } from "../../src/runtime/stores/url.js";
import { counterSession, PG_URL, serverUp, uniqueName } from "./helpers.js";

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
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
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
    await expect(openStore("postgres://db.example/prod?queryTimeout=soon")).rejects.toThrow(
      /queryTimeout.*whole number/,
    );
    await expect(openStore("postgres://db.example/prod?statement_timeout=-5")).rejects.toBeInstanceOf(
      ConfigurationError,
    );
    const ok = await openStore(
      "postgres://db.example/prod?schema=s&sslmode=disable&application_name=x&queryTimeout=250",
    );
    expect(ok).toBeInstanceOf(PostgresSessionStore);
    await ok.close();
  });
});

describe("PostgreSQL URL option values (#21.9)", () => {
  const base = `postgres://app:${SECRET}@db.example:5432/prod`;
  const dir = mkdtempSync(join(tmpdir(), "statebag-pgurl-"));
  const ca = join(dir, "root.crt");
  writeFileSync(ca, "-----BEGIN CERTIFICATE-----\n");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["sslmode=bogus", "?sslmode=", /one of disable, prefer, require, verify-ca, verify-full, no-verify, got "bogus"/],
    ["ssl=false", "?ssl=", /1 \(or true\) to turn TLS on, 0 to turn it off/],
    ["ssl=maybe", "?ssl=", /got "maybe"/],
    ["port=abc", "?port=", /whole number from 1 to 65535/],
    ["port=70000", "?port=", /whole number from 1 to 65535/],
    ["sslnegotiation=fast", "?sslnegotiation=", /postgres or direct/],
    ["sslnegotiation=direct&sslmode=disable", "?sslnegotiation=", /direct needs TLS on/],
    ["uselibpqcompat=yes", "?uselibpqcompat=", /true or false/],
    ["uselibpqcompat=true&sslmode=no-verify", "?sslmode=", /not a libpq mode/],
    ["uselibpqcompat=true&sslmode=verify-ca", "?sslmode=", /verify-ca also needs \?sslrootcert=/],
    ["sslrootcert=/no/such/root.crt", "?sslrootcert=", /readable file/],
    ["client_encoding=LATIN1", "?client_encoding=", /UTF8/],
    ["application_name=a%07b", "?application_name=", /control characters/],
    ["options=search_path%3Dapp", "?options=", /starting with "-"/],
    ["statement_timeout=1e3", "?statement_timeout=", /whole number of milliseconds/],
    ["lock_timeout=-1", "?lock_timeout=", /whole number of milliseconds/],
    ["connect_timeout=soon", "?connect_timeout=", /whole number of seconds/],
    ["queryTimeout=99999999999", "?queryTimeout=", /whole number of milliseconds/],
    ["host=a%20b", "?host=", /without spaces/],
    ["keepalives=0", "?keepalives=", /has no effect/],
    ["db=other", "?db=", /has no effect/],
    ["encoding=LATIN1", "?encoding=", /has no effect/],
    ["sslmode=disable&sslmode=require", "?sslmode=", /2 times/],
  ])("?%s is a ConfigurationError naming the option and what it may be", async (query, option, allowed) => {
    const error = await failure(openStore(`${base}?${query}`));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe("configuration");
    expect(error.message).toContain(option);
    // What it may be: in the message or in the hint (both are what a user reads: String(error), the CLI).
    expect(String(error)).toMatch(allowed);
    expect(error.message).toContain("app:***@db.example");
    for (const text of reachableStrings(error)) expect(text).not.toContain(SECRET);
    // The store class itself checks a connection string just the same.
    expect(() => new PostgresSessionStore({ connectionString: `${base}?${query}` })).toThrow(ConfigurationError);
  });

  it.each([
    ["a secret option value", `postgres://app@db.example/prod?sslpassword=${SECRET}`],
    ["a misspelt password option", `postgres://app@db.example/prod?pasword=${SECRET}`],
    ["a password in the query", `postgres://app@db.example/prod?password=${SECRET}&port=x`],
    ["the path of a missing key file", `postgres://app@db.example/prod?sslkey=/keys/${SECRET}.key`],
    ["a #fragment (a raw # in a password)", `postgres://app:ab#${SECRET}@db.example/prod`],
    ["a #fragment after the query", `postgres://app@db.example/prod?sslmode=require#${SECRET}`],
    ["a / in the database name", `postgres://app:${SECRET}@db.example/prod/x`],
    ["a control character in the user", `postgres://a%01pp:${SECRET}@db.example/prod`],
  ])("%s is refused without showing the secret", async (_label, url) => {
    const error = await failure(openStore(url));
    expect(error).toBeInstanceOf(ConfigurationError);
    for (const text of reachableStrings(error)) expect(text).not.toContain(SECRET);
  });

  it("accepts every option with a value pg accepts, and honours ?connect_timeout= (seconds)", async () => {
    const query = [
      "sslmode=verify-full",
      `sslrootcert=${encodeURIComponent(ca)}`,
      "sslnegotiation=postgres",
      "application_name=app-1",
      "fallback_application_name=x",
      "options=-c%20search_path%3Dapp",
      "client_encoding=UTF8",
      "statement_timeout=0",
      "lock_timeout=100",
      "idle_in_transaction_session_timeout=60000",
      "connect_timeout=3",
      "uselibpqcompat=false",
      "port=5433",
      "host=db2.example",
      "user=other",
      "schema=s",
      "queryTimeout=250",
      "pgbouncer=false",
    ].join("&");
    const store = await openStore(`${base}?${query}`);
    expect(store).toBeInstanceOf(PostgresSessionStore);
    expect((store as unknown as { options: { connectTimeoutMs?: number } }).options.connectTimeoutMs).toBe(3000);
    await store.close();
    for (const ssl of ["ssl=1", "ssl=true", "ssl=0", "sslmode=no-verify", "uselibpqcompat=true&sslmode=require"]) {
      const s = await openStore(`${base}?${ssl}`);
      await s.close();
    }
  });
});

describe("SQLite URLs with a login, host or port (#21.9)", () => {
  it.each([
    ["credentials and a host", `sqlite://u:${SECRET}@host/x.db`, /credentials/],
    ["credentials in a file: URI", `sqlite:file://u:${SECRET}@host/x.db`, /credentials/],
    ["a user and password without a host", `sqlite://u:${SECRET}@/x.db`, /credentials/],
    ["credentials without //", `sqlite:u:${SECRET}@host/x.db`, /looks like credentials/],
    ["a host and port", "sqlite://db.example:5432/x.db", /host and port/],
    ["a host:secret pair", `sqlite://u:${SECRET}/x.db`, /host and port/],
    ["a host", "sqlite://db.example/x.db", /names the host "db.example"/],
    ["a host in a file: URI", "sqlite:file://db.example/x.db", /names the host "db.example"/],
    ["an unknown option holding a password", `sqlite:./x.db?password=${SECRET}`, /unknown option \?password=/],
    ["a misspelt option", `sqlite:./x.db?busyTimeout=5&pasword=${SECRET}`, /unknown option \?pasword=/],
  ])("%s is refused with the password nowhere", async (_label, url, pattern) => {
    // Refused while parsing, before any file or folder is touched (test/cli/store-url-secrets.test.ts
    // runs the CLI in an empty directory and checks that it stays empty).
    const error = await failure(openStore(url));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(pattern);
    expect((error as ConfigurationError).hint).toMatch(/sqlite:\.\/|unknown option|options are/);
    for (const text of reachableStrings(error)) expect(text).not.toContain(SECRET);
  });

  it("still opens sqlite:///abs, sqlite://./rel and file://localhost paths", () => {
    expect(sqlitePath("sqlite:///var/x.db")).toBe("/var/x.db");
    expect(sqlitePath("sqlite://./x.db")).toBe("./x.db");
    expect(sqlitePath("sqlite://../x.db")).toBe("../x.db");
    expect(sqlitePath("sqlite:file://localhost/var/x.db")).toBe("/var/x.db");
    expect(sqlitePath("sqlite:./me@home.db")).toBe("./me@home.db");
    expect(sqlitePath("sqlite:./u:p@h/x.db")).toBe("./u:p@h/x.db");
    expect(sqlitePath("sqlite:me@home.db")).toBe("me@home.db");
  });
});

describe("memory: and unknown schemes (#21.9)", () => {
  it("refuses anything after memory:, and accepts memory: and memory://", async () => {
    for (const url of ["memory:./x.db", "memory:?ttl=5", "memory://host"]) {
      const error = await failure(openStore(url));
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error.message).toContain('after "memory:"');
    }
    for (const url of ["memory:", "memory://", "MEMORY:"]) await (await openStore(url)).close();
  });

  it("names an unknown scheme with the password hidden and control characters escaped", async () => {
    const error = await failure(openStore(`mysql://app:${SECRET}@db.example/x\u001b[2J`));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain("mysql://app:***@db.example");
    expect(error.message).not.toContain("\u001b");
    for (const text of reachableStrings(error)) expect(text).not.toContain(SECRET);
  });
});

/** Whether the test PostgreSQL has TLS off (SHOW ssl), for the test of a URL that asks for it. */
const pgSslOff =
  serverUp.postgres &&
  (await (async () => {
    const probe = new PostgresSessionStore({ connectionString: PG_URL, max: 1 });
    try {
      return (
        (await probe.withClient("show", false, (c) => c.query<{ ssl: string }>("SHOW ssl"), false)).rows[0].ssl ===
        "off"
      );
    } finally {
      await probe.close();
    }
  })());

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

  it.skipIf(!pgSslOff)(
    "a URL asking for TLS from a server without it is a ConfigurationError, not a plain Error (#21.9)",
    async () => {
      const url = new URL(PG_URL);
      url.password = SECRET;
      url.searchParams.set("sslmode", "require");
      url.searchParams.set("schema", schema);
      const store = await openStore(url.toString());
      const error = await failure(store.get("x"));
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error.message).toContain("does not accept TLS");
      expect((error as ConfigurationError).hint).toContain("?sslmode=disable");
      for (const text of reachableStrings(error)) expect(text).not.toContain(SECRET);
      await store.close();
    },
  );

  it("a NUL id is refused before it reaches the server", async () => {
    await admin.setup();
    await expect(admin.get("a\u0000b")).rejects.toBeInstanceOf(InvalidIdError);
    await expect(admin.save(counterSession("a\u0000b"), { expectedRevision: null })).rejects.toBeInstanceOf(
      InvalidIdError,
    );
  });
});
