import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempFolder } from "../../common/temp-folder.ts";
import type { Report } from "../reports/report.ts";
import { writeReportFiles } from "../reports/write-reports.ts";

const WRITE_REPORTS = new URL("../reports/write-reports.ts", import.meta.url).href;

const report: Report = {
  summary: { passed: 1, failed: 0, skipped: 0 },
  target: "http://127.0.0.1:9/v1",
  startedAt: "2026-11-25T00:00:00.000Z",
  warnings: [],
  requests: 1,
  retries: 0,
  durationMs: 1,
  scenarios: [
    {
      id: "list-orders",
      title: "list orders",
      status: "passed",
      checks: [{ id: "list-orders.status", status: "passed", message: "200" }],
    },
  ],
};

/**
 * A process that writes the reports twice (as a stop after a checkpoint does) once its stdin ends: by then
 * the test has closed the pipe its stdout writes to, so nothing reads what it writes there.
 */
const WRITER = `
const { writeReports } = await import(${JSON.stringify(WRITE_REPORTS)});
process.stdin.resume();
await new Promise((ended) => process.stdin.on("end", ended));
const report = JSON.parse(process.env.REPORT);
const reporters = [{ name: "json", file: process.env.JSON_FILE }];
const first = await writeReports(report, reporters, false);
const second = await writeReports(report, reporters, false);
process.exitCode = first === second ? (first ?? 0) : 3;
`;

function runWithStdoutClosed(jsonFile: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", WRITER], {
    env: { ...process.env, REPORT: JSON.stringify(report), JSON_FILE: jsonFile },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdout.destroy();
  child.stdin.end();
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  return new Promise((done) => child.on("close", (code) => done({ code, stderr })));
}

describe("write-reports", () => {
  it("says once that standard output took no report, exits 2 without a stack trace, and writes the files", async () => {
    const jsonFile = join(tempFolder("write-reports-"), "report.json");
    const { code, stderr } = await runWithStdoutClosed(jsonFile);
    assert.equal(stderr, "error: cannot write the report to standard output: EPIPE\n");
    assert.equal(code, 2);
    assert.deepEqual(JSON.parse(readFileSync(jsonFile, "utf8")).summary, report.summary);
  });

  it("a report that cannot be written: those written before it say so, none says passed", async () => {
    const folder = tempFolder("write-reports-");
    const json = join(folder, "report.json");
    const markdown = join(folder, "report.md");
    const absent = join(folder, "absent", "report.xml");
    const unwritten = await writeReportFiles(report, [
      { name: "json", file: json },
      { name: "markdown", file: markdown },
      { name: "junit", file: absent },
    ]);
    assert.equal(unwritten, 1);
    const written = JSON.parse(readFileSync(json, "utf8")) as Report & { outcome: { verdict: string } };
    assert.equal(written.outcome.verdict, "error");
    assert.match(written.ended?.message ?? "", /cannot write .*report\.xml: ENOENT/);
    assert.deepEqual(written.summary, report.summary, "what was judged is kept");
    const summary = readFileSync(markdown, "utf8");
    assert.match(summary, /^### Petstore Store Orders conformance: ❌ error$/m);
    assert.doesNotMatch(summary, /✅ passed/);
  });
});
