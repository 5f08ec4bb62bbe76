// The prelude of a run.js plugin: what a browser or Node would give it
// (fetch, setTimeout, WebSocket, console, TextEncoder), made of the
// protocol's methods, and the escouade object. It runs before the
// plugin's script, in the same runtime; the Host gives it five natives
// that it takes away from the global object.
(function (g) {
  "use strict";
  const send = g.__escouade_send;
  const b64enc = g.__escouade_b64encode;
  const b64dec = g.__escouade_b64decode;
  const utf8enc = g.__escouade_utf8encode;
  const utf8dec = g.__escouade_utf8decode;
  delete g.__escouade_send;
  delete g.__escouade_b64encode;
  delete g.__escouade_b64decode;
  delete g.__escouade_utf8encode;
  delete g.__escouade_utf8decode;

  const codes = {
    parse: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602,
    internal: -32603, notYours: -32001, keychain: -32002, refused: -32003, failed: -32004, notFound: -32005,
  };
  const codeNames = {};
  Object.keys(codes).forEach(function (k) { codeNames[codes[k]] = k; });

  // An EscouadeError is a refusal or a failure the Host answered: code is
  // the protocol's (escouade.codes.refused), name its name.
  class EscouadeError extends Error {
    constructor(code, message) {
      super(message);
      this.name = "EscouadeError";
      this.code = code;
      this.codeName = codeNames[code] || "unknown";
    }
  }

  // The wire.
  let nextId = 0;
  const pending = new Map();
  const handlers = new Map(); // the plugin's, by method
  const internal = new Map(); // the prelude's own

  function write(msg) { send(JSON.stringify(msg)); }

  function call(method, params) {
    return new Promise(function (resolve, reject) {
      const id = ++nextId;
      pending.set(id, { resolve: resolve, reject: reject });
      try {
        const msg = { jsonrpc: "2.0", id: id, method: String(method) };
        if (params !== undefined && params !== null) msg.params = params;
        write(msg);
      } catch (e) {
        pending.delete(id);
        reject(e);
      }
    });
  }

  function notify(method, params) {
    const msg = { jsonrpc: "2.0", method: String(method) };
    if (params !== undefined && params !== null) msg.params = params;
    write(msg);
  }

  function report(e) {
    try {
      notify("log", { level: "error", message: "uncaught: " + (e && e.stack ? e.stack : String(e)) });
    } catch (_) { /* a message too long: nothing more to do */ }
  }

  function answer(id, result) {
    write({ jsonrpc: "2.0", id: id, result: result === undefined ? null : result });
  }

  function fail(id, e) {
    let code = e && Number.isInteger(e.code) && codeNames[e.code] ? e.code : codes.internal;
    let message = e && e.message !== undefined ? String(e.message) : String(e);
    write({ jsonrpc: "2.0", id: id, error: { code: code, message: message } });
  }

  function dispatch(msg) {
    if (msg === null || typeof msg !== "object") return;
    if (msg.method === undefined) {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.error) p.reject(new EscouadeError(msg.error.code, msg.error.message));
      else p.resolve(msg.result);
      return;
    }
    const isRequest = msg.id !== undefined;
    const fn = internal.get(msg.method) || handlers.get(msg.method);
    if (!fn) {
      if (isRequest) fail(msg.id, { code: codes.methodNotFound, message: "method not found: " + msg.method });
      return;
    }
    if (!isRequest) {
      try { fn(msg.params); } catch (e) { report(e); }
      return;
    }
    let r;
    try { r = fn(msg.params); } catch (e) { fail(msg.id, e); return; }
    Promise.resolve(r).then(function (v) { answer(msg.id, v); }, function (e) { fail(msg.id, e); });
  }

  // What the Host calls for each of its lines.
  g.__escouade_receive = function (line) {
    const msg = JSON.parse(line);
    if (Array.isArray(msg)) msg.forEach(dispatch);
    else dispatch(msg);
  };

  const escouade = {
    lang: undefined,
    plugin: undefined,
    host: undefined,
    capabilities: undefined,
    codes: codes,
    Error: EscouadeError,
    on: function (method, fn) { handlers.set(String(method), fn); },
    onInitialize: function (fn) { handlers.set("initialize", fn); },
    onFact: function (fn) { handlers.set("events/fact", fn); },
    onDecide: function (fn) { handlers.set("permissions/decide", fn); },
    onAttach: function (fn) { handlers.set("agent/attach", fn); },
    onShutdown: function (fn) { handlers.set("shutdown", fn); },
    call: call,
    notify: notify,
    secret: function (key) { return call("secrets/get", { key: String(key) }); },
    settings: function (project) { return call("settings/get", project ? { project: String(project) } : {}); },
    file: function (path) { return call("files/read", { path: String(path) }); },
    log: function (level, message) { notify("log", { level: level, message: String(message) }); },
    fs: {
      read: function (p) { return call("fs/read", p); },
      write: function (p) { return call("fs/write", p); },
      stat: function (p) { return call("fs/stat", p); },
      list: function (p) { return call("fs/list", p); },
      canon: function (p) { return call("fs/canon", p); },
    },
  };

  internal.set("initialize", function (p) {
    escouade.lang = p.lang;
    escouade.plugin = p.plugin;
    escouade.host = p.escouade;
    escouade.capabilities = p.capabilities;
    const user = handlers.get("initialize");
    return Promise.resolve(user ? user(p) : undefined).then(function (caps) {
      return { protocolVersion: 1, capabilities: caps && typeof caps === "object" ? caps : {} };
    });
  });
  internal.set("shutdown", function () {
    const user = handlers.get("shutdown");
    return Promise.resolve(user ? user() : undefined).then(function () { return null; });
  });

  // Timers, over timer/*: the Host holds 64 at once, 10 ms at least.
  let timerSeq = 0;
  const timers = new Map(); // the plugin's id to the timer
  const byHost = new Map(); // the Host's id to the timer
  function arm(t) {
    call("timer/set", { ms: t.ms }).then(function (r) {
      if (t.cleared) { notify("timer/cancel", { timer: r.timer }); return; }
      t.hostId = r.timer;
      byHost.set(r.timer, t);
    }, function (e) { timers.delete(t.id); report(e); });
  }
  function setTimer(fn, ms, args, interval) {
    if (typeof fn !== "function") throw new TypeError("a timer calls a function");
    ms = Number(ms);
    if (!(ms >= 10)) ms = 10;
    const t = { id: ++timerSeq, fn: fn, args: args, interval: interval, ms: ms, hostId: 0, cleared: false };
    timers.set(t.id, t);
    arm(t);
    return t.id;
  }
  function clearTimer(id) {
    const t = timers.get(id);
    if (!t) return;
    t.cleared = true;
    timers.delete(id);
    if (t.hostId) {
      byHost.delete(t.hostId);
      notify("timer/cancel", { timer: t.hostId });
    }
  }
  internal.set("timer/fired", function (p) {
    const t = byHost.get(p.timer);
    if (!t) return;
    byHost.delete(p.timer);
    if (t.cleared) return;
    if (t.interval) { t.hostId = 0; arm(t); } else timers.delete(t.id);
    t.fn.apply(undefined, t.args);
  });
  g.setTimeout = function (fn, ms) { return setTimer(fn, ms, Array.prototype.slice.call(arguments, 2), false); };
  g.setInterval = function (fn, ms) { return setTimer(fn, ms, Array.prototype.slice.call(arguments, 2), true); };
  g.clearTimeout = clearTimer;
  g.clearInterval = clearTimer;

  // Bytes and text.
  function bytesOf(body) {
    if (typeof body === "string") return new Uint8Array(utf8enc(body));
    if (body instanceof ArrayBuffer) return new Uint8Array(body);
    if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
    throw new TypeError("a body is a string, an ArrayBuffer or a typed array");
  }
  g.TextEncoder = class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(s) { return new Uint8Array(utf8enc(s === undefined ? "" : String(s))); }
  };
  g.TextDecoder = class TextDecoder {
    get encoding() { return "utf-8"; }
    decode(b) { return b === undefined ? "" : utf8dec(b); }
  };

  // console, over log.
  function format(args) {
    return Array.prototype.map.call(args, function (a) {
      if (typeof a === "string") return a;
      if (a instanceof Error) return a.stack || String(a);
      try { const s = JSON.stringify(a); return s === undefined ? String(a) : s; } catch (_) { return String(a); }
    }).join(" ");
  }
  function logger(level) { return function () { notify("log", { level: level, message: format(arguments) }); }; }
  g.console = { log: logger("info"), info: logger("info"), debug: logger("debug"), warn: logger("warn"), error: logger("error") };

  // fetch, over net/fetch; net/stream when init.stream or init.sse.
  class Headers {
    constructor(init) {
      this._m = new Map();
      if (!init) return;
      if (init instanceof Headers) init.forEach((v, k) => this.set(k, v));
      else if (Array.isArray(init)) init.forEach((kv) => this.append(kv[0], kv[1]));
      else Object.keys(init).forEach((k) => this.set(k, init[k]));
    }
    get(k) { const v = this._m.get(String(k).toLowerCase()); return v === undefined ? null : v; }
    has(k) { return this._m.has(String(k).toLowerCase()); }
    set(k, v) { this._m.set(String(k).toLowerCase(), String(v)); }
    append(k, v) { const o = this.get(k); this.set(k, o === null ? v : o + ", " + v); }
    delete(k) { this._m.delete(String(k).toLowerCase()); }
    forEach(fn) { this._m.forEach((v, k) => fn(v, k, this)); }
    entries() { return this._m.entries(); }
    keys() { return this._m.keys(); }
    values() { return this._m.values(); }
    [Symbol.iterator]() { return this._m.entries(); }
    toObject() { const o = {}; this._m.forEach((v, k) => { o[k] = v; }); return o; }
  }
  g.Headers = Headers;

  const streams = new Map(); // id to its reader state
  const early = new Map();   // pieces of a stream not yet known
  function streamState(id) {
    let s = streams.get(id);
    if (!s) {
      s = early.get(id);
      if (!s) { s = { queue: [], wait: null, done: false }; early.set(id, s); }
    }
    return s;
  }
  function push(s, item) {
    if (s.wait) { const w = s.wait; s.wait = null; w(item); } else s.queue.push(item);
  }
  internal.set("net/chunk", function (p) {
    const bytes = p.data !== undefined ? new Uint8Array(utf8enc(p.data)) : new Uint8Array(b64dec(p.dataBase64 || ""));
    push(streamState(p.stream), { value: bytes });
  });
  internal.set("net/end", function (p) {
    const s = streamState(p.stream);
    push(s, { end: true, error: p.error });
    streams.delete(p.stream);
  });

  class BodyReader {
    constructor(id) {
      this._id = id;
      this._s = early.get(id) || { queue: [], wait: null, done: false };
      early.delete(id);
      streams.set(id, this._s);
    }
    read() {
      const s = this._s;
      if (s.done) return Promise.resolve({ done: true, value: undefined });
      const take = (item) => {
        if (item.end) {
          s.done = true;
          if (item.error) throw new EscouadeError(codes.failed, item.error);
          return { done: true, value: undefined };
        }
        notify("net/credit", { stream: this._id, bytes: item.value.byteLength });
        return { done: false, value: item.value };
      };
      if (s.queue.length) return Promise.resolve(s.queue.shift()).then(take);
      return new Promise((resolve) => { s.wait = resolve; }).then(take);
    }
    cancel() {
      if (this._s.done) return Promise.resolve();
      this._s.done = true;
      streams.delete(this._id);
      notify("net/cancel", { stream: this._id });
      return Promise.resolve();
    }
    releaseLock() {}
  }

  class Response {
    constructor(status, headers, bytes, streamId) {
      this.status = status;
      this.headers = new Headers(headers);
      this._bytes = bytes;
      this._stream = streamId;
      this.bodyUsed = false;
      this.body = streamId !== undefined ? { getReader: () => this._reader() } : null;
    }
    get ok() { return this.status >= 200 && this.status < 300; }
    get redirected() { return false; }
    _reader() {
      if (this.bodyUsed) throw new TypeError("the body was already read");
      this.bodyUsed = true;
      return new BodyReader(this._stream);
    }
    arrayBuffer() {
      if (this._stream === undefined) {
        if (this.bodyUsed) return Promise.reject(new TypeError("the body was already read"));
        this.bodyUsed = true;
        const b = this._bytes;
        return Promise.resolve(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
      }
      const r = this._reader();
      const parts = [];
      let n = 0;
      const loop = () => r.read().then((x) => {
        if (x.done) {
          const all = new Uint8Array(n);
          let o = 0;
          parts.forEach((p) => { all.set(p, o); o += p.byteLength; });
          return all.buffer;
        }
        parts.push(x.value);
        n += x.value.byteLength;
        return loop();
      });
      return loop();
    }
    text() { return this.arrayBuffer().then((b) => utf8dec(b)); }
    json() { return this.text().then((t) => JSON.parse(t)); }
  }
  g.Response = Response;

  g.fetch = function (input, init) {
    init = init || {};
    const params = { url: String(input && input.url !== undefined ? input.url : input) };
    if (init.method) params.method = String(init.method).toUpperCase();
    const h = new Headers(init.headers);
    if (h._m.size) params.headers = h.toObject();
    if (init.body !== undefined && init.body !== null) {
      if (typeof init.body === "string") params.body = init.body;
      else params.bodyBase64 = b64enc(bytesOf(init.body));
    }
    if (init.stream || init.sse) {
      if (init.sse) params.sse = true;
      return call("net/stream", params).then((r) => new Response(r.status, r.headers, null, r.stream));
    }
    return call("net/fetch", params).then((r) => {
      const bytes = r.body !== undefined ? new Uint8Array(utf8enc(r.body)) : new Uint8Array(b64dec(r.bodyBase64 || ""));
      return new Response(r.status, r.headers, bytes);
    });
  };

  // WebSocket, over ws/*.
  const sockets = new Map();
  class WebSocket {
    constructor(url, protocols, options) {
      this.url = String(url);
      this.readyState = WebSocket.CONNECTING;
      this.binaryType = "arraybuffer";
      this.onopen = this.onmessage = this.onclose = this.onerror = null;
      this._l = {};
      this._id = 0;
      this._chain = Promise.resolve(); // ws/send in order: one answer before the next
      const params = { url: this.url };
      const headers = Object.assign({}, options && options.headers);
      if (protocols && protocols.length) headers["Sec-WebSocket-Protocol"] = [].concat(protocols).join(", ");
      if (Object.keys(headers).length) params.headers = headers;
      call("ws/open", params).then((r) => {
        this._id = r.socket;
        sockets.set(r.socket, this);
        if (this.readyState === WebSocket.CLOSING) { call("ws/close", { socket: r.socket }).catch(report); return; }
        this.readyState = WebSocket.OPEN;
        this._emit("open", { type: "open" });
      }, (e) => {
        this.readyState = WebSocket.CLOSED;
        this._emit("error", { type: "error", error: e, message: e.message });
        this._emit("close", { type: "close", code: 1006, reason: String(e.message), wasClean: false });
      });
    }
    send(data) {
      if (this.readyState !== WebSocket.OPEN) throw new Error("the WebSocket is not open");
      const p = { socket: this._id };
      if (typeof data === "string") p.text = data;
      else p.dataBase64 = b64enc(bytesOf(data));
      this._chain = this._chain.then(() => call("ws/send", p)).catch((e) => {
        this._emit("error", { type: "error", error: e, message: e.message });
      });
    }
    close() {
      if (this.readyState >= WebSocket.CLOSING) return;
      this.readyState = WebSocket.CLOSING;
      if (this._id) {
        const id = this._id;
        this._chain = this._chain.then(() => call("ws/close", { socket: id })).catch(report);
      }
    }
    addEventListener(type, fn) { (this._l[type] = this._l[type] || []).push(fn); }
    removeEventListener(type, fn) { this._l[type] = (this._l[type] || []).filter((f) => f !== fn); }
    _emit(type, ev) {
      const h = this["on" + type];
      if (typeof h === "function") h.call(this, ev);
      (this._l[type] || []).forEach((f) => f.call(this, ev));
    }
  }
  WebSocket.CONNECTING = 0;
  WebSocket.OPEN = 1;
  WebSocket.CLOSING = 2;
  WebSocket.CLOSED = 3;
  g.WebSocket = WebSocket;
  internal.set("ws/message", function (p) {
    const s = sockets.get(p.socket);
    if (!s) return;
    const data = p.text !== undefined ? p.text : b64dec(p.dataBase64 || "");
    s._emit("message", { type: "message", data: data });
  });
  internal.set("ws/closed", function (p) {
    const s = sockets.get(p.socket);
    if (!s) return;
    sockets.delete(p.socket);
    s.readyState = WebSocket.CLOSED;
    s._emit("close", { type: "close", code: p.code, reason: p.reason, wasClean: p.code === 1000 });
  });

  // Programs, over proc/*: escouade.spawn resolves to a Proc, whose output
  // and end wait for a handler (proc.on("out"), proc.on("exit")).
  const procs = new Map();
  const procEarly = new Map();
  class Proc {
    constructor(id) {
      this.id = id;
      this.code = undefined;
      this._h = { out: null, exit: null };
      this._q = procEarly.get(id) || [];
      procEarly.delete(id);
      procs.set(id, this);
    }
    on(type, fn) {
      if (type !== "out" && type !== "exit") throw new TypeError("a program has out and exit");
      this._h[type] = fn;
      const q = this._q;
      this._q = [];
      q.forEach((ev) => this._deliver(ev));
      return this;
    }
    _deliver(ev) {
      const h = this._h[ev.type];
      if (!h) { this._q.push(ev); return; }
      if (ev.type === "out") h(ev.data, ev.stream);
      else { this.code = ev.code; procs.delete(this.id); h(ev.code); }
    }
    write(data, close) {
      const p = { proc: this.id };
      if (data !== undefined && data !== null) p.data = String(data);
      if (close) p.close = true;
      return call("proc/write", p);
    }
    closeInput() { return this.write(null, true); }
    kill() { return call("proc/kill", { proc: this.id }); }
    // output collects everything the program writes, until it ends.
    output() {
      return new Promise((resolve) => {
        let stdout = "", stderr = "";
        this.on("out", (data, stream) => { if (stream === "stderr") stderr += data; else stdout += data; });
        this.on("exit", (code) => resolve({ code: code, stdout: stdout, stderr: stderr }));
      });
    }
  }
  function procEvent(id, ev) {
    const p = procs.get(id);
    if (p) { p._deliver(ev); return; }
    let q = procEarly.get(id);
    if (!q) { q = []; procEarly.set(id, q); }
    q.push(ev);
  }
  internal.set("proc/out", function (p) { procEvent(p.proc, { type: "out", stream: p.stream, data: p.data }); });
  internal.set("proc/exit", function (p) { procEvent(p.proc, { type: "exit", code: p.code }); });
  escouade.spawn = function (command, args, options) {
    const params = Object.assign({}, options || {}, { command: String(command) });
    if (args) params.args = Array.prototype.map.call(args, String);
    return call("proc/spawn", params).then((r) => new Proc(r.proc));
  };

  g.escouade = escouade;
})(this);
