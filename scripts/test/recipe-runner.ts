import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parse as parseYaml } from "yaml";
import { freePort } from "../../test-support/free-port.ts";
import { startRedis } from "../../test-support/services.ts";
import type { Recipe } from "../examples.ts";

// Runs the documentation's shell and CI recipes as written (see Recipe in ../examples.ts), in folders of a
// small app that has the package installed, against a fresh installed mock standing in for staging.

const STAGING_KEY = "dev-key-123";
const REDIS_PASSWORD = "recipe-redis-secret";
const CONTROL_TOKEN = "recipe-control-token";
/** The fixed ports the recipes name; each run gets free ones in their place. */
const FIXED_PORTS = [4010, 4020, 4011, 4012, 6379, 8080];
const RECIPE_TIMEOUT_MS = 120_000;
/** A server line of a `serves` recipe prints this once it serves. */
const READY = /listening on http:\/\//;

/** The app's end-to-end tests: what `npm run test:e2e` runs in every recipe folder. */
const APP_E2E = `// The app's end-to-end tests, reading the API's address from API_BASE_URL.
const base = process.env.API_BASE_URL;
if (!base) throw new Error("API_BASE_URL is not set");
const headers = { authorization: "Bearer ${STAGING_KEY}" };
const expect = (what, status, allowed) => {
  if (!allowed.includes(status)) throw new Error(what + ": expected " + allowed.join(" or ") + ", got " + status);
};
const list = await fetch(base + "/store/orders", { headers });
expect("list", list.status, [200]);
if (!Array.isArray(await list.json())) throw new Error("the list is not an array");
const cancel = await fetch(base + "/store/orders/2", { method: "DELETE", headers });
expect("cancel order 2", cancel.status, [204, 409]);
const unknown = await fetch(base + "/store/orders/424242", { method: "DELETE", headers });
expect("cancel an unknown order", unknown.status, [404]);
console.log("e2e: 3 passed");
`;

export interface RecipeProject {
  /** The consumer project with the package installed. */
  project: string;
  /** The package's name in node_modules. */
  packageName: string;
}

interface Staging {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Runs one recipe; rejects with what it printed when it fails, hangs or leaves a process running. Its ports
 * are free when chosen, but another test of the run binding port 0 may take one before the recipe binds it:
 * a recipe that failed on a taken port is run once more on fresh ones (one that takes a port twice fails twice).
 */
export async function runRecipe(recipe: Recipe, project: RecipeProject): Promise<void> {
  try {
    await runRecipeOnce(recipe, project);
  } catch (error) {
    // Node says EADDRINUSE; redis-server and haproxy say it in words.
    if (!/EADDRINUSE|Address already in use/.test(String(error))) throw error;
    await runRecipeOnce(recipe, project);
  }
}

async function runRecipeOnce(recipe: Recipe, { project, packageName }: RecipeProject): Promise<void> {
  const ports = new Map<number, number>();
  for (const port of FIXED_PORTS) ports.set(port, await freePort());
  const staging = await startStaging(project, recipe.mode === "with-mock" ? ports.get(4010) : undefined);
  // The default user needs no password; user `mock` has REDIS_PASSWORD.
  const redis = recipe.needsRedis
    ? await startRedis({ port: ports.get(6379) as number, user: { name: "mock", password: REDIS_PASSWORD } })
    : undefined;
  try {
    const substitute = (text: string) =>
      text
        .replace(/\b(4010|4020|4011|4012|6379|8080)\b/g, (port) => String(ports.get(Number(port))))
        .replaceAll("10.0.0.5", "127.0.0.1");
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_OPTIONS: "",
      CI: "true",
      NO_COLOR: "1",
      PORT: String(ports.get(4010)),
      HOST: "",
      PETSTORE_FIXTURES: "",
      PETSTORE_API_KEYS: "",
      PETSTORE_API_KEY: "",
      STAGING_URL: staging.url,
      STAGING_KEY,
      REDIS_PASSWORD,
      TOKEN: CONTROL_TOKEN,
    };
    const jobs = recipeJobs(recipe, substitute, env);
    for (const job of jobs) {
      const folder = appFolder(project, packageName);
      for (const [name, text] of Object.entries(recipe.files))
        writeFileSync(join(folder, name), substitute(text));
      if (recipe.mode === "serves") {
        for (const line of job.steps.map((step) => step.script)) await serveLine(line, folder, env);
      } else {
        await runJob(job, folder);
      }
    }
  } finally {
    await redis?.stop();
    await staging.stop();
  }
}

interface Step {
  script: string;
  env: NodeJS.ProcessEnv;
  always: boolean;
}

