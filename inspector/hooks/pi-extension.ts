/**
 * inspector's session check as a pi extension (pi 0.73.1; docs/hooks.md).
 *
 * After a compaction (`session_compact`: pi has appended the compaction entry to the session
 * file) and when a session with a history opens (`session_start`), run
 * `inspector hook pi --event E --session FILE` on the session file, then
 *   - tell the user, with `ctx.ui.notify`, when the session has holes, orphaned tool results,
 *     unanswered tool calls or a request over the model's window;
 *   - tell the model what it lost: a message (customType "inspector") injected at the next
 *     `before_agent_start`, i.e. alongside the next prompt.
 *
 * Install: `pi -e "$(inspector hook pi --extension-path)"`, or add that path to "extensions" in
 * ~/.pi/agent/settings.json. INSPECTOR_BIN names the inspector command (default: `inspector` on PATH).
 */
import { existsSync } from "node:fs";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

const INSPECTOR = process.env.INSPECTOR_BIN || "inspector";
const CHECK_TIMEOUT_MS = 60_000;
const CUSTOM_TYPE = "inspector";

/** What `inspector hook pi` prints (schema inspector.hook.pi/1). */
interface HookAnswer {
	schema: string;
	checked: boolean;
	findings: { code: string; severity: string; message: string }[];
	notify: string | null;
	notify_type: "warning" | "error" | null;
	context: string | null;
}

export default function inspectorHook(pi: ExtensionAPI) {
	let untold: string | undefined; // what the model is to be told at its next turn

	async function check(ctx: ExtensionContext, event: string, reason?: string): Promise<void> {
		const session = ctx.sessionManager.getSessionFile();
		// No file: an in-memory session (--no-session), or a new one pi has not written yet.
		if (!session || !existsSync(session)) return;
		const args = ["hook", "pi", "--event", event, "--session", session];
		if (reason) args.push("--reason", reason);
		if (ctx.model?.contextWindow) args.push("--window", String(ctx.model.contextWindow));
		const run = await pi.exec(INSPECTOR, args, { timeout: CHECK_TIMEOUT_MS });
		if (run.killed || run.code !== 0) {
			const why = run.killed ? `no answer in ${CHECK_TIMEOUT_MS / 1000} s` : run.stderr.trim() || `exit ${run.code}`;
			ctx.ui.notify(`inspector: the session check did not run (${INSPECTOR}): ${why}`, "error");
			return;
		}
		let answer: HookAnswer;
		try {
			answer = JSON.parse(run.stdout) as HookAnswer;
		} catch {
			ctx.ui.notify(`inspector: ${INSPECTOR} hook pi printed no JSON answer: ${run.stdout.slice(0, 200)}`, "error");
			return;
		}
		if (answer.notify) ctx.ui.notify(answer.notify, answer.notify_type ?? "warning");
		untold = answer.context ?? undefined;
	}

	pi.on("session_compact", async (_event, ctx) => {
		await check(ctx, "session_compact");
	});

	pi.on("session_start", async (event, ctx) => {
		await check(ctx, "session_start", event.reason);
	});

	pi.on("before_agent_start", async () => {
		if (!untold) return;
		const content = untold;
		untold = undefined;
		return { message: { customType: CUSTOM_TYPE, content, display: true } };
	});
}
