/**
 * Type-checks a project the way `tsc -p <tsconfig>` would, in process: its files (as the tsconfig
 * lists them, relative to its folder) and its errors, each as `file: message`. For the parts of
 * this repository with a tsconfig of their own (the chat app's page, the studio's page script).
 */
import { dirname, relative } from "node:path";
import ts from "typescript";

export function typeCheckProject(tsconfig: string): { files: string[]; options: ts.CompilerOptions; errors: string[] } {
  const config = ts.getParsedCommandLineOfConfigFile(
    tsconfig,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(String(d.messageText));
      },
    },
  )!;
  const program = ts.createProgram(config.fileNames, config.options);
  const errors = ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? relative(dirname(tsconfig), d.file.fileName) : tsconfig}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
    );
  return { files: config.fileNames.map((f) => relative(dirname(tsconfig), f)), options: config.options, errors };
}
