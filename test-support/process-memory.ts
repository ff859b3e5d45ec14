import { readFileSync } from "node:fs";

/** A process's resident memory now and at its peak (VmRSS, VmHWM), in bytes (Linux). */
export function residentMemory(pid: number | undefined): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1]) * 1024;
  return { now: kib("VmRSS"), peak: kib("VmHWM") };
}
