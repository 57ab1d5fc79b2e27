package bus

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/nats-io/nats.go"
)

// ErrUnauthorized means the hub refused this client's token or credentials.
// Trying again does not help; a wrapper says so and does not start.
var ErrUnauthorized = errors.New("hub refused the token or credentials")

// ErrUntrustedHub means the hub's TLS certificate was refused: no CA that
// this machine or Options.TLSCA trusts signed it, it does not name the host
// dialled, or it is not the certificate Options.TLSPin names.
var ErrUntrustedHub = errors.New("hub's TLS certificate not trusted")

// AuthOptions are the nats.go options that authenticate and secure a
// connection as o says: token, credentials file, CA, client certificate
// and pin. Connect uses them; so may a caller that needs a bare
// *nats.Conn (a request/reply service) to the same hub.
func AuthOptions(o Options) []nats.Option {
	var nopts []nats.Option
	if o.Token != "" {
		nopts = append(nopts, nats.Token(o.Token))
	}
	if o.Creds != "" {
		nopts = append(nopts, nats.UserCredentials(o.Creds))
	}
	if o.InboxPrefix != "" {
		nopts = append(nopts, nats.CustomInboxPrefix(o.InboxPrefix))
	}
	if o.TLSPin != "" {
		nopts = append(nopts, nats.Secure(pinned(o.TLSPin)))
	} else if o.TLSCA != "" {
		nopts = append(nopts, nats.RootCAs(o.TLSCA))
	}
	if o.TLSCert != "" || o.TLSKey != "" {
		nopts = append(nopts, nats.ClientCert(o.TLSCert, o.TLSKey))
	}
	return nopts
}

// CertPin returns the pin of a DER certificate, as Options.TLSPin wants it:
// its SHA-256 in hex.
func CertPin(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// errPinMismatch is what the handshake fails with when the hub's
// certificate is not the pinned one.
var errPinMismatch = errors.New("certificate is not the one the hub recorded")

// pinned is a TLS configuration that trusts the one certificate whose
// SHA-256 is pin, whatever it names and whoever signed it: the hub's own,
// as recorded by the hub in RELAY_HOME. It replaces the CA and host name
// checks, which a hub certificate for the machine's public name fails on
// 127.0.0.1.
func pinned(pin string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The pin below is the check: it is stricter than a CA's.
		InsecureSkipVerify: true, //nolint:gosec
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errPinMismatch
			}
			if got := CertPin(cs.PeerCertificates[0].Raw); got != pin {
				return fmt.Errorf("%w (sha256 %.16s…, recorded %.16s…)", errPinMismatch, got, pin)
			}
			return nil
		},
	}
}

// explain adds to a failed connection's error what to do when the hub's
// certificate or this client's credentials were refused (ErrUntrustedHub,
// ErrUnauthorized); other errors are returned as they are.
func explain(err error) error {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("%w: %w; give the CA that signed it with hub.tls_ca, RELAY_TLS_CA or --tls-ca", ErrUntrustedHub, err)
	case errors.As(err, &hostname):
		return fmt.Errorf("%w: %w; dial the hub by a name its certificate holds", ErrUntrustedHub, err)
	case errors.As(err, &invalid):
		return fmt.Errorf("%w: %w", ErrUntrustedHub, err)
	case errors.Is(err, errPinMismatch):
		return fmt.Errorf("%w: %w; the hub was restarted with another certificate: restart this client", ErrUntrustedHub, err)
	case errors.Is(err, nats.ErrAuthorization):
		return fmt.Errorf("%w: %w; check RELAY_TOKEN, hub.token_file or the credentials file", ErrUnauthorized, err)
	}
	return err
}

// Unanswered reports whether err, from Connect or Dial, means that no hub
// answered at the URL: nothing listens there, or what took the connection
// said nothing in time or hung up. A hub that refused this client
// (ErrUnauthorized, ErrUntrustedHub), or answered and failed the
// workspace's setup, did answer. A caller that found the hub in a record
// (hub.Find) looks for it again on such an error.
func Unanswered(err error) bool {
	var ne net.Error
	return errors.Is(err, nats.ErrNoServers) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, io.EOF) ||
		(errors.As(err, &ne) && !errors.Is(err, ErrUntrustedHub))
}

// Dial opens a bare NATS connection to the hub of o, authenticated and
// secured as Connect's are, for request/reply services that need no
// workspace stream (memory). name tells it apart in the server's list. A
// deadline on ctx bounds the first connection.
func Dial(ctx context.Context, o Options, name string) (*nats.Conn, error) {
	if o.URL == "" {
		return nil, errors.New("connect to hub: no URL")
	}
	nopts := append([]nats.Option{nats.Name(name)}, AuthOptions(o)...)
	if d, ok := ctx.Deadline(); ok {
		nopts = append(nopts, nats.Timeout(time.Until(d)))
	}
	nc, err := nats.Connect(o.URL, nopts...)
	if err != nil {
		return nil, fmt.Errorf("connect to hub %s: %w", redact(o.URL), explain(err))
	}
	return nc, nil
}
