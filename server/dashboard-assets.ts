import { readFileSync } from "node:fs";
import { packageFile } from "../common/package-root.ts";
import type { Asset } from "./core/control.ts";

const FILES: Array<[path: string, file: string, contentType: string]> = [
  ["/", "index.html", "text/html; charset=utf-8"],
  ["/dashboard.js", "dashboard.js", "text/javascript; charset=utf-8"],
  ["/dashboard.css", "dashboard.css", "text/css; charset=utf-8"],
  ["/favicon.svg", "favicon.svg", "image/svg+xml"],
];

/** The dashboard's files, read once at start-up, by their path under /__control. */
export function loadDashboardAssets(): Map<string, Asset> {
  return new Map(
    FILES.map(([path, file, contentType]) => [
      path,
      { contentType, body: readFileSync(packageFile(`server/dashboard/${file}`)) },
    ]),
  );
}
