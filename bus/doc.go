// Package bus is the client side of relay's messaging: agents of one
// workspace send each other messages over NATS, which wait in durable
// per-agent inboxes until the recipient's wrapper has handed them over.
//
// It works against any NATS server with JetStream: the embedded hub of
// package hub, or an external server or cluster. docs/protocol.md describes
// the wire format so that other NATS clients (the nats CLI included) can
// take part.
//
// # Overview
//
// A Client is one connection for one agent name in one workspace:
//
//	c, err := bus.Connect(ctx, bus.Options{URL: url, Token: token, Name: "alice"})
//	defer c.Close()
//	err = c.Register(ctx)                 // claim the name; heartbeats keep it
//	env, err := c.Send(ctx, "bob", "Please run the tests")
//	err = c.Inbox(ctx, func(ctx context.Context, d *bus.Delivery) {
//		// hand d.Envelope to the agent, then:
//		d.Receipt(ctx, bus.StatusDelivered, "")
//		d.Ack()
//	})
//
// The types:
//
//   - Envelope: one message, as stored and sent (JSON). ParseEnvelope and
//     Validate apply the rules every incoming message must pass.
//   - Client: Send and SendMessage (to one agent or to "*"), Register,
//     SetState and Agents (presence), Inbox (durable delivery), Receipt
//     and Receipts (delivery status), Log (history with status).
//   - Delivery: a message taken from the inbox, with Ack, Nak, InProgress,
//     Fail and Receipt. It stays in the inbox until acknowledged.
//   - Outbox: a bounded queue that sends in the background, in order, and
//     keeps retrying with the same id while the hub is away.
//   - Presence, Receipt, Entry: what Agents, Receipts and Log report.
//
// # Guarantees and caveats
//
// Send returns once JetStream stored the message (at-least-once; a retry
// after a lost answer carries the same Nats-Msg-Id and is de-duplicated
// within two minutes). Ids are random (NewID) and the Nats-Msg-Id is
// scoped by sender and keyed by a secret of the client, so no other
// credential can make the hub drop a message as a duplicate. A message to a name that never registered is still
// stored, and Send reports ErrUnknownAgent so the sender can be told. A
// broadcast ("*") is stored once per other agent registered at that moment;
// with nobody else registered it fails with ErrNoRecipients.
//
// Inbox delivers in order, one message at a time. A delivery not
// acknowledged comes back after Options.AckWait, or at once when Inbox
// returns; a crash between receipt and Ack therefore loses nothing, and the
// delivery layer drops repeats by sender and Envelope.ID (Delivery.NumDelivered > 1
// marks one). Envelopes that break the rules (see MaxBody, ValidName) are
// logged, removed and reported failed; the handler never sees them.
//
// Names (agents, workspaces, message ids) are 1 to 64 ASCII letters,
// digits, '_' and '-', starting with a letter or digit, so that each is one
// NATS subject token; they are case-sensitive. Workspaces share nothing:
// each has its own stream and presence bucket.
//
// The client reconnects forever. While the hub is away, Send retries until
// its context ends (bound it with a deadline); what is buffered in the
// meantime is bounded by Options.ReconnectBuffer and an overflow is
// returned as an error, never dropped silently.
//
// A client sends on SenderInboxSubject, its own name as the sender token,
// and an inbox refuses an envelope whose from is not that sender: with an
// agent's own credential, which the hub lets publish only with its own
// name there, no one can send as another agent. The workspace token (the
// administrator's) may publish anything, on InboxSubject too, which is how
// humans (Options.Human) and foreign clients send (see docs/security.md).
package bus
