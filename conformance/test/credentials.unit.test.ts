import assert from "node:assert/strict";
import querystring from "node:querystring";
import { describe, it } from "node:test";
import fc from "fast-check";
import { brokenPiece, piecesAround } from "../../test-support/broken-encodings.ts";
import {
  BASIC_PROBE_USER,
  bodySecrets,
  formSecrets,
  headerSecrets,
  isSecretName,
  maskedBody,
  maskedTarget,
  percentReadings,
  requestSecrets,
} from "../target/credentials.ts";
import { hideSecrets } from "../target/secret-hider.ts";

/** What an upstream's echo of `echoed` shows once the request's own secrets are hidden in it. */
function echoOf(rawHeaders: string[], echoed: string, target = "/v1/store/orders"): string {
  return hideSecrets(`note: ${echoed}.`, requestSecrets(rawHeaders, target));
}

const token = fc
  .array(fc.constantFrom(..."ABCDEFGHKMNPQRSTWXYZ0123456789-_.~!#$%&'*+^`|"), {
    minLength: 4,
    maxLength: 24,
  })
  .map((characters) => characters.join(""));

describe("credentials", () => {
  it("hides a quoted cookie's value echoed without its quotes", () => {
    assert.equal(echoOf(["Cookie", 'sid="QUOTEDCOOKIEVAL"'], "QUOTEDCOOKIEVAL"), "note: ***.");
    assert.equal(echoOf(["Cookie", 'a=1; sid="QUOTEDCOOKIEVAL"'], '"QUOTEDCOOKIEVAL"'), "note: ***.");
  });

  it("hides any quoted cookie's value, with or without its quotes", () => {
    fc.assert(
      fc.property(token, (value) => {
        const raw = ["Cookie", `theme=dark; sid="${value}"`];
        assert.equal(echoOf(raw, value), "note: ***.");
        // A quote or a part inside the value may be hidden on its own, its quotes left: no secret in them.
        assert.ok(!echoOf(raw, `"${value}"`).includes(value));
      }),
    );
  });

  it("hides the user of Basic credentials, which some APIs take as their key", () => {
    const basic = (pair: string) => `Basic ${Buffer.from(pair).toString("base64")}`;
    assert.equal(echoOf(["Authorization", basic("BASICUSERNAME:pw12345")], "BASICUSERNAME"), "note: ***.");
    assert.equal(
      echoOf(["Authorization", basic("sk_live_KEY123:")], "user sk_live_KEY123"),
      "note: user ***.",
    );
  });

  it("leaves a Basic user shorter than four characters, and the suite's probe user, in the text", () => {
    const basic = (pair: string) => `Basic ${Buffer.from(pair).toString("base64")}`;
    assert.equal(echoOf(["Authorization", basic("bob:pw12345")], "bob"), "note: bob.");
    assert.deepEqual(
      headerSecrets("authorization", basic(`${BASIC_PROBE_USER}:key-1234`)).includes(BASIC_PROBE_USER),
      false,
    );
  });

  it("hides each item of a credential list separated by white space, commas or both, and the whole value", () => {
    assert.equal(echoOf(["X-Api-Key", "APIKEYSPACE1 other-key"], "APIKEYSPACE1"), "note: ***.");
    assert.equal(echoOf(["X-Api-Key", "APIKEYSPACE1\tother-key"], "other-key"), "note: ***.");
    assert.equal(echoOf(["X-Api-Key", "first-key, second-key third-key"], "third-key"), "note: ***.");
    assert.equal(
      echoOf(["X-Api-Key", "first-key, second-key third-key"], "second-key third-key"),
      "note: ***.",
    );
    assert.equal(echoOf(["X-Api-Key", "APIKEYSPACE1 other-key"], "APIKEYSPACE1 other-key"), "note: ***.");
  });

  it("hides every item of a list of keys, whatever separates them", () => {
    const separator = fc.constantFrom(" ", "\t", ",", ", ", " ,  ");
    fc.assert(
      fc.property(fc.array(fc.tuple(token, separator), { minLength: 1, maxLength: 5 }), (items) => {
        const value = items
          .map(([item, between]) => item + between)
          .join("")
          .trim();
        const raw = ["X-Api-Key", value];
        for (const [item] of items) assert.ok(!echoOf(raw, item).includes(item), `${item} of ${value}`);
      }),
    );
  });

  it("hides a token in a secret header's words, never the scheme's name before it", () => {
    const forms = headerSecrets("x-upstream-auth", "Bearer abcd1234");
    assert.ok(forms.includes("abcd1234"));
    assert.ok(!forms.includes("Bearer"));
    assert.equal(hideSecrets("Bearer abcd1234 and abcd1234", forms), "*** and ***");
    assert.equal(hideSecrets("a Bearer token", forms), "a Bearer token");
  });

  it("hides each form an attacker's upstream echoed credentials in", () => {
    const base64 = (text: string, encoding: BufferEncoding = "utf8") =>
      Buffer.from(text, encoding).toString("base64");
    const plain = "/v1/store/orders";
    const bearer = ["Authorization", "Bearer zzzzzzzz"];
    // [what, request's raw headers, its target, the upstream's echo, what must not survive]
    const cases: Array<[string, string[], string, string, string]> = [
      [
        "a signed cookie, echoed decoded",
        ["Cookie", "sid=s%3ASIGNEDCOOKIEVAL%2Fx.sig"],
        plain,
        "s:SIGNEDCOOKIEVAL/x.sig",
        "SIGNEDCOOKIEVAL",
      ],
      [
        "a cookie's encoded space, echoed decoded",
        ["Cookie", "sid=SPACEDCOOKIE%20q%3Bz"],
        plain,
        "SPACEDCOOKIE q;z",
        "SPACEDCOOKIE",
      ],
      [
        "a bearer's first word of two",
        ["Authorization", "Bearer FIRSTWORDTOK extra"],
        plain,
        "FIRSTWORDTOK",
        "FIRSTWORDTOK",
      ],
      [
        "the second of two bearers in one header",
        ["Authorization", "Bearer aaaaaaa1, Bearer SECONDBEARER"],
        plain,
        "SECONDBEARER",
        "SECONDBEARER",
      ],
      [
        "a padded bearer, echoed unpadded",
        ["Authorization", "Bearer PADDEDTOKENVx=="],
        plain,
        "PADDEDTOKENVx",
        "PADDEDTOKENV",
      ],
      [
        "a Basic password sent as Latin-1",
        ["Authorization", `Basic ${base64("user1:LATINPASSWD\u00e9", "latin1")}`],
        plain,
        "LATINPASSWD\u00e9",
        "LATINPASSWD",
      ],
      [
        "a Digest user",
        [
          "Authorization",
          'Digest username="DIGESTUSERKEY", realm="r", nonce="n", uri="/v1", response="0123"',
        ],
        plain,
        "unknown user DIGESTUSERKEY",
        "DIGESTUSERKEY",
      ],
      [
        "a Digest response",
        ["Authorization", 'Digest username="u", realm="r", response="DIGESTRESPONSE1"'],
        plain,
        "bad DIGESTRESPONSE1",
        "DIGESTRESPONSE1",
      ],
      [
        "a SigV4 signature",
        [
          "Authorization",
          "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=SIGVFOURSIGNATUREABCDEF",
        ],
        plain,
        "signature SIGVFOURSIGNATUREABCDEF does not match",
        "SIGVFOURSIGNATUREABCDEF",
      ],
      [
        "a key with HTML references",
        ["X-Api-Key", "client-HTMLENTKEY-1000"],
        plain,
        "client&#45;HTMLENTKEY&#x2d;1000",
        "HTMLENTKEY",
      ],
      ["a query token encoded twice", bearer, `${plain}?token=DOUBLEPCT%2Fa`, "DOUBLEPCT%252Fa", "DOUBLEPCT"],
      ["a PHP-style query name", bearer, `${plain}?auth[token]=PHPARRAYTOK`, "PHPARRAYTOK", "PHPARRAYTOK"],
      ["a `;` query pair", bearer, `${plain}?a=1;token=SEMITOKENV`, "SEMITOKENV", "SEMITOKENV"],
      [
        "a token in hex",
        ["Authorization", "Bearer client-token-1001"],
        plain,
        Buffer.from("client-token-1001").toString("hex"),
        "636c69656e742d746f6b656e2d31303031",
      ],
      ["a quoted CSRF token, unquoted", ["X-CSRF-Token", '"QUOTEDCSRF"'], plain, "QUOTEDCSRF", "QUOTEDCSRF"],
      [
        "a Basic user, normalized",
        ["Authorization", `Basic ${base64("USERNAMEKEYe\u0301:pw")}`],
        plain,
        "USERNAMEKEY\u00e9",
        "USERNAMEKEY",
      ],
    ];
    const leaked = cases.filter(([, raw, target, echoed, marker]) =>
      echoOf(raw, echoed, target).includes(marker),
    );
    assert.deepEqual(
      leaked.map(([what]) => what),
      [],
    );
  });

  it("masks credential parameters in `;` pairs and with bracketed names in a path", () => {
    assert.equal(
      maskedTarget("/v1?a=1;token=SEMITOKENV&auth[token]=PHPARRAYTOK&user[name]=bob"),
      "/v1?a=1;token=***&auth[token]=***&user[name]=bob",
    );
  });

  it("leaves the values of parameters that carry no secret, and short values of plain names, in the text", () => {
    const digest = [
      "Authorization",
      'Digest username="DIGESTUSERKEY", realm="shop", uri="/v1/store/orders/1002", qop=auth, nc=00000001, algorithm=SHA-256, response="0123abcd"',
    ];
    const text = 'GET /v1/store/orders/1002 {"id":1000000012} qop auth SHA-256 shop';
    assert.equal(echoOf(digest, text), `note: ${text}.`);
    assert.equal(echoOf(digest, "DIGESTUSERKEY 0123abcd"), "note: *** ***.");
    const signed = [
      "Authorization",
      "AWS4-HMAC-SHA256 Credential=AKIDKEY, SignedHeaders=content-type;host;x-amz-date, Signature=SIGNATUREVALUE",
    ];
    assert.equal(echoOf(signed, "http://localhost/ content-type"), "note: http://localhost/ content-type.");
    assert.equal(echoOf(["Cookie", "theme=dark; sid=abcd"], "dark abcd"), "note: dark ***.");
  });

  it("hides a secret after a plain parameter's name anywhere but in an Authorization scheme's own", () => {
    const secret = "S3cr3tS3ss10nValue42";
    const forms: Array<[string, string]> = [
      ["Cookie", `theme=dark;path=/;sid=${secret}`],
      ["Cookie", `path=/;session=${secret}`],
      ["Cookie", `version=${secret}`],
      ["Cookie", `domain=${secret}; theme=dark`],
      ["Cookie", `expires=${secret}`],
      ["X-Api-Key", `uri=${secret}`],
      ["Authorization", `Digest username="bob",realm="r",uri=/v1/x;response=${secret}`],
      ["Authorization", `Digest uri=/v1/x=${secret}`],
      [
        "Authorization",
        `AWS4-HMAC-SHA256 Credential=AKIA/2026/s3/aws4_request, SignedHeaders=host;x-amz-date;Signature=${secret}`,
      ],
      [
        "Authorization",
        `AWS4-HMAC-SHA256 Credential=AKIA/2026/s3/aws4_request, SignedHeaders=Signature=${secret}`,
      ],
    ];
    for (const raw of forms) assert.equal(echoOf(raw, `echo ${secret}`), "note: echo ***.", raw.join(": "));
  });

  it("leaves the names of a scheme and of its parameters in the text", () => {
    const raw = ["Authorization", 'Digest username="DIGESTUSERKEY", realm="r", response="0123abcd"'];
    assert.equal(echoOf(raw, "Digest username realm response"), "note: Digest username realm response.");
    const signed = ["Authorization", "AWS4-HMAC-SHA256 Credential=AKIDKEY, Signature=SIGNATUREVALUE"];
    assert.equal(
      echoOf(signed, "AWS4-HMAC-SHA256 Credential Signature"),
      "note: AWS4-HMAC-SHA256 Credential Signature.",
    );
  });

  it("hides every part of generated credentials of each scheme, however separated, quoted or encoded", () => {
    fc.assert(
      fc.property(generatedCredential, ({ raw, target, parts }) => {
        for (const part of parts) {
          const hidden = echoOf(raw, part, target);
          assert.ok(
            !hidden.includes(part),
            `${JSON.stringify(part)} of ${JSON.stringify(raw)} ${target}: ${hidden}`,
          );
        }
      }),
      { numRuns: 400 },
    );
  });
});