interface Job {
  name: string;
  steps: Step[];
  /** Files the job says it keeps (artifacts), each of which must be there, whole, after it. */
  keeps: string[];
}

/** The jobs of a recipe: one for a shell block (one step per line when it serves), or each CI job. */
function recipeJobs(recipe: Recipe, substitute: (text: string) => string, env: NodeJS.ProcessEnv): Job[] {
  const text = substitute(recipe.text);
  if (recipe.mode === "run" || recipe.mode === "with-mock") {
    return [{ name: "shell", steps: [{ script: text, env, always: false }], keeps: reportFiles(text) }];
  }
  if (recipe.mode === "serves") {
    const lines = text.split("\n").filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
    return [{ name: "serves", steps: lines.map((script) => ({ script, env, always: false })), keeps: [] }];
  }
  const document = parseYaml(text) as Record<string, unknown>;
  // A CI expression or variable names a repository variable or secret; here they are the stand-in staging's.
  const values: Record<string, string> = { STAGING_URL: env.STAGING_URL as string, STAGING_KEY };
  const expand = (value: unknown) =>
    String(value)
      .replace(/\$\{\{\s*(?:vars|secrets)\.(\w+)\s*\}\}/g, (_, name: string) => values[name] ?? "")
      .replace(/^\$(\w+)$/, (_, name: string) => values[name] ?? "");
  const withEnv = (extra: unknown): NodeJS.ProcessEnv => ({
    ...env,
    ...Object.fromEntries(
      Object.entries((extra ?? {}) as Record<string, unknown>).map(([k, v]) => [k, expand(v)]),
    ),
  });
  if (recipe.mode === "github-actions") {
    const jobs = document.jobs as Record<string, { steps: Array<Record<string, unknown>> }>;
    return Object.entries(jobs).map(([name, job]) => ({
      name,
      steps: job.steps
        // `npm ci` installs the app: its folder here already has the package installed.
        .filter((step) => typeof step.run === "string" && step.run.trim() !== "npm ci")
        .map((step) => ({
          script: step.run as string,
          env: withEnv(step.env),
          always: step.if === "always()",
        })),
      keeps: job.steps
        .filter((step) => String(step.uses).startsWith("actions/upload-artifact"))
        .flatMap((step) => String((step.with as { path: string }).path).split("\n")),
    }));
  }
  const jobs = Object.entries(document).filter(([, job]) =>
    Array.isArray((job as { script?: unknown }).script),
  );
  return jobs.map(([name, job]) => {
    const { script, variables, artifacts } = job as {
      script: string[];
      variables?: Record<string, unknown>;
      artifacts?: { paths?: string[]; reports?: { junit?: string | string[] } };
    };
    const junit = artifacts?.reports?.junit ?? [];
    return {
      name,
      // GitLab runs a job's script lines in one shell, stopping at the first that fails.
      steps: [
        {
          script: script.filter((line) => line.trim() !== "npm ci").join("\n"),
          env: withEnv(variables),
          always: false,
        },
      ],
      keeps: [...(artifacts?.paths ?? []), ...(Array.isArray(junit) ? junit : [junit])],
    };
  });
}

/** The report, HAR and state files a command line names: each must be whole once the recipe has run. */
function reportFiles(text: string): string[] {
  const named = [...text.matchAll(/(?:--reporter (?:json|junit|html|markdown):|--har |--state )(\S+)/g)];
  return named.map((match) => match[1] as string);
}

/** A fresh folder of the app: its package.json and end-to-end tests, the fixtures it names, the package. */
function appFolder(project: string, packageName: string): string {
  mkdirSync(join(project, "recipes"), { recursive: true });
  const folder = mkdtempSync(join(project, "recipes", "app-"));
  symlinkSync(join(project, "node_modules"), join(folder, "node_modules"), "dir");
  writeFileSync(
    join(folder, "package.json"),
    JSON.stringify({
      name: "app",
      version: "1.0.0",
      private: true,
      scripts: { "test:e2e": "node e2e/orders.mjs" },
    }),
  );
  mkdirSync(join(folder, "e2e"));
  writeFileSync(join(folder, "e2e/orders.mjs"), APP_E2E);
  const bundled = join(project, "node_modules", packageName, "fixtures/orders.json");
  mkdirSync(join(folder, "fixtures"));
  copyFileSync(bundled, join(folder, "my-orders.json"));
  copyFileSync(bundled, join(folder, "fixtures/my-orders.json"));
  return folder;
}

