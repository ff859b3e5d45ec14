import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseProxyOptions } from "../proxy/proxy-options.ts";
import { parseReporters, reportersAskedFor } from "../reports/reporter-options.ts";
import { parseCliOptions } from "../suite/options.ts";

const SUITE = ["--base-url", "http://127.0.0.1:1/v1", "--api-key", "k"];

describe("the reports a command line asks for", () => {
  it("refuses two reports, or a report and the HAR, that name one file: the first would be lost", () => {
    assert.throws(
      () => parseReporters(["json:out/run.json", "junit:out/../out/run.json"], undefined),
      /^UsageError: --reporter json and --reporter junit name the same file out\/\.\.\/out\/run\.json: give each its own$/,
    );
    assert.throws(
      () => parseCliOptions([...SUITE, "--reporter", "html:r.html", "--reporter", "markdown:./r.html"], {}),
      /--reporter html and --reporter markdown name the same file/,
    );
    assert.throws(
      () =>
        parseProxyOptions(
          ["--upstream", "http://127.0.0.1:1/v1", "--har", "x.json", "--reporter", "json:x.json"],
          {},
        ),
      /--reporter json and --har name the same file x\.json/,
    );
    assert.equal(parseReporters(["json:a.json", "junit:b.xml", "pretty"], undefined).length, 3);
  });

  it("reads them from a command line refused for something else, and none when --reporter is what is wrong", () => {
    assert.deepEqual(
      reportersAskedFor([
        "--base-url",
        "--api-kye",
        "k",
        "--reporter",
        "json:r.json",
        "--reporter=junit:r.xml",
      ]),
      [
        { name: "json", file: "r.json" },
        { name: "junit", file: "r.xml" },
      ],
    );
    assert.deepEqual(reportersAskedFor(["--typo"]), [{ name: "pretty" }]);
    assert.deepEqual(reportersAskedFor(["--reporter", "xml:r.xml"]), []);
    assert.deepEqual(reportersAskedFor(["--reporter", "json:r.json", "--help"]), []);
    assert.deepEqual(reportersAskedFor(["--reporter", "json", "--output", "o.json"], false), [
      { name: "json" },
    ]);
    assert.deepEqual(reportersAskedFor(["--reporter", "json", "--output", "o.json"]), [
      { name: "json", file: "o.json" },
    ]);
  });
});
