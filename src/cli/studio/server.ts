/**
 * The studio's HTTP server: one page (HTML and CSS from page.ts, the script bundled from client/
 * by client-script.ts) and the JSON API, all under a random token path `/<token>/`. A request
 * without the token gets an empty 404; tokens are compared in constant time. A request whose Host
 * is not on the allowlist (the loopback names, the address listened on, the --allow-host names; on
 * a wildcard address by default the machine's own names and addresses) is refused, so a
 * DNS-rebinding page cannot reach it by a name it controls. Writes need --write, a JSON body
 * (`application/json`, UTF-8) and, when the browser sends one, an Origin on the same allowlist:
 * the Origin is never compared with the request's own Host, which a client chooses. Names from a
 * request (asset names, routes) are looked up among own keys only, and ids are checked before any
 * store sees them (a fixed 400, never echoed). Every answer carries a strict
 * Content-Security-Policy: scripts and styles from this origin only, no inline script, nothing
 * remote.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isIPv4, isIPv6, type AddressInfo } from "node:net";
import { hostname, networkInterfaces } from "node:os";
import { StatebagError } from "../../runtime/core/errors.js";
import { checkId } from "../../runtime/stores/common.js";
import { InvalidCursorError, InvalidIdError } from "../../runtime/stores/errors.js";
import { StudioHttpError, type SessionQuery, type StudioApi, type Validity } from "./api.js";
import { studioScript } from "./client-script.js";
import { STUDIO_CSS, STUDIO_HTML } from "./page.js";

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": CONTENT_SECURITY_POLICY,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cache-Control": "no-store",
};

export interface StudioServerOptions {
  api: StudioApi;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default: 32 random bytes, base64url. */
  token?: string;
  /**
   * Host names and addresses the page answers to besides localhost, 127.0.0.1, [::1] and the
   * address listened on. Default: none on a specific address; on a wildcard address (0.0.0.0, ::)
   * the machine's own names and addresses (`machineHostNames()`).
   */
  allowHosts?: readonly string[];
}

export interface RunningStudio {
  /** The page's URL, token included. */
  url: string;
  token: string;
  host: string;
  port: number;
  server: Server;
  /** The Host names (lowercase, IPv6 in brackets, no port) the page answers to. */
  allowedHosts: readonly string[];
  close(): Promise<void>;
}

