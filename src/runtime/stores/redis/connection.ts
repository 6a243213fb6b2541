/**
 * The Redis store's connection: creating the driver's client (standalone or Cluster), connecting
 * with a bounded number of attempts, and SELECTing the URL's database, checked, first.
 *
 * No background reconnect loop and no offline queue. A call while the server is down tries to
 * connect `1 + connectRetries` times (`connectTimeoutMs` each, 100 ms, 200 ms, ... apart) and fails
 * with `StoreUnavailableError` naming host:port; a command in flight when the connection drops is
 * never re-sent (it may have run), it fails with `outcomeUnknown`. The next call after the server
 * is back connects again. The database (`/n`) is selected, checked, before any other command on
 * each new connection. On a cluster, replies that mean "not run" (MOVED, ASK, TRYAGAIN,
 * CLUSTERDOWN) are followed as usual; a node that is down fails the calls for its slots with
 * `StoreUnavailableError`, the other nodes keep serving.
 */
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import { quoted, shownText } from "../../core/json.js";
import { isNetworkError } from "../common.js";
import { loadDriver } from "../drivers.js";
import { StoreAuthenticationError, StoreUnavailableError } from "../errors.js";
import { defineScripts, type ScriptedClient } from "./scripts.js";
import type {
  RedisClientConstructor,
  RedisClusterConstructor,
  RedisClusterDriverOptions,
  RedisClusterLike,
  RedisDriverOptions,
} from "./types.js";
import {
  checkConnectOption,
  REDIS_DEFAULT_CONNECT_RETRIES,
  REDIS_DEFAULT_CONNECT_TIMEOUT_MS,
  redisConnection,
  type RedisClusterNode,
  type RedisConnection,
} from "./url.js";

function ioredis(): { Redis: RedisClientConstructor; Cluster: RedisClusterConstructor } {
  type Module = {
    default?: RedisClientConstructor & { Cluster?: RedisClusterConstructor };
    Redis?: RedisClientConstructor;
    Cluster?: RedisClusterConstructor;
  };
  const mod = loadDriver<Module>("ioredis");
  return {
    Redis: (mod.Redis ?? mod.default ?? (mod as unknown as RedisClientConstructor)) as RedisClientConstructor,
    Cluster: (mod.Cluster ?? mod.default?.Cluster) as RedisClusterConstructor,
  };
}

const NETWORK_MESSAGES =
  /Connection is closed|Stream isn't writeable|Command timed out|connect ETIMEDOUT|MaxRetriesPerRequest|Reached the max retries|Too many Cluster redirections|Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready|^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|OOM)\b/;

/** The URL names the wrong kind of server: a standalone client's command hit a cluster node, or a cluster client a standalone server. */
const WRONG_KIND = { standalone: /^(MOVED|ASK) \d+ |^CROSSSLOT\b/, cluster: /cluster support disabled/ };

/** Why connecting failed: the last error, after how many attempts (turned into a typed error by `connect`). */
class ConnectFailure {
  constructor(
    readonly error: unknown,
    readonly attempts: number,
  ) {}
}

function isAuthFailure(error: unknown): boolean {
  return (
    error instanceof Error && /^(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/i.test(error.message)
  );
}

/** An error's message (with its code when the message lacks it), for the text of a wrapping error. */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return error === undefined ? "" : String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message || error.name;
  return typeof code === "string" && !message.includes(code) ? `${code} ${message}` : message;
}

export function isUnavailable(error: unknown): boolean {
  return isNetworkError(error) || (error instanceof Error && NETWORK_MESSAGES.test(error.message));
}

/** The part of the driver's command object a deadline needs. */
interface DriverCommand {
  /** Set once the reply was taken (an error reply or a failure leaves it false). */
  isResolved?: boolean;
  reject(error: Error): void;
}

/**
 * The per-command timeout of a standalone connection, with one timer for all its commands: the
 * driver's own `commandTimeout` arms and clears a timer for every command, which a fast server
 * makes a visible part of each call. Every command of the connection has the same timeout, so
 * deadlines fall in the order commands are sent: a queue, and one timer for the oldest command
 * still waiting. A command that has no reply at its deadline fails with the driver's error
 * ("Command timed out"), as it did with the driver's timer; a reply arriving later is dropped by
 * the driver, as before. The timer is unref'd (a command in flight keeps the process alive by its
 * socket) and is not re-armed once nothing waits.
 */
