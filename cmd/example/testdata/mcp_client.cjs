// An MCP client written with the official TypeScript SDK, run by
// TestMCPTypeScript: it drives the example daemon over stdio or over
// streamable HTTP with no code of ours on its side.
//
//   node mcp_client.cjs stdio <daemon binary> <token>
//   node mcp_client.cjs http <http://host:port/mcp> <token>
//
// It prints one line per step and exits non-zero at the first failure.
"use strict";

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ProgressNotificationSchema } = require("@modelcontextprotocol/sdk/types.js");
const Ajv2020 = require("ajv/dist/2020").default;

const [mode, target, token] = process.argv.slice(2);

function check(cond, what) {
  if (!cond) {
    throw new Error("check failed: " + what);
  }
}

// The tools every daemon serves, with the annotations they must state.
const readOnly = ["screenshot", "cursor_position", "zoom", "observe", "wait_for", "list_windows", "clipboard_get", "wait"];
const destructive = ["exec", "launch_app", "left_click", "type", "key"];
const expected = [
  "screenshot", "left_click", "right_click", "middle_click", "double_click", "triple_click",
  "mouse_move", "left_click_drag", "left_mouse_down", "left_mouse_up", "scroll", "type", "key",
  "hold_key", "wait", "cursor_position", "zoom",
  "observe", "click_element", "invoke_action", "set_value", "wait_for", "list_windows",
  "activate_window", "launch_app", "clipboard_get", "clipboard_set", "exec",
];

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  check(!res.isError, `${name} succeeded: ${JSON.stringify(res.content)}`);
  return res;
}

function text(res) {
  return res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function main() {
  if (mode === "http") {
    // No token: refused before any tool is reached.
    const refused = await fetch(target, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    check(refused.status === 401, `a request with no token is refused with 401, got ${refused.status}`);
    const wrong = new Client({ name: "ts-wrong-token", version: "0" });
    let failed = false;
    try {
      await wrong.connect(new StreamableHTTPClientTransport(new URL(target), {
        requestInit: { headers: { Authorization: "Bearer not-the-token" } },
      }));
    } catch (e) {
      failed = true;
    }
    check(failed, "a client with the wrong token cannot connect");
    console.log("refused: no token, wrong token");
  }

  const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
  let transport;
  if (mode === "stdio") {
    transport = new StdioClientTransport({ command: target, args: ["-mcp", "stdio", "-token", token], stderr: "inherit" });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(target), {
      requestInit: { headers: { Authorization: "Bearer " + token } },
    });
  }
  await client.connect(transport);
  console.log("connected:", client.getServerVersion().name);

  // The tools, their schemas and their annotations.
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const ajv = new Ajv2020({ strict: false });
  for (const name of expected) {
    const t = byName[name];
    check(t, `tool ${name} is listed`);
    check(t.inputSchema && t.inputSchema.type === "object", `${name} has an object input schema`);
    for (const [which, schema] of [["input", t.inputSchema], ["output", t.outputSchema]]) {
      if (schema) {
        try {
          ajv.compile(schema);
        } catch (e) {
          throw new Error(`${name}'s ${which} schema is not valid JSON Schema 2020-12: ${e.message}`);
        }
      }
    }
    check(t.description && t.description.length > 10, `${name} has a description`);
    const a = t.annotations;
    check(a && typeof a.readOnlyHint === "boolean" && typeof a.destructiveHint === "boolean" &&
      typeof a.idempotentHint === "boolean" && typeof a.openWorldHint === "boolean", `${name} states every hint`);
  }
  for (const name of readOnly) {
    check(byName[name].annotations.readOnlyHint === true, `${name} is read-only`);
  }
  for (const name of destructive) {
    check(byName[name].annotations.readOnlyHint === false && byName[name].annotations.destructiveHint === true, `${name} is destructive`);
  }
  check(byName.left_click.inputSchema.properties.coordinate, "left_click takes a coordinate");
  const sv = byName.set_value.inputSchema;
  check(sv.required.includes("value") && sv.properties.ref && sv.properties.role && sv.properties.name,
    "set_value takes a value, and a ref or a role and name");
  check(byName.exec.outputSchema && byName.exec.outputSchema.properties.stdout, "exec has an output schema");
  for (const name of ["left_click", "observe", "cursor_position", "list_windows"]) {
    check(byName[name].outputSchema, `${name} has an output schema (the SDK checks results against it)`);
  }
  for (const name of ["screenshot", "zoom"]) {
    check(!byName[name].outputSchema, `${name} answers with image content alone`);
  }
  console.log("tools:", tools.length);

  // A screenshot: a PNG in image content.
  const shot = await call(client, "screenshot", {});
  const img = shot.content.find((c) => c.type === "image");
  check(img && img.mimeType === "image/png", "the screenshot is image/png content");
  const png = Buffer.from(img.data, "base64");
  check(png.subarray(1, 4).toString() === "PNG", "the image bytes are a PNG");
  console.log("screenshot:", png.length, "bytes");

  // Fill the form by ref.
  const obs = await call(client, "observe", {});
  const refs = {};
  for (const line of obs.structuredContent.tree_text.split("\n")) {
    const m = /^\s*(e\d+) ([a-z ]+?)(?: \([^)]*\))? "([^"]*)"/.exec(line);
    if (m) {
      refs[m[2] + " " + m[3]] = m[1];
    }
  }
  check(refs["text Name"] && refs["push button Submit"], "observe lists the form's refs: " + JSON.stringify(refs));
  await call(client, "set_value", { ref: refs["text Name"], value: "Grace Hopper" });
  await call(client, "set_value", { ref: refs["text Email"], value: "grace@example.com" });
  await call(client, "click_element", { ref: refs["push button Submit"] });
  const got = await call(client, "wait_for", { role: "label", name: "Submitted: Grace Hopper" });
  check(got.structuredContent.element.name === "Submitted: Grace Hopper <grace@example.com>, newsletter: no.", "the form was submitted: " + text(got));
  console.log("form:", got.structuredContent.element.name);

  // A stale ref is a tool error carrying the ACI code.
  const stale = await client.callTool({ name: "click_element", arguments: { ref: "e9999" } });
  check(stale.isError && text(stale).startsWith("stale_element_ref: "), "a stale ref is a tool error: " + text(stale));

  // An exec, with progress notifications. They are counted as they come
  // rather than through the SDK's onprogress, which drops a notification
  // that reaches it in the same read as the call's answer (it handles
  // notifications a microtask later than answers).
  let progress = 0;
  client.setNotificationHandler(ProgressNotificationSchema, (n) => {
    if (n.params.progressToken === "exec-1") {
      progress++;
    }
  });
  const x = await client.callTool({ name: "exec", arguments: { argv: ["echo", "hello from exec"] }, _meta: { progressToken: "exec-1" } });
  await new Promise((resolve) => setImmediate(resolve));
  check(!x.isError && x.structuredContent.stdout === "hello from exec\n" && x.structuredContent.exit_code === 0, "exec ran: " + text(x));
  check(progress >= 1, "exec reported progress");
  console.log("exec:", JSON.stringify(x.structuredContent.stdout), "progress:", progress);

  await client.close();
  console.log("ok");
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
