// Run pi's own context builder (../shared/peers/pi/context.mjs, describeSession) on many session
// files in one node process (pi takes ~2 s to import): one JSON line per file, full texts.
// usage: PI_PKG_DIR=... node pi_context_many.mjs CONTEXT_MJS FILE...
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [contextMjs, ...files] = process.argv.slice(2);
const { describeSession } = await import(pathToFileURL(contextMjs).href);
for (const file of files) {
	const content = readFileSync(file, "utf8");
	const out = describeSession(file, content, { textChars: -1, wire: false, loaderCheck: true, contentIsFile: true });
	process.stdout.write(`${JSON.stringify(out)}\n`);
}