/** A secret of letters, digits and the characters tokens hold, never a scheme's name. */
const secretPart = fc
  .array(fc.constantFrom(..."abcXYZ0189-_.~+/!*é"), { minLength: 4, maxLength: 20 })
  .map((characters) => characters.join(""))
  .filter((part) => !/^(bearer|basic|digest|negotiate|token)$/i.test(part));

/** A secret as a request carries it: as is, padded as base64, quoted, or percent-encoded with separators. */
const carried = fc.oneof(
  secretPart.map((part) => ({ sent: part.replace(/é/g, "e"), echoed: [part.replace(/é/g, "e")] })),
  secretPart.map((part) => ({ sent: `${part.replace(/é/g, "e")}==`, echoed: [part.replace(/é/g, "e")] })),
  secretPart.map((part) => ({ sent: `"${part.replace(/é/g, "e")}"`, echoed: [part.replace(/é/g, "e")] })),
  // Encoded with a separator inside (each side a part of its own) or another character (the whole only).
  fc
    .tuple(secretPart, fc.constantFrom(":", " ", ";", ",", "/", "="), secretPart)
    .map(([first, between, second]) => ({
      sent: encodeURIComponent(`${first}${between}${second}`),
      echoed: [`${first}${between}${second}`, ...("/=".includes(between) ? [] : [first, second])],
    })),
);

