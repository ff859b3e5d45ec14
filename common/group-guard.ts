/**
 * The program that runs COMMAND for the wrappers (`-- COMMAND`), passed to `node -e` so that it ships
 * inside the bundles with no file of its own. Started as the leader of a new process group, it runs
 * COMMAND in that group, so that a stop reaches COMMAND's children too (a shell's test runner, a
 * browser), and it ends the whole group:
 * - when COMMAND ends: whatever it left running in the group is killed, after its outcome is reported;
 * - when the wrapper goes, SIGKILL included: the socket on fd 3, whose other end only the wrapper holds,
 *   closes, and the group is killed.
 * The wrapper asks for each stop by writing the signal's name and a newline on fd 3 (SIGKILL: end it all).
 * It ignores stop signals itself (the stop goes to the whole group): COMMAND decides how to stop, and the
 * guard stays to report how it ended. While it lives, the group's id cannot be reused, so the group it
 * kills is always its own.
 * COMMAND's descendants that left the group (`set -m`, a detached spawn, setsid) are found on Linux by
 * their parent chain in /proc, at each stop before anything is signalled and every second while COMMAND
 * runs, and remembered with their start time, since one whose parent ends is no longer in the chain and a
 * pid may be reused: each stop and kill of the group reaches them too.
 * Plain CommonJS with Node's own modules only.
 */
export const GROUP_GUARD = `"use strict";
const { spawn } = require("node:child_process");
const { readdirSync, readFileSync, writeSync } = require("node:fs");
const { Socket } = require("node:net");
const [file, ...args] = process.argv.slice(1);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => {});
const known = new Map();
const readStat = (pid) => {
  try {
    const stat = readFileSync("/proc/" + pid + "/stat", "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { parent: Number(fields[1]), group: Number(fields[2]), start: fields[19] };
  } catch {
    return undefined;
  }
};
const scan = () => {
  let names;
  try { names = readdirSync("/proc"); } catch { return; }
  const stats = new Map();
  const children = new Map();
  for (const name of names) {
    if (!/^[0-9]+$/.test(name)) continue;
    const pid = Number(name);
    const stat = readStat(pid);
    if (stat === undefined) continue;
    stats.set(pid, stat);
    if (!children.has(stat.parent)) children.set(stat.parent, []);
    children.get(stat.parent).push(pid);
  }
  for (const [pid, start] of known) if (stats.get(pid)?.start !== start) known.delete(pid);
  const queue = [process.pid];
  while (queue.length > 0) {
    for (const pid of children.get(queue.pop()) ?? []) {
      known.set(pid, stats.get(pid).start);
      queue.push(pid);
    }
  }
};
const signalAll = (signal) => {
  scan();
  for (const [pid] of known) {
    if (readStat(pid)?.group === process.pid) continue;
    try { process.kill(pid, signal); } catch {}
  }
  try { process.kill(-process.pid, signal); } catch {}
};
const endGroup = () => {
  signalAll("SIGKILL");
  process.exit(1);
};
const link = new Socket({ fd: 3, readable: true, writable: true });
link.on("end", endGroup);
link.on("error", endGroup);
let asked = "";
link.on("data", (chunk) => {
  asked += chunk.toString("latin1");
  for (let newline = asked.indexOf("\\n"); newline !== -1; newline = asked.indexOf("\\n")) {
    const signal = asked.slice(0, newline);
    asked = asked.slice(newline + 1);
    if (signal === "SIGKILL") endGroup();
    else if (["SIGINT", "SIGTERM", "SIGHUP"].includes(signal)) signalAll(signal);
  }
});
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
if (child.pid !== undefined) setInterval(scan, 1000).unref();
`;

/** How COMMAND ended, as the guard reports it on fd 3. */
export type GuardReport = { code: number | null; signal: NodeJS.Signals | null } | { error: string };