export class CommandDeadlines {
  /**
   * The commands sent and their deadlines, oldest first, from `head` on. A slot the queue has moved
   * past is emptied at once: a command answered holds its arguments and its reply (a session's
   * body each), which must not live on here until the queue is compacted.
   */
  private commands: (DriverCommand | undefined)[] = [];
  private deadlines: number[] = [];
  private head = 0;
  /** Compact when this many slots past `head` are held (commands answered out of turn, by an error reply). */
  private limit = 256;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly timeoutMs: number) {}

  add(command: DriverCommand): void {
    const commands = this.commands;
    if (this.head === 0 && commands.length === 1 && commands[0]!.isResolved) {
      // One call at a time (the common case): the one command held was answered, its slot is
      // reused, rather than both arrays emptied and grown again for every command.
      commands[0] = command;
      this.deadlines[0] = performance.now() + this.timeoutMs;
      if (this.timer === undefined) this.arm(this.timeoutMs);
      return;
    }
    let head = this.head;
    while (head < commands.length && commands[head]!.isResolved) commands[head++] = undefined;
    if (head === commands.length) {
      commands.length = 0;
      this.deadlines.length = 0;
      head = 0;
    } else if (commands.length - head >= this.limit) {
      head = this.compact(head);
    }
    this.head = head;
    commands.push(command);
    this.deadlines.push(performance.now() + this.timeoutMs);
    if (this.timer === undefined) this.arm(this.timeoutMs);
  }

  /**
   * Drops the answered commands from `head` on (an error reply leaves a command unresolved ahead of
   * answered ones until its deadline), keeping the order; returns the new head (0).
   */
  private compact(head: number): number {
    const commands = this.commands;
    const deadlines = this.deadlines;
    let kept = 0;
    for (let at = head; at < commands.length; at++) {
      const command = commands[at]!;
      if (command.isResolved) continue;
      commands[kept] = command;
      deadlines[kept++] = deadlines[at];
    }
    commands.length = kept;
    deadlines.length = kept;
    this.limit = Math.max(256, 2 * kept);
    return 0;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.expire, Math.max(1, Math.ceil(ms)));
    this.timer.unref();
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    const commands = this.commands;
    for (; this.head < commands.length; this.head++) {
      const command = commands[this.head]!;
      if (!command.isResolved) {
        if (this.deadlines[this.head] > now) break;
        // A command that already failed (its promise settled) ignores this.
        command.reject(new Error("Command timed out"));
      }
      commands[this.head] = undefined;
    }
    if (this.head < commands.length) this.arm(this.deadlines[this.head] - now);
    else {
      commands.length = 0;
      this.deadlines.length = 0;
      this.head = 0;
    }
  };

  /** How many commands the queue still holds (answered ones included until it moves past them). @internal */
  get held(): number {
    let held = 0;
    for (let at = this.head; at < this.commands.length; at++) if (this.commands[at] !== undefined) held++;
    return held;
  }

  /** Forgets every command (the connection is closed; the driver fails what was in flight). */
  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.commands = [];
    this.deadlines = [];
    this.head = 0;
    this.limit = 256;
  }
}

/** The store options the connection reads (documented on `RedisStoreOptions`, store.ts). */
export interface RedisConnectionOptions {
  url: string;
  cluster?: boolean | readonly RedisClusterNode[];
  connectTimeoutMs?: number;
  connectRetries?: number;
  commandTimeoutMs?: number;
  redisOptions?: RedisDriverOptions;
  clusterOptions?: RedisClusterDriverOptions;
}

/** One store's client: created on first use, connected (and its database selected) on demand, closed by the store. */
export class RedisConnector {
  private readonly options: RedisConnectionOptions;
  private client_: ScriptedClient | undefined;
  private connecting: Promise<void> | undefined;
  /** The URL's parts, checked: what the driver gets, the database, host:port. */
  private readonly connection: RedisConnection;
  private readonly connectTimeoutMs: number;
  private readonly connectRetries: number;
  /** The current connection has selected the URL's database (false again once it closes). */
  selected = false;
  private lastError: unknown;
  private closed = false;
  private readonly cluster: boolean;
  /** The per-command timeout (ms) every command of the store's client has. */
  readonly commandTimeoutMs: number;
  /** Standalone: the current client's command deadlines (one timer for all its commands). */
  private deadlines: CommandDeadlines | undefined;
  /** The driver's `commandTimeout` as the options give it (a second connection of the store keeps it: `duplicate`). */
  driverCommandTimeout: unknown;

