// A plugin for run.js that the escouade package's tests run: it calls
// every method a plugin in WASM may call, through the prelude (fetch,
// setTimeout, WebSocket, console, escouade), and says what it found in its
// journal, one "ok <step>" or "fail <step>: why" at a time, then "done".

let lang;
escouade.onInitialize((p) => {
  lang = escouade.lang;
  return { steps: true };
});
escouade.onDecide((p) => ({ decision: "allow", message: "js " + escouade.lang }));

function want(cond, what) {
  if (!cond) throw new Error(what);
}

async function step(name, fn) {
  try {
    await fn();
    console.log("ok " + name);
  } catch (e) {
    console.warn("fail " + name + ": " + (e && e.message ? e.message : String(e)) + (e && e.code ? " (" + e.code + ")" : ""));
  }
}

async function refused(p) {
  try {
    await p;
  } catch (e) {
    return e.code === escouade.codes.refused;
  }
  return false;
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

async function all() {
  await step("lang", () => want(lang === "fr" && escouade.plugin.id === "js", "lang " + lang));
  await step("secrets/get", async () => want((await escouade.secret("token")) === "s3cret", "secret"));
  await step("settings/get", async () => want((await escouade.settings()).color === "blue", "settings"));
  await step("files/read", async () => want((await escouade.file("data.txt")) === "some data", "file"));
  await step("console", () => { console.debug("a debug line", { a: 1 }); escouade.log("info", "a log line"); });
  await step("methodNotFound", async () => {
    try { await escouade.call("no/such", {}); } catch (e) { want(e.code === escouade.codes.methodNotFound, String(e.code)); return; }
    throw new Error("answered");
  });
  await step("setTimeout, clearTimeout, setInterval", async () => {
    const order = [];
    const cleared = setTimeout(() => order.push("cleared"), 30);
    clearTimeout(cleared);
    await new Promise((resolve) => {
      let n = 0;
      const iv = setInterval(() => {
        order.push("tick");
        if (++n === 3) { clearInterval(iv); resolve(); }
      }, 10);
    });
    await sleep(60);
    want(order.join(",") === "tick,tick,tick", order.join(","));
  });
  await step("fs/write, fs/read, fs/stat, fs/list, fs/canon", async () => {
    const w = await escouade.fs.write({ root: "temp", path: "notes/a.txt", text: "été" });
    await escouade.fs.write({ root: "temp", path: "notes/a.txt", text: "!", append: true });
    want((await escouade.fs.read({ root: "temp", path: "notes/a.txt" })).text === "été!", "read");
    const st = await escouade.fs.stat({ root: "temp", path: "notes/a.txt" });
    want(st.kind === "file" && st.bytes === 6, JSON.stringify(st));
    const ls = await escouade.fs.list({ root: "temp", path: "." });
    want(ls.entries.length === 1 && ls.entries[0].name === "notes" && !ls.truncated, JSON.stringify(ls));
    want((await escouade.fs.canon({ path: w.path })).path === w.path, "canon");
    want(await refused(escouade.fs.read({ root: "temp", path: "../x" })), "read ../x");
  });
  await step("proc/spawn, proc/out, proc/exit", async () => {
    const p = await escouade.spawn("echo", ["hello", "js"]);
    const o = await p.output();
    want(o.code === 0 && o.stdout === "hello js\n", JSON.stringify(o));
  });
  await step("proc/write, proc/kill", async () => {
    const p = await escouade.spawn("cat", []);
    const got = new Promise((resolve) => p.on("out", (d) => resolve(d)));
    const exit = new Promise((resolve) => p.on("exit", resolve));
    await p.write("ping\n");
    want((await got) === "ping\n", "cat");
    await p.kill();
    want((await exit) === null, "killed");
  });
  await step("fetch", async () => {
    const r = await fetch("https://api.example.com/hello", { headers: { "X-Test": "1" } });
    want(r.ok && r.status === 200 && r.headers.get("x-many") === "a, b", r.status + " " + r.headers.get("x-many"));
    want((await r.text()) === "hello 1", "text");
    const e = await fetch("https://api.example.com/echo", { method: "post", body: new Uint8Array([104, 105]) });
    want((await e.text()) === "POST api.example.com hi", "echo");
    const b = await fetch("https://api.example.com/bin");
    const bytes = new Uint8Array(await b.arrayBuffer());
    want(bytes.length === 3 && bytes[1] === 255, "bin");
    const red = await fetch("https://api.example.com/redirect");
    want(red.status === 302 && !red.ok, "redirect " + red.status);
    want(await refused(fetch("https://elsewhere.example/")), "elsewhere");
    want(await refused(fetch("http://api.example.com/hello")), "http");
  });
  await step("net/stream, net/chunk, net/credit, net/end", async () => {
    const r = await fetch("https://api.example.com/stream", { stream: true });
    const reader = r.body.getReader();
    let text = "";
    const dec = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += dec.decode(value);
    }
    want(text === "one two three ", text);
    const again = await fetch("https://api.example.com/stream", { stream: true });
    want((await again.text()) === "one two three ", "text()");
  });
  await step("net/cancel", async () => {
    const r = await fetch("https://api.example.com/silent", { sse: true });
    const reader = r.body.getReader();
    const first = await reader.read();
    want(new TextDecoder().decode(first.value) === "first", "first");
    await reader.cancel();
  });
  await step("WebSocket", async () => {
    const ws = new WebSocket("wss://api.example.com/ws", [], { headers: { Authorization: "Bearer x" } });
    const events = [];
    await new Promise((resolve, reject) => {
      ws.onopen = () => { events.push("open"); ws.send("marco"); ws.send(new Uint8Array([1, 2, 3])); };
      ws.onmessage = (e) => {
        events.push(typeof e.data === "string" ? e.data : "bytes " + new Uint8Array(e.data).join(","));
        if (events.length === 3) ws.close();
      };
      ws.onclose = (e) => { events.push("close " + e.code); resolve(); };
      ws.onerror = (e) => reject(e.error);
    });
    want(events.join("|") === "open|marco polo|bytes 1,2,3|close 1000", events.join("|"));
  });
  await step("TextEncoder", () => {
    const b = new TextEncoder().encode("é");
    want(b.length === 2 && new TextDecoder().decode(b) === "é", "utf-8");
  });
}

escouade.onFact(async (f) => {
  switch (f.data.mode) {
    case "all":
      await all();
      console.log("done");
      break;
    case "spin":
      for (;;) {}
    case "grow": {
      const keep = [];
      for (;;) keep.push("x".repeat(1 << 20) + keep.length);
    }
    case "throw":
      throw new Error("a handler that throws");
  }
});
