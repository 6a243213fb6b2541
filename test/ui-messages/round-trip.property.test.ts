/**
 * Round trips, over generated messages of every part kind and tool state:
 * - UI -> statebag -> UI gives the input back exactly (what statebag has no place for is kept);
 * - statebag -> UI -> statebag gives the history back for what UI messages can carry (a turn of
 *   several steps included: one UI message with a step-start per step).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { UIMessage as AIUIMessage } from "ai";
import { fromUIMessages, toUIMessages, type UIMessage } from "../../src/ui-messages.js";
import type { AIContent, ChatMessage } from "../../src/index.js";

const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)));
const obj = fc
  .dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constant("__proto__")), json, { maxKeys: 3 })
  .map((v) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>);
const pm = fc.option(fc.record({ openai: fc.record({ itemId: fc.string() }) }), { nil: undefined });
const opt = <T>(key: string, arb: fc.Arbitrary<T>) =>
  fc.option(arb, { nil: undefined }).map((v) => (v === undefined ? {} : { [key]: v }));
const STATES = [
  "input-streaming",
  "input-available",
  "approval-requested",
  "approval-responded",
  "output-available",
  "output-error",
  "output-denied",
] as const;

const toolPart = fc
  .record({
    dynamic: fc.boolean(),
    name: fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_]{0,8}$/),
    state: fc.constantFrom(...STATES),
    input: obj,
    output: json,
    errorText: fc.string(),
    approved: fc.boolean(),
    reason: fc.option(fc.string(), { nil: undefined }),
    title: opt("title", fc.string()),
    pe: opt("providerExecuted", fc.constant(true)),
    cpm: opt(
      "callProviderMetadata",
      pm.filter((x) => x !== undefined),
    ),
  })
  .map((t) => {
    const base: Record<string, unknown> = t.dynamic
      ? { type: "dynamic-tool", toolName: t.name }
      : { type: `tool-${t.name}` };
    Object.assign(base, { toolCallId: "", state: t.state, input: t.input }, t.title, t.pe, t.cpm);
    if (t.state === "output-available") base.output = t.output;
    if (t.state === "output-error") base.errorText = t.errorText;
    if (t.state === "approval-requested") base.approval = { id: "" };
    if (t.state === "approval-responded")
      base.approval = { id: "", approved: t.approved, ...(t.reason !== undefined ? { reason: t.reason } : {}) };
    if (t.state === "output-denied")
      base.approval = { id: "", approved: false, ...(t.reason !== undefined ? { reason: t.reason } : {}) };
    return base;
  });

const part = fc.oneof(
  fc.record({ type: fc.constant("text"), text: fc.string() }, { requiredKeys: ["type", "text"] }).chain((p) =>
    fc
      .tuple(
        opt("state", fc.constantFrom("streaming", "done")),
        opt(
          "providerMetadata",
          pm.filter((x) => x !== undefined),
        ),
      )
      .map(([a, b]) => ({ ...p, ...a, ...b })),
  ),
  fc.record({ type: fc.constant("reasoning"), text: fc.string() }).chain((p) =>
    opt(
      "providerMetadata",
      pm.filter((x) => x !== undefined),
    ).map((b) => ({ ...p, ...b })),
  ),
  fc
    .record({
      type: fc.constant("file"),
      mediaType: fc.constantFrom("image/png", "application/pdf", "image"),
      url: fc.constantFrom("data:image/png;base64,AAAA", "https://f.example/a.pdf", "data:,hi"),
    })
    .chain((p) => opt("filename", fc.string()).map((b) => ({ ...p, ...b }))),
  fc
    .record({ type: fc.constant("source-url"), sourceId: fc.string(), url: fc.webUrl() })
    .chain((p) => opt("title", fc.string()).map((b) => ({ ...p, ...b }))),
  fc
    .record({
      type: fc.constant("source-document"),
      sourceId: fc.string(),
      mediaType: fc.constant("application/pdf"),
      title: fc.string(),
    })
    .chain((p) => opt("filename", fc.string()).map((b) => ({ ...p, ...b }))),
  fc.constant({ type: "step-start" }),
  fc
    .record({ type: fc.constantFrom("data-weather", "data-statebag-content"), data: json })
    .chain((p) => opt("id", fc.string()).map((b) => ({ ...p, ...b }))),
  fc.constant({ type: "data-statebag-content", data: { $type: "error", message: "boom" } }),
  fc.constant({ type: "data-statebag-content", data: { $type: "usage", details: { inputTokenCount: 1 } } }),
  fc.constant({ type: "custom", kind: "openai.compaction" }),
  toolPart,
);

const metadata = fc.oneof(
  fc.constant(undefined),
  fc.constant({ createdAt: "2026-01-02T03:04:05.000Z" }),
  fc.constant({ createdAt: "yesterday" }),
  fc.constant({ usage: { inputTokenCount: 2, outputTokenCount: 3 } }),
  fc.constant({ usage: { inputTokens: 2 } }),
  obj,
  fc.constant(null),
);

const uiMessages = fc
  .array(
    fc.record({
      id: fc.string({ minLength: 1 }),
      role: fc.constantFrom("system", "user", "assistant"),
      metadata,
      parts: fc.array(part, { maxLength: 6 }),
    }),
    { maxLength: 5 },
  )
  .map((messages) => {
    let n = 0;
    for (const m of messages) {
      if (m.metadata === undefined) delete (m as { metadata?: unknown }).metadata;
      for (const p of m.parts as Record<string, unknown>[]) {
        if ("toolCallId" in p) p.toolCallId = `call-${n++}`;
        if (p.approval) (p.approval as { id: string }).id = `ap-${n++}`;
      }
    }
    return messages as unknown as UIMessage[];
  });

describe("round trips", () => {
  it("UI -> statebag -> UI is the identity", () => {
    fc.assert(
      fc.property(uiMessages, (ui) => {
        const history = fromUIMessages(ui);
        expect(toUIMessages(history)).toEqual(ui);
        // What it stores is plain JSON.
        expect(JSON.parse(JSON.stringify(history))).toEqual(history);
      }),
      { numRuns: 400 },
    );
  });

  // Canonical statebag histories: each assistant turn followed by its answers (user) and results (tool).
  const call = (id: string, name: string, args: Record<string, unknown>) => ({
    $type: "functionCall" as const,
    callId: id,
    name,
    arguments: args as never,
  });
  const turn = fc.array(
    fc.record({
      kind: fc.constantFrom(
        "plain",
        "result",
        "error",
        "pending",
        "approved",
        "approvedDone",
        "rejected",
        "rejectedDone",
        "text",
        "reasoning",
        "source",
      ),
      args: obj,
      out: json.filter((v) => !(v !== null && typeof v === "object" && !Array.isArray(v) && "error" in v)),
      text: fc.string({ minLength: 1 }),
      reason: fc.option(fc.string(), { nil: undefined }),
    }),
    { maxLength: 5 },
  );
  const histories = fc
    .array(
      fc.tuple(
        fc.string({ minLength: 1 }),
        fc.string(),
        turn,
        fc.boolean(),
        fc.boolean(),
        fc.option(fc.string(), { nil: undefined }),
      ),
      { maxLength: 4 },
    )
    .map((turns) => {
      const out: ChatMessage[] = [];
      let n = 0;
      for (const [id, userText, items, withDate, withUsage, next] of turns) {
        out.push({
          role: "user",
          messageId: `u-${id}`,
          contents: [
            { $type: "text", text: userText },
            { $type: "uri", uri: "https://f.example/x.png", mediaType: "image/png" },
          ],
        });
        const contents: AIContent[] = [];
        const answers: AIContent[] = [];
        const results: AIContent[] = [];
        for (const it of items) {
          const callId = `c${n++}`;
          const c = call(callId, "tool", it.args);
          if (it.kind === "text") contents.push({ $type: "text", text: it.text });
          else if (it.kind === "reasoning")
            contents.push({
              $type: "reasoning",
              text: it.text,
              additionalProperties: { providerMetadata: { anthropic: { signature: "s" } } },
            });
          else if (it.kind === "source")
            contents.push({
              $type: "text",
              text: "",
              annotations: [
                {
                  $type: "citation",
                  url: "https://s.example",
                  title: it.text,
                  additionalProperties: { sourceId: callId },
                },
              ],
            });
          else if (it.kind === "plain" || it.kind === "result" || it.kind === "error") {
            contents.push(c);
            if (it.kind === "result") results.push({ $type: "functionResult", callId, result: it.out as never });
            if (it.kind === "error") results.push({ $type: "functionResult", callId, result: { error: it.text } });
          } else {
            const requestId = `r${n++}`;
            contents.push({ $type: "toolApprovalRequest", requestId, toolCall: c });
            if (it.kind === "pending") continue;
            const approved = it.kind.startsWith("approved");
            answers.push({
              $type: "toolApprovalResponse",
              requestId,
              approved,
              toolCall: structuredClone(c),
              ...(it.reason !== undefined ? { reason: it.reason } : {}),
            });
            if (it.kind === "approvedDone") results.push({ $type: "functionResult", callId, result: it.out as never });
            if (it.kind === "rejectedDone")
              results.push({
                $type: "functionResult",
                callId,
                result: {
                  error: `the user rejected this call to tool${it.reason ? `: ${it.reason}` : ""}`,
                  rejected: true,
                },
              });
          }
        }
        if (withUsage) contents.push({ $type: "usage", details: { inputTokenCount: 5, totalTokenCount: 9 } });
        out.push({
          role: "assistant",
          messageId: `a-${id}`,
          ...(withDate ? { createdAt: "2026-05-06T07:08:09+02:00" } : {}),
          contents,
        });
        if (answers.length) out.push({ role: "user", contents: answers });
        if (results.length) out.push({ role: "tool", contents: results });
        // The next step of the turn (the model's answer after the results): the same UI message.
        if (next !== undefined) out.push({ role: "assistant", contents: [{ $type: "text", text: next }] });
      }
      return out;
    });

  it("statebag -> UI -> statebag is the identity for what UI messages carry", () => {
    fc.assert(
      fc.property(histories, (history) => {
        expect(fromUIMessages(toUIMessages(history))).toEqual(history);
      }),
      { numRuns: 300 },
    );
  });

  it("what toUIMessages writes is an ai 7 UIMessage[], and ai's own messages are accepted", () => {
    const written: AIUIMessage[] = toUIMessages([{ role: "user", contents: [{ $type: "text", text: "hi" }] }]);
    const back = fromUIMessages(written);
    expect(back).toEqual([{ role: "user", messageId: "statebag-0", contents: [{ $type: "text", text: "hi" }] }]);
  });
});
