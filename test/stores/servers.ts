/**
 * Local servers the scale-out tests start and stop themselves: a three-node Redis Cluster and a
 * PgBouncer in transaction pooling mode in front of the shared PostgreSQL. Both listen on
 * 127.0.0.1 only, live in a temporary directory, and are stopped by the test that started them
 * (and, as a safety net, when the test process exits).
 *
 * A missing binary is a skip with a warning off CI; under `CI=true` the suites run anyway and fail,
 * so CI never passes without having run them.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const inCi = Boolean(process.env.CI);

/** The absolute path of an executable on PATH (or in the sbin directories Debian puts servers in). */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin", "/sbin"];
  for (const dir of dirs) {
    if (!dir) continue;
    const path = join(dir, name);
    if (spawnSync("test", ["-x", path]).status === 0) return path;
  }
  return undefined;
}

/**
 * Whether a suite needing these binaries runs. Off CI a missing one skips the suite with a
 * warning; in CI the suite always runs, and starting the server fails loudly instead.
 */
export function binariesPresent(suite: string, names: string[], install: string): boolean {
  const missing = names.filter((n) => !findBinary(n));
  if (missing.length === 0 || inCi) return true;
  console.warn(`[statebag tests] skipping ${suite}: ${missing.join(", ")} not installed (${install}; CI runs it)`);
  return false;
}

function requireBinary(name: string, install: string): string {
  const path = findBinary(name);
  if (!path) throw new Error(`${name} is not installed (${install}); the scale-out suites need it`);
  return path;
}

/**
 * A server shared by the tests of one file: started by the first `acquire`, stopped when the last
 * holder releases it (so a file that holds it for its whole run starts it once).
 */
export function sharedServer<T extends { stop(): Promise<void> }>(
  start: () => Promise<T>,
): { acquire(): Promise<T>; release(): Promise<void> } {
  let holders = 0;
  let handle: Promise<T> | undefined;
  return {
    async acquire() {
      holders++;
      handle ??= start();
      try {
        return await handle;
      } catch (error) {
        holders--;
        handle = undefined;
        throw error;
      }
    },
    async release() {
      if (--holders > 0 || !handle) return;
      const stopping = handle;
      handle = undefined;
      await (await stopping).stop();
    },
  };
}

/** A TCP port on 127.0.0.1 that nothing listens on now (and, with `plus`, neither on port + plus). */
export async function freePort(plus?: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    if (plus === undefined) return port;
    if (port + plus <= 65535 && (await portFree(port + plus))) return port;
  }
  throw new Error("no free loopback port pair found");
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function waitFor(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/** Children still running, killed on exit if a test forgot (or crashed before) stopping them. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once("exit", () => running.delete(child));
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

export interface RedisClusterHandle {
  /** `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3` */
  url: string;
  ports: number[];
  /** Stops one node (as if its machine went down). */
  stopNode(port: number): Promise<void>;
  /** Stops every node and removes the directory. */
  stop(): Promise<void>;
}

/** Starts three cluster-enabled redis-server nodes on free loopback ports and joins them (no replicas). */
export async function startRedisCluster(): Promise<RedisClusterHandle> {
  const server = requireBinary("redis-server", "apt-get install redis-server");
  const cli = requireBinary("redis-cli", "apt-get install redis-tools");
  const dir = mkdtempSync(join(tmpdir(), "statebag-redis-cluster-"));
  const ports: number[] = [];
  const nodes = new Map<number, ChildProcess>();
  const stop = async () => {
    await Promise.all([...nodes.values()].map(stopChild));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      // The cluster bus listens on port + 10000.
      let port = await freePort(10_000);
      while (ports.includes(port)) port = await freePort(10_000);
      ports.push(port);
      // Run in the foreground (not --daemonize): the test holds each node's process and stops exactly it.
      const child = spawn(
        server,
        [
          "--port",
          String(port),
          "--bind",
          "127.0.0.1",
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          join(dir, `nodes-${port}.conf`),
          "--cluster-node-timeout",
          "2000",
          "--save",
          "",
          "--appendonly",
          "no",
          "--dir",
          dir,
          "--logfile",
          join(dir, `redis-${port}.log`),
        ],
        { stdio: "ignore" },
      );
      nodes.set(port, track(child));
    }
    for (const port of ports) await waitFor(`redis-server on port ${port}`, 10_000, () => connects(port));
    const create = spawnSync(
      cli,
      ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "0", "--cluster-yes"],
      { encoding: "utf8", timeout: 30_000 },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    await waitFor("cluster_state:ok on every node", 20_000, () =>
      ports.every((p) =>
        /cluster_state:ok/.test(
          spawnSync(cli, ["-p", String(p), "cluster", "info"], { encoding: "utf8" }).stdout ?? "",
        ),
      ),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(",")}`,
    ports,
    async stopNode(port) {
      const child = nodes.get(port);
      if (child) await stopChild(child);
    },
    stop,
  };
}

export interface PgBouncerHandle {
  /** `postgres://postgres@127.0.0.1:<port>/test` (through PgBouncer). */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** The user PgBouncer runs as: it refuses to run as root. */
function unprivilegedUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    const uid = spawnSync("id", ["-u", name], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", name], { encoding: "utf8" });
    if (uid.status === 0 && gid.status === 0) return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  }
  throw new Error("PgBouncer refuses to run as root and neither a postgres nor a nobody user exists");
}

/**
 * Starts PgBouncer in transaction pooling mode on a free loopback port (or `listenPort`), in front of `target`
 * (host, port, database; trust authentication).
 */
export async function startPgBouncer(
  target: { host: string; port: number; database: string; user: string },
  listenPort?: number,
): Promise<PgBouncerHandle> {
  const binary = requireBinary("pgbouncer", "apt-get install pgbouncer");
  const dir = mkdtempSync(join(tmpdir(), "statebag-pgbouncer-"));
  const port = listenPort ?? (await freePort());
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(
    ini,
    [
      "[databases]",
      `${target.database} = host=${target.host} port=${target.port} dbname=${target.database}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      `unix_socket_dir =`,
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      "pool_mode = transaction",
      "default_pool_size = 5",
      "max_client_conn = 200",
      // pg sends these at connect; PgBouncer refuses startup parameters it does not know.
      "ignore_startup_parameters = extra_float_digits,statement_timeout,options",
      `logfile = ${join(dir, "pgbouncer.log")}`,
      "",
    ].join("\n"),
  );
  writeFileSync(join(dir, "users.txt"), `"${target.user}" ""\n`);
  const user = unprivilegedUser();
  if (user) {
    chmodSync(dir, 0o755);
    for (const path of [dir, ini, join(dir, "users.txt")]) chownSync(path, user.uid, user.gid);
  }
  const child = track(spawn(binary, [ini], { stdio: ["ignore", "ignore", "pipe"], ...(user ?? {}) }));
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(`pgbouncer on port ${port}`, 10_000, () => {
      if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}): ${stderr}`);
      return connects(port);
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `postgres://${target.user}@127.0.0.1:${port}/${target.database}`, port, stop };
}
