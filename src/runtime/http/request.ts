/**
 * What every route of the chat handler shares: the resolved options, the session flow, who is
 * asking (the app's `owner` function; anything else is a 401), the JSON body read within its
 * limits (`application/json`, UTF-8 only: another charset is a 415, not a misread body), and the
 * JSON response.
 */
import { JsonParseError, parseJson } from "../json/safe-json.js";
import { checkOwner } from "../stores/listing.js";
import type { UIRequestLimits } from "./ai-sdk-ui.js";
import type { ChatSessions } from "./chat-flow.js";
import { HttpProblem } from "./problem.js";

export interface RouteContext {
  chats: ChatSessions;
  owner: (request: Request) => string | Promise<string>;
  /** The routes' base path (`/api`), without a trailing slash. */
  basePath: string;
  maxBodyBytes: number;
  maxOwnerLength: number;
  pageSize: number;
  limits: UIRequestLimits;
  /** How long a stop request waits for the stopped turn's commit, in ms. */
  stopWaitMs: number;
  onError?: (error: unknown, request: Request) => void;
}

/** A route: the request, its URL and the chat id of its path (decoded, not yet checked). */
export type Route = (context: RouteContext, request: Request, url: URL, id: string | undefined) => Promise<Response>;

const MAX_DEPTH = 64;

export async function ownerOf(context: RouteContext, request: Request): Promise<string> {
  let owner: unknown;
  try {
    owner = await context.owner(request);
  } catch {
    owner = undefined;
  }
  const unauthenticated = () => new HttpProblem("http-unauthenticated");
  if (typeof owner !== "string" || owner.length === 0 || owner.length > context.maxOwnerLength) throw unauthenticated();
  try {
    checkOwner(owner); // what a store accepts as an owner (well-formed text, no NUL): else no save could name it
  } catch {
    throw unauthenticated();
  }
  return owner;
}

/** True for `application/json` with no charset or a UTF-8 one (any other parameter is ignored). */
export function isJsonUtf8(contentType: string | null): boolean {
  if (contentType === null) return false;
  const [type, ...params] = contentType.split(";");
  if (type.trim().toLowerCase() !== "application/json") return false;
  for (const param of params) {
    const eq = param.indexOf("=");
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    let value = param
      .slice(eq + 1)
      .trim()
      .toLowerCase();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (value !== "utf-8" && value !== "utf8") return false;
  }
  return true;
}

/** The body as JSON (`allowEmpty`: an empty body is `undefined`). */
export async function readJson(
  context: RouteContext,
  request: Request,
  options: { allowEmpty?: boolean } = {},
): Promise<unknown> {
  const { maxBodyBytes } = context;
  if (!isJsonUtf8(request.headers.get("content-type"))) throw new HttpProblem("http-unsupported-media-type");
  const tooLarge = () =>
    new HttpProblem("http-body-too-large", { detail: `The body is larger than ${maxBodyBytes} bytes.` });
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > maxBodyBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBodyBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  const bytes = Buffer.concat(chunks);
  if (options.allowEmpty && bytes.toString("utf8").trim() === "") return undefined;
  try {
    return parseJson(bytes, { maxBytes: maxBodyBytes, maxDepth: MAX_DEPTH, maxKeys: 10_000, protoKeys: "reject" });
  } catch (error) {
    if (error instanceof JsonParseError) {
      const detail =
        error.code === "json-too-deep"
          ? `The body is nested deeper than ${MAX_DEPTH} levels.`
          : error.code === "json-too-many-keys"
            ? "An object of the body has too many keys."
            : error.code === "json-too-large"
              ? `The body is larger than ${maxBodyBytes} bytes.`
              : error.code === "json-duplicate-key"
                ? "An object of the body has the same key twice."
                : error.code === "json-proto-key"
                  ? 'The body contains a "__proto__" key.'
                  : "The body is not valid JSON.";
      if (error.code === "json-too-large") throw new HttpProblem("http-body-too-large", { detail, cause: error });
      throw new HttpProblem("http-invalid-json", { detail, cause: error });
    }
    throw error;
  }
}

export function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}