const between = fc.constantFrom(" ", "\t", ", ", ",", " , ");

interface GeneratedCredential {
  raw: string[];
  target: string;
  parts: string[];
}

function joined(
  pieces: ReadonlyArray<{ sent: string; echoed: string[] }>,
  glue: (sent: string, index: number) => string,
) {
  return {
    value: pieces.map(({ sent }, index) => glue(sent, index)),
    parts: pieces.flatMap(({ echoed }) => echoed),
  };
}

const generatedCredential: fc.Arbitrary<GeneratedCredential> = fc.oneof(
  fc
    .tuple(fc.array(carried, { minLength: 1, maxLength: 3 }), between, fc.boolean())
    .map(([pieces, glue, again]) => {
      const { value, parts } = joined(pieces, (sent, index) =>
        index > 0 && again ? `Bearer ${sent}` : sent,
      );
      return { raw: ["Authorization", `Bearer ${value.join(glue)}`], target: "/", parts };
    }),
  fc
    .tuple(secretPart, secretPart, fc.constantFrom<BufferEncoding>("utf8", "latin1"))
    .map(([user, password, encoding]) => ({
      raw: ["Authorization", `Basic ${Buffer.from(`${user}:${password}`, encoding).toString("base64")}`],
      target: "/",
      parts: [user, password],
    })),
  fc.array(carried, { minLength: 1, maxLength: 4 }).map((pieces) => {
    // realm, uri, qop and nc are no secrets (hiding them would blank paths and words): not among these.
    const names = ["username", "cnonce", "nonce", "response"];
    const { value, parts } = joined(
      pieces,
      (sent, index) => `${names[index]}=${sent.startsWith('"') ? sent : `"${sent}"`}`,
    );
    return { raw: ["Proxy-Authorization", `Digest ${value.join(", ")}`], target: "/", parts };
  }),
  fc.tuple(carried, carried).map(([credential, signature]) => ({
    raw: [
      "Authorization",
      `AWS4-HMAC-SHA256 Credential=${credential.sent}, SignedHeaders=host, Signature=${signature.sent}`,
    ],
    target: "/",
    parts: [...credential.echoed, ...signature.echoed],
  })),
  fc
    .tuple(fc.array(carried, { minLength: 1, maxLength: 4 }), fc.constantFrom("; ", ";"))
    .map(([pieces, glue]) => {
      const { value, parts } = joined(pieces, (sent, index) => `session${index}=${sent}`);
      return { raw: ["Cookie", value.join(glue)], target: "/", parts };
    }),
  fc
    .tuple(
      fc.array(carried, { minLength: 1, maxLength: 3 }),
      between,
      fc.constantFrom("X-Api-Key", "X-CSRF-Token"),
    )
    .map(([pieces, glue, name]) => {
      const { value, parts } = joined(pieces, (sent) => sent);
      return { raw: [name, value.join(glue)], target: "/", parts };
    }),
  fc
    .tuple(fc.array(carried, { minLength: 1, maxLength: 3 }), fc.constantFrom("&", ";"))
    .map(([pieces, glue]) => {
      const names = ["token", "auth[token]", "api_key"];
      const { value, parts } = joined(pieces, (sent, index) => `${names[index]}=${encodeURIComponent(sent)}`);
      return {
        raw: ["Authorization", "Bearer zzzzzzzz"],
        target: `/v1?page=1${glue}${value.join(glue)}`,
        parts,
      };
    }),
);

