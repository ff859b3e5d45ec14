import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

// The layout's promises, held by a test: the mock and the judge never import each other, and no function
// grows past what one reading takes in.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAX_OWN_LINES = 60;
// A function's whole length, its closures included: the own-lines rule cannot be met by nesting.
const MAX_TOTAL_LINES = 120;
// The byte parser is one state machine over bytes; its long methods are its states.
const LONG_FUNCTIONS_ALLOWED = new Set(["contract/json-stream.ts"]);

const sources = execFileSync("git", ["ls-files", "*.ts"], { cwd: ROOT, encoding: "utf8" })
  .split("\n")
  .filter((path) => path !== "" && !path.includes("/test/") && !path.endsWith(".generated.ts"));

function parse(path: string): ts.SourceFile {
  return ts.createSourceFile(path, readFileSync(join(ROOT, path), "utf8"), ts.ScriptTarget.Latest, true);
}

/** The repository paths a file imports, statically or with import(). */
function importsOf(path: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    const specifier =
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier
        ? node.moduleSpecifier
        : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
          ? node.arguments[0]
          : undefined;
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith("."))
      found.push(normalize(join(dirname(path), specifier.text)));
    ts.forEachChild(node, visit);
  };
  visit(parse(path));
  return found;
}

/** Functions with more than MAX_OWN_LINES lines of their own (nested functions' lines not counted). */
function longFunctions(path: string): string[] {
  const file = parse(path);
  const line = (position: number) => file.getLineAndCharacterOfPosition(position).line;
  const long: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const body = node.body as ts.Node;
      let nested = 0;
      const inner = (child: ts.Node) => {
        if (ts.isFunctionLike(child) && "body" in child && child.body) {
          nested += line(child.getEnd()) - line(child.getStart()) + 1;
          return;
        }
        ts.forEachChild(child, inner);
      };
      ts.forEachChild(body, inner);
      const own = line(body.getEnd()) - line(body.getStart()) + 1 - nested;
      if (own > MAX_OWN_LINES) long.push(`${path}:${line(node.getStart()) + 1} (${own} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return long;
}

/** Outermost functions (methods included) longer than MAX_TOTAL_LINES, nested functions counted in. */
function wholeLongFunctions(path: string): string[] {
  const file = parse(path);
  const line = (position: number) => file.getLineAndCharacterOfPosition(position).line;
  const long: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const total = line(node.getEnd()) - line(node.getStart()) + 1;
      if (total > MAX_TOTAL_LINES) long.push(`${path}:${line(node.getStart()) + 1} (${total} lines)`);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return long;
}

describe("the layout's promises", () => {
  it("keeps the judge and the mock apart: conformance/ imports nothing from server/, nor server/ from conformance/", () => {
    const crossing = sources.flatMap((path) => {
      const room = path.split("/")[0];
      const other = room === "conformance" ? "server" : room === "server" ? "conformance" : undefined;
      if (!other) return [];
      return importsOf(path)
        .filter((target) => relative(ROOT, join(ROOT, target)).startsWith(`${other}/`))
        .map((target) => `${path} → ${target}`);
    });
    assert.deepEqual(crossing, []);
  });

  it("keeps common/ and contract/ below both: they import neither", () => {
    const upward = sources
      .filter((path) => path.startsWith("common/") || path.startsWith("contract/"))
      .flatMap((path) =>
        importsOf(path)
          .filter((target) => target.startsWith("server/") || target.startsWith("conformance/"))
          .map((target) => `${path} → ${target}`),
      );
    assert.deepEqual(upward, []);
  });

  it("keeps the judge's folders in their layers: each imports only the folders below it", () => {
    // Lowest first. The suite, the proxy and explore stand side by side above the target and never import
    // one another.
    const layers: Record<string, number> = {
      model: 0,
      reports: 1,
      judging: 2,
      target: 3,
      suite: 4,
      proxy: 4,
      explore: 4,
    };
    const folderOf = (path: string) => path.split("/")[1] ?? "";
    const upward = sources
      .filter((path) => path.startsWith("conformance/") && folderOf(path) in layers)
      .flatMap((path) =>
        importsOf(path)
          .filter((target) => target.startsWith("conformance/") && target !== path)
          .filter((target) => {
            const [from, to] = [folderOf(path), folderOf(target)];
            if (from === to) return false;
            return !(to in layers) || (layers[to] as number) >= (layers[from] as number);
          })
          .map((target) => `${path} → ${target}`),
      );
    assert.deepEqual(upward, []);
  });

  it(`has no function of more than ${MAX_OWN_LINES} lines of its own in the product, outside the byte parser`, () => {
    // The product: what the package ships and runs. The benchmark's scripts are tools beside it.
    const product = sources.filter((path) => /^(common|contract|server|conformance)\//.test(path));
    const long = product.filter((path) => !LONG_FUNCTIONS_ALLOWED.has(path)).flatMap(longFunctions);
    assert.deepEqual(long, []);
  });

  it(`has no function of more than ${MAX_TOTAL_LINES} lines with its closures in the product`, () => {
    const product = sources.filter((path) => /^(common|contract|server|conformance)\//.test(path));
    const long = product.filter((path) => !LONG_FUNCTIONS_ALLOWED.has(path)).flatMap(wholeLongFunctions);
    assert.deepEqual(long, []);
  });

  it("keeps the quick loop quick: a *.unit.test.ts starts no process and opens no socket", () => {
    // Listing the repository's files with git is this test's own way of reading the layout.
    const allowed = new Set(["scripts/test/architecture.unit.test.ts"]);
    const spawning = /^(node:)?(child_process|net|http|https|http2|dgram|cluster)$/;
    const unitTests = execFileSync("git", ["ls-files", "*.unit.test.ts"], { cwd: ROOT, encoding: "utf8" })
      .split("\n")
      .filter((path) => path !== "" && !allowed.has(path));
    const offending = unitTests.flatMap((path) => {
      const found: string[] = [];
      const visit = (node: ts.Node) => {
        if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
          const specifier = (node.moduleSpecifier as ts.StringLiteral).text;
          const processHelper =
            /(spawn-mock|test-support\/(proxy-process|services|target-server|chromium))\.ts$/;
          if (spawning.test(specifier) || processHelper.test(specifier)) found.push(`${path} → ${specifier}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(parse(path));
      return found;
    });
    assert.ok(unitTests.length > 0);
    assert.deepEqual(offending, []);
  });

  it("makes every folder under the system's temporary directory through the helper that removes it, tests and benchmarks included", () => {
    const everyFile = execFileSync("git", ["ls-files", "*.ts"], { cwd: ROOT, encoding: "utf8" })
      .split("\n")
      .filter((path) => path !== "" && path !== "common/temp-folder.ts");
    const direct = everyFile.filter((path) => /\btmpdir\(\)/.test(readFileSync(join(ROOT, path), "utf8")));
    assert.deepEqual(direct, []);
  });
});
