import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { tempFolder } from "../common/temp-folder.ts";
import { OPENAPI_PATH } from "../contract/openapi.ts";
import { BUNDLED_FIXTURES } from "../server/options.ts";
import { freePort } from "../test-support/free-port.ts";
import { READY_LINE } from "../test-support/spawn-mock.ts";
import { median } from "./median.ts";

/**
 * Start-up as CI meets it: the built commands (plain Node on dist/, as installed) beside Prism's mock and a
 * bare node:http server, each run in turn in every round so that the machine's load falls on all alike.
 */

const KEY = "dev-key-123";

interface Timed {
  name: string;
  run: () => Promise<number>;
  /** A server timed from spawn to its first list, as the floor is: its row says how far over the floor. */
  server?: true;
}

/** Spawn to the first 200 of the list: the ready line gives the address, then one GET. */
async function spawnToFirstList(
  command: string,
  args: string[],
  ready: RegExp,
  listUrl: (match: RegExpExecArray) => string,
  env: NodeJS.ProcessEnv = {},
) {
  const started = performance.now();
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  try {
    let output = "";
    const match = await new Promise<RegExpExecArray>((resolve, reject) => {
      const look = (chunk: Buffer) => {
        output += chunk;
        const found = ready.exec(output);
        if (found) resolve(found);
      };
      child.stdout?.on("data", look);
      child.stderr?.on("data", look);
      child.once("exit", (code) => reject(new Error(`${command} exited with ${code}:\n${output}`)));
    });
    const response = await fetch(listUrl(match), { headers: { authorization: `Bearer ${KEY}` } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${command}: first list answered ${response.status}`);
    return performance.now() - started;
  } finally {
    await stop(child);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

async function wallTime(command: string, args: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(command, args, { stdio: "ignore" });
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${code}`);
  return performance.now() - started;
}

/** `petstore-mock --warm-cache` into a folder of its own, as an image or a CI cache is made. */
async function warmedByCommand(mockBin: string): Promise<string> {
  const folder = tempFolder("bench-warmed-cache-");
  const child = spawn(process.execPath, [mockBin, "--warm-cache"], {
    stdio: "ignore",
    env: { ...process.env, NODE_COMPILE_CACHE: folder },
  });
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`petstore-mock --warm-cache exited with ${code}`);
  return folder;
}

async function warmCompileCache(mockBin: string, folder: string): Promise<void> {
  const child = spawn(process.execPath, [mockBin, "--port", "0", "--quiet"], {
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, NODE_COMPILE_CACHE: folder },
  });
  const [line] = (await once(child.stdout, "data")) as [Buffer];
  if (!READY_LINE.test(String(line))) throw new Error(`the mock did not start: ${line}`);
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}

export async function startup(root: string, rounds: number, mockUrl: string): Promise<string[]> {
  const mockBin = join(root, "dist/mock/petstore-mock.cjs");
  const compileCache = tempFolder("bench-compile-cache-");
  const conformanceBin = join(root, "dist/bin/petstore-conformance.js");
  const prism = join(root, "tools/node_modules/.bin/prism");
  const bare = `require("node:http").createServer((q, s) => s.end("[]")).listen(0, "127.0.0.1", function () {
    console.log("listening on http://127.0.0.1:" + this.address().port + "/v1"); });`;
  const mockToFirstList = (env: NodeJS.ProcessEnv) =>
    spawnToFirstList(
      process.execPath,
      [mockBin, "--port", "0"],
      READY_LINE,
      (m) => `${m[1]}/store/orders`,
      env,
    );
  const contenders: Timed[] = [
    {
      name: "`node -e` bare node:http server (floor)",
      run: () => spawnToFirstList(process.execPath, ["-e", bare], READY_LINE, (m) => `${m[1]}/store/orders`),
    },
    {
      name: "`petstore-mock --port 0` (bundled fixtures, JSON log), its compile cache written",
      server: true,
      run: () => mockToFirstList({ NODE_COMPILE_CACHE: compileCache }),
    },
    {
      name: "the same, first start after an install (no compile cache yet)",
      server: true,
      run: () => mockToFirstList({ NODE_DISABLE_COMPILE_CACHE: "1" }),
    },
    {
      name: "the same, first start after `petstore-mock --warm-cache` (as an image or a CI cache is made)",
      server: true,
      run: async () => mockToFirstList({ NODE_COMPILE_CACHE: await warmedByCommand(mockBin) }),
    },
    {
      name: "Prism 5.14 `prism mock openapi.yaml`",
      server: true,
      run: async () =>
        spawnToFirstList(
          prism,
          ["mock", OPENAPI_PATH, "-p", String(await freePort()), "-h", "127.0.0.1"],
          /Prism is listening on (http:\/\/\S+)/,
          (m) => `${m[1]}/store/orders`,
        ),
    },
    { name: "`node -e 0` (Node's own start)", run: () => wallTime(process.execPath, ["-e", "0"]) },
    { name: "`petstore-mock --help`", run: () => wallTime(process.execPath, [mockBin, "--help"]) },
    {
      name: "`petstore-conformance --help`",
      run: () => wallTime(process.execPath, [conformanceBin, "--help"]),
    },
    {
      name: "`petstore-conformance` full run against a running mock (`--hooks mock-control`, every scenario)",
      run: () =>
        wallTime(process.execPath, [
          conformanceBin,
          "--base-url",
          mockUrl,
          "--api-key",
          KEY,
          "--hooks",
          "mock-control",
          "--session",
          `bench-${Math.random().toString(36).slice(2)}`,
        ]),
    },
  ];
  // The cache a first start writes when it exits, as every later start finds it.
  await warmCompileCache(mockBin, compileCache);
  const times = new Map(contenders.map(({ name }) => [name, [] as number[]]));
  for (let round = 0; round < rounds; round++) {
    for (const { name, run } of contenders) times.get(name)?.push(await run());
  }
  const prismMs = median(
    times.get(contenders.find(({ name }) => name.startsWith("Prism"))?.name as string) ?? [],
  );
  const mockMs = median(times.get(contenders[1]?.name as string) ?? []);
  return [
    `### Start-up: spawn to the first 200 of the list, and whole commands (median of ${rounds} rounds, run in turn)`,
    "",
    `Built commands (\`npm run build\`), bundled fixtures (${BUNDLED_FIXTURES.split("/").pop()}), as \`npx\` runs them`,
    "once installed. Targets: first list ≤ 150 ms, `--help` ≤ 100 ms, a full conformance run ≤ 300 ms.",
    "",
    "| Command | median ms | fastest ms | over the bare server, median of the rounds' differences |",
    "|---|---:|---:|---:|",
    ...contenders.map(({ name, server }) => {
      const values = times.get(name) ?? [];
      const floor = times.get(contenders[0]?.name as string) ?? [];
      // Only the servers' rows: spawn to the first list, as the floor's row is.
      const over = server
        ? `+${median(values.map((v, round) => v - (floor[round] as number))).toFixed(1)}`
        : "";
      return `| ${name} | ${median(values).toFixed(0)} | ${Math.min(...values).toFixed(0)} | ${over} |`;
    }),
    "",
    `Prism's mock / this mock, to the first list: **${(prismMs / mockMs).toFixed(1)}×**.`,
  ];
}
