import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../bin.ts", import.meta.url));

export { NO_PROXY_ENV } from "../../test-support/proxy-process.ts";

/** Runs the installed command as a user would, and collects its exit code and output. */
export function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", BIN, ...args],
      { env: { ...process.env, NO_COLOR: "", ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}
