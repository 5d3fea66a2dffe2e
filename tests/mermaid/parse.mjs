// Parse each Mermaid file given with Mermaid's own parser; one line per file, exit 1 if any fails.
// Mermaid expects a browser DOM (it sanitises labels with DOMPurify): jsdom provides one.
import fs from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!DOCTYPE html><body></body>", { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
for (const name of ["Element", "HTMLElement", "SVGElement", "DOMParser", "Node"]) {
  if (!(name in globalThis)) globalThis[name] = dom.window[name];
}
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });

let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    const result = await mermaid.parse(fs.readFileSync(file, "utf8"));
    console.log(`ok ${file} ${result.diagramType}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${file} ${String(error.message ?? error).replaceAll("\n", " ")}`);
  }
}
process.exit(failed ? 1 : 0);
