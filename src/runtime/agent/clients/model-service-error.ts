/** The error every model client throws for a service failure, whatever the SDK. */
import { StatebagError } from "../../core/errors.js";
import { shownText } from "../../core/json.js";

/** A service's message as an error message quotes it: escaped and cut (the service may be any server). */
export const serviceText = (message: string): string => shownText(message, 1000);

/** The model service answered with an error, or could not be reached. */
export class ModelServiceError extends StatebagError {
  constructor(
    message: string,
    readonly details: {
      provider: string;
      /** HTTP status; absent for connection failures and errors inside a stream. */
      status?: number;
      /** The service's own message. */
      serviceMessage: string;
      serviceCode?: string;
      requestId?: string;
      /** True for rate limits, server errors and connection failures: trying again later may work. */
      retryable: boolean;
      /** How long the service asked to wait before a retry (`retry-after-ms` / `retry-after`), in ms. */
      retryAfterMs?: number;
    },
    cause?: unknown,
  ) {
    super("model-service", message, {
      cause,
      hint: details.retryable
        ? "a temporary failure: retry later (the session was left unchanged)"
        : details.status === 401 || details.status === 403
          ? "check the API key (OPENAI_API_KEY) and the project's access to this model"
          : details.status === 404
            ? "check the model name and baseURL, or that the conversation/response id still exists at the service"
            : "the request was refused; check the model, its options and the input",
    });
  }
  get status(): number | undefined {
    return this.details.status;
  }
}

const CONNECTION_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_ABORTED",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
]);

/** Whether an error (or one it was caused by) is a transport failure: undici's `terminated`, a reset socket. */
export function isCutConnection(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
    if (e instanceof TypeError && (e.message === "terminated" || e.message === "fetch failed")) return true;
  }
  return false;
}

/** The transport failure in words: the error's message and what caused it (a socket's "other side closed"). */
export function connectionMessage(error: unknown): string {
  const parts: string[] = [];
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    parts.push(typeof code === "string" ? `${e.message} [${code}]` : e.message);
  }
  return parts.join(": ") || String(error);
}
