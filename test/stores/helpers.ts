/**
 * Shared fixtures for the store tests: one factory per backend, each giving a store on its own
 * PostgreSQL schema / Redis key prefix / temporary SQLite file, and a cleanup that removes it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { driverInstalled } from "../../src/runtime/stores/drivers.js";
import { openStore, type OpenStoreOptions } from "../../src/runtime/open-store/open-store.js";
import { PostgresSessionStore } from "../../src/runtime/stores/postgres/store.js";
import { parseRedisStoreUrl, RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import type { SqliteDriverName } from "../../src/runtime/stores/sqlite/driver.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { binariesPresent, sharedServer, startPgBouncer, startRedisCluster } from "./servers.js";

export const PG_URL = process.env.STATEBAG_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_URL = process.env.STATEBAG_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export function uniqueName(): string {
  return `${process.pid.toString(36)}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
}

export interface Backend {
  /** `sqlite` is the default driver (node:sqlite), `sqlite-better` the optional better-sqlite3 driver on the same kind of file. */
  name: "memory" | "sqlite" | "sqlite-better" | "postgres" | "redis" | "redis-cluster" | "postgres-pgbouncer";
  /** True when the backend is shared by several processes (not memory). */
  durable: boolean;
  /** A fresh, empty, set-up location: its URL and how to remove it. */
  location(): Promise<{ url: string; cleanup: () => Promise<void> }>;
}

export const memoryBackend: Backend = {
  name: "memory",
  durable: false,
  async location() {
    return { url: "memory:", cleanup: async () => undefined };
  },
};

function sqliteBackendWith(driver: SqliteDriverName): Backend {
  return {
    name: driver === "node:sqlite" ? "sqlite" : "sqlite-better",
    durable: true,
    async location() {
      const dir = mkdtempSync(join(tmpdir(), "statebag-sqlite-"));
      const query = driver === "node:sqlite" ? "" : `?driver=${driver}`;
      return {
        url: `sqlite:${join(dir, "sessions.db")}${query}`,
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  };
}

/** SQLite through the default driver, node:sqlite. */
export const sqliteBackend: Backend = sqliteBackendWith("node:sqlite");
/** SQLite through the optional better-sqlite3 driver. */
export const betterSqliteBackend: Backend = sqliteBackendWith("better-sqlite3");

/** PostgreSQL: a new schema per location, set up here, dropped by cleanup. */
export function postgresBackend(baseUrl = PG_URL): Backend {
  return {
    name: "postgres",
    durable: true,
    async location() {
      const schema = `sbtest_${uniqueName()}`;
      const url = `${baseUrl}${baseUrl.includes("?") ? "&" : "?"}schema=${schema}`;
      const admin = new PostgresSessionStore({ connectionString: baseUrl, schema, max: 1 });
      await admin.setup();
      return {
        url,
        cleanup: async () => {
          await admin.dropSchema();
          await admin.close();
        },
      };
    },
  };
}

/** Redis: a new key prefix per location; cleanup deletes every key under it. */
export function redisBackend(baseUrl = REDIS_URL): Backend {
  return {
    name: "redis",
    durable: true,
    async location() {
      const prefix = `sbtest:${uniqueName()}:`;
      const url = `${baseUrl}${baseUrl.includes("?") ? "&" : "?"}prefix=${encodeURIComponent(prefix)}`;
      return {
        url,
        cleanup: async () => {
          const admin = new RedisSessionStore({ url: baseUrl, prefix });
          await admin.deleteAll();
          await admin.close();
        },
      };
    },
  };
}

/** A three-node Redis Cluster the tests start (test/stores/servers.ts), shared while a location is held. */
export const redisCluster = sharedServer(startRedisCluster);

/** Redis Cluster: a new key prefix per location on the local cluster; cleanup deletes its keys on every master. */
export const redisClusterBackend: Backend = {
  name: "redis-cluster",
  durable: true,
  async location() {
    const cluster = await redisCluster.acquire();
    const prefix = `sbtest:${uniqueName()}:`;
    return {
      url: `${cluster.url}?prefix=${encodeURIComponent(prefix)}`,
      cleanup: async () => {
        const { url, cluster: nodes } = parseRedisStoreUrl(cluster.url);
        const admin = new RedisSessionStore({ url, cluster: nodes, prefix });
        try {
          await admin.deleteAll();
        } finally {
          await admin.close();
          await redisCluster.release();
        }
      },
    };
  },
};

/** PgBouncer in transaction pooling mode in front of the test PostgreSQL, started by the tests. */
export const pgBouncer = sharedServer(() => {
  const u = new URL(PG_URL);
  return startPgBouncer({
    host: u.hostname,
    port: Number(u.port || 5432),
    database: u.pathname.slice(1),
    user: decodeURIComponent(u.username) || "postgres",
  });
});

/** PostgreSQL through PgBouncer (`?pgbouncer=true`): a new schema per location, set up through the pooler too. */
export const pgBouncerBackend: Backend = {
  name: "postgres-pgbouncer",
  durable: true,
  async location() {
    const bouncer = await pgBouncer.acquire();
    try {
      const schema = `sbtest_${uniqueName()}`;
      const admin = new PostgresSessionStore({
        connectionString: bouncer.url,
        schema,
        max: 1,
        preparedStatements: false,
      });
      await admin.setup();
      return {
        url: `${bouncer.url}?pgbouncer=true&schema=${schema}`,
        cleanup: async () => {
          try {
            await admin.dropSchema();
          } finally {
            await admin.close();
            await pgBouncer.release();
          }
        },
      };
    } catch (error) {
      await pgBouncer.release();
      throw error;
    }
  },
};

/** True when something accepts TCP connections at the URL's host and port (within 1 s). */
async function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname || "127.0.0.1", port: Number(u.port || defaultPort) });
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * Which servers answer. Off CI, suites for a server that is not running are skipped, so `npm test`
 * works on a machine without PostgreSQL or Redis; in CI (`CI` set) every suite runs, and a missing
 * server fails loudly instead of being skipped.
 */
