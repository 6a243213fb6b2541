/**
 * The studio's HTTP server: one page (HTML, CSS, JS served as static strings) and the JSON API,
 * all under a random token path `/<token>/`. A request without the token gets an empty 404;
 * tokens are compared in constant time. Requests naming another Host are refused (a DNS-rebinding
 * page cannot reach it by name), writes need --write, a JSON body and a same-origin Origin.
 * Every answer carries a strict Content-Security-Policy: scripts and styles from this origin only,
 * no inline script, nothing remote.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StudioHttpError, type SessionQuery, type StudioApi, type Validity } from "./api.js";
import { STUDIO_CSS, STUDIO_HTML, STUDIO_JS } from "./page.js";

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
}

export interface RunningStudio {
  /** The page's URL, token included. */
  url: string;
  token: string;
  host: string;
  port: number;
  server: Server;
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

function send(res: ServerResponse, status: number, type: string | undefined, body: string): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...(type ? { "Content-Type": type } : {}),
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value));
}

function nothing(res: ServerResponse, status = 404): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "Content-Length": 0 });
  res.end();
}

const ASSETS: Record<string, { type: string; body: string }> = {
  "": { type: "text/html; charset=utf-8", body: STUDIO_HTML },
  "app.js": { type: "text/javascript; charset=utf-8", body: STUDIO_JS },
  "app.css": { type: "text/css; charset=utf-8", body: STUDIO_CSS },
};

function intParam(params: URLSearchParams, name: string, fallback?: number): number | undefined {
  const v = params.get(name);
  if (v === null || v === "") return fallback;
  if (!/^\d{1,9}$/.test(v)) throw new StudioHttpError(400, `${name}: expected a non-negative integer`);
  return Number(v);
}

function required(params: URLSearchParams, name: string): string {
  const v = params.get(name);
  if (v === null || v === "") throw new StudioHttpError(400, `${name} is missing`);
  return v;
}

async function readBody(req: IncomingMessage, max = 64 * 1024): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new StudioHttpError(413, "request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts the studio. Resolves once it listens. */
export async function startStudio(options: StudioServerOptions): Promise<RunningStudio> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? newToken();
  const prefix = `/${token}/`;
  const { api } = options;
  let port = 0;
  const allowedHosts = () => {
    const names = new Set(["127.0.0.1", "localhost", "[::1]", host.includes(":") ? `[${host}]` : host]);
    return new Set([...names].map((n) => `${n}:${port}`.toLowerCase()));
  };
  let hosts: Set<string> | undefined;
  const wildcard = host === "0.0.0.0" || host === "::";

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = req.url ?? "/";
    // Only origin-form paths: an absolute URL or anything else is answered with nothing.
    if (!raw.startsWith("/")) return nothing(res);
    const q = raw.indexOf("?");
    const path = q === -1 ? raw : raw.slice(0, q);
    const slash = path.indexOf("/", 1);
    const given = slash === -1 ? path.slice(1) : path.slice(1, slash);
    if (!sameToken(given, token)) return nothing(res);
    if (slash === -1) {
      // /<token> without the slash: to the page, so relative URLs resolve under the token.
      res.writeHead(308, { ...SECURITY_HEADERS, Location: prefix, "Content-Length": 0 });
      return void res.end();
    }
    hosts ??= allowedHosts();
    // On a wildcard address (--host 0.0.0.0) the page is reached by any of the machine's names.
    if (!wildcard && !hosts.has(String(req.headers.host ?? "").toLowerCase())) return nothing(res, 403);
    const rest = path.slice(prefix.length);
    const params = new URLSearchParams(q === -1 ? "" : raw.slice(q + 1));
    if (!rest.startsWith("api/")) {
      const asset = ASSETS[rest];
      if (!asset || (req.method !== "GET" && req.method !== "HEAD")) return nothing(res);
      return send(res, 200, asset.type, asset.body);
    }
    const route = rest.slice(4);
    try {
      if (req.method === "POST") {
        if (route !== "migrate") return sendJson(res, 404, { error: "no such API" });
        if (!api.options.write)
          return sendJson(res, 403, { error: "the studio is read-only: start it with --write to migrate a session" });
        // Defence in depth besides the token: a JSON body from this origin only.
        const origin = req.headers.origin;
        if (origin !== undefined && origin.toLowerCase() !== `http://${String(req.headers.host ?? "")}`.toLowerCase())
          return sendJson(res, 403, { error: "cross-origin request refused" });
        if (!String(req.headers["content-type"] ?? "").startsWith("application/json"))
          return sendJson(res, 415, { error: "expected a JSON body" });
        const body = JSON.parse(await readBody(req)) as { id?: unknown };
        if (typeof body?.id !== "string" || body.id === "") throw new StudioHttpError(400, "id is missing");
        return sendJson(res, 200, await api.migrateOne(body.id));
      }
      if (req.method !== "GET") return sendJson(res, 405, { error: "method not allowed" });
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
            ...(params.get("owner") ? { owner: params.get("owner")! } : {}),
          };
          return sendJson(res, 200, await api.sessions(query));
        }
        case "session":
          return sendJson(res, 200, await api.session(required(params, "id")));
        case "preview":
          return sendJson(res, 200, await api.migrationPreview(required(params, "id")));
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
      const e = error as { message?: string; hint?: string; code?: string };
      return sendJson(res, 500, {
        error: String(e?.message ?? error),
        ...(e?.hint ? { hint: e.hint } : {}),
        ...(e?.code ? { code: e.code } : {}),
      });
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
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}${prefix}`,
    token,
    host,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
