import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The code examples of README.md and docs/: a fenced block whose info string names a file
 * (```ts example=vitest/shipped.test.ts) is written to that path in a fresh project by the package test and
 * run there. A JavaScript or TypeScript block without a name is reported, so that none goes untested
 * unnoticed; `not-run` marks the few that need what no test here has (a bundler and a Service Worker).
 */
export interface Example {
  source: string;
  file: string;
  code: string;
}

export interface UnnamedBlock {
  source: string;
  line: number;
  info: string;
}

const FENCE = /^```(\S*)(.*)$/;
const CODE_LANGUAGES = new Set(["js", "ts", "mjs", "cjs", "javascript", "typescript"]);

function markdownFiles(root: string): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join("docs", name));
  return ["README.md", ...docs];
}

function blocks(root: string) {
  const found: Array<{ source: string; line: number; language: string; info: string; code: string }> = [];
  for (const source of markdownFiles(root)) {
    const lines = readFileSync(join(root, source), "utf8").split("\n");
    for (let index = 0; index < lines.length; index++) {
      const open = FENCE.exec(lines[index] as string);
      if (!open || open[1] === "") continue;
      const start = index;
      const body: string[] = [];
      for (index++; index < lines.length && !(lines[index] as string).startsWith("```"); index++) {
        body.push(lines[index] as string);
      }
      found.push({
        source,
        line: start + 1,
        language: open[1] as string,
        info: (open[2] as string).trim(),
        code: `${body.join("\n")}\n`,
      });
    }
  }
  return found;
}

export function documentedExamples(root: string): Example[] {
  return blocks(root).flatMap(({ source, info, code }) => {
    const file = /(?:^|\s)example=(\S+)/.exec(info)?.[1];
    return file ? [{ source, file, code }] : [];
  });
}

/** JavaScript and TypeScript blocks that name no file to run and do not say why. */
export function unnamedCodeBlocks(root: string): UnnamedBlock[] {
  return blocks(root)
    .filter(({ language, info }) => CODE_LANGUAGES.has(language) && !/example=|not-run/.test(info))
    .map(({ source, line, info }) => ({ source, line, info }));
}