const inCi = Boolean(process.env.CI);
export const serverUp = {
  postgres: inCi || (await reachable(PG_URL, 5432)),
  redis: inCi || (await reachable(REDIS_URL, 6379)),
};
if (!serverUp.postgres || !serverUp.redis) {
  const missing = Object.entries(serverUp)
    .filter(([, up]) => !up)
    .map(([name]) => name);
  console.warn(
    `[statebag tests] skipping ${missing.join(" and ")} suites: no server on 127.0.0.1 (CI runs them; see docs/stores.md)`,
  );
}

/**
 * better-sqlite3 is an optional peer dependency (a native build). Off CI its suites are skipped,
 * visibly, when it is not installed; in CI they always run, so a missing build fails loudly.
 */
export const betterSqliteInstalled = inCi || driverInstalled("better-sqlite3");
if (!betterSqliteInstalled) {
  console.warn(
    "[statebag tests] skipping the better-sqlite3 driver suites: better-sqlite3 is not installed (npm i --no-save better-sqlite3; CI runs them)",
  );
}

/** Whether a backend's server (or driver) is there to test against. */
export function available(backend: Backend): boolean {
  switch (backend.name) {
    case "postgres":
      return serverUp.postgres;
    case "redis":
      return serverUp.redis;
    case "sqlite-better":
      return betterSqliteInstalled;
    case "redis-cluster":
      return binariesPresent("the Redis Cluster suites", ["redis-server", "redis-cli"], "apt-get install redis-server");
    case "postgres-pgbouncer":
      return serverUp.postgres && binariesPresent("the PgBouncer suites", ["pgbouncer"], "apt-get install pgbouncer");
    default:
      return true;
  }
}

export const allBackends: Backend[] = [
  memoryBackend,
  sqliteBackend,
  betterSqliteBackend,
  postgresBackend(),
  redisBackend(),
].filter(available);
export const durableBackends: Backend[] = allBackends.filter((b) => b.durable);
/**
 * Servers the tests start themselves (a local Redis Cluster, PgBouncer), for the suites that run
 * on them too (the conformance suite, test/stores/redis-cluster.test.ts, pgbouncer.test.ts).
 */
export const scaleOutBackends: Backend[] = [redisClusterBackend, pgBouncerBackend].filter(available);

/** Opens a store at a fresh location; `done()` closes it and removes the location. */
export async function freshStore(
  backend: Backend,
  options?: OpenStoreOptions,
): Promise<{ store: SessionStore; url: string; done: () => Promise<void> }> {
  const { url, cleanup } = await backend.location();
  const store = await openStore(url, options);
  return {
    store,
    url,
    done: async () => {
      await store.close();
      await cleanup();
    },
  };
}

/** A session whose state is a counter (a `$type`-tagged provider state). */
export function counterSession(id: string, value = 0, extra: Record<string, unknown> = {}): AgentSession {
  return { id, stateBag: { counter: { $type: "test.Counter", value, ...extra } } };
}

export function counterOf(session: AgentSession): number {
  return (session.stateBag.counter as unknown as { value: number }).value;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A TCP proxy to a real server, so a test can "stop the server" (close the proxy and cut every
 * connection through it) without touching the shared server other tests use.
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** While true, requests still reach the server but its replies are thrown away. */
  dropReplies = false;
  /** While true, requests are thrown away: the server never sees them. */
  dropRequests = false;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      this.sockets.add(client);
      this.sockets.add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on("error", drop).on("close", drop);
      upstream.on("error", drop).on("close", drop);
      client.on("data", (chunk: Buffer) => {
        if (!this.dropRequests) upstream.write(chunk);
      });
      upstream.on("data", (chunk: Buffer) => {
        if (!this.dropReplies) client.write(chunk);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Refuses new connections and cuts the open ones, like a server going down. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
