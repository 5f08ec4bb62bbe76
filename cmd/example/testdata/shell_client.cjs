// An MCP client written with the official TypeScript SDK, run by
// TestMCPShellTypeScript: the shell and the background commands, as an
// agent uses them, with no code of ours on its side.
//
//   node shell_client.cjs stdio <daemon binary> <token>
//   node shell_client.cjs http <http://host:port/mcp> <token>
//
// It prints one line per step and "ok" at the end, and exits non-zero at
// the first failure.
"use strict";

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [mode, target, token] = process.argv.slice(2);

function check(cond, what) {
  if (!cond) {
    throw new Error("check failed: " + what);
  }
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  check(!res.isError, `${name} succeeded: ${JSON.stringify(res.content)}`);
  return res;
}

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

// commandOutput reads a background command's output from offset until it
// holds want (or the command has ended), within a hang guard.
async function commandOutput(client, id, offset, want) {
  const deadline = Date.now() + 60000;
  for (;;) {
    const res = await call(client, "command_output", { id, offset });
    const sc = res.structuredContent;
    if (text(res).includes(want) || !sc.running) {
      return res;
    }
    check(Date.now() < deadline, `command output holding ${JSON.stringify(want)}: ${text(res)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function main() {
  const client = new Client({ name: "ts-shell-test", version: "1.0.0" });
  let transport;
  if (mode === "stdio") {
    transport = new StdioClientTransport({ command: target, args: ["-no-guard", "-mcp", "stdio", "-token", token], stderr: "inherit", env: process.env });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(target), {
      requestInit: { headers: { Authorization: "Bearer " + token } },
    });
  }
  await client.connect(transport);

  // A command run to its end: its output after it ran, and its exit code.
  await call(client, "shell", { input: "X=kept" });
  const t0 = Date.now();
  let res = await call(client, "shell", { input: "sleep 5; echo done", wait_ms: 10000 });
  const took = Date.now() - t0;
  check(text(res).includes("done") && res.structuredContent.exit_code === 0 && !res.structuredContent.running && took >= 5000,
    `sleep 5; echo done: ${JSON.stringify(text(res))} ${JSON.stringify(res.structuredContent)} in ${took} ms`);
  console.log(`sleep 5; echo done: "done", exit code 0, in ${took} ms`);
  res = await call(client, "shell", { input: "echo $X" });
  check(text(res).includes("kept"), "the variable: " + text(res));
  console.log("the shell holds its variables");

  // A background command: started, listed, given input, reattached, killed.
  res = await call(client, "command_start", { line: 'echo ready; while read -r l; do echo "got $l"; done' });
  const id = res.structuredContent.id;
  check(typeof id === "string" && id !== "", "a handle: " + JSON.stringify(res.structuredContent));
  await commandOutput(client, id, 0, "ready");
  res = await call(client, "command_list", {});
  const listed = res.structuredContent.commands.find((c) => c.id === id);
  check(listed && listed.running && listed.pid > 0, "listed: " + JSON.stringify(res.structuredContent));
  await call(client, "command_input", { id, input: "one\n" });
  res = await commandOutput(client, id, 0, "got one");
  check(text(res).includes("got one"), "its input reached it: " + text(res));
  // Reattach from the end of its first line.
  res = await call(client, "command_output", { id, offset: "ready\n".length });
  check(text(res).startsWith("got one") && res.structuredContent.from === 6, "reattached: " + JSON.stringify(text(res)));
  await call(client, "command_kill", { id });
  const deadline = Date.now() + 60000;
  for (;;) {
    res = await call(client, "command_output", { id });
    if (res.structuredContent.killed) {
      break;
    }
    check(Date.now() < deadline, "killed: " + JSON.stringify(res.structuredContent));
    await new Promise((r) => setTimeout(r, 20));
  }
  res = await call(client, "command_list", {});
  const after = res.structuredContent.commands.find((c) => c.id === id);
  check(!after || !after.running, "not running after the kill: " + JSON.stringify(after));
  console.log(`background command ${listed.pid}: listed, reattached, killed`);

  await client.close();
  console.log("ok");
}

main().catch((err) => {
  console.error(err.stack || String(err));
  process.exit(1);
});
