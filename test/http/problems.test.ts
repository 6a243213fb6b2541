/**
 * The one mapping from errors to HTTP problems: every code of the table answers its status, type
 * and fixed detail; an `HttpProblem` is a `StatebagError` whose fields (not its text) carry the
 * response (the `Allow` of a 405 from `allow`); the store's and the session flow's errors answer
 * a fixed sentence that never repeats their own message.
 */
import { describe, expect, it } from "vitest";
import { ToolApprovalError } from "../../src/runtime/agent/approvals.js";
import { ModelServiceError } from "../../src/runtime/agent/clients/model-service-error.js";
import { ConfigurationError, StatebagError } from "../../src/runtime/core/errors.js";
import { ChatError } from "../../src/runtime/http/chat-error.js";
import { HttpProblem, PROBLEMS, problemResponse, toProblem } from "../../src/runtime/http/problem.js";
import {
  ConflictError,
  InvalidCursorError,
  InvalidIdError,
  SessionNotFoundError,
  StoreAuthenticationError,
  StoreKeyConflictError,
  StoreNotSetUpError,
  StoreUnavailableError,
} from "../../src/runtime/stores/errors.js";
import { BASE, call, harness } from "./setup.js";

/** Every code and the status it answers: a change here is a change of the wire contract. */
const STATUS: Record<keyof typeof PROBLEMS, number> = {
  "http-not-found": 404,
  "http-method-not-allowed": 405,
  "http-unauthenticated": 401,
  "http-unsupported-media-type": 415,
  "http-body-too-large": 413,
  "http-invalid-json": 400,
  "http-invalid-request": 400,
  "http-message-too-long": 413,
  "http-unsupported-part": 422,
  "http-file-too-large": 413,
  "http-too-many-files": 413,
  "http-file-type-not-allowed": 415,
  "http-file-not-inline": 422,
  "http-file-not-found": 404,
  "http-range-not-satisfiable": 416,
  "blob-budget-exceeded": 413,
  "http-request-timeout": 408,
  "http-invalid-target": 400,
  "http-not-implemented": 501,
  "http-internal": 500,
  "chat-not-found": 404,
  "chat-busy": 409,
  "chat-message-id-taken": 409,
  "message-not-found": 404,
  "history-branch": 422,
  "chat-approval-pending": 409,
  "chat-approval-not-pending": 409,
  "tool-approval-invalid": 400,
  "tool-approval-not-found": 409,
  "tool-approval-answered": 409,
  "tool-approval-pending": 409,
  "tool-approval-in-progress": 409,
  conflict: 409,
  "session-not-found": 404,
  "invalid-id": 400,
  "invalid-cursor": 400,
  "store-unavailable": 503,
  "store-not-set-up": 503,
  "store-authentication": 503,
  "store-key-conflict": 503,
  configuration: 503,
  "model-service": 502,
};

describe("the problem table", () => {
  it("maps every code to its status, a urn type and a fixed detail", () => {
    expect(Object.keys(PROBLEMS).sort()).toEqual(Object.keys(STATUS).sort());
    for (const [code, status] of Object.entries(STATUS)) {
      const problem = new HttpProblem(code as keyof typeof PROBLEMS);
      expect(problem, code).toBeInstanceOf(StatebagError);
      expect(problem.code).toBe(code);
      expect(problem.status, code).toBe(status);
      expect(problem.type).toMatch(/^urn:statebag:problem:[a-z-]+$/);
      expect(problem.detail.length, code).toBeGreaterThan(10);
      // The message is the sentence the client reads, nothing appended; the hint is its own field.
      expect(problem.message).toBe(problem.detail);
      expect(problem.message).not.toContain("hint");
      expect(problem.hint.length).toBeGreaterThan(0);
    }
  });

  it("the response carries the fields: status, problem+json body, Allow from the allowed methods", async () => {
    const problem = new HttpProblem("http-method-not-allowed", { allow: ["GET", "DELETE"] });
    expect(problem.allow).toEqual(["GET", "DELETE"]);
    const response = problemResponse(problem);
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, DELETE");
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toEqual({
      type: "urn:statebag:problem:method-not-allowed",
      title: "Method not allowed",
      status: 405,
      detail: problem.detail,
    });
  });
});