describe("credentials named anywhere a request carries them", () => {
  const secret = fc.stringMatching(/^[A-Za-z0-9_-]{8,24}$/);
  /** Names of credentials in use: GitLab's, Google's, Vault's, OAuth's, Tomcat's, and the usual ones. */
  const PARAMETER_NAMES = [
    "jsessionid",
    "JSESSIONID",
    "access_token",
    "access-token",
    "token",
    "private_token",
    "code",
    "jwt",
    "apiKey",
    "x-api-key",
    "session",
    "sessionid",
    "pwd",
    "auth[token]",
    "csrftoken",
    "clientSecret",
    "AccessKey",
  ];
  const HEADER_NAMES = [
    "Private-Token",
    "X-Goog-Api-Key",
    "X-Vault-Token",
    "X-Auth-Token",
    "Api-Key",
    "Ocp-Apim-Subscription-Key",
    "X-Functions-Key",
    "X-Access-Key",
    "X-Session-Id",
    "X-Private-Key",
    "DD-Application-Key",
    "X-Master-Key",
    "x_client_key",
  ];

  it("masks and hides a credential sent as a `;` parameter of a path segment", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PARAMETER_NAMES),
        secret,
        fc.constantFrom("/v1/store/orders", "/v1/store/orders/5", "/v1/store;x=1/orders"),
        fc.constantFrom("", "?limit=1", ";theme=dark"),
        (name, value, path, after) => {
          const target = `${path};${name}=${value}${after}`;
          assert.ok(!maskedTarget(target).includes(value), target);
          assert.equal(echoOf([], `echo ${value}`, target), "note: echo ***.", target);
        },
      ),
    );
    assert.equal(
      maskedTarget("/v1/store/orders/5;jsessionid=ABCDEF123;v=2?token=T0KENVALUE"),
      "/v1/store/orders/5;jsessionid=***;v=2?token=***",
    );
  });

  it("masks and hides a query credential by one name rule, before a fragment, with `=` encoded", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PARAMETER_NAMES),
        secret,
        fc.constantFrom("=", "%3D", "%3d"),
        fc.constantFrom("", "#f", "#"),
        (name, value, equals, fragment) => {
          const target = `/v1/store/orders?a=1&${name}${equals}${value}${fragment}`;
          assert.ok(!maskedTarget(target).includes(value), target);
          assert.equal(echoOf([], `echo ${value}`, target), "note: echo ***.", target);
        },
      ),
    );
  });

  it("reads credential headers by the same rule, and leaves plain names' values shown", () => {
    fc.assert(
      fc.property(fc.constantFrom(...HEADER_NAMES), secret, (name, value) => {
        assert.ok(isSecretName(name.toLowerCase()), name);
        assert.equal(echoOf([name, value], `echo ${value}`), "note: echo ***.", name);
      }),
    );
    for (const name of [
      "x-mock-session",
      "user-agent",
      "keep-alive",
      "sec-websocket-key",
      "idempotency-key",
      "x-error-code",
      "monkey",
      "x-turkey",
    ])
      assert.ok(!isSecretName(name), name);
    assert.equal(
      maskedTarget("/v1?user[name]=bob&theme=dark&error_code=E1"),
      "/v1?user[name]=bob&theme=dark&error_code=E1",
    );
  });
});

