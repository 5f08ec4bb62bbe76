// An MCP client written with the official TypeScript SDK, run by
// TestMCPFilesTypeScript: it moves a large file into the computer and back
// out in chunks, checking its SHA-256 both ways, and lists a large folder
// in pages.
//
//   node files_client.cjs stdio <daemon binary> <token> <dir> <MiB> [daemon flags...]
//   node files_client.cjs http <http://host:port/mcp> <token> <dir> <MiB>
//
// <dir> holds a folder "many" of entries to list; the file is written as
// <dir>/big. It prints one line per step, the SHA-256 of what it wrote,
// and "ok" at the end; it exits non-zero at the first failure.
"use strict";

const crypto = require("crypto");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [mode, target, token, dir, mib, ...flags] = process.argv.slice(2);
const size = Number(mib) * 1024 * 1024;
// 2 MiB: its base64 fits the 4 MiB body the MCP SDK takes over HTTP.
const writeChunk = 2 * 1024 * 1024;
const readChunk = 512 * 1024;

function check(cond, what) {
  if (!cond) {
    throw new Error("check failed: " + what);
  }
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  check(!res.isError, `${name} succeeded: ${JSON.stringify(res.content).slice(0, 500)}`);
  return res;
}

// chunkAt is the deterministic contents of the file from off, n bytes.
function chunkAt(off, n) {
  const b = Buffer.alloc(n);
  let x = (off / 4) >>> 0;
  for (let i = 0; i < n; i += 4) {
    x = (Math.imul(x ^ (x >>> 13), 0x5bd1e995) + i) >>> 0;
    b.writeUInt32LE(x, i);
  }
  return b;
}

async function main() {
  const client = new Client({ name: "ts-files-test", version: "1.0.0" });
  let transport;
  if (mode === "stdio") {
    transport = new StdioClientTransport({ command: target, args: ["-mcp", "stdio", "-token", token, ...flags], stderr: "inherit", env: process.env });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(target), {
      requestInit: { headers: { Authorization: "Bearer " + token } },
    });
  }
  await client.connect(transport);

  // In: write chunks, the first replacing the file, the others appended.
  const path = dir + "/big";
  const inHash = crypto.createHash("sha256");
  let t0 = Date.now();
  for (let off = 0; off < size; off += writeChunk) {
    const chunk = chunkAt(off, Math.min(writeChunk, size - off));
    inHash.update(chunk);
    const args = { path, base64: chunk.toString("base64") };
    if (off > 0) {
      args.append = true;
    }
    const res = await call(client, "write_file", args);
    check(res.structuredContent.size === chunk.length, "written " + JSON.stringify(res.structuredContent));
  }
  const sum = inHash.digest("hex");
  console.log(`in: ${mib} MiB in ${Date.now() - t0} ms, sha256 ${sum}`);

  // Out: read chunks by offset until the end.
  const stat = await call(client, "stat", { path });
  check(stat.structuredContent.size === size && stat.structuredContent.kind === "file", "stat " + JSON.stringify(stat.structuredContent));
  const outHash = crypto.createHash("sha256");
  t0 = Date.now();
  let off = 0;
  for (;;) {
    const res = await call(client, "read_file", { path, offset: off, length: readChunk, base64: true });
    const sc = res.structuredContent;
    const data = Buffer.from(sc.base64 || "", "base64");
    check(data.length === sc.length && sc.offset === off && sc.size === size, "read " + JSON.stringify({ ...sc, base64: undefined }));
    outHash.update(data);
    off += data.length;
    if (sc.eof) {
      break;
    }
    check(data.length > 0, "a chunk before the end is not empty");
  }
  const back = outHash.digest("hex");
  console.log(`out: ${off} bytes in ${Date.now() - t0} ms, sha256 ${back}`);
  check(off === size && back === sum, "the file came back as it went in");
  console.log("sha256 " + sum);

  // A folder of many entries, in pages.
  t0 = Date.now();
  let cursor;
  const names = new Set();
  let pages = 0;
  let prev = null;
  for (;;) {
    const args = { path: dir + "/many", limit: 1000 };
    if (cursor) {
      args.cursor = cursor;
    }
    const res = await call(client, "list_files", args);
    if (pages === 0) {
      console.log(`first page in ${Date.now() - t0} ms`);
    }
    pages++;
    for (const e of res.structuredContent.entries) {
      check(!names.has(e.name), "an entry listed twice: " + e.name);
      check(prev === null || e.name > prev, "in order: " + prev + " then " + e.name);
      names.add(e.name);
      prev = e.name;
    }
    cursor = res.structuredContent.next;
    if (!cursor) {
      break;
    }
  }
  console.log(`listed ${names.size} entries in ${pages} pages, ${Date.now() - t0} ms`);
  console.log("entries " + names.size);
  await call(client, "delete", { path });
  await client.close();
  console.log("ok");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
