import type { ValidateFunction } from "ajv";
import type { Contract } from "../../contract/contract.ts";
import {
  exactInteger,
  isJsonNumber,
  numberText,
  parseExact,
  toSchemaView,
} from "../../contract/exact-json.ts";
import type { Behaviour } from "../../contract/types.ts";
import { type BehaviourState, behaviourJson } from "../core/behaviour.ts";
import { readOrders } from "../core/fixture.ts";
import { type JournalRecord, journalJson } from "../core/journal.ts";
import type { MemoryState } from "../core/memory-state.ts";
import type { MemoryWorld } from "../core/memory-world.ts";
import { withStatusJson } from "../core/order-record.ts";

/** The field that marks a file as this mock's state, with the format's version. */
export const STATE_FORMAT_FIELD = "petstoreMockState";
export const STATE_FORMAT_VERSION = 1;

/** A state file that cannot be read back; start-up stops with this message and leaves the file as it is. */
export class StateFileError extends Error {
  override readonly name = "StateFileError";
}

/**
 * The state as one JSON document: for the default world and each live session, what differs from the
 * fixtures (removed ids, then orders as fixture files write them, ids digit for digit), the behaviour and,
 * when asked, the journal.
 */
export function encodeState(state: MemoryState, now: number, withJournal: boolean): string {
  const worlds = [state.defaultWorld, ...state.memorySessions.list(now)].map((world) =>
    encodeWorld(world, withJournal),
  );
  return `{"${STATE_FORMAT_FIELD}":${STATE_FORMAT_VERSION},"savedAt":"${new Date(now).toISOString()}","worlds":[\n${worlds.join(",\n")}\n]}\n`;
}

function encodeWorld(world: MemoryWorld, withJournal: boolean): string {
  const { removed, orders } = world.store.differences();
  const parts = [
    `"session":${JSON.stringify(world.session)}`,
    `"lastUsed":"${new Date(world.lastUsed).toISOString()}"`,
    `"removed":[${removed.join(",")}]`,
    `"orders":[${orders.map(withStatusJson).join(",")}]`,
    `"behaviour":${behaviourJson(world.behaviour())}`,
  ];
  if (withJournal) parts.push(`"journal":${journalJson(world.journal())}`);
  return `{${parts.join(",")}}`;
}

export interface StateSchemas {
  contract: Contract;
  validateBehaviour: ValidateFunction;
  validateJournalEntry: ValidateFunction;
}

/**
 * Puts a state file's worlds into a fresh memory state, over the fixtures loaded now. Sessions idle past
 * the limit are left out. Throws StateFileError naming the problem; `file` is only for the message.
 */
export function restoreState(
  text: string,
  file: string,
  state: MemoryState,
  schemas: StateSchemas,
  idleMs: number,
  now: number,
): { sessions: number } {
  const fail = (problem: string): never => {
    throw new StateFileError(`${file}: ${problem}; the file is left as it is (move it away to start afresh)`);
  };
  let document: unknown;
  try {
    document = parseExact(text);
  } catch (error) {
    return fail(`not valid JSON (${(error as Error).message.replace(/\s+/g, " ")}): the file is corrupt`);
  }
  if (!isObject(document) || !(STATE_FORMAT_FIELD in document)) {
    return fail(`not a petstore-mock state file (no "${STATE_FORMAT_FIELD}" field)`);
  }
  const version = document[STATE_FORMAT_FIELD];
  if (!isJsonNumber(version) || numberText(version) !== String(STATE_FORMAT_VERSION)) {
    return fail(`state format ${String(version)} is not one this version reads (${STATE_FORMAT_VERSION})`);
  }
  if (!Array.isArray(document.worlds)) return fail('field "worlds": must be an array');

  const restored: MemoryWorld[] = [];
  for (const [index, entry] of (document.worlds as unknown[]).entries()) {
    const at = `worlds[${index}]`;
    if (!isObject(entry)) return fail(`${at}: must be an object`);
    const session = entry.session;
    if (session !== null && typeof session !== "string")
      return fail(`${at}, field "session": must be a name or null`);
    const lastUsed = Date.parse(String(entry.lastUsed));
    if (Number.isNaN(lastUsed)) return fail(`${at}, field "lastUsed": must be a date-time`);
    if (session !== null && now - lastUsed > idleMs) continue;

    const problems: string[] = [];
    const orders = readOrders(entry.orders, schemas.contract, problems);
    if (problems.length > 0) return fail(`${at}, ${problems[0]}`);
    if (!Array.isArray(entry.removed)) return fail(`${at}, field "removed": must be an array of ids`);
    const removed = entry.removed.map((id: unknown, position: number) => {
      const exact = isJsonNumber(id) ? exactInteger(numberText(id)) : null;
      return exact ?? fail(`${at}, field "removed[${position}]": must be an int64 id`);
    });
    const behaviour = toSchemaView(entry.behaviour);
    if (!schemas.validateBehaviour(behaviour))
      return fail(`${at}, field "behaviour": is not a valid Behaviour`);
    const journal = entry.journal === undefined ? [] : toSchemaView(entry.journal);
    if (!Array.isArray(journal) || !journal.every((item) => schemas.validateJournalEntry(item))) {
      return fail(`${at}, field "journal": must be an array of journal entries`);
    }

    const world = session === null ? state.defaultWorld : state.createWorld(session, lastUsed);
    for (const id of removed) world.store.removeOrder(id);
    for (const order of orders) world.store.putOrder(order);
    const { delayMs = 0, rules = [] } = behaviour as Behaviour;
    world.setBehaviour({ delayMs, rules } satisfies BehaviourState);
    for (const item of journal as Array<JournalRecord & { time: string }>) {
      world.record({ ...item, time: Date.parse(item.time) });
    }
    if (session !== null) restored.push(world);
  }
  // Least recently used first, as the sessions keep them.
  restored.sort((a, b) => a.lastUsed - b.lastUsed);
  for (const world of restored) state.memorySessions.restore(world);
  return { sessions: restored.length };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
