// Generated from openapi.yaml and control.openapi.yaml by scripts/generate-documents.ts. Do not edit.
export const openapiDocument: unknown = {
  "openapi": "3.0.3",
  "info": {
    "title": "Petstore Store Orders Service",
    "version": "1.0.0",
    "description": "The store area of the Petstore service: listing all orders placed in the store and\ncancelling one order by its identifier. Every call is authenticated with an API key\npassed as a bearer token. Successful and error payloads are JSON.\n\nAn order has an internal status (`pending`, `shipped`, ...). Only a pending order can be\ncancelled; the Order record never exposes the status.\n\nFiltering and pagination of the order list are planned for v2; v1 has neither.\n"
  },
  "servers": [
    {
      "url": "{base_url}",
      "description": "Production. The spec gives only a placeholder; the address ends with the path segment /v1.",
      "variables": {
        "base_url": {
          "default": "https://petstore.example.com/v1",
          "description": "Production base address (ends with /v1)."
        }
      }
    },
    {
      "url": "{staging_base_url}",
      "description": "Staging. The spec gives only a placeholder; the address ends with the path segment /v1.",
      "variables": {
        "staging_base_url": {
          "default": "https://staging.petstore.example.com/v1",
          "description": "Staging base address (ends with /v1)."
        }
      }
    },
    {
      "url": "http://127.0.0.1:4010/v1",
      "description": "The local stateful mock server (npm start)."
    }
  ],
  "security": [
    {
      "bearerAuth": []
    }
  ],
  "tags": [
    {
      "name": "store",
      "description": "Orders placed in the store."
    }
  ],
  "paths": {
    "/store/orders": {
      "get": {
        "operationId": "listOrders",
        "summary": "List orders",
        "description": "Returns every order placed in the store in one response. Filtering and pagination\nare not supported. The live try-it panel of the reference is disabled for this\nendpoint; this has no effect on behaviour.\n",
        "tags": [
          "store"
        ],
        "responses": {
          "200": {
            "description": "Array of orders",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Order"
                  }
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          }
        }
      }
    },
    "/store/orders/{orderId}": {
      "delete": {
        "operationId": "cancelOrder",
        "summary": "Cancel an order",
        "description": "Cancels a pending order. Only orders with status `pending` can be cancelled; when the\norder is not pending the call fails with 409 and the order is unchanged. Shipped orders\ncannot be reversed.\n",
        "tags": [
          "store"
        ],
        "parameters": [
          {
            "name": "orderId",
            "in": "path",
            "required": true,
            "description": "Identifier of the order to cancel",
            "schema": {
              "type": "integer",
              "format": "int64"
            }
          }
        ],
        "responses": {
          "204": {
            "description": "Order cancelled successfully"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "description": "The order (resource) could not be found",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "409": {
            "description": "Order cannot be cancelled because it has already shipped. The spec does not show the\nbody of this response: it may be absent; when present it is an Error record (spec §7).\nOpenAPI 3.0 has no optional response body, and tools read declared `content` as\nrequired, so the body is described under `x-optional-content` instead: a response\nwith no `content` allows any body or none, and tools that know the extension check\na body that is present.\n",
            "x-optional-content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    }
  },
  "components": {
    "securitySchemes": {
      "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "description": "The API key, passed as the bearer token: `Authorization: Bearer <API_KEY>`."
      }
    },
    "responses": {
      "Unauthorized": {
        "description": "Missing or invalid API key",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      }
    },
    "schemas": {
      "Order": {
        "type": "object",
        "description": "An order for animals placed in the store. No field is required.",
        "properties": {
          "id": {
            "type": "integer",
            "format": "int64",
            "description": "Unique order identifier."
          },
          "petId": {
            "type": "integer",
            "format": "int64",
            "description": "Identifier of the animal in this order."
          },
          "quantity": {
            "type": "integer",
            "description": "Number of units ordered."
          },
          "shipDate": {
            "type": "string",
            "format": "date-time",
            "description": "Expected or actual ship date (ISO 8601)."
          },
          "complete": {
            "type": "boolean",
            "description": "Whether the order has been fulfilled."
          }
        }
      },
      "Error": {
        "type": "object",
        "required": [
          "code",
          "message",
          "status"
        ],
        "properties": {
          "code": {
            "type": "string",
            "description": "Machine-readable error code."
          },
          "message": {
            "type": "string",
            "description": "Human-readable description of the error."
          },
          "status": {
            "type": "integer",
            "description": "The HTTP status code."
          }
        }
      }
    }
  }
};

export const controlDocument: unknown = {
  "openapi": "3.0.3",
  "info": {
    "title": "Petstore Store Orders mock - control API",
    "version": "1.0.0",
    "description": "The mock server's own API for steering it: see every order with its internal status, arrange\norders, reset the world, read the request journal, force responses and faults, and list\nsessions. It is not part of the Petstore Store Orders API (that is `openapi.yaml`); a real\ndeployment has none of it.\n\nEvery request works on one world: the shared default world, or with the header\n`X-Mock-Session: NAME` a session's own world, created from the fixtures on first use.\n\nOn loopback the control API needs no credentials. When the mock is bound to another address it\nis off unless started with `--control-token`, and then every request needs\n`Authorization: Bearer TOKEN`. API keys of `/v1` never open it.\n\nNotes on the mock's own answers, outside any operation here and outside `openapi.yaml`:\n- With `--store redis://…` the worlds live in Redis. While Redis cannot be reached, every API\n  and control request is answered `503` with `Retry-After: 1` and an Error record whose `code`\n  is `store_unavailable`; service resumes by itself when Redis is back.\n- `GET /__health` (outside `/__control`, no credentials, no data) answers `200\n  {\"status\":\"ok\"}` while the mock and its state store can serve, else that `503`: for load\n  balancers' health checks.\n"
  },
  "servers": [
    {
      "url": "http://127.0.0.1:4010/__control",
      "description": "The local mock (npm start)."
    }
  ],
  "security": [
    {},
    {
      "controlToken": []
    }
  ],
  "tags": [
    {
      "name": "orders",
      "description": "The world's orders with their status."
    },
    {
      "name": "world",
      "description": "Reset, request journal, behaviour rules and sessions."
    }
  ],
  "paths": {
    "/": {
      "get": {
        "operationId": "getDashboard",
        "summary": "The dashboard page",
        "description": "A page for people: every order with its status, sessions, behaviour rules and the journal,\nusing only this API. It and its files (`/dashboard.js`, `/dashboard.css`, `/favicon.svg`) hold no\ndata, so they are served without the token; the page asks for it when the API needs it.\n",
        "tags": [
          "world"
        ],
        "security": [],
        "responses": {
          "200": {
            "description": "The page, with a Content-Security-Policy that allows only its own origin.",
            "content": {
              "text/html": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          }
        }
      }
    },
    "/orders": {
      "get": {
        "operationId": "listControlOrders",
        "summary": "A page of the orders with their statuses",
        "description": "The world's orders in list order, as the Order fields plus `status`, a page at a time: at most\n`limit` (default and most 1,000) after the order `after`, of one `status` when given, or the one\norder with `id`. Paging is keyed by id: an order removed between two pages (the cursor's own\nincluded) makes the next page skip nothing. A page looks at a bounded part of the list (100,000\nplaces in memory, 10,000 in Redis), so one that a filter leaves short may be followed by more:\nread on while `X-Next-Cursor` is there. A page costs what its own orders do, so a world of\nmillions answers as fast as a small one.\n",
        "tags": [
          "orders"
        ],
        "parameters": [
          {
            "$ref": "#/components/parameters/Session"
          },
          {
            "name": "after",
            "in": "query",
            "required": false,
            "description": "The id (int64) of the order the page follows, the `X-Next-Cursor` of the page before; the list's start when absent. An id the world's list never held, or one removed long enough ago that its place was let go of (a memory world keeps the places of removed orders only while they are few beside its orders), is answered 400: start again without it. (`cursor`, the place-based parameter of earlier versions, is answered 400 and names this one.)",
            "schema": {
              "type": "integer",
              "format": "int64"
            }
          },
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "Orders on the page at most.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 1000,
              "default": 1000
            }
          },
          {
            "name": "status",
            "in": "query",
            "required": false,
            "description": "Only orders of this status.",
            "schema": {
              "$ref": "#/components/schemas/OrderStatus"
            }
          },
          {
            "name": "id",
            "in": "query",
            "required": false,
            "description": "Only the order with this id (int64); the others are then ignored.",
            "schema": {
              "type": "integer",
              "format": "int64"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The page's orders, ids exact (int64, digit for digit).",
            "headers": {
              "X-Total-Count": {
                "description": "Orders in the world.",
                "schema": {
                  "type": "integer",
                  "minimum": 0
                }
              },
              "X-Next-Cursor": {
                "description": "The `after` of the next page (an order id, exact digits); absent on the last one.",
                "schema": {
                  "type": "string",
                  "pattern": "^-?[0-9]{1,19}$"
                }
              },
              "Link": {
                "description": "The next page, as `<URL>; rel=\"next\"`; absent on the last one.",
                "schema": {
                  "type": "string"
                }
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/ControlOrder"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          }
        }
      },
      "post": {
        "operationId": "batchControlOrders",
        "summary": "Create and remove many orders in one request",
        "description": "Each order of `create` is created (appended to the list) when no order has its id; an order\nthat has it is left as it is, and its id is not in `created`. Then each id of `remove` is removed\nwhen there is such an order. At most 100 of each: a run that makes and drops orders by the\nhundred sends one request where it would send one per order.\n",
        "tags": [
          "orders"
        ],
        "parameters": [
          {
            "$ref": "#/components/parameters/Session"
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/ControlOrderBatch"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "What was done.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/ControlOrderBatchResult"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "409": {
            "$ref": "#/components/responses/WorldFull"
          }
        }
      }
    },
    "/orders/{id}": {
      "parameters": [
        {
          "name": "id",
          "in": "path",
          "required": true,
          "description": "The order's id (int64).",
          "schema": {
            "type": "integer",
            "format": "int64"
          }
        },
        {
          "$ref": "#/components/parameters/Session"
        }
      ],
      "put": {
        "operationId": "putControlOrder",
        "summary": "Set an order's status, or create or replace an order",
        "description": "A body with only `status` sets the status of an existing order (404 when there is none).\nA body with any Order field creates the order (appended to the list) or replaces it whole\n(keeping its place); then `status` is required and `id`, if given, must equal the path's.\n",
        "tags": [
          "orders"
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/ControlOrderInput"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The order as it now is (status set or order replaced).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/ControlOrder"
                }
              }
            }
          },
          "201": {
            "description": "The order was created.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/ControlOrder"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/WorldFull"
          }
        }
      },
      "delete": {
        "operationId": "removeControlOrder",
        "summary": "Remove an order from the world",
        "tags": [
          "orders"
        ],
        "responses": {
          "204": {
            "description": "Removed."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          }
        }
      }
    },
    "/reset": {
      "post": {
        "operationId": "resetWorld",
        "summary": "Put the world back on the fixtures",
        "description": "The world's orders go back to the fixtures as currently loaded and its behaviour rules are\ncleared. The request journal is kept (clear it with `DELETE /requests`).\n",
        "tags": [
          "world"
        ],
        "parameters": [
          {
            "$ref": "#/components/parameters/Session"
          }
        ],
        "responses": {
          "204": {
            "description": "Reset."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          }
        }
      }
    },
    "/requests": {
      "get": {
        "operationId": "listRequests",
        "summary": "The request journal, oldest first",
        "description": "The world's latest requests to the API whose key was accepted (not to the control API, not CORS\npreflights), bounded per world (`--journal-size`, default 1,000). Neither keys nor headers are\nkept, and a path is kept to its first 512 characters (then `...`). A request whose API key or\ncontrol token is not accepted reaches no world, whatever its path: it is never journaled, creates\nor touches no session, and is only counted, in the `X-Mock-Refused-Requests` header.\n",
        "tags": [
          "world"
        ],
        "parameters": [
          {
            "$ref": "#/components/parameters/Session"
          }
        ],
        "responses": {
          "200": {
            "description": "The journal.",
            "headers": {
              "X-Mock-Refused-Requests": {
                "description": "Requests this process has answered since it started without an accepted API key or control token (journaled nowhere).",
                "schema": {
                  "type": "integer",
                  "minimum": 0
                }
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/JournalEntry"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          }
        }
      },
      "delete": {
        "operationId": "clearRequests",
        "summary": "Clear the request journal",
        "tags": [
          "world"
        ],
        "parameters": [
          {
            "$ref": "#/components/parameters/Session"
          }
        ],
        "responses": {
          "204": {
            "description": "Cleared."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          }
        }
      }
    },
    "/behaviour": {
      "get": {
        "operationId": "getBehaviour",
        "summary": "The world's delay and forced-response rules",
        "tags": [
          "world"
        ],
        "parameters": [
          {
            "$ref": "#/components/parameters/Session"
          }
        ],
        "responses": {
          "200": {
            "description": "The rules, with `times` counting what is left.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Behaviour"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          }
        }
      },
      "put": {
        "operationId": "putBehaviour",
        "summary": "Replace the world's delay and forced-response rules",
        "description": "A rule applies to its operation, after authentication, until `times` is used up (no\n`times`: until replaced or reset). The first rule of the operation that is left applies.\nA `Prefer` header on a request wins over the rules for that request.\n",
        "tags": [
          "world"
        ],
        "parameters": [
          {
            "$ref": "#/components/parameters/Session"
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/Behaviour"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The rules now in force.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Behaviour"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          }
        }
      }
    },
    "/sessions": {
      "get": {
        "operationId": "listSessions",
        "summary": "A page of the live sessions",
        "description": "The live sessions in name order, a page at a time: at most `limit` (default and most 1,000) after\nthe name `after`. Paging is keyed by name, so sessions that come and go between two pages make the\nnext page skip no other. A page costs what its own sessions do, however many sessions live or\nhowever much they changed. The default world is not a session.\n",
        "tags": [
          "world"
        ],
        "parameters": [
          {
            "name": "after",
            "in": "query",
            "required": false,
            "description": "The name the page follows, the `X-Next-Cursor` of the page before; the first name when absent. It need not be a live session's.",
            "schema": {
              "$ref": "#/components/schemas/SessionName"
            }
          },
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "Sessions on the page at most.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 1000,
              "default": 1000
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The page's sessions.",
            "headers": {
              "X-Total-Count": {
                "description": "Live sessions in all.",
                "schema": {
                  "type": "integer",
                  "minimum": 0
                }
              },
              "X-Next-Cursor": {
                "description": "The `after` of the next page (a session name); absent on the last one.",
                "schema": {
                  "$ref": "#/components/schemas/SessionName"
                }
              },
              "Link": {
                "description": "The next page, as `<URL>; rel=\"next\"`; absent on the last one.",
                "schema": {
                  "type": "string"
                }
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/SessionSummary"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          }
        }
      }
    }
  },
  "components": {
    "securitySchemes": {
      "controlToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "The token given with `--control-token`; needed only when the mock is bound beyond loopback."
      }
    },
    "parameters": {
      "Session": {
        "name": "X-Mock-Session",
        "in": "header",
        "required": false,
        "description": "The session whose world the request works on; without it, the default world.",
        "schema": {
          "$ref": "#/components/schemas/SessionName"
        }
      }
    },
    "responses": {
      "BadRequest": {
        "description": "The request is not valid: `invalid_control_request` (the message names the field) or\n`invalid_session`.\n",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "openapi.yaml#/components/schemas/Error"
            }
          }
        }
      },
      "Unauthorized": {
        "description": "A control token is required and was not given, or is wrong.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "openapi.yaml#/components/schemas/Error"
            }
          }
        }
      },
      "Forbidden": {
        "description": "Not from this machine's own pages or tools: `foreign_host` for a Host name the mock does not answer\nto (DNS rebinding), `foreign_origin` for a browser page of another origin than the mock's own and\nthose `--cors-origin` names.\n",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "openapi.yaml#/components/schemas/Error"
            }
          }
        }
      },
      "NotFound": {
        "description": "No order with this id in the world.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "openapi.yaml#/components/schemas/Error"
            }
          }
        }
      },
      "WorldFull": {
        "description": "`world_full`: the world's orders hold as much as the mock's `--max-memory` lets one world hold, and\nthis would make them hold more. Nothing of the refused order is done (orders of a batch before it\nstay created; no id is removed); remove orders or reset the world to add more.\n",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "openapi.yaml#/components/schemas/Error"
            }
          }
        }
      }
    },
    "schemas": {
      "SessionName": {
        "type": "string",
        "pattern": "^[A-Za-z0-9._-]{1,64}$"
      },
      "OrderStatus": {
        "type": "string",
        "description": "The internal status; `cancelled` is the state a cancel leads to.",
        "enum": [
          "pending",
          "shipped",
          "cancelled"
        ]
      },
      "ControlOrder": {
        "type": "object",
        "description": "An Order record (openapi.yaml) with the status it never shows.",
        "required": [
          "id",
          "status"
        ],
        "properties": {
          "id": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/id"
          },
          "petId": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/petId"
          },
          "quantity": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/quantity"
          },
          "shipDate": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/shipDate"
          },
          "complete": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/complete"
          },
          "status": {
            "$ref": "#/components/schemas/OrderStatus"
          }
        }
      },
      "ControlOrderInput": {
        "type": "object",
        "description": "The body of `PUT /orders/{id}`; unknown fields are refused.",
        "additionalProperties": false,
        "properties": {
          "id": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/id"
          },
          "petId": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/petId"
          },
          "quantity": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/quantity"
          },
          "shipDate": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/shipDate"
          },
          "complete": {
            "$ref": "openapi.yaml#/components/schemas/Order/properties/complete"
          },
          "status": {
            "$ref": "#/components/schemas/OrderStatus"
          }
        }
      },
      "ControlOrderBatch": {
        "type": "object",
        "description": "The body of `POST /orders`; unknown fields are refused.",
        "additionalProperties": false,
        "properties": {
          "create": {
            "type": "array",
            "maxItems": 100,
            "description": "Orders to create, each with its `id` and `status`.",
            "items": {
              "allOf": [
                {
                  "$ref": "#/components/schemas/ControlOrderInput"
                },
                {
                  "$ref": "#/components/schemas/ControlOrder"
                }
              ]
            }
          },
          "remove": {
            "type": "array",
            "maxItems": 100,
            "description": "Ids of orders to remove.",
            "items": {
              "$ref": "openapi.yaml#/components/schemas/Order/properties/id"
            }
          }
        }
      },
      "ControlOrderBatchResult": {
        "type": "object",
        "required": [
          "created",
          "removed"
        ],
        "properties": {
          "created": {
            "type": "array",
            "description": "The ids of the orders created, in the order given (exact int64 digits).",
            "items": {
              "$ref": "openapi.yaml#/components/schemas/Order/properties/id"
            }
          },
          "removed": {
            "type": "array",
            "description": "The ids of the orders removed, in the order given.",
            "items": {
              "$ref": "openapi.yaml#/components/schemas/Order/properties/id"
            }
          }
        }
      },
      "Behaviour": {
        "type": "object",
        "additionalProperties": false,
        "properties": {
          "delayMs": {
            "type": "integer",
            "minimum": 0,
            "maximum": 60000,
            "description": "Every API answer of the world waits this long (0 when absent)."
          },
          "rules": {
            "type": "array",
            "maxItems": 100,
            "items": {
              "$ref": "#/components/schemas/BehaviourRule"
            }
          }
        }
      },
      "BehaviourRule": {
        "type": "object",
        "description": "Exactly one of `status` and `fault`. `status` is one the operation documents in\nopenapi.yaml, or 500, 502, 503 or 504. `truncate` needs a body, so it is for listOrders.\n",
        "additionalProperties": false,
        "required": [
          "operation"
        ],
        "properties": {
          "operation": {
            "type": "string",
            "enum": [
              "listOrders",
              "cancelOrder"
            ]
          },
          "status": {
            "type": "integer",
            "minimum": 100,
            "maximum": 599
          },
          "fault": {
            "type": "string",
            "description": "`close`: the connection closes with no answer; `truncate`: the headers promise the whole body, half is sent, then the connection closes.",
            "enum": [
              "close",
              "truncate"
            ]
          },
          "times": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000000
          }
        }
      },
      "JournalEntry": {
        "type": "object",
        "required": [
          "time",
          "method",
          "path",
          "status",
          "durationMs",
          "session",
          "keyValid"
        ],
        "properties": {
          "time": {
            "type": "string",
            "format": "date-time"
          },
          "method": {
            "type": "string"
          },
          "path": {
            "type": "string",
            "description": "The path as sent, without the query string, cut after 512 characters (then `...`)."
          },
          "status": {
            "type": "integer",
            "nullable": true,
            "description": "The status answered; null when a `close` fault answered nothing."
          },
          "durationMs": {
            "type": "number",
            "description": "Time to answer, delays included."
          },
          "session": {
            "type": "string",
            "nullable": true,
            "description": "The session, or null for the default world."
          },
          "keyValid": {
            "type": "boolean",
            "description": "Always true, since requests refused for their key are counted, not journaled (the `X-Mock-Refused-Requests` header); kept for readers of the earlier form."
          },
          "fault": {
            "type": "string",
            "enum": [
              "close",
              "truncate"
            ]
          }
        }
      },
      "SessionSummary": {
        "type": "object",
        "required": [
          "name",
          "orders",
          "changes",
          "lastUsed"
        ],
        "properties": {
          "name": {
            "$ref": "#/components/schemas/SessionName"
          },
          "orders": {
            "type": "integer",
            "description": "Orders in the session's world."
          },
          "changes": {
            "type": "integer",
            "description": "Orders that differ from the fixtures (changed, added or removed)."
          },
          "lastUsed": {
            "type": "string",
            "format": "date-time"
          }
        }
      }
    }
  }
};

