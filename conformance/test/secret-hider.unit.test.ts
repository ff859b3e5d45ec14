import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { BASIC_PROBE_USER } from "../target/credentials.ts";
import { hideSecrets, secretHider } from "../target/secret-hider.ts";

/** Every way a server may echo a secret, written here apart from the hider. */
const ENCODINGS: Readonly<Record<string, (secret: string) => string>> = {
  "as given": (secret) => secret,
  "JSON string": (secret) => JSON.stringify(secret).slice(1, -1),
  "JSON with \\/": (secret) => JSON.stringify(secret).slice(1, -1).replaceAll("/", "\\/"),
  "JSON, ASCII only": (secret) => asciiJson(secret, (hex) => hex),
  "JSON, ASCII only, upper-case hex": (secret) => asciiJson(secret, (hex) => hex.toUpperCase()),
  "percent-encoded": (secret) => encodeURIComponent(secret),
  "percent-encoded, lower case": (secret) => encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, lower),
  "percent-encoded, mixed case": (secret) =>
    encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (triplet, at: number) =>
      at % 2 === 0 ? triplet : `%${triplet[1]}${triplet[2]?.toLowerCase()}`,
    ),
  "form-encoded": (secret) => new URLSearchParams({ v: secret }).toString().slice(2),
  "percent-encoded twice": (secret) => encodeURIComponent(encodeURIComponent(secret)),
  "HTML decimal references": (secret) => htmlReferences(secret, (code) => `&#${code};`),
  "HTML hex references": (secret) =>
    htmlReferences(secret, (code) => `&#x${code.toString(16).toUpperCase()};`),
  "HTML decimal references with leading zeros": (secret) =>
    htmlReferences(secret, (code) => `&#${"0".repeat(1 + (code % 8))}${code};`),
  "HTML hex references with leading zeros": (secret) =>
    htmlReferences(secret, (code) => `&#x${"0".repeat(1 + (code % 8))}${code.toString(16)};`),
  "HTML decimal references without ;": (secret) =>
    unterminatedReferences(secret, (code) => `&#${code}`, /[0-9]/),
  "HTML hex references without ;": (secret) =>
    unterminatedReferences(secret, (code) => `&#X${code.toString(16)}`, /[0-9a-f]/i),
  "HTML5 named references": (secret) =>
    htmlReferences(secret, (code) => {
      const names = HTML5_NAMES[String.fromCodePoint(code)];
      return names === undefined ? `&#${code};` : `&${names[code % names.length]};`;
    }),
  "HTML legacy named references without ;": (secret) =>
    unterminatedReferences(
      secret,
      (code) => (code === 0x26 ? "&AMP" : code === 0x22 ? "&quot" : `&#${code}`),
      /[0-9A-Za-z]/,
    ),
  base64: (secret) => Buffer.from(secret).toString("base64"),
  "base64 unpadded": (secret) => Buffer.from(secret).toString("base64").replace(/=+$/, ""),
  base64url: (secret) => Buffer.from(secret).toString("base64url"),
  "base64url padded": (secret) => Buffer.from(secret).toString("base64url") + padding(secret),
  "base64 in JSON": (secret) => Buffer.from(secret).toString("base64").replaceAll("/", "\\/"),
  "base64 in a query": (secret) => encodeURIComponent(Buffer.from(secret).toString("base64")),
  Basic: (secret) => Buffer.from(`${BASIC_PROBE_USER}:${secret}`).toString("base64"),
  "Basic unpadded": (secret) =>
    Buffer.from(`${BASIC_PROBE_USER}:${secret}`).toString("base64").replace(/=+$/, ""),
  "UTF-8 bytes read as Latin-1": (secret) => Buffer.from(secret).toString("latin1"),
  "ASCII upper case": (secret) => secret.replace(/[a-z]+/g, (letters) => letters.toUpperCase()),
  "ASCII letters in alternating case": (secret) =>
    secret.replace(/[A-Za-z]/g, (letter, at: number) =>
      at % 2 === 0 ? letter.toLowerCase() : letter.toUpperCase(),
    ),
  "upper-case base64": (secret) => Buffer.from(secret).toString("base64").toUpperCase(),
};

/** Every character but letters and digits as an HTML reference, as an HTML-escaping server may echo it. */
function htmlReferences(secret: string, reference: (code: number) => string): string {
  return secret.replace(/[^A-Za-z0-9]/gu, (character) => reference(character.codePointAt(0) ?? 0));
}

/**
 * Every character but letters and digits as an HTML reference, its `;` left out where what follows
 * cannot be read as more of it (`following`), as a lax HTML writer may echo it and a browser reads it.
 */
