import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../bin.ts", import.meta.url));

/** No proxy from the machine's environment reaches a run unless a test sets one. */
export const NO_PROXY_ENV = {
  http_proxy: "",
  https_proxy: "",
  HTTPS_PROXY: "",
  HTTP_PROXY: "",
  all_proxy: "",
  ALL_PROXY: "",
};

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
