import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The code examples and shell recipes of README.md and docs/.
 *
 * A code example is a fenced block whose info string names a file
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

/**
 * How a shell or CI recipe is run by the package test, in a fresh copy of a small app's folder that has the
 * package installed, against a fresh mock standing in for staging (`STAGING_URL`, key `STAGING_KEY`):
 * - `run`: the block's text as one script (`bash -e -o pipefail`), which must exit 0;
 * - `with-mock`: the same, with a mock already listening where the text says http://127.0.0.1:4010;
 * - `serves`: each line a command that serves until stopped: it must print its "listening on" line, then
 *   stop with exit code 0 on SIGTERM (or end by itself with 0, as `--write-fixtures` does);
 * - `github-actions`, `gitlab-ci`: a YAML job whose `run:` steps (`script:` lines) run in order, with their
 *   environment.
 * `needs=redis` starts a Redis where the text says 10.0.0.5:6379, with user `mock` and $REDIS_PASSWORD.
 * A `text file=NAME` block of the same page is written as NAME first (a configuration the recipe reads).
 * Fixed ports in the text (4010, 4020, 4011, 4012, 6379, 8080) are replaced by free ones.
 */
const RECIPE_MODES = ["run", "with-mock", "serves", "github-actions", "gitlab-ci"] as const;
export type RecipeMode = (typeof RECIPE_MODES)[number];

export interface Recipe {
  source: string;
  line: number;
  mode: RecipeMode;
  needsRedis: boolean;
  text: string;
  /** The page's `text file=NAME` blocks. */
  files: Record<string, string>;
}

const SHELL_LANGUAGES = new Set(["sh", "bash", "shell", "console", "yaml", "yml"]);

export function documentedRecipes(root: string): Recipe[] {
  const all = blocks(root);
  return all.flatMap(({ source, line, info, code }) => {
    const mode = /(?:^|\s)recipe(?:=(\S+))?/.exec(info);
    if (!mode) return [];
    const name = mode[1] ?? "run";
    if (!(RECIPE_MODES as readonly string[]).includes(name))
      throw new Error(`${source}:${line}: unknown recipe mode "${name}"`);
    const files = Object.fromEntries(
      all
        .filter((block) => block.source === source && /(?:^|\s)file=\S+/.test(block.info))
        .map((block) => [/(?:^|\s)file=(\S+)/.exec(block.info)?.[1] as string, block.code]),
    );
    return [
      { source, line, mode: name as RecipeMode, needsRedis: /needs=redis/.test(info), text: code, files },
    ];
  });
}

/** Shell and CI blocks that are neither a recipe nor marked `not-run` with the reason after it. */
export function unmarkedShellBlocks(root: string): UnnamedBlock[] {
  return blocks(root)
    .filter(({ language, info }) => SHELL_LANGUAGES.has(language) && !/recipe|not-run \S/.test(info))
    .map(({ source, line, info }) => ({ source, line, info }));
}