function unterminatedReferences(
  secret: string,
  reference: (code: number) => string,
  following: RegExp,
): string {
  const characters = [...secret];
  return characters
    .map((character, at) => {
      if (/[A-Za-z0-9]/.test(character)) return character;
      const next = characters[at + 1] ?? "";
      const spelled = reference(character.codePointAt(0) ?? 0);
      // At the secret's end what follows is the text's, which may go on with the reference.
      return next === "" || next === ";" || following.test(next) ? `${spelled};` : spelled;
    })
    .join("");
}

/** WHATWG's named references of the ASCII characters the secrets here hold. */
const HTML5_NAMES: Readonly<Record<string, readonly string[]>> = {
  "\t": ["Tab"],
  "\n": ["NewLine"],
  "/": ["sol"],
  "+": ["plus"],
  "=": ["equals"],
  "%": ["percnt"],
  _: ["lowbar", "UnderBar"],
  ".": ["period"],
  '"': ["quot", "QUOT"],
  "\\": ["bsol"],
  ":": ["colon"],
  ";": ["semi"],
  "&": ["amp", "AMP"],
};

function lower(triplet: string): string {
  return triplet.toLowerCase();
}

function padding(secret: string): string {
  return "=".repeat((3 - (Buffer.byteLength(secret) % 3)) % 3);
}

/** JSON as Python's json.dumps writes it by default: every character past ASCII as \uXXXX. */
function asciiJson(secret: string, hexCase: (hex: string) => string): string {
  return JSON.stringify(secret)
    .slice(1, -1)
    .replace(/[^\x20-\x7e]/g, (unit) => `\\u${hexCase(unit.charCodeAt(0).toString(16).padStart(4, "0"))}`);
}

// Secrets of the characters encoders treat differently: / + = % space, quotes, backslashes, control
// characters, non-ASCII (two- and three-byte UTF-8, astral).
const secretCharacter = fc.constantFrom(
  ...('abcXYZ0189/+=%_-.~:;& "\\\n\t\u0001\u007fé中😀'.match(/./gsu) ?? []),
);
const secret = fc.array(secretCharacter, { minLength: 4, maxLength: 24 }).map((parts) => parts.join(""));
const filler = fc.string({ maxLength: 40 });
const encodingName = fc.constantFrom(...Object.keys(ENCODINGS));