  /** Checks every part of the URL and the connection options; `url` is the URL errors show. */
  constructor(
    options: RedisConnectionOptions,
    private readonly url: string,
  ) {
    this.options = options;
    this.cluster = Boolean(options.cluster);
    // Every part of the URL is checked now: a bad database or option fails here, before any connection.
    this.connection = redisConnection(options.url, this.url);
    this.connectTimeoutMs =
      checkConnectOption("connectTimeoutMs", options.connectTimeoutMs) ??
      this.connection.connectTimeoutMs ??
      REDIS_DEFAULT_CONNECT_TIMEOUT_MS;
    this.connectRetries =
      checkConnectOption("connectRetries", options.connectRetries) ??
      this.connection.connectRetries ??
      REDIS_DEFAULT_CONNECT_RETRIES;
    // Checked: 0 (or a fraction, or NaN) would reach the driver as a timeout every command misses.
    this.commandTimeoutMs = checkConnectOption("commandTimeoutMs", options.commandTimeoutMs) ?? 10_000;
    const optionDb = options.redisOptions?.db;
    if (optionDb !== undefined && optionDb !== this.connection.db) {
      throw new ConfigurationError(
        `the Redis store option redisOptions.db (${String(optionDb).slice(0, 40)}) differs from the database in the store URL (${this.connection.db})`,
        "name the database once, in the URL path (redis://host:6379/2)",
      );
    }
    if (this.cluster && this.connection.db !== 0) {
      throw new ConfigurationError(
        `the store URL ${quoted(this.url, 200)} selects a database other than 0`,
        "Redis Cluster has only database 0: drop the /<db> path and ?db=, and separate stores by ?prefix=",
      );
    }
  }

  /** The client, created on first use with the scripts defined on it; connected or not. */
  /** The database the store SELECTs (0 on a cluster): a second connection of the store's selects it too. */
  get database(): number {
    return this.connection.db;
  }

  get client(): ScriptedClient {
    if (this.closed)
      throw new StatebagError("store-closed", `the Redis store at ${this.url} was closed`, {
        hint: "open a new store with openStore()",
      });
    if (!this.client_) {
      const { db: _db, ...extra } = this.options.redisOptions ?? {};
      const nodeOptions: RedisDriverOptions = {
        lazyConnect: true,
        connectTimeout: this.connectTimeoutMs,
        commandTimeout: this.commandTimeoutMs,
        // We reconnect on demand (next call), never in a background loop, and never queue or
        // re-send commands: a re-sent compare-and-swap could report a conflict with itself.
        retryStrategy: () => null,
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
        ...extra,
        // The store selects the database itself, checked, before any command (see `open`).
        db: 0,
      };
      const { Redis } = ioredis();
      // Standalone, the timeout is kept by one timer per connection (CommandDeadlines) instead of
      // the driver's timer per command, unless redisOptions set the driver's own.
      const deadlines =
        !this.options.cluster && nodeOptions.commandTimeout === this.commandTimeoutMs && this.commandTimeoutMs > 0
          ? new CommandDeadlines(this.commandTimeoutMs)
          : undefined;
      this.driverCommandTimeout = nodeOptions.commandTimeout;
      if (deadlines !== undefined) nodeOptions.commandTimeout = undefined;
      const client = (
        this.options.cluster ? this.newCluster(nodeOptions) : new Redis(this.connection.url, nodeOptions)
      ) as ScriptedClient;
      if (deadlines !== undefined) {
        const driver = client as unknown as { sendCommand(command: DriverCommand, stream?: unknown): unknown };
        const send = driver.sendCommand;
        // The driver's sendCommand(command, stream?): passed on as is (no rest array and spread per command).
        driver.sendCommand = function (this: unknown, command: DriverCommand, stream?: unknown) {
          deadlines.add(command);
          return send.call(this, command, stream);
        };
        this.deadlines = deadlines;
      }
      // Every failure is reported through the calls; an "error" event without a listener would crash the process.
      // Events of a client given up on (see `connectOnce`) no longer speak for the store.
      client.on("error", (error: unknown) => {
        if (this.client_ === client) this.lastError = error;
      });
      client.on("node error", () => undefined);
      // A closed connection must select the database again before it is used.
      const unselect = () => {
        if (this.client_ === client) this.selected = false;
      };
      client.on("close", unselect);
      client.on("end", unselect);
      defineScripts(client);
      this.client_ = client;
    }
    return this.client_;
  }

