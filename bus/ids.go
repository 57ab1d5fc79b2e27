package bus

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"os"
	"strings"
)

// idLen is the length of a message id: 22 characters of 62 carry 130
// random bits, and fit ValidName (at most MaxNameLen, letters and digits).
const idLen = 22

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewID returns a new message id: 22 letters and digits from the
// operating system's cryptographic random source (130 bits). Unlike a
// NUID, two ids seen from one client tell nothing of its next ones, so no
// other agent can publish one of them first.
func NewID() string {
	var b [idLen]byte
	var buf [64]byte
	n := 0
	for n < idLen {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails (Go 1.24+)
		for _, c := range buf {
			// 248 = 4*62: rejecting the rest keeps every character equally likely.
			if c < 248 && n < idLen {
				b[n] = idAlphabet[c%62]
				n++
			}
		}
	}
	return string(b[:])
}

// newDedupKey returns a client's secret for its de-duplication ids. It is
// derived from the client's own credential (its token, or its credentials
// file), so the same sender gets the same ids in every process: a message
// sent again with its id after a timeout (relay send --id) is still kept
// once, while another credential cannot compute them. A client without a
// credential (a server with no authentication, where anyone may publish
// anything) draws a random one.
func newDedupKey(o Options) []byte {
	secret := o.Token
	if secret == "" {
		if u, err := url.Parse(strings.Split(o.URL, ",")[0]); err == nil && u.User != nil {
			secret = u.User.String()
		}
	}
	if secret == "" && o.Creds != "" {
		if b, err := os.ReadFile(o.Creds); err == nil {
			secret = string(b)
		}
	}
	if secret == "" {
		k := make([]byte, 32)
		_, _ = rand.Read(k)
		return k
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("relay de-duplication key v1"))
	return m.Sum(nil)
}

// dedupID is the Nats-Msg-Id this client puts on what it stores: its own
// name, the parts (the message id, the recipient of a broadcast's copy, a
// receipt's agent and status) and a keyed hash of them that only this
// client can compute. JetStream de-duplicates on this header across the
// whole stream, whatever the subject; so another credential that learned
// a message id (it got its own copy of a broadcast) still cannot publish
// first the header of a copy or a receipt this client is about to store,
// and make the hub drop it as a duplicate. The same parts give the same
// header for the client's whole life: a publish tried again after a lost
// acknowledgement is still kept once.
func (c *Client) dedupID(parts ...string) string {
	p := strings.Join(parts, ".")
	m := hmac.New(sha256.New, c.dedupKey)
	m.Write([]byte(c.opts.Name + "/" + p))
	return c.opts.Name + "/" + p + "/" + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}
