/**
 * #20: the declarations of `statebag/openai` and `statebag/ai-sdk` stand alone. An app that has
 * neither `openai` nor `ai`/`@ai-sdk/*` installed compiles against them with `skipLibCheck: false`;
 * and what the model SDKs hand out (an `OpenAI` client, a `LanguageModelV4`, V3 model, call
 * settings) still fits the structural types that replaced theirs.
 */
import { join } from "node:path";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { MockLanguageModelV3, MockLanguageModelV4 } from "ai/test";
import OpenAI from "openai";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import type { AISDKCallSettings, AISDKLanguageModel } from "../../src/runtime/agent/clients/ai-sdk-chat-client.js";
import type { OpenAIClientLike } from "../../src/runtime/agent/clients/openai-chat-client.js";

const REPO = join(import.meta.dirname, "../..");
/** Where the emitted declarations live in memory: inside the repository, so other packages resolve as installed. */
const OUT = join(REPO, ".declarations-test");
const SDKS = /[\\/]node_modules[\\/](openai|ai|@ai-sdk)[\\/]/;

function emitDeclarations(): Map<string, string> {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(REPO, "tsconfig.json"),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  )!;
  const options: ts.CompilerOptions = {
    ...config.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    sourceMap: false,
    declarationMap: false,
    outDir: OUT,
    rootDir: REPO,
  };
  const program = ts.createProgram([join(REPO, "src/openai.ts"), join(REPO, "src/ai-sdk.ts")], options);
  const files = new Map<string, string>();
  program.emit(undefined, (name, text) => files.set(name, text));
  return files;
}

describe("declarations of the model-client entries", () => {
  const emitted = emitDeclarations();

  it("name none of openai, ai, @ai-sdk/*", () => {
    const entry = join(OUT, "src/openai.d.ts");
    expect(emitted.has(entry)).toBe(true);
    for (const [name, text] of emitted)
      expect(text, name).not.toMatch(/(from |import\()\s*["'](openai|ai|@ai-sdk\/[^"']+)["']/);
  });

  it("compile in an app without the SDKs, skipLibCheck: false", () => {
    const app = join(OUT, "app.ts");
    const source = `
      import { OpenAIChatClient, ModelServiceError } from "./src/openai.js";
      import { AISDKChatClient } from "./src/ai-sdk.js";
      const openai = new OpenAIChatClient({ model: "gpt-4.1-mini", baseURL: "http://127.0.0.1:11434/v1", maxRetries: 1 });
      const model = { specificationVersion: "v3" as const, provider: "p", modelId: "m" };
      const sdk = new AISDKChatClient(model, { settings: { temperature: 0 }, maxRetries: 0 });
      export const names: string[] = [openai.metadata.providerName, sdk.metadata.providerName, ModelServiceError.name];
    `;
    const host = ts.createCompilerHost({});
    const hidden = (name: string) => SDKS.test(name);
    const files = new Map([...emitted, [app, source]]);
    const compilerHost: ts.CompilerHost = {
      ...host,
      fileExists: (name) => files.has(name) || (!hidden(name) && host.fileExists(name)),
      readFile: (name) => files.get(name) ?? (hidden(name) ? undefined : host.readFile(name)),
      directoryExists: (name) =>
        [...files.keys()].some((f) => f.startsWith(`${name}/`)) ||
        (!hidden(`${name}/`) && (host.directoryExists?.(name) ?? true)),
      getSourceFile: (name, language) => {
        const text = files.get(name) ?? (hidden(name) ? undefined : host.readFile(name));
        return text === undefined ? undefined : ts.createSourceFile(name, text, language);
      },
    };
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ["lib.es2023.d.ts"],
      types: ["node"],
      typeRoots: [join(REPO, "node_modules/@types")],
      strict: true,
      skipLibCheck: false,
      noEmit: true,
    };
    const program = ts.createProgram([app], options, compilerHost);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    expect(problems).toEqual([]);
    expect(program.getSourceFiles().some((f) => SDKS.test(f.fileName))).toBe(false);
  });

  it("the SDKs' own objects fit the structural types (checked by tsc on this file)", () => {
    const client: OpenAIClientLike = new OpenAI({ apiKey: "not-used", baseURL: "http://127.0.0.1:9/v1" });
    const models: AISDKLanguageModel[] = [new MockLanguageModelV4(), new MockLanguageModelV3()];
    const settings: Omit<LanguageModelV4CallOptions, "prompt" | "tools" | "abortSignal"> = {
      temperature: 0,
      maxOutputTokens: 10,
      providerOptions: { openai: { store: false } },
    };
    const asSettings: AISDKCallSettings = settings;
    expect([typeof client.responses.create, models.map((m) => m.specificationVersion), asSettings.temperature]).toEqual(
      ["function", ["v4", "v3"], 0],
    );
  });
});