describe("toProblem: one mapping for every error", () => {
  const secret = "postgres://admin:hunter2@db.internal/chats <script>";
  const cases: [string, unknown, number, string][] = [
    ["ConflictError", new ConflictError(`s ${secret}`, 3, 4), 409, "chat-conflict"],
    ["SessionNotFoundError", new SessionNotFoundError(secret), 404, "chat-not-found"],
    [
      "StoreNotSetUpError",
      new StoreNotSetUpError(secret, `table ${secret} missing`, "run setup"),
      503,
      "store-not-ready",
    ],
    [
      "StoreAuthenticationError",
      new StoreAuthenticationError("postgres", secret, "admin", "check it"),
      503,
      "store-not-ready",
    ],
    ["StoreKeyConflictError", new StoreKeyConflictError(secret, "app", "fix"), 503, "store-not-ready"],
    ["ConfigurationError", new ConfigurationError(`bad ${secret}`), 503, "store-not-ready"],
    ["StoreUnavailableError", new StoreUnavailableError("redis", secret, "get"), 503, "store-unavailable"],
    ["InvalidCursorError", new InvalidCursorError("list cursor", `is ${secret}`), 400, "invalid-cursor"],
    ["InvalidIdError", new InvalidIdError("session id", `is ${secret}`), 400, "invalid-id"],
    [
      "ModelServiceError",
      new ModelServiceError(`said ${secret}`, { provider: "openai", serviceMessage: secret, retryable: true }),
      502,
      "model-service",
    ],
    ["ToolApprovalError", new ToolApprovalError("tool-approval-answered", secret, "x"), 409, "tool-approval-answered"],
    ["ChatError", new ChatError("chat-busy", secret), 409, "chat-busy"],
    ["a StatebagError of another code", new StatebagError("session-invalid", secret), 500, "internal"],
    ["an Error", new Error(secret), 500, "internal"],
    ["a thrown string", secret, 500, "internal"],
  ];
  for (const [name, error, status, slug] of cases) {
    it(`${name} -> ${status} ${slug}, with a fixed detail and the error as its cause`, async () => {
      const problem = toProblem(error, "POST");
      expect(problem.status).toBe(status);
      expect(problem.slug).toBe(slug);
      expect(problem.cause).toBe(error);
      const text = await problemResponse(problem).text();
      for (const piece of ["hunter2", "db.internal", "<script>", "postgres://"]) expect(text).not.toContain(piece);
    });
  }

  it("a read is told nothing about a change that may not have happened", () => {
    const down = new StoreUnavailableError("redis", "redis://cache", "get");
    expect(toProblem(down, "GET").detail).not.toMatch(/carried out/);
    expect(toProblem(down, "POST").detail).toMatch(/may not have been carried out/);
  });

  it("an HttpProblem is answered as it is", () => {
    const problem = new HttpProblem("http-invalid-request", { detail: "limit must be an integer from 1 to 100." });
    expect(toProblem(problem)).toBe(problem);
  });
});

describe("the handler answers from the fields", () => {
  it("405 takes Allow from the route table, not from text", async () => {
    const { handler } = harness();
    const response = await handler(new Request(`${BASE}/chats/abc`, { method: "PUT", headers: { "x-owner": "ada" } }));
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, DELETE");
    expect(handler.allow("/api/chats/abc")).toBe("GET, DELETE");
    expect(handler.allow("/api/chat/%E0%A4%A/stream")).toBeUndefined();
  });

  it("a chat id that does not decode is no chat", async () => {
    const { handler } = harness();
    const response = await call(handler, "GET", "/chats/%E0%A4%A");
    expect(response.status).toBe(404);
    expect(((await response.json()) as { type: string }).type).toBe("urn:statebag:problem:chat-not-found");
  });
});
