import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { FileRefused, readBoundedFile } from "../../common/bounded-file.ts";
import { builtInContract, builtInControlContract } from "../../contract/built-in.ts";
import { createMemoryState } from "../core/memory-state.ts";
import type { Seed } from "../core/seed.ts";
import type { StateStore } from "../core/world.ts";
import type { CliOptions } from "../options.ts";
import { encodeState, restoreState, StateFileError } from "./state-file.ts";
import { createStateSaver } from "./state-saver.ts";

/** The state store the options ask for, ready to serve, with the start-up line that names it. */
export interface OpenState {
  state: StateStore;
  line: string;
  /** At shutdown, after the last request is answered: the last write, the last connection closed. */
  close(): Promise<void>;
}

type Limits = Parameters<typeof createMemoryState>[1];

/** Opens the state: memory, a state file or Redis. A one-line reason when it cannot (exit 1). */
export async function openState(options: CliOptions, seed: Seed): Promise<OpenState | string> {
  const limits = {
    maxSessions: options.maxSessions,
    idleMs: options.sessionIdleMs,
    maxBytes: options.maxMemoryBytes,
  };
  if (options.store) return openRedis(options, options.store, seed, limits);
  const file = options.stateFile;
  if (file === undefined) {
    const state = createMemoryState(seed, limits, options.journalSize, Date.now());
    return {
      state,
      line: "memory (gone at exit; --state FILE or --store URL keep it)",
      close: async () => {},
    };
  }
  return openFile(options, file, seed, limits);
}

async function openRedis(
  options: CliOptions,
  store: NonNullable<CliOptions["store"]>,
  seed: Seed,
  limits: Limits,
): Promise<OpenState | string> {
  // Only a mock started on Redis loads its client.
  const { RedisState } = await import("./redis-state.ts");
  try {
    const state = await RedisState.connect({
      address: store,
      prefix: options.storePrefix,
      seed,
      limits,
      journalSize: options.journalSize,
      onConnectionChange: (up, detail) =>
        process.stderr.write(
          up
            ? `state store ${store.shown} is back: serving again\n`
            : `state store ${store.shown} lost (${detail}): answering 503 store_unavailable until it is back\n`,
        ),
    });
    return { state, line: state.description, close: () => state.close() };
  } catch (error) {
    return (error as Error).message;
  }
}

/** Memory kept in a file: read back at start when it exists, written as changes settle and at exit. */
function openFile(options: CliOptions, file: string, seed: Seed, limits: Limits): OpenState | string {
  let saver: ReturnType<typeof createStateSaver> | undefined;
  const state = createMemoryState(seed, limits, options.journalSize, Date.now(), (what) => {
    if (what === "state" || options.stateJournal) saver?.changed();
  });
  let text: string | undefined;
  try {
    text = readBoundedFile(file, MAX_STATE_BYTES, "the state file");
  } catch (error) {
    if (!(error instanceof FileRefused)) throw error;
    if (error.code === undefined) return `${file}: ${error.message}`;
    if (error.code !== "ENOENT") return `${file}: cannot read the state file (${error.code})`;
  }
  const unwritable = cannotWrite(file, text !== undefined);
  if (unwritable !== undefined) return unwritable;
  const restored = text === undefined ? "a new file" : restore(text, file, state, options);
  if (restored instanceof StateFileError) return restored.message;
  saver = createStateSaver(
    file,
    () => encodeState(state, Date.now(), options.stateJournal),
    (message) => process.stderr.write(`${message}\n`),
  );
  const writer = saver;
  return {
    state,
    line: `file ${file} (${restored}${options.stateJournal ? ", with journals" : ""})`,
    close: async () => {
      if (!writer.flush()) throw new Error(`the state file ${file} could not be written at stop`);
    },
  };
}

/**
 * Why the state file could not be written where it is named, found before serving rather than at the first
 * change: it is written beside its name and renamed over it, so its folder must exist and take new files,
 * and a file already there must be one its owner may write.
 */
function cannotWrite(file: string, exists: boolean): string | undefined {
  const folder = dirname(resolve(file));
  try {
    if (!statSync(folder).isDirectory())
      return `${file}: cannot write the state file: ${folder} is not a folder`;
    accessSync(folder, constants.W_OK | constants.X_OK);
    if (exists) accessSync(file, constants.W_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    if (code === "ENOENT" || code === "ENOTDIR") {
      return `${file}: cannot write the state file: its folder ${folder} does not exist (create it first)`;
    }
    return `${file}: cannot write the state file there (${code})`;
  }
}

/** The file's sessions restored into the state, said as the start-up line says it; or why it cannot be. */
function restore(
  text: string,
  file: string,
  state: ReturnType<typeof createMemoryState>,
  options: CliOptions,
): string | StateFileError {
  const controlContract = builtInControlContract();
  try {
    const { sessions } = restoreState(
      text,
      file,
      state,
      {
        contract: builtInContract(),
        validateBehaviour: controlContract.schema("Behaviour"),
        validateJournalEntry: controlContract.schema("JournalEntry"),
      },
      options.sessionIdleMs,
      Date.now(),
    );
    return `restored, ${sessions} session${sessions === 1 ? "" : "s"}`;
  } catch (error) {
    if (error instanceof StateFileError) return error;
    throw error;
  }
}

/** A state file larger than this is not one the mock wrote: it is refused rather than read into memory. */
const MAX_STATE_BYTES = 1024 * 1024 * 1024;
