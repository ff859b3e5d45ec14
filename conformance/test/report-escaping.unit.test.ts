import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderHtml } from "../reports/html.ts";
import { renderJunit } from "../reports/junit.ts";
import { renderMarkdown } from "../reports/markdown.ts";
import { renderPretty } from "../reports/pretty.ts";
import type { Report } from "../reports/report.ts";

// Every class of character that hides, reorders or breaks text, or that XML cannot hold, by code point.
const TABLE: ReadonlyArray<[string, number]> = [
  ["NUL", 0x00],
  ["escape", 0x1b],
  ["DEL", 0x7f],
  ["C1 CSI", 0x9b],
  ["soft hyphen", 0xad],
  ["combining grapheme joiner", 0x34f],
  ["Arabic letter mark", 0x61c],
  ["Hangul filler", 0x115f],
  ["Mongolian vowel separator", 0x180e],
  ["zero-width space", 0x200b],
  ["right-to-left mark", 0x200f],
  ["line separator", 0x2028],
  ["paragraph separator", 0x2029],
  ["right-to-left override", 0x202e],
  ["word joiner", 0x2060],
  ["invisible times", 0x2062],
  ["first strong isolate", 0x2068],
  ["non-character U+FDD0", 0xfdd0],
  ["variation selector 16", 0xfe0f],
  ["byte-order mark", 0xfeff],
  ["interlinear annotation", 0xfff9],
  ["non-character U+FFFE", 0xfffe],
  ["non-character U+FFFF", 0xffff],
  ["tag LATIN A", 0xe0041],
  ["cancel tag", 0xe007f],
  ["variation selector 17", 0xe0100],
];

function reportCarrying(text: string): Report {
  return {
    summary: { passed: 0, failed: 1, skipped: 0 },
    target: `http://127.0.0.1:9/v1${text}`,
    startedAt: "2026-11-25T00:00:00.000Z",
    warnings: [`warning ${text}`],
    requests: 1,
    retries: 0,
    durationMs: 1,
    scenarios: [
      {
        id: "list-orders",
        title: `title ${text}`,
        status: "failed",
        checks: [
          {
            id: "list-orders.list.body",
            status: "failed",
            message: `message ${text}`,
            spec: "§4.1",
            request: { method: "GET", path: `/v1/store/orders?q=${text}`, headers: { "x-note": `h${text}` } },
            response: {
              status: 200,
              headers: { "x-echo": `e${text}` },
              body: `[{"note":"${text}"}]\nline two`,
            },
            reproduce: `curl 'http://127.0.0.1:9/v1/store/orders?q=${text}'`,
          },
        ],
      },
    ],
  } as Report;
}

// XML 1.0's Char production: what a JUnit file may hold at all.
const XML_CHAR = /^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u;

describe("one escaping per medium", () => {
  for (const [name, code] of TABLE) {
    it(`${name} (U+${code.toString(16).toUpperCase().padStart(4, "0")}) appears in no report raw`, () => {
      const character = String.fromCodePoint(code);
      const render = (text: string) => ({
        pretty: renderPretty(reportCarrying(text), { color: false }),
        junit: renderJunit(reportCarrying(text)),
        markdown: renderMarkdown(reportCarrying(text)),
        html: renderHtml(reportCarrying(text)),
      });
      const texts = render(character);
      // A reporter's own marks (Markdown's ⚠️ holds U+FE0F) are there without the target's text too.
      const own = render("");
      const count = (text: string) => text.split(character).length - 1;
      for (const [medium, text] of Object.entries(texts)) {
        assert.equal(count(text), count(own[medium as keyof typeof own]), `${medium} holds it raw`);
        assert.ok(text.includes("message "), `${medium} still shows the message`);
      }
      assert.match(texts.junit, XML_CHAR, "the JUnit file is XML");
    });
  }

  it("keeps what is only text: letters of any script, emoji, line breaks in bodies", () => {
    const text = "é 漢字 😀 ☃";
    const html = renderHtml(reportCarrying(text));
    assert.ok(html.includes(text));
    assert.match(html, /line two/);
    assert.ok(renderPretty(reportCarrying(text), { color: false }).includes(text));
  });
});