/** Runs a job's steps in order as CI does; `always` steps run after a failure too. */
async function runJob(job: Job, folder: string): Promise<void> {
  const failures: string[] = [];
  for (const step of job.steps) {
    if (failures.length > 0 && !step.always) continue;
    const summary = join(folder, "step-summary.md");
    const result = await runScript(step.script, folder, { ...step.env, GITHUB_STEP_SUMMARY: summary });
    if (result.code !== 0)
      failures.push(`${job.name}: exit ${result.code}:\n$ ${step.script}\n${result.output}`);
    if (result.leftRunning)
      failures.push(`${job.name}: left processes running:\n$ ${step.script}\n${result.output}`);
  }
  if (failures.length > 0) throw new Error(failures.join("\n\n"));
  for (const file of job.keeps) checkWhole(join(folder, file));
}

/** A report, a HAR or a state file: there, and whole. */
function checkWhole(path: string): void {
  if (!existsSync(path)) throw new Error(`${path} was not written`);
  const text = readFileSync(path, "utf8");
  if (/\.(json|har)$/.test(path)) JSON.parse(text);
  if (path.endsWith(".xml") && !/<\/testsuites>\s*$/.test(text)) throw new Error(`${path} is not whole`);
  if (path.endsWith(".html") && !/<\/html>\s*$/.test(text)) throw new Error(`${path} is not whole`);
  if (text.length === 0) throw new Error(`${path} is empty`);
}

interface ScriptResult {
  code: number | null;
  output: string;
  leftRunning: boolean;
}

/** bash -e -o pipefail, as CI runners run a step, in a process group of its own. */
async function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<ScriptResult> {
  const child = spawn("bash", ["--noprofile", "--norc", "-e", "-o", "pipefail", "-c", script], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output = collect(child);
  const timer = setTimeout(() => killGroup(child, "SIGKILL"), RECIPE_TIMEOUT_MS);
  const [code] = await once(child, "exit");
  clearTimeout(timer);
  // Whatever the script started must have stopped with it.
  const leftRunning = !(await groupGone(child, 3_000));
  killGroup(child, "SIGKILL");
  return { code: code as number | null, output: output(), leftRunning };
}

/** One line of a `serves` recipe: it serves (then stops on SIGTERM, nothing left) or ends with 0. */
async function serveLine(line: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn("bash", ["--noprofile", "--norc", "-c", line], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output = collect(child);
  const exited = once(child, "exit").then(([code]) => code as number | null);
  const ready = new Promise<void>((resolve) => {
    const look = () => {
      if (READY.test(output())) resolve();
    };
    child.stdout?.on("data", look);
    child.stderr?.on("data", look);
  });
  const waiting = new AbortController();
  const first = await Promise.race([
    ready.then(() => "ready" as const),
    exited.then(() => "exited" as const),
    sleep(RECIPE_TIMEOUT_MS, "timeout" as const, { signal: waiting.signal }),
  ]);
  waiting.abort();
  try {
    if (first === "timeout") throw new Error(`\`${line}\` neither served nor ended:\n${output()}`);
    if (first === "exited") {
      const code = await exited;
      if (code !== 0) throw new Error(`\`${line}\` exited with ${code}:\n${output()}`);
      return;
    }
    // As a terminal's Ctrl-C or a CI runner does: the whole group, so that npx and the server both get it.
    killGroup(child, "SIGTERM");
    if (!(await groupGone(child, 15_000)))
      throw new Error(`\`${line}\` still runs after SIGTERM:\n${output()}`);
    if (/^error:|Error:/m.test(output())) throw new Error(`\`${line}\` printed an error:\n${output()}`);
  } finally {
    killGroup(child, "SIGKILL");
  }
}

function collect(child: ChildProcess): () => string {
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  return () => output;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // The group is gone.
  }
}

/** Whether every process of the child's group has exited, waiting up to `withinMs`. */
async function groupGone(child: ChildProcess, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      process.kill(-(child.pid as number), 0);
    } catch {
      return true;
    }
    if (Date.now() > until) return false;
    await sleep(50);
  }
}

/** The installed mock on a free port (or on `port`), standing in for staging. */
async function startStaging(project: string, port?: number): Promise<Staging> {
  const chosen = port ?? (await freePort());
  const child = spawn(
    join(project, "node_modules/.bin/petstore-mock"),
    ["--port", String(chosen), "--quiet"],
    {
      cwd: project,
      env: { ...process.env, NODE_OPTIONS: "", HOST: "", PETSTORE_FIXTURES: "", PETSTORE_API_KEYS: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = collect(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", () => {
      if (READY.test(output())) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the staging mock exited with ${code}:\n${output()}`)));
  });
  return {
    url: `http://127.0.0.1:${chosen}/v1`,
    port: chosen,
    async stop() {
      if (child.exitCode !== null) return;
      const exit = once(child, "exit");
      child.kill("SIGTERM");
      await exit;
    },
  };
}
