/**
 * `statebag/ui-messages`: a session's history as AI SDK UI messages (`UIMessage[]`, what `useChat`
 * renders and sends) and back. Works with `ai` 5, 6 and 7 without importing it.
 */
export { toUIMessages, type ToUIMessagesOptions } from "./runtime/ui-messages/to-ui.js";
export { fromUIMessages, type FromUIMessagesOptions } from "./runtime/ui-messages/from-ui.js";
export { sessionHistory } from "./runtime/ui-messages/history.js";
export {
  type BranchesLeftOut,
  type BranchLeftOut,
  branchesLeftOut,
} from "./runtime/builtins/branches-left-out.js";
export { UIMessageError } from "./runtime/ui-messages/errors.js";
export { STATEBAG_CONTENT_PART, UI_MESSAGE_KEY } from "./runtime/ui-messages/keys.js";
export type {
  UIDataPart,
  UIDynamicToolPart,
  UIFilePart,
  UIJson,
  UIMessage,
  UIMessageLike,
  UIMessagePart,
  UIMessageVersion,
  UIProviderMetadata,
  UIReasoningPart,
  UISourceDocumentPart,
  UISourceUrlPart,
  UIStepStartPart,
  UITextPart,
  UIToolApproval,
  UIToolInvocation,
  UIToolPart,
  UIToolState,
} from "./runtime/ui-messages/types.js";
