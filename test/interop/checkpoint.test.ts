/** Python workflow checkpoints (issue #27): recognised with their evidence and refused with what they hold. Fixtures 65-66. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  type InteropError,
  detectSessionShape,
  exportSessionDocument,
  importSession,
} from "../../src/runtime/interop/index.js";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/maf/${name}`, import.meta.url), "utf8"));
const refusal = (doc: unknown): InteropError => {
  try {
    importSession(doc as object, { from: "workflow-checkpoint" });
  } catch (e) {
    return e as InteropError;
  }
  throw new Error("imported");
};

describe("workflow checkpoints", () => {
  it("are recognised by their members", () => {
    expect(detectSessionShape(fixture("65_python_workflow_checkpoint_plain.json"))).toMatchObject({
      shape: "workflow-checkpoint",
      evidence: '"workflow_name", "checkpoint_id", "graph_signature_hash", "version" (a Python workflow checkpoint)',
    });
  });

  it("a checkpoint holding pickled values (a Message) is refused at the pickle, naming its Python type", () => {
    const error = refusal(fixture("66_python_workflow_checkpoint_pickled_message.json"));
    expect(error.pointer).toBe("/messages/writer/0/data");
    expect(error.problem).toMatch(
      /workflow "group-chat" keeps its values as Python pickles \("agent_framework._types:Message" here\), which statebag does not decode/,
    );
    expect(error.hint).toMatch(/AgentSession.to_dict\(\)/);
  });

  it("a checkpoint without a conversation is refused saying so; other versions are refused; nothing is written", () => {
    expect(refusal(fixture("65_python_workflow_checkpoint_plain.json")).problem).toMatch(
      /holds executor inboxes and workflow state, not a conversation/,
    );
    expect(refusal({ ...fixture("65_python_workflow_checkpoint_plain.json"), version: "2.0" }).pointer).toBe(
      "/version",
    );
    expect(() => exportSessionDocument({ id: "s", stateBag: {} }, { to: "workflow-checkpoint" })).toThrow(
      /does not write workflow checkpoints/,
    );
  });
});
