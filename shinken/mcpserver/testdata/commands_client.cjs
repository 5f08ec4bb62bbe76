// An MCP client written with the official TypeScript SDK, run by
// TestCommandsTypeScript: it starts background commands, lists them,
// sends one input and reattaches to its output, kills them by handle and
// by pid, and sees an unknown handle refused. Then it starts processes
// that leave their process group and session, from the shell and from a
// background command, and ends its session with DELETE: the Go test
// counts them afterwards.
//
//   node commands_client.cjs <http://host:port/> <token> <directory>
//
// It prints one line per step and "ok" at the end; it exits non-zero at
// the first failure.
"use strict";

const fs = require("fs");
const path = require("path");
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

// until calls the tool until pred holds on its result (a hang guard of
// two minutes, not a pace).
async function until(client, name, args, pred, what) {
  const deadline = Date.now() + 120000;
  for (;;) {
    const res = await call(client, name, args);
    if (pred(res)) {
      return res;
    }
    check(Date.now() < deadline, what + ": " + JSON.stringify(res));
    await new Promise((r) => setTimeout(r, 10));
  }
}

// pidsIn waits for the files of names in dir, each holding a pid.
async function pidsIn(names) {
  const deadline = Date.now() + 120000;
  const pids = [];
  for (const n of names) {
    for (;;) {
      try {
        pids.push(Number(fs.readFileSync(path.join(dir, n), "utf8").trim()));
        break;
      } catch (e) {
        check(Date.now() < deadline, "the job " + n + " started");
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  }
  return pids;
}

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: "Bearer " + token } },
  });
  const client = new Client({ name: "ts-commands-test", version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const by = Object.fromEntries(tools.map((t) => [t.name, t]));
  check(by.command_list.annotations.readOnlyHint === true && by.command_output.annotations.readOnlyHint === true, "list and output are read-only");
  check(by.command_start.annotations.destructiveHint === true, "command_start is destructive");

  let res = await call(client, "command_start", { line: 'echo ready; while read -r l; do echo "got $l"; done' });
  const id = res.structuredContent.id;
  check(typeof id === "string" && id.length > 0, "a handle: " + JSON.stringify(res.structuredContent));
  await until(client, "command_output", { id }, (r) => r.content[0].text.startsWith("ready\n"), "ready");
  res = await call(client, "command_list", {});
  const mine = res.structuredContent.commands.find((c) => c.id === id);
  check(mine && mine.running && mine.pid > 0 && mine.line.includes("while read"), "listed: " + JSON.stringify(res.structuredContent));
  console.log("started and listed");

  await call(client, "command_input", { id, input: "hi\n" });
  res = await until(client, "command_output", { id, offset: 6 }, (r) => r.content[0].text.startsWith("got hi\n"), "reattached after ready");
  check(res.structuredContent.from === 6 && res.structuredContent.end === 13 && res.structuredContent.running === true, "read from 6: " + JSON.stringify(res.structuredContent));
  console.log("input reached it, output reattached");

  await call(client, "command_kill", { id });
  res = await until(client, "command_output", { id }, (r) => !r.structuredContent.running, "killed");
  check(res.structuredContent.killed === true, "killed: " + JSON.stringify(res.structuredContent));
  const late = await client.callTool({ name: "command_input", arguments: { id, input: "late\n" } });
  check(late.isError && late.content[0].text.startsWith("invalid_action: "), "input to a killed command: " + JSON.stringify(late.content));
  await call(client, "command_kill", { id, remove: true });
  const unknown = await client.callTool({ name: "command_output", arguments: { id } });
  check(unknown.isError && /^invalid_action: no such background command/.test(unknown.content[0].text), "an unknown handle: " + JSON.stringify(unknown.content));
  console.log("killed by handle; an unknown handle is refused");

  res = await call(client, "command_start", { argv: ["sleep", "1000"] });
  const sleeper = res.structuredContent.id;
  res = await until(client, "command_list", {}, (r) => r.structuredContent.commands.some((c) => c.id === sleeper && c.pid > 0), "the sleeper's pid");
  const pid = res.structuredContent.commands.find((c) => c.id === sleeper).pid;
  await call(client, "command_kill", { pid });
  res = await until(client, "command_output", { id: sleeper }, (r) => !r.structuredContent.running, "killed by pid");
  check(res.structuredContent.killed === true, "killed by pid: " + JSON.stringify(res.structuredContent));
  console.log("killed by pid");

  // Processes that leave their group and session, from the shell and from
  // a background command, all alive before the session ends.
  const job = (f) => `(setsid sh -c 'read -r p _ </proc/self/stat; echo $p >"$0.t"; mv "$0.t" "$0"; exec sleep 1000' ${path.join(dir, f)} &)`;
  await call(client, "shell", { input: job("shell-setsid") + "; " + job("shell-job"), wait_ms: 120000 });
  await call(client, "command_start", { line: job("bg-setsid") + "; exec sleep 1000" });
  const pids = await pidsIn(["shell-setsid", "shell-job", "bg-setsid"]);
  for (const p of pids) {
    check(fs.existsSync("/proc/" + p), "process " + p + " runs");
  }
  await transport.terminateSession();
  await client.close();
  console.log("session deleted with " + pids.length + " processes");
  console.log("ok");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
