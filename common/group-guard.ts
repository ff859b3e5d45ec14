/**
 * The program that runs COMMAND for the wrappers (`-- COMMAND`), passed to `node -e` so that it ships
 * inside the bundles with no file of its own. Started as the leader of a new process group, it runs
 * COMMAND in that group, so that a stop reaches COMMAND's children too (a shell's test runner, a
 * browser), and it ends the whole group:
 * - when COMMAND ends: whatever it left running in the group is killed, after its outcome is reported;
 * - when the wrapper goes, SIGKILL included: the socket on fd 3, whose other end only the wrapper holds,
 *   closes, and the group is killed.
 * It ignores stop signals itself (the wrapper sends them to the whole group): COMMAND decides how to stop,
 * and the guard stays to report how it ended. While it lives, the group's id cannot be reused, so the
 * group it kills is always its own. Plain CommonJS with Node's own modules only.
 */
export const GROUP_GUARD = `"use strict";
const { spawn } = require("node:child_process");
const { writeSync } = require("node:fs");
const { Socket } = require("node:net");
const [file, ...args] = process.argv.slice(1);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => {});
const endGroup = () => {
  try { process.kill(-process.pid, "SIGKILL"); } catch {}
  process.exit(1);
};
const link = new Socket({ fd: 3, readable: true, writable: true });
link.on("end", endGroup);
link.on("error", endGroup);
link.resume();
let reported = false;
const report = (outcome) => {
  if (reported) return;
  reported = true;
  try { writeSync(3, JSON.stringify(outcome)); } catch {}
  endGroup();
};
const child = spawn(file, args, { stdio: "inherit" });
child.on("error", (error) => {
  if (child.pid === undefined) report({ error: error.code || error.message });
});
child.on("exit", (code, signal) => report({ code, signal }));
`;

/** How COMMAND ended, as the guard reports it on fd 3. */
export type GuardReport = { code: number | null; signal: NodeJS.Signals | null } | { error: string };