/** fixtures/orders.json as text, so that ids above 2^53 survive until the fixture parser reads them. */
export const bundledFixtures = "{\n  \"apiKeys\": [\"dev-key-123\"],\n  \"orders\": [\n    {\n      \"id\": 1,\n      \"petId\": 101,\n      \"quantity\": 1,\n      \"shipDate\": \"2026-11-02T10:00:00Z\",\n      \"complete\": true,\n      \"status\": \"shipped\"\n    },\n    {\n      \"id\": 2,\n      \"petId\": 102,\n      \"quantity\": 2,\n      \"shipDate\": \"2026-11-05T09:30:00Z\",\n      \"complete\": false,\n      \"status\": \"pending\"\n    },\n    {\n      \"id\": 3,\n      \"petId\": 215,\n      \"quantity\": 1,\n      \"shipDate\": \"2026-11-06T14:15:00+01:00\",\n      \"complete\": false,\n      \"status\": \"pending\"\n    },\n    {\n      \"id\": 4,\n      \"petId\": 330,\n      \"quantity\": 3,\n      \"shipDate\": \"2026-10-28T08:00:00Z\",\n      \"complete\": true,\n      \"status\": \"shipped\"\n    },\n    {\n      \"id\": 5,\n      \"petId\": 331,\n      \"quantity\": 1,\n      \"shipDate\": \"2026-11-10T16:45:00Z\",\n      \"complete\": false,\n      \"status\": \"pending\"\n    },\n    {\n      \"id\": 6,\n      \"petId\": 412,\n      \"quantity\": 5,\n      \"shipDate\": \"2026-10-30T11:20:00Z\",\n      \"complete\": true,\n      \"status\": \"shipped\"\n    },\n    {\n      \"id\": 7,\n      \"petId\": 413,\n      \"quantity\": 2,\n      \"shipDate\": \"2026-11-12T07:00:00-05:00\",\n      \"complete\": false,\n      \"status\": \"pending\"\n    },\n    { \"id\": 8, \"petId\": 520, \"quantity\": 1, \"complete\": false, \"status\": \"pending\" },\n    {\n      \"id\": 9,\n      \"petId\": 521,\n      \"quantity\": 4,\n      \"shipDate\": \"2026-10-25T13:10:00Z\",\n      \"complete\": true,\n      \"status\": \"shipped\"\n    },\n    {\n      \"id\": 10,\n      \"petId\": 600,\n      \"quantity\": 1,\n      \"shipDate\": \"2026-11-15T12:00:00.250Z\",\n      \"complete\": false,\n      \"status\": \"pending\"\n    },\n    {\n      \"id\": 9007199254740993,\n      \"petId\": 9007199254740995,\n      \"quantity\": 1,\n      \"shipDate\": \"2026-11-20T18:30:00Z\",\n      \"complete\": false,\n      \"status\": \"pending\"\n    },\n    {\n      \"id\": 9223372036854775807,\n      \"petId\": 700,\n      \"quantity\": 2,\n      \"shipDate\": \"2026-10-20T09:00:00Z\",\n      \"complete\": true,\n      \"status\": \"shipped\"\n    }\n  ]\n}\n";
