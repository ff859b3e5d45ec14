import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { tempFolder } from "../../common/temp-folder.ts";
import { chromiumSkip } from "../../test-support/chromium.ts";
import { startProxyProcess } from "../../test-support/proxy-process.ts";
import { startRedis } from "../../test-support/services.ts";
import { documentedExamples, documentedRecipes } from "../examples.ts";
import { ciGateTests } from "./ci-gate-tests.ts";
import { runRecipe } from "./recipe-runner.ts";

// The package as its users meet it: packed, installed into a fresh project that cannot see this
// repository's sources, and used from plain Node, Jest, Vitest, Playwright Test, TypeScript and npx.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);
const manifestText = readFileSync(join(ROOT, "package.json"), "utf8");
const manifest = JSON.parse(manifestText) as {
  name: string;
  devDependencies: Record<string, string>;
  exports: Record<string, unknown>;
};
// The test runners a consumer brings, at the versions this project's own install put in npm's cache.
const CONSUMER_TOOLS = ["msw", "jest", "vitest", "@playwright/test", "typescript", "@types/node"];
const ENTRY_POINTS = Object.keys(manifest.exports)
  .filter((path) => !/\.(json|yaml)$/.test(path))
  .map((path) => path.slice(2));
const JEST_MSW_ON_NODE_20 = "2.10.5";
const INSTALL_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];

/** Runs a command in the consumer project; resolves with its output, rejects with it on failure. */
async function sh(
  cwd: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeout = 240_000,
) {
  try {
    return await run(command, args, {
      cwd,
      env: { ...process.env, NODE_OPTIONS: "", CI: "true", NO_COLOR: "1", FORCE_COLOR: "0", ...env },
      maxBuffer: 64 * 1024 * 1024,
      timeout,
    });
  } catch (error) {
    const { stdout, stderr, message } = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${command} ${args.join(" ")} failed in ${cwd}:\n${message}\n${stdout ?? ""}\n${stderr ?? ""}`,
    );
  }
}

/** Playwright Test in the consumer project, with the configuration at that path. */
function playwrightTest(project: string, config: string) {
  return sh(project, "npx", ["--no-install", "playwright", "test", "-c", config]);
}

function writeFiles(folder: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
}

interface RunningMock {
  origin: string;
  child: ChildProcess;
  output: () => string;
}

/**
 * `npx petstore-mock --port 0` in the consumer project, as the README says, up to its URL; or, `viaScript`,
 * the command itself as an npm script runs it (npx, like any shell, dies of the SIGTERM it is sent
 * instead of passing on its child's exit code).
 */
async function startInstalledMock(
  cwd: string,
  viaScript = false,
  options: string[] = [],
): Promise<RunningMock> {
  const [command, args] = viaScript
    ? [join(cwd, "node_modules/.bin/petstore-mock"), ["--port", "0", ...options]]
    : ["npx", ["--no-install", "petstore-mock", "--port", "0", ...options]];
  const child = spawn(command, args, {
    cwd,
    env: {
      ...process.env,
      NODE_OPTIONS: "",
      PORT: "",
      HOST: "",
      PETSTORE_FIXTURES: "",
      PETSTORE_API_KEYS: "",
      NODE_COMPILE_CACHE: "",
      NODE_DISABLE_COMPILE_CACHE: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
    // A group of its own: npx runs the command through a shell, and the whole group is stopped together.
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start-up line:\n${output}`)), 20_000);
    const look = () => {
      const match = /listening on (http:\/\/\S+)\/v1/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", look);
    child.once("exit", (code) => reject(new Error(`petstore-mock exited with ${code}:\n${output}`)));
  });
  return { origin, child, output: () => output };
}

