// Package hubdial works out how to reach the hub, in one place for every
// command, the session, relay mcp and relay doctor (as the GitHub CLI's
// factory does for its commands): the URL, the token (from the
// environment or the token file, read once), credentials and TLS trust of
// an external hub, or the record of the local hub in RELAY_HOME; and the
// memory client on a connection to it.
//
// Starting a hub is not its job: the callers that may start one (relay
// send, the session) do, then hand its Endpoint to Local.
package hubdial

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/memory"
)

// Resolver holds what was configured about the hub (flags over the
// environment over configuration files, merged by the caller) and works
// out the rest. An empty field is not configured. A Resolver is used by
// one command or session; its methods are safe for concurrent use.
type Resolver struct {
	Home      string // RELAY_HOME, where the local hub's record is; "" for none
	URL       string // an external hub; "" means the local hub of Home
	Token     string // RELAY_TOKEN
	TokenFile string // hub.token_file: read when Token is ""
	Creds     string // a NATS credentials file
	TLSCA     string // the CA of a TLS hub's certificate

	once  sync.Once
	token string
	err   error
}

// HubToken returns Token, else the token file's content without
// surrounding white space, else "". The file is read once.
func (r *Resolver) HubToken() (string, error) {
	if r.Token != "" || r.TokenFile == "" {
		return r.Token, nil
	}
	r.once.Do(func() {
		b, err := os.ReadFile(r.TokenFile)
		if err != nil {
			r.err = fmt.Errorf("read hub token: %w", err)
			return
		}
		r.token = strings.TrimSpace(string(b))
	})
	return r.token, r.err
}

// External returns the options (workspace and name left to the caller)
// for the external hub at URL. Without a token or credentials it uses the
// local hub's token and certificate pin when the hub recorded in Home is
// the one at URL: inside a wrapped agent RELAY_HUB names the local hub the
// wrapper found or started. The record is read, the hub not asked
// (hub.Find): the connection that follows asks it.
func (r *Resolver) External() (bus.Options, error) {
	o := bus.Options{URL: r.URL, Creds: r.Creds, TLSCA: r.TLSCA}
	var err error
	if o.Token, err = r.HubToken(); err != nil {
		return o, err
	}
	if o.Token == "" && o.Creds == "" && r.Home != "" {
		if ep, err := hub.Find(r.Home); err == nil && ep.URL == o.URL {
			o.Token, o.TLSPin = ep.Token, ep.TLSPin
		}
	}
	return o, nil
}

// Local returns the options for the local hub of home at ep, with
// Discover set: a restarted hub may be on another port. It reads the hub's
// record (hub.Find) without asking the hub: the dial that follows does.
func Local(home string, ep hub.Endpoint) bus.Options {
	return bus.Options{
		URL: ep.URL, Token: ep.Token, TLSPin: ep.TLSPin,
		Discover: func() (string, error) {
			ep, err := hub.Find(home)
			return ep.URL, err
		},
	}
}

// Options returns External's options when URL is set, else Local's for
// the hub recorded in Home; an error wraps hub.ErrNoHub when none runs.
func (r *Resolver) Options() (bus.Options, error) {
	if r.URL != "" {
		return r.External()
	}
	ep, err := hub.Discover(r.Home)
	if err != nil {
		return bus.Options{}, err
	}
	return Local(r.Home, ep), nil
}

// Memory returns the client of the hub's memory service on nc.
func Memory(nc *nats.Conn) *memory.Client {
	return memory.NewClient(nc, memory.DefaultSubjectPrefix)
}
