import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startListeningProcess, startMockProcess } from "../test-support/spawn-mock.ts";
import { median } from "./median.ts";
import type { PeerProcess } from "./peers.ts";
import { startProxyCommand } from "./proxy-command.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FORWARDING_FLOOR = join(ROOT, "scripts/forwarding-floor-server.ts");
const KEY = "dev-key-123";

/** A GET of the list: when its last byte came, in ms. */
function listTime(url: string): Promise<number> {
  const started = performance.now();
  return new Promise((done, fail) => {
    request(`${url}/store/orders`, { headers: { authorization: `Bearer ${KEY}` } }, (response) => {
      response.resume();
      response.on("end", () => done(performance.now() - started));
      response.on("error", fail);
    })
      .on("error", fail)
      .end();
  });
}

/** A refused cancel every 10 ms while `busy` runs: the longest wait, in ms. */
async function worstWait(url: string, busy: Promise<unknown>): Promise<number> {
  let done = false;
  void busy.finally(() => {
    done = true;
  });
  let worst = 0;
  while (!done) {
    const started = performance.now();
    await (await fetch(`${url}/store/orders/1`, { method: "DELETE" })).arrayBuffer();
    worst = Math.max(worst, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return worst;
}

/** CPU seconds a process has used so far, from /proc (Linux), or undefined elsewhere. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Waits until a process used under 5% of a core over 200 ms (at most 30 s). */
async function cpuIdle(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  for (let waited = 0; waited < 30_000; waited += 200) {
    const before = cpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = cpuSeconds(pid);
    if (before === undefined || after === undefined || after - before < 0.01) return;
  }
}

/**
 * A list of `orders` orders through each proxy in turn, `rounds` rounds, a refused cancel every 10 ms
 * beside it: medians of the list's time to its last byte and of the worst wait, and the list's time as a
 * ratio to the bare forwarding proxy's in the same round.
 */
export async function proxyList(orders: number, rounds: number, otherCli?: string): Promise<string[]> {
  const mock = await startMockProcess(["--quiet", "--generate", String(orders)], {}, 120_000);
  const proxies: Array<{ name: string; server: PeerProcess }> = [];
  try {
    proxies.push({
      name: "bare forwarding proxy (node:http, judges nothing)",
      server: await startListeningProcess(FORWARDING_FLOOR, ["--upstream", mock.url]).then((started) => ({
        url: started.url,
        pid: started.child.pid,
        output: started.output,
        stop: async () => {
          await started.stop();
        },
      })),
    });
    proxies.push({
      name: "petstore-conformance proxy (this build)",
      server: await startProxyCommand(mock.url),
    });
    if (otherCli)
      proxies.push({
        name: `petstore-conformance proxy (${otherCli})`,
        server: await startProxyCommand(mock.url, otherCli),
      });
    const times = proxies.map(() => [] as number[]);
    const waits = proxies.map(() => [] as number[]);
    const ratios = proxies.map(() => [] as number[]);
    for (let round = 0; round < rounds + 1; round++) {
      const roundTimes: number[] = [];
      for (const [index, { server }] of proxies.entries()) {
        const list = listTime(server.url);
        const wait = await worstWait(server.url, list);
        const time = await list;
        // A proxy judges on after the client's last byte: the next list, through any proxy, starts once it
        // is done, so that no round is slowed by another's judge still at work on the same two cores.
        await cpuIdle(server.pid);
        roundTimes.push(time);
        // The first round warms every proxy up and is not counted.
        if (round === 0) continue;
        times[index]?.push(time);
        waits[index]?.push(wait);
      }
      if (round > 0)
        for (const [index, time] of roundTimes.entries())
          ratios[index]?.push(time / (roundTimes[0] as number));
    }
    return [
      `### A list of ${orders.toLocaleString("en")} orders through the proxy (median of ${rounds} rounds, proxies in turn)`,
      "",
      "| proxy | list, to its last byte | × the bare proxy, same round | worst wait of a refused cancel every 10 ms |",
      "|---|---|---|---|",
      ...proxies.map(
        ({ name }, index) =>
          `| ${name} | ${Math.round(median(times[index] as number[]))} ms | ${median(ratios[index] as number[]).toFixed(2)}× | ${Math.round(median(waits[index] as number[]))} ms |`,
      ),
    ];
  } finally {
    for (const { server } of proxies) await server.stop();
    await mock.stop();
  }
}
