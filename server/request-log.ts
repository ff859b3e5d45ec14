import { printable } from "../common/printable.ts";

/** One answered (or cut-off) request, as both log formats write it. Never a header: keys stay out. */
export interface RequestLine {
  reqId: string;
  method: string;
  path: string;
  /** Null when the connection closed before an answer was sent. */
  status: number | null;
  ms: number;
  /** The X-Mock-Session the request named, if any: a session name, not a secret. */
  session?: string;
  completed?: false;
  /**
   * A read of the control plane (the dashboard polls one a second) or of /__health (a load balancer's
   * probe): logged at debug, so that the log at info shows the API's traffic and what changed the world.
   */
  controlRead?: true;
}

/** Where the Node server reports: one line per request, unexpected errors and start-up events. */
export interface MockLog {
  request(line: RequestLine): void;
  error(error: unknown, message: string): void;
  info(message: string): void;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LogFormat = "pretty" | "json";
export const LOG_FORMATS: readonly LogFormat[] = ["pretty", "json"];

const SEVERITY: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

/**
 * JSON lines through pino, for machines (CI logs, log shippers). Loaded only when chosen, so a terminal never
 * pays for it. Redaction guards against a future call that passes request headers; today none does.
 */
export async function jsonLog(level: LogLevel, fd = 1): Promise<MockLog> {
  // The default export is pino itself both from node_modules and from a bundled chunk.
  const { default: pino } = await import("pino");
  const logger = pino(
    {
      level,
      redact: { paths: ["req.headers.authorization", "headers.authorization"], remove: true },
    },
    pino.destination(fd),
  );
  return {
    request: (line) => (line.controlRead ? logger.debug(line, "request") : logger.info(line, "request")),
    error: (error, message) => logger.error({ err: error }, message),
    info: (message) => logger.info(message),
  };
}

export interface PrettyLogOptions {
  level: LogLevel;
  color: boolean;
  write?: (text: string) => void;
}

/** One short line per request for people at a terminal: time, method, path, status, duration, session. */
export function prettyLog({
  level,
  color,
  write = (text) => process.stdout.write(text),
}: PrettyLogOptions): MockLog {
  const paint = (code: number, text: string) => (color ? `\x1b[${code}m${text}\x1b[39m` : text);
  const dim = (text: string) => (color ? `\x1b[2m${text}\x1b[22m` : text);
  const at = (minimum: LogLevel) => SEVERITY[level] <= SEVERITY[minimum];
  return {
    request(line) {
      if (!at(line.controlRead ? "debug" : "info")) return;
      const status = line.status === null ? "---" : String(line.status);
      const statusColor = line.status === null || line.status >= 500 ? 31 : line.status >= 400 ? 33 : 32;
      const parts = [
        dim(clock()),
        line.method.padEnd(7),
        printable(line.path),
        paint(statusColor, status),
        dim(`${line.ms.toFixed(1)} ms`),
      ];
      if (line.session !== undefined) parts.push(dim(`session=${printable(line.session)}`));
      if (line.completed === false) parts.push(paint(31, "(cut off)"));
      write(`${parts.join(" ")}\n`);
    },
    error(error, message) {
      if (at("error")) write(`${paint(31, `${clock()} ${message}`)}: ${(error as Error)?.stack ?? error}\n`);
    },
    // Start-up events are printed as readable lines of their own by the command itself.
    info() {},
  };
}

function clock(): string {
  return new Date().toTimeString().slice(0, 8);
}

// A path or session name is the client's text: control characters could rewrite the terminal.
