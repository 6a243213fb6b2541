/**
 * Structural types for AI SDK UI messages (`UIMessage` of the `ai` package, versions 5, 6 and 7),
 * written out here so statebag's declarations never reference `ai` (an optional peer). They
 * accept every part `ai` 5-7 writes; `toUIMessages` writes the `ai` 7 shape unless told a version.
 */

/** JSON as UI messages carry it (tool inputs and outputs, data parts, metadata). */
export type UIJson = string | number | boolean | null | UIJson[] | { [key: string]: UIJson };

/** Provider metadata of a part: provider name -> that provider's JSON object. */
export type UIProviderMetadata = Record<string, Record<string, UIJson>>;

export interface UITextPart {
  type: "text";
  text: string;
  state?: "streaming" | "done";
  providerMetadata?: UIProviderMetadata;
}

export interface UIReasoningPart {
  type: "reasoning";
  text: string;
  state?: "streaming" | "done";
  providerMetadata?: UIProviderMetadata;
}

export interface UIFilePart {
  type: "file";
  mediaType: string;
  filename?: string;
  /** A hosted file's URL or a `data:` URL. */
  url: string;
  providerMetadata?: UIProviderMetadata;
}

export interface UISourceUrlPart {
  type: "source-url";
  sourceId: string;
  url: string;
  title?: string;
  providerMetadata?: UIProviderMetadata;
}

export interface UISourceDocumentPart {
  type: "source-document";
  sourceId: string;
  mediaType: string;
  title: string;
  filename?: string;
  providerMetadata?: UIProviderMetadata;
}

export interface UIStepStartPart {
  type: "step-start";
}

/** `data-<name>` parts: app data streamed with a message. */
export interface UIDataPart {
  type: `data-${string}`;
  id?: string;
  data: unknown;
}

/** Every state a tool part has had: `ai` 5 (no approvals), 6 and 7 (approvals). */
export type UIToolState =
  | "input-streaming"
  | "input-available"
  | "approval-requested"
  | "approval-responded"
  | "output-available"
  | "output-error"
  | "output-denied";

/** A tool part's approval (`ai` 6 and 7). */
export interface UIToolApproval {
  id: string;
  approved?: boolean;
  reason?: string;
}

interface UIToolCommon {
  toolCallId: string;
  title?: string;
  providerExecuted?: boolean;
  callProviderMetadata?: UIProviderMetadata;
}

/** A tool call in each of its states (a union on `state`, as in `ai`). */
export type UIToolInvocation = UIToolCommon &
  (
    | { state: "input-streaming"; input?: unknown; output?: never; errorText?: never; approval?: never }
    | { state: "input-available"; input: unknown; output?: never; errorText?: never; approval?: never }
    | {
        state: "approval-requested";
        input: unknown;
        output?: never;
        errorText?: never;
        approval: { id: string; approved?: never; reason?: never };
      }
    | {
        state: "approval-responded";
        input: unknown;
        output?: never;
        errorText?: never;
        approval: { id: string; approved: boolean; reason?: string };
      }
    | {
        state: "output-available";
        input: unknown;
        output: unknown;
        errorText?: never;
        resultProviderMetadata?: UIProviderMetadata;
        preliminary?: boolean;
        approval?: { id: string; approved: true; reason?: string };
      }
    | {
        state: "output-error";
        input: unknown;
        output?: never;
        errorText: string;
        resultProviderMetadata?: UIProviderMetadata;
        approval?: { id: string; approved: true; reason?: string };
      }
    | {
        state: "output-denied";
        input: unknown;
        output?: never;
        errorText?: never;
        approval: { id: string; approved: false; reason?: string };
      }
  );

/** A static tool's part: `tool-<name>`. */
export type UIToolPart = { type: `tool-${string}` } & UIToolInvocation;

/** A tool the app does not type statically: `dynamic-tool` with its name. */
export type UIDynamicToolPart = { type: "dynamic-tool"; toolName: string } & UIToolInvocation;

/** The parts `toUIMessages` writes. */
export type UIMessagePart =
  | UITextPart
  | UIReasoningPart
  | UIFilePart
  | UISourceUrlPart
  | UISourceDocumentPart
  | UIStepStartPart
  | UIDataPart
  | UIToolPart
  | UIDynamicToolPart;

/** An AI SDK UI message as `toUIMessages` writes it (assignable to `ai`'s `UIMessage`). */
export interface UIMessage {
  id: string;
  role: "system" | "user" | "assistant";
  metadata?: unknown;
  parts: UIMessagePart[];
}

/**
 * What `fromUIMessages` reads: any `ai` 5, 6 or 7 `UIMessage` (parts of types it does not know,
 * such as `custom`, `reasoning-file` or a later version's, are kept as they are).
 */
export interface UIMessageLike {
  id?: string;
  role: string;
  metadata?: unknown;
  parts: readonly { type: string }[];
}

/** Which `ai` major's shape to write: 5 has no approval states. */
export type UIMessageVersion = 5 | 6 | 7;
