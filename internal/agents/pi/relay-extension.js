// relay's extension for pi (written by relay wrap, loaded with -e). It
// reports pi's turns and exact texts to the wrapper over its hook socket
// (RELAY_HOOK_SOCKET, one JSON request per connection, answered with one
// JSON response, acknowledged with one 0x06 byte), asks it before each
// tool call, and hands the model the messages the wrapper gives at the end
// of a turn (pi.sendUserMessage, as a follow-up or, mid-turn, a steer).
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
    conn.on("connect", () => conn.write(JSON.stringify({ event: "pi:" + event, payload })));
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

function textOf(message) {
  const c = message && message.content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  return c.filter((p) => p && p.type === "text").map((p) => p.text).join("");
}

function answer(resp) {
  if (!resp || !resp.stdout) return {};
  try {
    return JSON.parse(resp.stdout);
  } catch {
    return {};
  }
}

export default function (pi) {
  if (!socket) return;
  const deliver = (a) => {
    if (a && typeof a.deliver === "string" && a.deliver !== "") {
      pi.sendUserMessage(a.deliver, { deliverAs: a.as === "steer" ? "steer" : "followUp" });
    }
  };
  pi.on("session_start", async () => {
    await call("session_start", {});
  });
  pi.on("agent_start", async () => {
    await call("agent_start", {});
  });
  pi.on("message_end", async (event) => {
    const m = event.message;
    if (!m || (m.role !== "assistant" && m.role !== "user")) return;
    await call("message_end", { role: m.role, text: textOf(m) });
  });
  pi.on("turn_end", async () => {
    deliver(answer(await call("turn_end", {})));
  });
  pi.on("tool_call", async (event) => {
    const a = answer(await call("tool_call", { tool: event.toolName, input: event.input }));
    if (a.block) return { block: true, reason: a.reason || "blocked by relay" };
  });
  pi.on("tool_result", async (event) => {
    await call("tool_result", { tool: event.toolName, input: event.input });
  });
  pi.on("agent_end", async () => {
    deliver(answer(await call("agent_end", {})));
  });
}
