import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempFolder } from "../common/temp-folder.ts";
import { freePort } from "./free-port.ts";

export interface Service {
  readonly port: number;
  /** Stops it (SIGTERM) and waits for the exit. */
  stop(): Promise<void>;
}

export interface RedisService extends Service {
  readonly url: string;
  /** Starts it again on the same port, empty, after stop(). */
  start(): Promise<void>;
}

/** Waits until a line of its output matches, or fails with what it printed. */
async function started(child: ChildProcess, ready: RegExp, name: string, timeoutMs = 10_000): Promise<void> {
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), timeoutMs);
    const read = (chunk: Buffer) => {
      output += chunk;
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`${name} could not be run (.ci/run installs it): ${error.message}`));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output}`));
    });
  });
}

async function ended(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, "exit");
  child.kill(signal);
  await exit;
}

export interface RedisOptions {
  /** Required of the default user. */
  password?: string;
  /** A user of its own besides the default one, with every right. */
  user?: { name: string; password: string };
  /** A chosen port instead of a free one. */
  port?: number;
}

/** A real redis-server from Debian's packages on a loopback port, keeping nothing on disk. */
export async function startRedis(passwordOrOptions?: string | RedisOptions): Promise<RedisService> {
  const options =
    typeof passwordOrOptions === "string" ? { password: passwordOrOptions } : (passwordOrOptions ?? {});
  const { password, user } = options;
  const port = options.port ?? (await freePort());
  const directory = tempFolder("petstore-redis-");
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        directory,
        ...(password ? ["--requirepass", password] : []),
        ...(user ? ["--user", user.name, "on", `>${user.password}`, "~*", "&*", "+@all"] : []),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    await started(child, /Ready to accept connections/, "redis-server");
  };
  await start();
  return {
    port,
    url: password ? `redis://:${password}@127.0.0.1:${port}` : `redis://127.0.0.1:${port}`,
    start,
    stop: async () => {
      if (child) await ended(child);
    },
  };
}

/**
 * HAProxy from Debian's packages in front of the given mock ports, with the recipe of docs/shared-state.md:
 * round robin, a health check on GET /__health, and a retry on another replica when one is gone.
 */
export async function startHaproxy(backendPorts: readonly number[]): Promise<Service> {
  const port = await freePort();
  const directory = tempFolder("petstore-haproxy-");
  const config = join(directory, "haproxy.cfg");
  writeFileSync(config, haproxyConfig(port, backendPorts));
  const child = spawn("haproxy", ["-db", "-f", config], { stdio: ["ignore", "pipe", "pipe"] });
  // HAProxy prints nothing once it is up; it is ready when its port answers.
  const failed = once(child, "exit").then(([code]) => {
    throw new Error(`haproxy exited with ${code}`);
  });
  await Promise.race([waitForPort(port), failed]);
  failed.catch(() => {});
  return { port, stop: () => ended(child) };
}

export function haproxyConfig(port: number, backendPorts: readonly number[]): string {
  const servers = backendPorts
    .map((backend, index) => `  server mock${index + 1} 127.0.0.1:${backend} check inter 200ms fall 2 rise 2`)
    .join("\n");
  return `global
  maxconn 1024

defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch
  retry-on conn-failure empty-response

frontend petstore
  bind 127.0.0.1:${port}
  default_backend mocks

backend mocks
  balance roundrobin
  option httpchk GET /__health
  http-check expect status 200
${servers}
`;
}

async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  for (const begun = Date.now(); Date.now() - begun < timeoutMs; ) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/__health`);
      await response.arrayBuffer();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`nothing answered on port ${port} within ${timeoutMs} ms`);
}