describe("secretHider", () => {
  it("hides each secret in every encoding, embedded anywhere in any text", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(secret, { minLength: 1, maxLength: 5 }),
        fc.array(fc.tuple(fc.nat(), encodingName, filler), { minLength: 1, maxLength: 8 }),
        filler,
        (secrets, pieces, start) => {
          const echoed = pieces.map(
            ([which, encoding]) => ENCODINGS[encoding]?.(secrets[which % secrets.length] ?? "") ?? "",
          );
          const text = start + pieces.map(([, , after], at) => `${echoed[at]}${after}`).join("");
          const hidden = secretHider(secrets)(text);
          for (const form of echoed)
            assert.ok(
              !hidden.includes(form),
              `${JSON.stringify(form)} survives in ${JSON.stringify(hidden)}`,
            );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("hides the part of any base64 text that depends on a secret alone, wherever the secret starts", () => {
    fc.assert(
      fc.property(
        secret,
        fc.uint8Array({ maxLength: 7 }),
        fc.uint8Array({ maxLength: 4 }),
        fc.boolean(),
        filler,
        (one, before, after, url, around) => {
          const bytes = Buffer.from(one);
          const encoded = Buffer.concat([before, bytes, after]).toString(url ? "base64url" : "base64");
          // Each character holds 6 bits: those from the first bit of the secret to its last one.
          const from = Math.ceil((before.length * 8) / 6);
          const to = Math.floor(((before.length + bytes.length) * 8) / 6);
          const revealing = encoded.slice(from, to);
          fc.pre(revealing.length >= 8);
          const hidden = secretHider([one])(`${around}${encoded}${around}`);
          assert.ok(!hidden.includes(revealing), `${revealing} survives in ${hidden}`);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("spans with its reach every spelling of a secret: a text cut in one loses it all with that much", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(secret, { minLength: 1, maxLength: 3 }),
        encodingName,
        (secrets, encoding) => {
          const { reach } = secretHider(secrets);
          for (const one of secrets) {
            const spelled = ENCODINGS[encoding]?.(one) ?? "";
            assert.ok(spelled.length <= reach, `${JSON.stringify(spelled)} is longer than ${reach}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("leaves a text with none of the secrets unchanged, the same string", () => {
    // No % \ + in the text: a secret could only be in it as given or in base64.
    const textCharacter = fc.constantFrom(...("abcxyz019 {}[]:,.'!?#*()<>\n\tÅé中😀".match(/./gsu) ?? []));
    fc.assert(
      fc.property(
        fc.uniqueArray(secret, { minLength: 1, maxLength: 5 }),
        fc.array(textCharacter, { maxLength: 200 }).map((parts) => parts.join("")),
        (secrets, text) => {
          const plain = [
            "as given",
            "base64 unpadded",
            "base64url",
            "Basic unpadded",
            "UTF-8 bytes read as Latin-1",
          ];
          const lower = text.toLowerCase();
          fc.pre(
            secrets.every((one) =>
              plain.every((name) => !lower.includes((ENCODINGS[name]?.(one) ?? "").toLowerCase())),
            ),
          );
          assert.equal(secretHider(secrets)(text), text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("hides a token spelled with HTML5 named references, zero-padded or unterminated ones", () => {
    const hide = secretHider(["sk_live.Ab9_Zq:x/Hx3Kp"]);
    for (const echoed of [
      "sk&lowbar;live&period;Ab9&UnderBar;Zq&colon;x&sol;Hx3Kp",
      "sk&#0095;live&#00046;Ab9&#0000095;Zq&#058;x&#047;Hx3Kp",
      "sk&#95live&#46Ab9&#x5F;Zq&#58x&#47Hx3Kp",
    ])
      assert.equal(hide(`<p>${echoed}</p>`), "<p>***</p>");
    // `&#951` is one character, not `_` and a `1`: a reference goes on as far as its digits do.
    const digits = secretHider(["ab_1cd"]);
    assert.equal(digits("ab&#951cd"), "ab&#951cd");
    assert.equal(digits("ab&#95;1cd"), "***");
  });

  it("hides each named encoding of a secret that has every kind of character", () => {
    const key = 'sk/live+tok=en%20 "é\\\n中😀\u0001';
    const hide = secretHider([key, "other-secret-value"]);
    for (const [name, encode] of Object.entries(ENCODINGS)) {
      const text = `{"echo":"${encode(key)}","n":1}`;
      assert.equal(hide(text), '{"echo":"***","n":1}', name);
    }
  });

  it("hides a secret that holds another, and one with no two letters or digits in a row", () => {
    assert.equal(hideSecrets("a longer-secret-1 b", ["longer-secret", "longer-secret-1"]), "a *** b");
    assert.equal(hideSecrets("x /+/+ y %2F%2b%2f%2B z", ["/+/+"]), "x *** y *** z");
  });

  it("hides secrets whose short anchors start at one place, and one spelled with a long run", () => {
    // "Zba" and "Zbaaa" both start at 1; only the second's form starts before its anchor.
    assert.equal(secretHider(["Zba\naa", "=Zbaaa中", "aaa中aa"])("=Zbaaa中Zba\naa"), "******");
    const dashed = "client-token-1000";
    const key = "Q2xpZW50S2V5VmFsdWVMb25nRW5vdWdo";
    const text = `{"a":"${dashed}","b":"${key}","c":"client-token-100","d":"${encodeURIComponent(dashed)}"}`;
    assert.equal(secretHider([dashed, key])(text), '{"a":"***","b":"***","c":"client-token-100","d":"***"}');
  });

  it("hides a secret of many kilobytes, too large for one expression, and the others beside it", () => {
    const large = "a/é+".repeat(3000);
    const hide = secretHider([large, "short/key=1"]);
    for (const name of [
      "as given",
      "JSON with \\/",
      "percent-encoded",
      "percent-encoded, lower case",
      "base64",
    ]) {
      const text = `<${ENCODINGS[name]?.(large)}> <${ENCODINGS[name]?.("short/key=1")}>`;
      assert.equal(hide(text), "<***> <***>", name);
    }
  });

  it("hides in any case a secret too large for an expression with no two letters or digits in a row", () => {
    const large = "a-".repeat(100_000);
    const hide = secretHider([large, "x.y.z.w"]);
    assert.equal(hide(`<${large.toUpperCase()}> <${large}> <X.Y.z.w>`), "<***> <***> <***>");
  });

  it("hides whole a secret past the expression's size that holds one within it", () => {
    // Many characters past ASCII make long expressions: the longest forms are hidden as plain text.
    const inner = "inner-key-1234";
    const outer = `${"é".repeat(300)}~${inner}`;
    const hide = secretHider([inner, outer]);
    for (const name of ["as given", "UTF-8 bytes read as Latin-1"])
      assert.equal(hide(`<${ENCODINGS[name]?.(outer)}> <${ENCODINGS[name]?.(inner)}>`), "<***> <***>", name);
  });

  it("hides a secret of eight characters or more in hex, either case, and a shorter one's hex not", () => {
    const hide = secretHider(["client-token-1001", "1234"]);
    const hex = Buffer.from("client-token-1001").toString("hex");
    assert.equal(hide(`a ${hex} b ${hex.toUpperCase()} c`), "a *** b *** c");
    assert.equal(hide(`id ${Buffer.from("1234").toString("hex")}`), "id 31323334");
  });

  it("hides each of more secrets than one expression holds, in their usual spellings, and nothing else", () => {
    // A hostile client's Cookie of 2,000 values: most of their forms are past the expression's size.
    const many = Array.from({ length: 2000 }, (_, index) => `v/${index.toString(36).padStart(4, "0")}+k`);
    const hide = secretHider(many);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(many.length - 1), encodingName, filler), { minLength: 1, maxLength: 6 }),
        (pieces) => {
          const usual = [
            "as given",
            "JSON with \\/",
            "percent-encoded",
            "percent-encoded, lower case",
            "base64",
          ];
          const echoed = pieces.map(
            ([which, name]) => ENCODINGS[usual.includes(name) ? name : "as given"]?.(many[which] ?? "") ?? "",
          );
          const text = pieces
            .map(([, , after], at) => `<${echoed[at]}>${after.replace(/[<>]/g, "")}`)
            .join("");
          const hidden = hide(text);
          for (const form of echoed)
            assert.ok(!hidden.includes(`<${form}>`), `${form} survives in ${hidden}`);
        },
      ),
      { numRuns: 200 },
    );
    assert.equal(hide("v/zzzz+k and v/0001+kk"), "v/zzzz+k and ***k");
  });

  it("hides nothing with no secrets, or only empty ones", () => {
    assert.equal(hideSecrets("text", []), "text");
    assert.equal(hideSecrets("text", [""]), "text");
  });
  it("hides a secret whole when a shorter one it holds has its anchor earlier in the text", () => {
    const hide = secretHider(["AAAA", "'AAAA'AAATA"]);
    assert.equal(hide("x 'AAAA'AAATA y"), "x *** y");
  });
});

/** A text as a body in UTF-16 carries it, in one byte order, read as a binary body (Latin-1) or a text one (UTF-8). */
function utf16Read(text: string, bigEndian: boolean, reading: "latin1" | "utf8"): string {
  const bytes = Buffer.from(text, "utf16le");
  return (bigEndian ? bytes.swap16() : bytes).toString(reading);
}

/** What a reading shows of a secret whatever comes before and after: a NUL at either end belongs to its neighbour's unit too. */
function core(reading: string): string {
  return reading.replace(/^\0|\0$/g, "");
}

/** Base64 in lines of `width` characters, the first one `first` characters long (a blob begun mid-line). */
function inLines(base64: string, width: number, first: number, newline: string): string {
  const lines = [base64.slice(0, first)];
  for (let at = first; at < base64.length; at += width) lines.push(base64.slice(at, at + width));
  return lines.filter((line) => line !== "").join(newline);
}

/** Quoted-printable as encoders write it: printable ASCII and the space as themselves but `=`, the rest `=XX`. */
function quotedPrintable(text: string): string[] {
  return [...text].map((character) =>
    /^[ -<>-~]$/.test(character)
      ? character
      : [...Buffer.from(character)]
          .map((byte) => `=${byte.toString(16).toUpperCase().padStart(2, "0")}`)
          .join(""),
  );
}

describe("secretHider, forms a body carries in other shapes", () => {
  it("hides a secret in a UTF-16 body, either byte order, with or without BOM, read as Latin-1 or UTF-8", () => {
    fc.assert(
      fc.property(
        secret,
        fc.constantFrom<Array<(one: string) => string>>(
          (one) => one,
          (one) => JSON.stringify(one).slice(1, -1),
          (one) => JSON.stringify(one).slice(1, -1).replaceAll("/", "\\/"),
          (one) => Buffer.from(one).toString("base64"),
        ),
        filler,
        filler,
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom<"latin1" | "utf8">("latin1", "utf8"),
        (one, spell, before, after, bigEndian, bom, reading) => {
          const body = `${bom ? "\ufeff" : ""}{"a":"${before}","token":"${spell(one)}","b":"${after}"}`;
          const hide = secretHider([one]);
          const hidden = hide(utf16Read(body, bigEndian, reading));
          const shown = core(utf16Read(spell(one), bigEndian, reading));
          assert.ok(shown.length <= hide.reach, `${JSON.stringify(shown)} is longer than ${hide.reach}`);
          assert.ok(
            !hidden.includes(shown),
            `${JSON.stringify(shown)} survives in ${JSON.stringify(hidden)}`,
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("hides an ASCII secret in a UTF-16 JSON answer read as UTF-8, and leaves the rest of it", () => {
    const answer = utf16Read('\ufeff{"token":"sk_live-Tok3n/value"}', false, "utf8");
    const hidden = hideSecrets(answer, ["sk_live-Tok3n/value"]);
    assert.equal(hidden.replaceAll("\0", ""), '\ufffd\ufffd{"token":"***"}');
    const big = utf16Read('{"token":"SK_LIVE-TOK3N\\/VALUE"}', true, "latin1");
    assert.equal(hideSecrets(big, ["sk_live-Tok3n/value"]).replaceAll("\0", ""), '{"token":"***"}');
  });

  it("hides base64 of a secret in lines of 60 characters or more, CRLF or LF, wherever the secret starts", () => {
    fc.assert(
      fc.property(
        secret,
        fc.uint8Array({ maxLength: 80 }),
        fc.uint8Array({ maxLength: 80 }),
        fc.integer({ min: 60, max: 96 }),
        fc.nat(95),
        fc.constantFrom("\r\n", "\n"),
        (one, before, after, width, first, newline) => {
          const bytes = Buffer.from(one);
          const encoded = Buffer.concat([before, bytes, after]).toString("base64");
          const from = Math.ceil((before.length * 8) / 6);
          const revealing = encoded.slice(from, Math.floor(((before.length + bytes.length) * 8) / 6));
          fc.pre(revealing.length >= 8);
          const text = `Content-Transfer-Encoding: base64${newline}${newline}${inLines(encoded, width, first % width, newline)}${newline}`;
          const hidden = secretHider([one])(text).replaceAll(/\r?\n/g, "");
          assert.ok(!hidden.includes(revealing), `${revealing} survives in ${hidden}`);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("hides a secret in quoted-printable with soft breaks 24 characters of it apart or more", () => {
    const tokenCharacter = fc.constantFrom(...[..."abcXYZ0189/+=%_-.~ é"]);
    fc.assert(
      fc.property(
        fc.array(tokenCharacter, { minLength: 8, maxLength: 60 }).map((parts) => parts.join("")),
        fc.integer({ min: 24, max: 76 }),
        fc.nat(75),
        fc.constantFrom("=\r\n", "=\n"),
        filler,
        (one, width, first, soft, around) => {
          // Every four characters hold two in a row that quoted-printable writes only as themselves.
          fc.pre(
            [...one].every(
              (_, at, all) => at + 4 > all.length || /[!-<>-~]{2}/.test(all.slice(at, at + 4).join("")),
            ),
          );
          const units = quotedPrintable(one);
          let encoded = "";
          for (const [at, unit] of units.entries())
            encoded += (at > 0 && (at - (first % width)) % width === 0 ? soft : "") + unit;
          const text = `${around}${soft}${encoded}${soft}${around}`;
          const hide = secretHider([one]);
          const hidden = hide(text).replaceAll(/=\r?\n/g, "");
          assert.ok(encoded.length <= hide.reach, `${JSON.stringify(encoded)} is longer than ${hide.reach}`);
          assert.ok(
            !hidden.includes(units.join("")),
            `${units.join("")} survives in ${JSON.stringify(hidden)}`,
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("hides base64 broken by a line inside it and a quoted-printable soft break inside a secret", () => {
    const key = "sk_live_0123456789abcdefghijklmnopqrstuvwxyz";
    const base64 = Buffer.from(key).toString("base64");
    assert.equal(hideSecrets(`${base64.slice(0, 30)}\r\n${base64.slice(30)}`, [key]), "***");
    assert.equal(hideSecrets(`${base64.slice(0, 30)}\n${base64.slice(30)}`, [key]), "***");
    assert.equal(hideSecrets(`a=3D${key.slice(0, 20)}=\r\n${key.slice(20)} b`, [key]), "a=3D*** b");
    assert.equal(hideSecrets(`p=3Dsk=3Dv1=\n/key-0001 z`, ["p=sk=v1/key-0001"]), "*** z");
  });

  it("hides no prefix of a secret alone: all but its last character is no secret", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{8,40}$/), fc.boolean(), (key, wide) => {
        const prefix = key.slice(0, -1);
        const text = `a ${wide ? [...prefix].join("\0") : prefix} b\n`;
        assert.equal(secretHider([key])(text), text);
      }),
      { numRuns: 300 },
    );
  });
});
