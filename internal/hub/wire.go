package hub

// What a wrapper needs of the hub besides its address (discover.go): the
// credential requests' subjects and shapes. These files (discover.go,
// wire.go) build under the lean tag too, without nats-server: the lean
// relay binary finds and joins a hub, it never runs one.

// IssueSubject is where a wrapper (holding the workspace token) asks the hub
// for its agent's credential: a CredentialRequest, answered by a Credential.
const IssueSubject = "relay._creds.issue"

// RevokeSubject is where a wrapper revokes its agent's credential when the
// agent leaves: a CredentialRequest, answered by a Credential without token.
const RevokeSubject = "relay._creds.revoke"

// CredentialRequest names the agent a credential is for.
type CredentialRequest struct {
	Workspace string `json:"workspace"`
	Name      string `json:"name"`
}

// Credential is the hub's answer: the agent's token and the prefix of the
// reply subjects it may read (nats.CustomInboxPrefix), or an error.
type Credential struct {
	Token       string `json:"token,omitempty"`
	InboxPrefix string `json:"inbox_prefix,omitempty"`
	Error       string `json:"error,omitempty"`
}

// AgentInboxPrefix is the prefix of the reply subjects of agent name's
// credential: _RELAY_INBOX.<workspace>.<name>.
func AgentInboxPrefix(workspace, name string) string {
	return "_RELAY_INBOX." + workspace + "." + name
}
