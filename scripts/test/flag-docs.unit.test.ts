import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { EXPLORE_FLAGS, EXPLORE_USAGE } from "../../conformance/explore/explore-options.ts";
import { PROXY_OPTION_NAMES, RUN_OPTION_NAMES } from "../../conformance/judging/setting-names.ts";
import {
  FLAGS as PROXY_FLAGS,
  SETTING_FLAGS as PROXY_SETTING_FLAGS,
  PROXY_USAGE,
} from "../../conformance/proxy/proxy-options.ts";
import {
  FLAGS as SUITE_FLAGS,
  SETTING_FLAGS as SUITE_SETTING_FLAGS,
  USAGE as SUITE_USAGE,
} from "../../conformance/suite/options.ts";
import { FLAGS as MOCK_FLAGS, USAGE as MOCK_USAGE } from "../../server/options.ts";

// Each command's flags are declared once, in its parseArgs table; its help and its reference page are
// held to that table, so a flag can be neither undocumented nor documented without existing.

const ROOT = new URL("../../", import.meta.url);
// `elsewhere`: flags a help names that belong to another command it points to (the proxy's, curl's).
// `tabled: false`: the command's options are a list on a page whose tables are another command's.
const COMMANDS: Array<{
  name: string;
  flags: object;
  usage: string;
  page: string;
  elsewhere: string[];
  tabled?: false;
}> = [
  { name: "petstore-mock", flags: MOCK_FLAGS, usage: MOCK_USAGE, page: "docs/mock-server.md", elsewhere: [] },
  {
    name: "petstore-conformance",
    flags: SUITE_FLAGS,
    usage: SUITE_USAGE,
    page: "docs/conformance.md",
    elsewhere: ["upstream"],
  },
  {
    name: "petstore-conformance proxy",
    flags: PROXY_FLAGS,
    usage: PROXY_USAGE,
    page: "docs/proxy.md",
    elsewhere: [],
  },
  {
    name: "petstore-conformance explore",
    flags: EXPLORE_FLAGS,
    usage: EXPLORE_USAGE,
    page: "docs/conformance.md",
    elsewhere: [],
    tabled: false,
  },
];

/** Every `--flag` a text names. */
function flagsNamed(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z-]*[a-z])/g)].map((match) => match[1] as string));
}

/** The flags a reference page's option tables list: a row that starts with a flag. */
function flagsTabled(page: string): Set<string> {
  const rows = page.split("\n").filter((line) => /^\|\s*`--/.test(line));
  return new Set(rows.flatMap((row) => [...flagsNamed(row.split("|")[1] ?? "")]));
}

describe("each command's flags: one table, its help and its page agree", () => {
  for (const { name, flags, usage, page, elsewhere, tabled } of COMMANDS) {
    const declared = new Set(Object.keys(flags));
    it(`${name}: --help names every flag it takes, and no other`, () => {
      const named = flagsNamed(usage);
      assert.deepEqual(
        [...declared].filter((flag) => !named.has(flag)),
        [],
        "declared, missing from --help",
      );
      assert.deepEqual(
        [...named].filter((flag) => !declared.has(flag) && !elsewhere.includes(flag)),
        [],
        "in --help, not declared",
      );
    });

    it(`${name}: ${page} lists every flag it takes, and no other`, () => {
      const text = readFileSync(new URL(page, ROOT), "utf8");
      const named = flagsNamed(text);
      assert.deepEqual(
        [...declared].filter((flag) => !named.has(flag)),
        [],
        `declared, missing from ${page}`,
      );
      if (tabled === false) return;
      assert.deepEqual(
        [...flagsTabled(text)].filter((flag) => !declared.has(flag)),
        [],
        `in ${page}'s option table, not declared`,
      );
    });
  }
});

describe("each command's --help writes a duration as the flag takes it", () => {
  for (const { name, usage } of COMMANDS) {
    it(`${name}: every TIME flag's default carries a unit, since a bare number is refused`, () => {
      const bare = usage
        .split(/\n(?=\s{2}--)/)
        .filter((entry) => /^\s*--[a-z-]+ TIME\b/.test(entry))
        .filter((entry) => /default:? \d+(?![\d.]*\s*(ms|s|m|h)\b)/.test(entry));
      assert.deepEqual(bare, []);
    });
  }
});

describe("what the library's messages name, each command names by its own flags", () => {
  const commands = [
    {
      name: "petstore-conformance",
      flags: SUITE_FLAGS,
      names: SUITE_SETTING_FLAGS,
      library: RUN_OPTION_NAMES,
    },
    {
      name: "petstore-conformance proxy",
      flags: PROXY_FLAGS,
      names: PROXY_SETTING_FLAGS,
      library: PROXY_OPTION_NAMES,
    },
  ];
  for (const { name, flags, names, library } of commands) {
    it(`${name}: every flag a setting is named by is one it takes, and every setting it has a flag for is named by it`, () => {
      const declared = new Set(Object.keys(flags));
      const named = Object.values(names).flatMap((text) => [...flagsNamed(text)]);
      assert.deepEqual(
        named.filter((flag) => !declared.has(flag)),
        [],
      );
      // A setting left to the library's name must be one the command has no flag for.
      const leftToLibrary = Object.entries(names)
        .filter(([setting, text]) => text === library[setting as keyof typeof library])
        .map(([setting]) => setting)
        .filter((setting) => declared.has(setting.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)));
      assert.deepEqual(leftToLibrary, []);
    });
  }
});
