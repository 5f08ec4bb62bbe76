// An MCP client written with the official TypeScript SDK, run by
// TestHostToolsTypeScript: it moves files in and out, uses a shell, holds
// a key and moves and closes a window over streamable HTTP, as a new user
// would.
//
//   node host_client.cjs <http://host:port/> <token> <directory>
//
// It prints one line per step and "ok" at the end; it exits non-zero at
// the first failure.
"use strict";

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [url, token, dir] = process.argv.slice(2);

function check(cond, what) {
  if (!cond) {
    throw new Error("check failed: " + what);
  }
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  check(!res.isError, `${name} succeeded: ${JSON.stringify(res.content)}`);
  return res;
}

async function main() {
  const client = new Client({ name: "ts-host-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: "Bearer " + token } },
  }));
  const { tools } = await client.listTools();
  const by = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const name of ["read_file", "list_files", "screen_size"]) {
    check(by[name] && by[name].annotations.readOnlyHint === true, `${name} is read-only`);
  }
  check(!by.open, "open is not offered on the headless desktop");
  for (const name of ["write_file", "shell", "move", "delete"]) {
    check(by[name] && by[name].annotations.destructiveHint === true, `${name} is destructive`);
  }
  console.log("tools listed");

  // A text file and a binary one, in and out.
  await call(client, "write_file", { path: dir + "/notes.txt", text: "héllo\n" });
  const bin = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 31) & 255));
  await call(client, "write_file", { path: dir + "/blob.bin", base64: bin.toString("base64") });
  const text = await call(client, "read_file", { path: dir + "/notes.txt" });
  check(text.content[0].text === "héllo\n" && text.structuredContent.base64 === undefined, "the text reads back once: " + JSON.stringify(text));
  const blob = await call(client, "read_file", { path: dir + "/blob.bin" });
  check(Buffer.from(blob.structuredContent.base64, "base64").equals(bin), "the binary file reads back");
  check(blob.structuredContent.size === 4096 && blob.structuredContent.eof === true, "a binary file's size and end");
  const list = await call(client, "list_files", { path: dir });
  const names = list.structuredContent.entries.map((e) => e.name + ":" + e.size).sort();
  check(JSON.stringify(names) === JSON.stringify(["blob.bin:4096", "notes.txt:7"]), "the listing: " + names);
  const missing = await client.callTool({ name: "read_file", arguments: { path: dir + "/nope" } });
  check(missing.isError && missing.content[0].text.includes("does not exist"), "a missing file: " + JSON.stringify(missing.content));
  console.log("files moved in and out");

  // A shell whose state persists between calls; a command runs to its
  // end and answers its exit code; its output is bounded, said once (the
  // text), and what was cut is noted.
  let out = await call(client, "shell", { input: "cd " + dir + " && N=$((6*7))", wait_ms: 120000 });
  check(out.structuredContent.exit_code === 0, "cd ran: " + JSON.stringify(out));
  out = await call(client, "shell", { input: "echo \"n=$N in $(pwd)\"; cat notes.txt", wait_ms: 120000 });
  const seen = out.content[0].text;
  check(seen.includes("n=42 in " + dir) && seen.includes("héllo"), "the shell kept its state: " + JSON.stringify(seen));
  check(!("output" in out.structuredContent), "the output is not repeated: " + JSON.stringify(out.structuredContent));
  out = await call(client, "shell", { input: "sleep 5; echo done", wait_ms: 120000 });
  check(out.content[0].text === "done\n[exit code 0]" && out.structuredContent.exit_code === 0, "sleep 5; echo done: " + JSON.stringify(out));
  out = await call(client, "shell", { input: "timeout 10 yes; echo over", wait_ms: 120000 });
  check(out.structuredContent.cut > 0 && out.content[0].text.length <= 16384 + 100 && out.content[0].text.endsWith("over\n[" + out.structuredContent.cut + " bytes of earlier output cut; exit code 0]"),
    "yes for 10 s is cut: " + JSON.stringify(out.structuredContent) + " " + out.content[0].text.slice(-100));
  out = await call(client, "shell", { input: "sleep 1000", wait_ms: 100 });
  check(out.structuredContent.running === true, "sleep runs: " + JSON.stringify(out.structuredContent));
  // A kill that comes before the shell has handed the terminal to sleep
  // finds nothing to kill: kill until sleep ends, as an agent would.
  do {
    out = await call(client, "shell", { kill: true, wait_ms: 5000 });
  } while (out.structuredContent.running);
  check(out.structuredContent.exit_code === 137, "sleep killed: " + JSON.stringify(out.structuredContent));
  const closed = await call(client, "shell", { close: true });
  check(closed.structuredContent.ended === true, "the shell closed");
  console.log("shell used");

  // A modifier held across calls, then released.
  for (const name of ["key_down", "key_up"]) {
    check(by[name] && by[name].annotations.idempotentHint === true, `${name} is idempotent`);
  }
  let held = await call(client, "key_down", { key: "shift" });
  check(JSON.stringify(held.structuredContent.held) === JSON.stringify(["Shift_L"]), "shift held: " + JSON.stringify(held.structuredContent));
  const typed = await client.callTool({ name: "type", arguments: { text: "x" } });
  check(typed.isError, "type is refused while shift is held");
  held = await call(client, "key_up", {});
  check(held.structuredContent.held.length === 0, "nothing held after key_up");
  console.log("keys held and released");

  // Windows: the headless desktop closes, moves and resizes them, and
  // offers no more.
  check(by.close_window && by.close_window.annotations.destructiveHint === true, "close_window is destructive");
  check(by.move_window && by.move_window.annotations.destructiveHint === false && by.move_window.annotations.idempotentHint === true,
    "move_window rearranges, idempotent");
  for (const name of ["minimize_window", "maximize_window"]) {
    check(!by[name], `${name} is not offered where it cannot work`);
  }
  const before = (await call(client, "list_windows", {})).structuredContent.windows;
  check(before.length === 2, "two windows: " + JSON.stringify(before));
  const moved = await call(client, "move_window", { id: before[0].id, x: 240, y: 120 });
  check(moved.structuredContent.bbox[0] === 240 && moved.structuredContent.bbox[1] === 120, "moved: " + JSON.stringify(moved.structuredContent));
  const sized = await call(client, "resize_window", { id: before[0].id, width: 480, height: 360 });
  check(JSON.stringify(sized.structuredContent.bbox) === JSON.stringify([240, 120, 480, 360]), "resized: " + JSON.stringify(sized.structuredContent));
  const off = await client.callTool({ name: "move_window", arguments: { id: before[0].id, x: 9000, y: 0 } });
  check(off.isError && off.content[0].text.startsWith("invalid_action:"), "a move off the screen: " + JSON.stringify(off.content));
  await call(client, "close_window", { id: before[0].id });
  const after = (await call(client, "list_windows", {})).structuredContent.windows;
  check(after.length === 1 && after[0].id === before[1].id, "one window left: " + JSON.stringify(after));
  console.log("windows moved, resized and closed");

  const size = await call(client, "screen_size", {});
  check(size.structuredContent.width === 1280 && size.structuredContent.height === 800, "screen size");
  await client.close();
  console.log("ok");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