/** A new random token: 256 bits, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Constant-time comparison (of the digests, so lengths do not leak either). */
export function sameToken(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** True for the loopback addresses (the studio's default). */
export function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** True for the addresses that listen on every interface. */
export function isWildcard(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  if (isIPv4(bare)) return bare === "0.0.0.0";
  return isIPv6(bare) && normalHostName(bare) === "[::]";
}

/**
 * A host name or address as a Host header names it: lowercase, IPv6 in brackets and compressed,
 * or undefined when it is not one (a port, a scheme, user info, a wildcard, anything else).
 */
export function normalHostName(name: string): string | undefined {
  const bare = name.replace(/^\[(.*)\]$/, "$1");
  if (isIPv6(bare.replace(/%.*$/, ""))) {
    // A scoped address (fe80::1%eth0): a Host header cannot carry the zone.
    try {
      return new URL(`http://[${bare.replace(/%.*$/, "")}]/`).hostname;
    } catch {
      return undefined;
    }
  }
  if (name.length > 253 || !/^[A-Za-z0-9_][A-Za-z0-9_-]{0,62}(?:\.[A-Za-z0-9_][A-Za-z0-9_-]{0,62})*\.?$/.test(name))
    return undefined;
  // Lowercase; numeric IPv4 forms read as the WHATWG URL parser (and so a browser) reads them.
  try {
    return new URL(`http://${name}/`).hostname;
  } catch {
    return undefined;
  }
}

/** The machine's own names and addresses: its host name and every interface's address. */
export function machineHostNames(): string[] {
  const names = new Set<string>();
  const own = normalHostName(hostname());
  if (own !== undefined) names.add(own);
  for (const list of Object.values(networkInterfaces()))
    for (const address of list ?? []) {
      const normal = normalHostName(address.address);
      if (normal !== undefined) names.add(normal);
    }
  return [...names];
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/**
 * The Host names the studio answers to: the loopback names, the address listened on (unless a
 * wildcard), and `allowHosts`, by default (undefined) on a wildcard address the machine's names.
 */
export function hostAllowlist(listenHost: string, allowHosts?: readonly string[]): string[] {
  const names = new Set(LOOPBACK_NAMES);
  if (!isWildcard(listenHost)) {
    const own = normalHostName(listenHost);
    if (own !== undefined) names.add(own);
  }
  const extra = allowHosts ?? (isWildcard(listenHost) ? machineHostNames() : []);
  for (const name of extra) {
    const normal = normalHostName(name);
    if (normal === undefined || isWildcard(normal)) throw new TypeError("allowHosts: not a host name or address");
    names.add(normal);
  }
  return [...names];
}

/** `name[:port]` of a Host header (or of an http Origin after its scheme), split; undefined when malformed. */
function hostAndPort(value: string): { name: string; port: number } | undefined {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  const name = normalHostName(match[1]);
  return name === undefined ? undefined : { name, port: match[2] === undefined ? 80 : Number(match[2]) };
}

/** True when a Host header names an allowed host at the port the studio listens on. */
export function hostAllowed(header: string | undefined, allowed: ReadonlySet<string>, port: number): boolean {
  const parsed = header === undefined ? undefined : hostAndPort(header);
  return parsed !== undefined && parsed.port === port && allowed.has(parsed.name);
}

/** True when an Origin header is `http://<allowed host>[:port]` at the studio's port. */
export function originAllowed(origin: string, allowed: ReadonlySet<string>, port: number): boolean {
  if (!origin.toLowerCase().startsWith("http://")) return false;
  return hostAllowed(origin.slice("http://".length), allowed, port);
}

/** A session id from a request: checked as every store checks ids, refused with a fixed message. */
function requestId(value: string): string {
  try {
    return checkId(value);
  } catch {
    throw new StudioHttpError(
      400,
      "id: not a valid session id (1 to 1024 characters of well-formed Unicode text without NUL)",
    );
  }
}

/**
 * `application/json`, exactly, with no parameter but an optional `charset=utf-8`: the body is read
 * as UTF-8, so anything else (`application/jsonfoo`, `charset=utf-16`) is refused, not misread.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [type, ...params] = header.split(";").map((p) => p.trim().toLowerCase());
  if (type !== "application/json") return false;
  return params.every((p) => /^charset=(?:utf-8|"utf-8")$/.test(p)) && params.length <= 1;
}

function send(
  res: ServerResponse,
  status: number,
  type: string | undefined,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...headers,
    ...(type ? { "Content-Type": type } : {}),
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>): void {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value), headers);
}

function nothing(res: ServerResponse, status = 404, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers, "Content-Length": 0 });
  res.end();
}

/**
 * The page's files. A Map, not an object: a name from the request (`__proto__`, `constructor`)
 * finds nothing inherited.
 */
function pageAssets(script: string): Map<string, { type: string; body: string }> {
  return new Map([
    ["", { type: "text/html; charset=utf-8", body: STUDIO_HTML }],
    ["app.js", { type: "text/javascript; charset=utf-8", body: script }],
    ["app.css", { type: "text/css; charset=utf-8", body: STUDIO_CSS }],
  ]);
}
const GET_ROUTES = new Set(["info", "sessions", "session", "preview", "types", "type", "blob"]);

function intParam(params: URLSearchParams, name: string, fallback?: number): number | undefined {
  const text = params.get(name);
  if (text === null || text === "") return fallback;
  if (!/^\d{1,9}$/.test(text)) throw new StudioHttpError(400, `${name}: expected a non-negative integer`);
  return Number(text);
}

/** An owner from a request: the store checks owners as ids (its own message would quote it). */
function requestOwner(value: string): string {
  try {
    return checkId(value, "owner");
  } catch {
    throw new StudioHttpError(
      400,
      "owner: not a valid owner (1 to 1024 characters of well-formed Unicode text without NUL)",
    );
  }
}

function required(params: URLSearchParams, name: string): string {
  const text = params.get(name);
  if (text === null || text === "") throw new StudioHttpError(400, `${name} is missing`);
  return text;
}

async function readBody(req: IncomingMessage, max = 64 * 1024): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new StudioHttpError(413, "request body too large");
    chunks.push(chunk as Buffer);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new StudioHttpError(400, "the body is not UTF-8 text");
  }
}

/** Starts the studio. Resolves once it listens. */
export async function startStudio(options: StudioServerOptions): Promise<RunningStudio> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? newToken();
  const prefix = `/${token}/`;
  const { api } = options;
  let port = 0;
  const allowedHosts = hostAllowlist(host, options.allowHosts);
  const hosts = new Set(allowedHosts);
  const assets = pageAssets(await studioScript());

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = req.url ?? "/";
    // Only origin-form paths: an absolute URL or anything else is answered with nothing.
    if (!raw.startsWith("/")) return nothing(res);
    const queryStart = raw.indexOf("?");
    const path = queryStart === -1 ? raw : raw.slice(0, queryStart);
    const slash = path.indexOf("/", 1);
    const given = slash === -1 ? path.slice(1) : path.slice(1, slash);
    if (!sameToken(given, token)) return nothing(res);
    if (slash === -1) {
      // /<token> without the slash: to the page, so relative URLs resolve under the token.
      res.writeHead(308, { ...SECURITY_HEADERS, Location: prefix, "Content-Length": 0 });
      return void res.end();
    }
    // Every host, wildcard addresses included: a name outside the allowlist is a rebinding page's.
    if (!hostAllowed(req.headers.host, hosts, port)) return nothing(res, 403);
    const rest = path.slice(prefix.length);
    const params = new URLSearchParams(queryStart === -1 ? "" : raw.slice(queryStart + 1));
    if (!rest.startsWith("api/")) {
      const asset = assets.get(rest);
      if (!asset) return nothing(res);
      if (req.method !== "GET" && req.method !== "HEAD") return nothing(res, 405, { Allow: "GET, HEAD" });
      return send(res, 200, asset.type, asset.body);
    }
    const route = rest.slice(4);
    try {
      if (route === "migrate") {
        if (req.method !== "POST") return sendJson(res, 405, { error: "method not allowed" }, { Allow: "POST" });
        if (!api.options.write)
          return sendJson(res, 403, { error: "the studio is read-only: start it with --write to migrate a session" });
        // Defence in depth besides the token: a JSON body, from a page of an allowed origin only.
        const origin = req.headers.origin;
        if (origin !== undefined && !originAllowed(origin, hosts, port))
          return sendJson(res, 403, { error: "cross-origin request refused" });
        if (!isJsonContentType(req.headers["content-type"]))
          return sendJson(res, 415, { error: "expected a JSON body (Content-Type: application/json; charset=utf-8)" });
        const body = JSON.parse(await readBody(req)) as { id?: unknown };
        if (typeof body?.id !== "string" || body.id === "") throw new StudioHttpError(400, "id is missing");
        return sendJson(res, 200, await api.migrateOne(requestId(body.id)));
      }
      if (!GET_ROUTES.has(route)) return sendJson(res, 404, { error: "no such API" });
      if (req.method !== "GET") return sendJson(res, 405, { error: "method not allowed" }, { Allow: "GET" });
      switch (route) {
        case "info":
          return sendJson(res, 200, api.info());
        case "sessions": {
          const validity = params.get("validity") || undefined;
          const query: SessionQuery = {
            limit: intParam(params, "limit", 50)!,
            ...(params.get("cursor") ? { cursor: params.get("cursor")! } : {}),
            ...(params.get("q") ? { q: params.get("q")! } : {}),
            ...(params.get("type") ? { type: params.get("type")! } : {}),
            ...(params.get("version") ? { version: intParam(params, "version") } : {}),
            ...(validity ? { validity: validity as Validity } : {}),
            ...(params.get("owner") ? { owner: requestOwner(params.get("owner")!) } : {}),
          };
          return sendJson(res, 200, await api.sessions(query));
        }
        case "session":
          return sendJson(res, 200, await api.session(requestId(required(params, "id"))));
        case "preview":
          return sendJson(res, 200, await api.migrationPreview(requestId(required(params, "id"))));
        case "blob": {
          const hash = required(params, "hash");
          if (!/^[0-9a-f]{64}$/.test(hash)) throw new StudioHttpError(400, "hash: expected 64 lowercase hex digits");
          const image = await api.blob(requestId(required(params, "id")), hash);
          res.writeHead(200, {
            ...SECURITY_HEADERS,
            "Content-Type": image.mediaType,
            "Content-Length": image.bytes.length,
          });
          return void res.end(image.bytes);
        }
        case "types":
          return sendJson(res, 200, api.types());
        case "type":
          return sendJson(res, 200, await api.type(required(params, "type")));
        default:
          return sendJson(res, 404, { error: "no such API" });
      }
    } catch (error) {
      if (error instanceof StudioHttpError) return sendJson(res, error.status, { error: error.message });
      if (error instanceof SyntaxError) return sendJson(res, 400, { error: "the body is not JSON" });
      // What the request named is refused with a fixed message: the store's own would quote it.
      if (error instanceof InvalidIdError)
        return sendJson(res, 400, { error: "not a valid id for this store", code: error.code });
      if (error instanceof InvalidCursorError)
        return sendJson(res, 400, {
          error: "cursor: not a cursor this studio gave out (start from the first page)",
          code: error.code,
        });
      // statebag's errors say what and how to fix (and quote what they name); anything else is not shown.
      if (error instanceof StatebagError)
        return sendJson(res, 500, {
          error: error.message,
          code: error.code,
          ...(error.hint ? { hint: error.hint } : {}),
        });
      return sendJson(res, 500, { error: "the studio could not answer this request (an unexpected error)" });
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) nothing(res, 500);
      else res.destroy();
    });
  });
  server.headersTimeout = 20_000;
  server.requestTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  // On a wildcard address the printed URL names loopback: 0.0.0.0 is no name a browser should use.
  const shownHost = isWildcard(host)
    ? host.includes(":")
      ? "[::1]"
      : "127.0.0.1"
    : (normalHostName(host) ?? (host.includes(":") ? `[${host}]` : host));
  return {
    url: `http://${shownHost}:${port}${prefix}`,
    token,
    host,
    port,
    server,
    allowedHosts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