describe("credentials with a broken percent-encoding, read as lenient servers read them", () => {
  const piece = brokenPiece();
  const broken = fc
    .record({
      before: piecesAround(piece),
      first: piece,
      core: fc.stringMatching(/^[A-Za-z0-9]{8,16}$/),
      after: piecesAround(piece),
    })
    // Dots keep the core whole: a lone `%` before it would make an escape of its first letters.
    .map(({ before, first, core, after }) => ({
      value: `${before.join("")}${first}.${core}.${after.join("")}`,
      core,
    }));

  /** The value's bytes with each `%XX` made the byte it names (and `+` a space), as WHATWG's decoder does. */
  function percentBytes(value: string): Buffer {
    const text = value.replaceAll("+", " ");
    const bytes: number[] = [];
    for (let at = 0; at < text.length; at++) {
      if (/^%[0-9a-f]{2}$/i.test(text.slice(at, at + 3))) {
        bytes.push(Number.parseInt(text.slice(at + 1, at + 3), 16));
        at += 2;
      } else bytes.push(...Buffer.from(text[at] as string));
    }
    return Buffer.from(bytes);
  }

  /** What servers read of the value: URLSearchParams, Node's querystring, its bytes as Latin-1 and as UTF-8. */
  function readings(name: string, value: string): string[] {
    return [
      new URLSearchParams(`${name}=${value}`).get(name) ?? "",
      String(querystring.parse(`${name}=${value}`)[name]),
      querystring.unescape(value),
      percentBytes(value).toString("latin1"),
      new TextDecoder().decode(percentBytes(value)),
      value,
    ];
  }

  it("hides every reading of a query or form credential echoed, in JSON too", () => {
    fc.assert(
      fc.property(broken, fc.constantFrom("token", "access_token", "api_key"), ({ value, core }, name) => {
        const fromQuery = requestSecrets([], `/v1/store/orders?a=1&${name}=${value}`);
        const fromForm = formSecrets(`a=1&${name}=${value}`);
        for (const secrets of [fromQuery, fromForm])
          for (const reading of readings(name, value))
            for (const echoed of [
              reading,
              JSON.stringify(reading),
              Buffer.from(reading).toString("latin1"),
            ]) {
              const hidden = hideSecrets(`note: ${echoed}.`, secrets);
              assert.ok(!hidden.includes(core), `${JSON.stringify(echoed)} of ${value}: ${hidden}`);
              assert.match(hidden, /\*\*\*/);
            }
      }),
    );
  });

  it("reads the cases servers differ on", () => {
    assert.deepEqual(percentReadings("s%E9cret%zz"), ["s\ufffdcret%zz", "s%E9cret%zz", "s\u00e9cret%zz"]);
    assert.deepEqual(percentReadings("caf%C3"), ["caf\ufffd", "caf%C3", "caf\u00c3"]);
    assert.deepEqual(percentReadings("%C0%AFkey"), ["\ufffd\ufffdkey", "%C0%AFkey", "\u00c0\u00afkey"]);
    assert.deepEqual(percentReadings("caf%C3%A9%E9"), [
      "caf\u00e9\ufffd",
      "caf\u00e9%E9",
      "caf%C3%A9%E9",
      "caf\u00c3\u00a9\u00e9",
    ]);
    assert.deepEqual(percentReadings("abc%"), ["abc%"]);
    assert.deepEqual(percentReadings("a%2Fb+c"), ["a/b c", "a%2Fb+c"]);
    assert.deepEqual(percentReadings("plain-token"), ["plain-token"]);
  });
});