  /** A driver Cluster client with the same no-retry policy, nodes logging in as `url` says. */
  private newCluster(nodeOptions: RedisDriverOptions): RedisClusterLike {
    const seed = new URL(this.connection.url);
    const nodes = Array.isArray(this.options.cluster)
      ? [...this.options.cluster]
      : [{ host: seed.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(seed.port || 6379) }];
    const { Cluster } = ioredis();
    return new Cluster(nodes, {
      lazyConnect: true,
      // Node connections open on first use: commands wait (unsent) while one is being opened,
      // and fail if it cannot be. Commands already sent are still never re-sent.
      enableOfflineQueue: true,
      // One try to learn the slots per connection attempt (see `open`); no background loop.
      clusterRetryStrategy: () => null,
      // 0: a command whose connection closed may have run, so it is never re-sent. MOVED, ASK,
      // TRYAGAIN and CLUSTERDOWN replies (the command did not run) are still followed.
      retryDelayOnFailover: 0,
      // ioredis itself gives node connections retryStrategy null and an offline queue.
      redisOptions: {
        ...nodeOptions,
        username: seed.username ? decodeURIComponent(seed.username) : nodeOptions.username,
        password: seed.password ? decodeURIComponent(seed.password) : nodeOptions.password,
        ...(seed.protocol === "rediss:" && !nodeOptions.tls ? { tls: {} } : {}),
      },
      ...this.options.clusterOptions,
    });
  }

  /** Where the store connects, for messages: `host:port` (every start node on a cluster), never credentials. */
  private get address(): string {
    const nodes = Array.isArray(this.options.cluster)
      ? this.options.cluster.map((n) => `${n.host.includes(":") ? `[${n.host}]` : n.host}:${n.port}`)
      : [this.connection.address];
    return nodes.join(",");
  }

  async connect(operation: string): Promise<ScriptedClient> {
    const client = this.client;
    if (client.status === "ready" && this.selected) return client;
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    try {
      await this.connecting;
    } catch (failure) {
      if (!(failure instanceof ConnectFailure)) throw failure;
      const { error, attempts } = failure;
      // A cluster client that could not learn the slots keeps the node's answer in lastNodeError.
      const nodeError = (error as { lastNodeError?: unknown } | undefined)?.lastNodeError;
      for (const candidate of [error, nodeError])
        if (this.isWrongKind(candidate)) throw this.wrongKind(candidate as Error);
      if ([error, nodeError].some(isAuthFailure)) {
        throw new StoreAuthenticationError(
          "Redis",
          this.url,
          this.username(),
          "check the user name and password in the store URL (redis://user:password@host:6379; percent-encode special characters) against the server's requirepass / ACL users",
        );
      }
      const reason = describeError(nodeError ?? error);
      const cause = new Error(
        `no connection to ${this.address} after ${attempts} attempt${attempts === 1 ? "" : "s"}${reason ? ` (${reason})` : ""}`,
        { cause: error },
      );
      throw new StoreUnavailableError("Redis", this.url, operation, {
        cause,
        hint: `check that the Redis server is running and reachable at ${this.address}; each call tries ${this.connectRetries + 1} time(s), ${this.connectTimeoutMs} ms each at most (?connectRetries=, ?connectTimeout= in the URL)`,
      });
    }
    return this.client;
  }

