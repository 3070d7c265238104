// Parse each mermaid diagram given on stdin (a JSON list of strings) with mermaid's own parser,
// as GitHub renders them; print a JSON list: null where it parsed, else the parser's error.
// mermaid reads a DOM while it parses; jsdom provides one.
import { JSDOM } from "jsdom";
const { window } = new JSDOM("");
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false });
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const text of JSON.parse(input)) {
  try {
    const ok = await mermaid.parse(text);
    out.push(ok ? null : "not parsed");
  } catch (err) {
    out.push(String(err && err.message ? err.message : err));
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