describe("bodySecrets, of JSON", () => {
  const credentialName = fc.constantFrom(
    "password",
    "client_secret",
    "refresh_token",
    "api_key",
    "auth[token]",
  );
  const plainName = fc.constantFrom("id", "scope", "grant_type", "note");

  it("reads every credential member's value at any depth, as JSON.parse does, and masks it alike", () => {
    const member = fc.tuple(
      fc.oneof(credentialName, plainName),
      fc.oneof(fc.string({ minLength: 4, maxLength: 20 }), fc.integer({ min: 1000, max: 2 ** 40 })),
    );
    const body = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        fc.array(member, { maxLength: 4 }),
        fc.array(fc.tuple(fc.oneof(plainName, fc.constant("data")), tie("node")), { maxLength: 3 }),
        fc.array(tie("node"), { maxLength: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(body, fc.boolean(), (tree, pretty) => {
        const value = toJson(tree);
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const secrets = bodySecrets(text);
        const masked = maskedBody(text);
        JSON.parse(text, (name, read: unknown) => {
          if (!isSecretName(name) || typeof read === "object") return read;
          assert.ok(
            secrets.includes(String(read)),
            `${JSON.stringify(read)} of ${name} not among ${secrets}`,
          );
          return read;
        });
        JSON.parse(masked, (name, read: unknown) => {
          if (isSecretName(name) && typeof read !== "object") assert.equal(read, "***", name);
          return read;
        });
      }),
      { numRuns: 300 },
    );
  });

  it("reads a value cut short at the body's end, and none of a body with no credential member", () => {
    assert.ok(bodySecrets('{"user":"ann","password":"s3cr\\u00e9t-cut').includes("s3cr\u00e9t-cut"));
    assert.deepEqual(bodySecrets('{"password":"hunter2 two","id":1}'), ["hunter2 two", "hunter2"]);
    assert.deepEqual(bodySecrets('{"note":"password","id":12345}'), []);
  });
});

describe("bodySecrets", () => {
  /** Names OAuth, OIDC and sign-in forms send credentials under. */
  const credentialName = fc.constantFrom(
    "password",
    "passcode",
    "client_assertion",
    "code_verifier",
    "device_code",
    "subject_token",
    "ns:password",
  );
  const value = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._~+/=-]{5,20}$/).map((core) => `S3-${core}`);
  const filler = fc.constantFrom("", "note", "username");

  /** Each shape a client sends a credential in, whatever Content-Type it says; `name` has no `:` but XML's. */
  const SHAPES: Readonly<Record<string, (name: string, value: string, other: string) => string>> = {
    multipart: (name, value, other) =>
      [
        "--b0undary-XyZ",
        `Content-Disposition: form-data; name="${other || "user"}"`,
        "",
        "alice",
        "--b0undary-XyZ",
        `Content-Disposition: form-data; name="${name}"`,
        "Content-Type: text/plain",
        "",
        value,
        "--b0undary-XyZ--",
        "",
      ].join("\r\n"),
    "JSON as text": (name, value, other) => JSON.stringify({ [other || "user"]: "ann", [name]: value }),
    "JSON array value": (name, value) => JSON.stringify({ [name]: ["first-item", [value]] }),
    NDJSON: (name, value, other) =>
      `${JSON.stringify({ [other || "id"]: 1 })}\n${JSON.stringify({ data: { [name]: value } })}\n`,
    "JSON in a multipart part": (name, value) =>
      `--b\r\nContent-Disposition: form-data; name="meta"\r\n\r\n${JSON.stringify({ [name]: value })}\r\n--b--`,
    "GraphQL inline": (name, value) =>
      `mutation { login(user: "ann", ${name.replace(":", "_")}: "${value}") { token } }`,
    "GraphQL inline in JSON": (name, value) =>
      JSON.stringify({ query: `mutation { login(${name.replace(":", "_")}: "${value}") { ok } }` }),
    "GraphQL variables": (name, value) =>
      JSON.stringify({ query: "mutation($p: String!) { login(p: $p) }", variables: { [name]: value } }),
    XML: (name, value, other) =>
      `<?xml version="1.0"?><login><${other || "user"}>ann</${other || "user"}><${name} a="1">${value}</${name}></login>`,
  };

  it("reads a credential in every shape a body carries it, and masks it there", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(SHAPES)),
        credentialName,
        value,
        filler,
        (shape, name, secret, other) => {
          const text = SHAPES[shape]?.(shape === "XML" ? name : name.replace(":", ""), secret, other) ?? "";
          assert.ok(bodySecrets(text).includes(secret), `${secret} not read in ${JSON.stringify(text)}`);
          const masked = maskedBody(text);
          assert.ok(!masked.includes(secret), `${secret} survives in ${JSON.stringify(masked)}`);
          assert.ok(masked.includes("***"), masked);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("reads nothing where no name says so, and leaves such a body as it is", () => {
    for (const text of [
      '{"note":"password","id":12345678}',
      '--b\r\nContent-Disposition: form-data; name="note"\r\n\r\npassword=hunter22\r\n--b--',
      'query { orders(status: "placed") { id } }',
      "<order><status>placed</status><note>my password</note></order>",
      "just some text: 12345678",
    ]) {
      assert.deepEqual(bodySecrets(text), [], text);
      assert.equal(maskedBody(text), text);
    }
  });
});

/** A generated tree as JSON: arrays of [name, value] pairs become objects, other arrays stay arrays. */
function toJson(tree: unknown): unknown {
  if (!Array.isArray(tree)) return tree;
  if (tree.every((item) => Array.isArray(item) && item.length === 2 && typeof item[0] === "string"))
    return Object.fromEntries(tree.map(([name, value]) => [name, toJson(value)]));
  return tree.map(toJson);
}