  /**
   * Connects, trying `1 + connectRetries` times (100 ms, 200 ms, ... apart) while the failure is a
   * network one, then selects the database. A refused login, the wrong kind of server or a database
   * the server does not have fails at once: trying again would not change the answer.
   */
  private async open(): Promise<void> {
    const attempts = this.connectRetries + 1;
    let client = this.client;
    for (let attempt = 1; ; attempt++) {
      client = this.client;
      // A connection still closing ("close", "disconnecting", ...) would finish closing after a
      // new one opened on the same client, and take it down: start from a new client instead.
      if (!["wait", "end", "ready", "connecting", "connect"].includes(client.status)) {
        this.discard(client);
        client = this.client;
      }
      try {
        await this.connectOnce(client);
        break;
      } catch (error) {
        const nodeError = (error as { lastNodeError?: unknown } | undefined)?.lastNodeError;
        const final =
          attempt >= attempts ||
          this.isWrongKind(error) ||
          this.isWrongKind(nodeError) ||
          isAuthFailure(error) ||
          isAuthFailure(nodeError);
        if (final) throw new ConnectFailure(error, attempt);
        // A client left half-open is closed first; a refused one is already "end" (and disconnect()
        // would mark it closed by us, so ioredis would not report the next attempt's error).
        if (this.client_ === client && client.status !== "end" && client.status !== "wait") client.disconnect();
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
    await this.selectDatabase(client);
  }

  /**
   * One connection attempt, bounded by `connectTimeoutMs` as a whole: the driver's own timeout ends at
   * the TCP handshake, so a server that accepts connections but never answers (a proxy whose
   * backend is gone, another service on the port) would otherwise hold the call forever.
   */
  private async connectOnce(client: ScriptedClient): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const attempt = (async () => {
      if (client.status === "connecting" || client.status === "connect") {
        await new Promise<void>((resolve, reject) => {
          const onReady = () => (cleanup(), resolve());
          const onEnd = () => (cleanup(), reject(this.lastError ?? new Error("Connection is closed.")));
          const cleanup = () => (client.off("ready", onReady), client.off("end", onEnd));
          client.once("ready", onReady);
          client.once("end", onEnd);
        });
      } else if (client.status !== "ready") {
        this.lastError = undefined;
        await client.connect();
      }
    })();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`connect timed out after ${this.connectTimeoutMs} ms (no ready reply from the server)`);
        (error as { code?: string }).code = "ETIMEDOUT";
        reject(error);
      }, this.connectTimeoutMs);
    });
    try {
      await Promise.race([attempt, timeout]);
    } catch (error) {
      // The losing attempt rejects once the connection is closed: handled here, never unhandled.
      attempt.catch(() => undefined);
      if (error instanceof Error && /^connect timed out after/.test(error.message)) {
        // disconnect() only half-closes a socket the server never answered on: destroy it, and
        // start the next attempt from a new client rather than one still half-connected.
        this.discard(client);
        throw error;
      }
      throw this.lastError ?? error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes a client for good (its socket destroyed, not half-closed); the next call starts a new one. */
  discard(client: ScriptedClient): void {
    (client as { stream?: { destroy?: () => void } }).stream?.destroy?.();
    client.disconnect();
    if (this.client_ === client) {
      this.client_ = undefined;
      this.selected = false;
      this.deadlines?.clear();
      this.deadlines = undefined;
    }
  }

  /**
   * SELECTs the URL's database on a new connection, before any other command of the store. A
   * database the server does not have is a `ConfigurationError` naming the server's limit; the
   * connection is closed, so nothing reaches database 0 instead.
   */
  private async selectDatabase(client: ScriptedClient): Promise<void> {
    const db = this.connection.db;
    if (db !== 0) {
      try {
        await client.select(db);
      } catch (error) {
        if (isUnavailable(error)) throw new ConnectFailure(error, 1);
        if (error instanceof Error && /cluster mode/i.test(error.message)) {
          this.discard(client);
          throw this.wrongKind(error);
        }
        if (!(error instanceof Error && /invalid DB index|out of range/i.test(error.message))) {
          this.discard(client);
          throw new ConfigurationError(
            `the Redis server at ${this.address} refused SELECT ${db} (store URL ${quoted(this.url, 200)}): ${shownText(String((error as Error)?.message ?? error).split("\n")[0], 200)}; nothing was read or written`,
            "check that the store's Redis user may use that database (ACL: the select command)",
          );
        }
        const limit = await client.config("GET", "databases").then(
          (reply) => (Array.isArray(reply) && /^\d+$/.test(String(reply[1])) ? Number(reply[1]) : undefined),
          () => undefined,
        );
        this.discard(client);
        throw new ConfigurationError(
          `the Redis server at ${this.address} has no database ${db} (store URL ${quoted(this.url, 200)}): ${limit === undefined ? "it refused SELECT" : `it has ${limit} (0 to ${limit - 1})`}; nothing was read or written`,
          limit === undefined
            ? "use a database number the server has (its `databases` setting in redis.conf, 16 by default)"
            : `use a database from 0 to ${limit - 1} in the URL path (redis://host:6379/<db>), or raise \`databases\` in the server's redis.conf`,
        );
      }
    }
    this.selected = true;
  }

  isWrongKind(error: unknown): boolean {
    return error instanceof Error && WRONG_KIND[this.cluster ? "cluster" : "standalone"].test(error.message);
  }

  wrongKind(error: Error): ConfigurationError {
    return this.cluster
      ? new ConfigurationError(
          `the Redis server at ${this.url} is not a Redis Cluster (${error.message.split("\n")[0]})`,
          "drop ?cluster=true / use redis:// instead of redis+cluster:// for a standalone server",
        )
      : new ConfigurationError(
          `the Redis server at ${this.url} is a Redis Cluster node (it answered ${error.message.split(" ")[0]}; nothing was written)`,
          "open the store with redis+cluster://host1:port1,host2:port2 (or add ?cluster=true) so keys are hash-tagged per slot",
        );
  }

  private username(): string | undefined {
    try {
      const user = new URL(this.options.url).username;
      return user ? decodeURIComponent(user) : undefined;
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const client = this.client_;
    this.client_ = undefined;
    if (!client) return;
    if (client.status === "ready") await client.quit().catch(() => client.disconnect());
    else client.disconnect();
    this.deadlines?.clear();
    this.deadlines = undefined;
  }
}