describe("the package as users install it", { concurrency: true }, () => {
  let work: string;
  let tarball: string;
  let project: string;
  let mock: RunningMock;
  let installWarnings: string;

  before(async () => {
    assert.ok(existsSync(join(ROOT, "dist/mock/petstore-mock.cjs")), "dist/ is missing: run npm run build");
    work = tempFolder("petstore-package-");
    // dist/ was built by `npm test` (or `prepare`); `npm pack` runs prepack/postpack, which pack exactly
    // that with `prepare` left out of the packed manifest.
    await sh(ROOT, "npm", ["pack", "--pack-destination", work, "--loglevel=error"]);
    const packed = readdirSync(work).find((name) => name.endsWith(".tgz"));
    assert.ok(packed, "npm pack wrote no tarball");
    tarball = join(work, packed);
    project = join(work, "consumer");
    mkdirSync(project);
    writeFiles(project, {
      "package.json": JSON.stringify({ name: "consumer", version: "1.0.0", private: true }),
    });
    const tools = CONSUMER_TOOLS.map((name) => `${name}@${manifest.devDependencies[name]}`);
    const install = await sh(project, "npm", [
      "install",
      ...INSTALL_FLAGS.filter((flag) => !flag.startsWith("--loglevel")),
      "--loglevel=warn",
      tarball,
      ...tools,
    ]);
    installWarnings = install.stderr;
    mock = await startInstalledMock(project);
    const examples = documentedExamples(ROOT);
    writeFiles(
      project,
      Object.fromEntries(
        examples.map(({ file, code }) => [file, code.replaceAll("http://127.0.0.1:4010", mock.origin)]),
      ),
    );
  });

  after(async () => {
    if (mock?.child.pid !== undefined) {
      try {
        process.kill(-mock.child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("passes @arethetypeswrong/cli in every module mode and publint, on the packed tarball", async () => {
    // The YAML documents are exported as files for other tools to read, not as modules to resolve.
    await sh(ROOT, join(ROOT, "node_modules/.bin/attw"), [
      tarball,
      "--exclude-entrypoints",
      "openapi.yaml",
      "control.openapi.yaml",
    ]);
    const { stdout } = await sh(ROOT, join(ROOT, "node_modules/.bin/publint"), ["run", tarball, "--strict"]);
    assert.match(stdout, /All good!/);
  });

  it("installs without an install script: prepare is left out of the packed manifest", async () => {
    const { stdout } = await sh(work, "tar", ["-xzOf", tarball, "package/package.json"]);
    const packed = JSON.parse(stdout) as { scripts?: Record<string, string> };
    assert.equal(packed.scripts?.prepare, undefined);
    // npm lists every package with install scripts; the consumer's own tools (msw…) may be among them.
    assert.ok(!installWarnings.includes(`${manifest.name}@`), installWarnings);
    assert.equal(
      readFileSync(join(ROOT, "package.json"), "utf8"),
      manifestText,
      "packing changed package.json",
    );
  });

  it("holds what users need and nothing else", async () => {
    const { stdout } = await sh(work, "tar", ["-tzf", tarball]);
    const files = stdout.split("\n").filter(Boolean);
    for (const needed of [
      "package/dist/mock/petstore-mock.cjs",
      "package/dist/mock/mock-main.cjs",
      "package/dist/bin/petstore-conformance.js",
      "package/dist/lib/in-process.cjs",
      "package/dist/petstore-mock.browser.js",
      "package/openapi.yaml",
      "package/control.openapi.yaml",
      "package/fixtures/orders.json",
      "package/server/dashboard/index.html",
      "package/README.md",
      "package/LICENSE",
      "package/docs/in-process.md",
    ]) {
      assert.ok(files.includes(needed), `${needed} is not in the tarball`);
    }
    // Every relative link of the shipped pages leads to a file the package ships.
    const broken = files
      .filter((file) => file.endsWith(".md"))
      .flatMap((file) => {
        const text = readFileSync(join(ROOT, file.slice("package/".length)), "utf8");
        return [...text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)]
          .map((match) => match[1] as string)
          .filter((target) => !/^[a-z]+:/.test(target))
          .map((target) => join(dirname(file), target))
          .filter(
            (target) => !files.some((shipped) => shipped === target || shipped.startsWith(`${target}/`)),
          )
          .map((target) => `${file} → ${target}`);
      });
    assert.deepEqual(broken, []);
    const leaked = files.filter((file) => /\.test\.|\/test\/|\.ts$/.test(file) && !file.endsWith(".d.ts"));
    assert.deepEqual(leaked, [], "tests or TypeScript sources in the tarball");
    const installed = JSON.parse(
      readFileSync(join(project, "node_modules", manifest.name, "package.json"), "utf8"),
    ) as { dependencies: Record<string, string> };
    assert.equal(installed.dependencies.tsx, undefined, "tsx is a runtime dependency");
  });

  it("imports every entry point from ES modules and requires it from CommonJS; ids past 2^53 stay exact", async () => {
    const names = JSON.stringify(ENTRY_POINTS);
    const check = `
      const names = ${names};
      const loaded = await Promise.all(names.map((name) => load("${manifest.name}/" + name)));
      const empty = names.filter((_, index) => Object.keys(loaded[index]).length === 0);
      if (empty.length > 0) throw new Error("nothing exported by " + empty.join(", "));
      const { createPetstoreMock } = loaded[names.indexOf("in-process")];
      const mock = createPetstoreMock();
      await mock.control.putOrder({ id: "9223372036854775806", petId: "9007199254740995", status: "pending" });
      const response = await mock.handle(new Request("http://localhost/v1/store/orders", {
        headers: { authorization: "Bearer dev-key-123" } }));
      const text = await response.text();
      if (!text.includes('"id":9223372036854775806,"petId":9007199254740995'))
        throw new Error("ids not exact: " + text);
      const cancel = await mock.handle(new Request("http://localhost/v1/store/orders/9223372036854775806", {
        method: "DELETE", headers: { authorization: "Bearer dev-key-123" } }));
      if (cancel.status !== 204) throw new Error("cancel: " + cancel.status);
      console.log("ok", names.length);`;
    writeFiles(project, {
      "entry/esm.mjs": `const load = (name) => import(name);\n${check}`,
      "entry/cjs.cjs": `const load = async (name) => require(name);\n(async () => {${check}})().catch((e) => { console.error(e); process.exit(1); });`,
    });
    for (const file of ["entry/esm.mjs", "entry/cjs.cjs"]) {
      const { stdout } = await sh(project, process.execPath, [file]);
      assert.equal(stdout.trim(), `ok ${ENTRY_POINTS.length}`, file);
    }
  });

  it("judges a list of over a mebibyte on the installed proxy's worker thread, from ES modules and CommonJS", async () => {
    // An upstream of its own: 30,000 orders (about 2.6 MB), one past 2^53, which the judge's thread must
    // see exactly; the proxy in code, as a program imports or requires it.
    const check = `
      const http = require("node:http");
      const orders = Array.from({ length: 30000 }, (_, i) =>
        '{"id":' + (i === 0 ? "9007199254740993" : i + 1) + ',"petId":1,"quantity":1,"shipDate":"2026-01-01T00:00:00Z","complete":false}');
      const list = "[" + orders.join(",") + "]";
      const upstream = http.createServer((request, response) =>
        response.writeHead(200, { "content-type": "application/json" }).end(list)).listen(0, "127.0.0.1");
      await new Promise((resolve) => upstream.once("listening", resolve));
      const { runProxy } = await load("${manifest.name}/conformance");
      const seen = [];
      const proxy = await runProxy({ upstream: "http://127.0.0.1:" + upstream.address().port + "/v1", port: 0, env: {},
        onExchange: (judged) => seen.push(judged) });
      const answer = await fetch(proxy.url + "/store/orders");
      const bytes = (await answer.arrayBuffer()).byteLength;
      // The verdict comes after the client's last byte, as late as the machine's load makes it.
      for (let waited = 0; seen.length === 0 && waited < 60000; waited += 20)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await proxy.close();
      upstream.close();
      const body = seen[0]?.checks.find((c) => c.id === "listOrders.body");
      console.log(bytes === list.length, body?.status, body?.message);`;
    writeFiles(project, {
      "proxy-worker/esm.mjs": `import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\nconst load = (name) => import(name);\n${check}`,
      "proxy-worker/cjs.cjs": `const load = async (name) => require(name);\n(async () => {${check}})().catch((e) => { console.error(e); process.exit(1); });`,
    });
    for (const file of ["proxy-worker/esm.mjs", "proxy-worker/cjs.cjs"]) {
      const { stdout } = await sh(project, process.execPath, [file]);
      assert.equal(stdout.trim(), "true passed an array of 30000 Order records", file);
    }
  });

  it("runs the documented plain-Node example", async () => {
    const { stdout } = await sh(project, process.execPath, ["node/exact-ids.mjs"]);
    assert.equal(stdout, "200 true\nshipped\n");
  });

  it("runs the README's client that keeps int64 ids exact, against the installed mock", async () => {
    const { stdout } = await sh(project, process.execPath, ["readme/exact-client.mjs"]);
    assert.equal(stdout, "bigint 204\n");
  });

  it("runs the documented Jest test with MSW, in Jest's default CommonJS mode", async () => {
    // MSW from 2.11 on needs an ES-module-only package that Jest's CommonJS mode can load only on Node
    // 22.12 or later; on Node 20 a Jest project uses MSW 2.10, as the in-process page says.
    const jestProject = join(work, "jest-consumer");
    mkdirSync(jestProject);
    const example = documentedExamples(ROOT).find(({ file }) => file.startsWith("jest/"));
    assert.ok(example, "no Jest example in the documentation");
    writeFiles(jestProject, {
      "package.json": JSON.stringify({ name: "jest-consumer", version: "1.0.0", private: true }),
      [example.file]: example.code,
    });
    await sh(jestProject, "npm", [
      "install",
      ...INSTALL_FLAGS,
      tarball,
      `jest@${manifest.devDependencies.jest}`,
      `msw@${JEST_MSW_ON_NODE_20}`,
    ]);
    const { stderr } = await sh(jestProject, "npx", ["--no-install", "jest", "--ci"]);
    assert.match(stderr, /Tests:\s+1 passed, 1 total/);
  });

  it("runs the documented Vitest tests with MSW (the README's and the in-process page's)", async () => {
    const { stdout } = await sh(project, "npx", ["--no-install", "vitest", "run", "vitest/", "readme/"]);
    assert.match(stdout, /Tests\s+2 passed/);
  });

  it("runs the documented Playwright Test spec with petstoreRoute in Chromium", {
    skip: chromiumSkip,
  }, async () => {
    writeFiles(project, {
      // Debian's Chromium: this machine downloads no browser of Playwright's own.
      "playwright/playwright.config.ts": `import { defineConfig } from "@playwright/test";
export default defineConfig({
  testDir: ".",
  reporter: "list",
  use: {
    browserName: "chromium",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
    },
  },
});
`,
    });
    const { stdout } = await playwrightTest(project, "playwright/playwright.config.ts");
    assert.match(stdout, /1 passed/);
  });

  it("runs the documented Playwright Test project against npx petstore-mock, a session per worker", async () => {
    const { stdout } = await playwrightTest(project, "control/playwright.config.ts");
    assert.match(stdout, /2 passed/);
  });

  it("type-checks a consumer of every entry point in node16 and bundler resolution; a wrong call does not", async () => {
    const consumer = `import { runConformance, renderJunit, type Report } from "${manifest.name}/conformance";
import { createControlClient } from "${manifest.name}/control-client";
import { createPetstoreMock, type PetstoreMock } from "${manifest.name}/in-process";
import { createPetstoreMock as createInBrowser, petstoreHandlers as browserHandlers } from "${manifest.name}/browser";
import { petstoreHandlers } from "${manifest.name}/msw";
import { petstoreRoute } from "${manifest.name}/playwright";
import type { Page } from "@playwright/test";

export async function use(page: Page): Promise<number> {
  const mock: PetstoreMock = createPetstoreMock({ fixtures: "{}", apiKeys: ["k"] });
  const handlers = petstoreHandlers(mock, { baseUrl: "https://api.example.test/v1" });
  browserHandlers(createInBrowser(), { baseUrl: "https://api.example.test/v1" });
  await page.route("https://api.example.test/**", petstoreRoute(mock));
  const orders = await createControlClient("http://127.0.0.1:4010", { session: "s" }).orders();
  const id: string = orders[0]?.id ?? "";
  const report: Report = await runConformance({ baseUrl: "http://127.0.0.1:4010/v1", apiKey: "k" });
  return handlers.length + id.length + renderJunit(report).length;
}
`;
    const wrong = `import { createPetstoreMock } from "${manifest.name}/in-process";
import { runConformance } from "${manifest.name}/conformance";
createPetstoreMock({ fixture: "{}" });
runConformance({ baseUrl: 1 });
`;
    writeFiles(project, {
      "types/consumer.ts": consumer,
      "types/consumer.mts": consumer,
      "types/wrong.ts": wrong,
    });
    const tsc = join(project, "node_modules/typescript/bin/tsc");
    const common = [
      "--noEmit",
      "--strict",
      // As consumers set it: msw's own declarations do not type-check in CommonJS mode.
      "--skipLibCheck",
      "--types",
      "node",
      "--target",
      "es2022",
    ];
    await sh(project, process.execPath, [
      tsc,
      ...common,
      "--module",
      "node16",
      "types/consumer.ts",
      "types/consumer.mts",
    ]);
    await sh(project, process.execPath, [
      tsc,
      ...common,
      "--module",
      "esnext",
      "--moduleResolution",
      "bundler",
      "types/consumer.ts",
    ]);
    for (const mode of [
      ["--module", "node16"],
      ["--module", "esnext", "--moduleResolution", "bundler"],
    ]) {
      const failed = await sh(project, process.execPath, [tsc, ...common, ...mode, "types/wrong.ts"]).then(
        () => undefined,
        (error: Error) => error.message,
      );
      assert.ok(failed, `a wrong call type-checked with ${mode.join(" ")}`);
      assert.match(failed, /'fixture' does not exist/);
      assert.match(failed, /Type 'number' is not assignable to type 'string'/);
    }
  });

  it("type-checks every TypeScript example of the documentation as the package's types say", async () => {
    const files = documentedExamples(ROOT)
      .map(({ file }) => file)
      .filter((file) => file.endsWith(".ts"));
    const tsc = join(project, "node_modules/typescript/bin/tsc");
    await sh(
      project,
      process.execPath,
      [
        tsc,
        "--noEmit",
        "--strict",
        "--types",
        "node",
        "--target",
        "es2022",
        "--module",
        "esnext",
        "--moduleResolution",
        "bundler",
        ...files,
      ],
      {},
      // Every library's declarations are checked too (no --skipLibCheck: the package's own among them);
      // about 25 s of CPU, several times that in wall time beside the rest of the suite.
      600_000,
    );
  });

  it("npx petstore-conformance with the mock-control hook passes every scenario against npx petstore-mock", async () => {
    const { stdout } = await sh(project, "npx", [
      "--no-install",
      "petstore-conformance",
      "--base-url",
      `${mock.origin}/v1`,
      "--api-key",
      "dev-key-123",
      "--hooks",
      "mock-control",
      "--session",
      "package-test",
    ]);
    assert.match(stdout, /\d+ passed, 0 failed, 0 skipped/);
  });

  it("npx petstore-conformance explore with the mock-control hook finds nothing in npx petstore-mock", async () => {
    const { stdout } = await sh(project, "npx", [
      "--no-install",
      "petstore-conformance",
      "explore",
      "--base-url",
      `${mock.origin}/v1`,
      "--api-key",
      "dev-key-123",
      "--hooks",
      "mock-control",
      "--session",
      "package-explore",
      "--budget",
      "3s",
    ]);
    assert.match(stdout, /^covered \d+ histories, [1-9]\d* operations/m);
    assert.match(stdout, /^PASS: no history the spec's model cannot explain was found$/m);
  });

  it("keeps the installed mock's compile cache in the project's node_modules/.cache, and --warm-cache writes it there", async () => {
    const cache = join(project, "node_modules/.cache/petstore-mock", `${process.version}-${process.arch}.v8`);
    // Written a second after the mock's start.
    for (let waited = 0; waited < 15_000 && !existsSync(cache); waited += 100) await sleep(100);
    assert.ok(existsSync(cache), `no compile cache at ${cache}`);
    const warmed = await sh(project, join(project, "node_modules/.bin/petstore-mock"), [
      "--warm-cache",
      "--quiet",
    ]);
    assert.equal(warmed.stdout, `compile cache written to ${cache}\n`);
  });

  it("runs the documented library run of the suite and the control client against the installed mock", async () => {
    const { stdout } = await sh(project, process.execPath, ["conformance/run.mjs"]);
    assert.match(stdout, /0 failed/);
    const explored = await sh(project, process.execPath, ["conformance/explore.mjs"]);
    assert.match(explored.stdout, /verdict: 'passed'/);
    const fromBrowser = await sh(project, process.execPath, ["browser/from-another-origin.mjs"]);
    assert.equal(fromBrowser.stdout, "204\n");
  });

  it("runs the documented proxy example; the installed proxy command judges traffic and reports on SIGTERM", async () => {
    const example = await sh(project, process.execPath, ["proxy/run.mjs"]);
    assert.match(example.stdout, /\d+ passed, 0 failed, 0 skipped/);
    assert.match(example.stdout, /Coverage: documented statuses seen in the traffic/);

    const proxy = await startProxyProcess(
      join(project, "node_modules/.bin/petstore-conformance"),
      ["proxy", "--upstream", `${mock.origin}/v1`, "--port", "0", "--fail-on-violation"],
      { cwd: project, env: { ...process.env, NODE_OPTIONS: "" } },
    );
    const list = await fetch(`${proxy.url}/store/orders`, {
      headers: { authorization: "Bearer dev-key-123" },
    });
    assert.match(await list.text(), /"id":9007199254740993/);
    const { code, stdout, stderr } = await proxy.stop("SIGTERM");
    assert.equal(code, 0, stderr);
    assert.match(stdout, /"verdict":"passed","operation":"listOrders"/);
    assert.match(stdout, /\d+ passed, 0 failed, \d+ skipped/);
    assert.doesNotMatch(stdout, /dev-key-123/);
  });

  it("petstore-mock serves the list, logs JSON lines when piped, and exits 0 on SIGTERM", async () => {
    const response = await fetch(`${mock.origin}/v1/store/orders`, {
      headers: { authorization: "Bearer dev-key-123" },
    });
    assert.equal(response.status, 200);
    assert.ok(Array.isArray(await response.json()));
    const own = await startInstalledMock(project, true);
    await fetch(`${own.origin}/v1/store/orders`, { headers: { authorization: "Bearer dev-key-123" } });
    const exited = once(own.child, "exit");
    // Let the request's log line out before asking it to stop.
    await new Promise((resolve) => setTimeout(resolve, 100));
    own.child.kill("SIGTERM");
    const [code] = await exited;
    assert.equal(code, 0);
    assert.match(own.output(), /"msg":"request"/);
    assert.doesNotMatch(own.output(), /Bearer/);
  });

  it("two installed petstore-mock processes on one Redis (--store) share state; ioredis comes with the package", async () => {
    const redis = await startRedis();
    const replicas: RunningMock[] = [];
    try {
      for (let i = 0; i < 2; i++)
        replicas.push(await startInstalledMock(project, true, ["--store", redis.url]));
      const [a, b] = replicas as [RunningMock, RunningMock];
      const cancel = (on: RunningMock) =>
        fetch(`${on.origin}/v1/store/orders/2`, {
          method: "DELETE",
          headers: { authorization: "Bearer dev-key-123" },
        }).then((response) => response.status);
      assert.equal(await cancel(a), 204);
      assert.equal(await cancel(b), 409);
      assert.equal((await fetch(`${b.origin}/__health`)).status, 200);
      assert.match(a.output(), /state: redis redis:\/\/127\.0\.0\.1:\d+\/0/);
    } finally {
      for (const replica of replicas) {
        const exited = once(replica.child, "exit");
        replica.child.kill("SIGTERM");
        await exited;
      }
      await redis.stop();
    }
  });

  describe("the CI gate from the installed commands", { concurrency: true }, () =>
    ciGateTests(() => project),
  );

  describe("the documentation's shell and CI recipes, run as written", { concurrency: 3 }, () => {
    for (const recipe of documentedRecipes(ROOT)) {
      it(`${recipe.source}:${recipe.line} (${recipe.mode})`, () =>
        runRecipe(recipe, { project, packageName: manifest.name }));
    }
  });

  it("installs from a git URL, building dist/ on the way, and works as from the tarball", async () => {
    // A clone of the committed tree, as a team's internal git server would hold it.
    const clone = join(work, "clone");
    await sh(work, "git", ["clone", "--quiet", "--depth", "1", `file://${ROOT}`, clone]);
    const fromGit = join(work, "from-git");
    mkdirSync(fromGit);
    writeFiles(fromGit, {
      "package.json": JSON.stringify({ name: "from-git", version: "1.0.0", private: true }),
    });
    // A git install builds the package on the way (its prepare installs every dev dependency and runs the
    // build): on a machine busy with the rest of the tests that can take minutes.
    await sh(fromGit, "npm", ["install", ...INSTALL_FLAGS, `git+file://${clone}`], {}, 600_000);
    const installed = join(fromGit, "node_modules", manifest.name);
    assert.ok(existsSync(join(installed, "dist/mock/petstore-mock.cjs")), "prepare did not build dist/");
    const { stdout } = await sh(fromGit, process.execPath, [
      "-e",
      `const { createPetstoreMock } = require("${manifest.name}/in-process");
       createPetstoreMock().control.orders().then((orders) => console.log(orders.length));`,
    ]);
    assert.equal(stdout, "12\n");
    const help = await sh(fromGit, "npx", ["--no-install", "petstore-mock", "--help"]);
    assert.match(help.stdout, /Usage: petstore-mock/);
  });
});
