// relay's plugin for OpenCode (written by relay wrap, named in the
// "plugin" list of OPENCODE_CONFIG_CONTENT for one session). Before each
// tool call it asks the wrapper over its hook socket (RELAY_HOOK_SOCKET,
// one JSON request per connection, answered with one JSON response,
// acknowledged with one 0x06 byte); a refusal throws, which OpenCode turns
// into the tool's error for the model. After each call it reports it.
import net from "node:net";

const socket = process.env.RELAY_HOOK_SOCKET;

function call(event, payload) {
  return new Promise((resolve) => {
    if (!socket) return resolve({});
    const conn = net.createConnection(socket);
    let buf = "";
    let done = false;
    const finish = (resp) => {
      if (done) return;
      done = true;
      resolve(resp);
    };
    conn.on("connect", () => conn.write(JSON.stringify({ event: "opencode:" + event, payload })));
    conn.on("data", (d) => {
      buf += d.toString("utf8");
      let resp;
      try {
        resp = JSON.parse(buf);
      } catch {
        return; // not complete yet
      }
      conn.end(Buffer.from([0x06]));
      finish(resp);
    });
    conn.on("error", () => finish({}));
    conn.on("close", () => finish({}));
  });
}

function answer(resp) {
  if (!resp || !resp.stdout) return {};
  try {
    return JSON.parse(resp.stdout);
  } catch {
    return {};
  }
}

export const RelayPlugin = async () => {
  if (!socket) return {};
  return {
    "tool.execute.before": async (input, output) => {
      const a = answer(await call("tool.execute.before", { tool: input.tool, input: output.args }));
      if (a.block) throw new Error(a.reason || "blocked by relay");
    },
    "tool.execute.after": async (input) => {
      await call("tool.execute.after", { tool: input.tool, input: input.args });
    },
  };
};
