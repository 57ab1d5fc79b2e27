//go:build !lean

package hub

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/relayhq/relay/internal/statedir"
)

// ErrPinMismatch is what a leaf's link fails with when the team's hub
// serves another certificate than the ticket's pin.
var ErrPinMismatch = errors.New("the team hub's certificate is not the one in the ticket")

func joinPath(home string) string { return filepath.Join(Dir(home), "join.json") }

// loadJoin returns the ticket this hub joins with: t, written to join.json
// for later starts, or the one kept there, or nil for a team's hub.
func loadJoin(home string, t *Ticket) (*Ticket, error) {
	if t != nil {
		b, _ := json.Marshal(t)
		if err := writeFileAtomic(joinPath(home), b); err != nil {
			return nil, fmt.Errorf("record the team hub to join: %w", err)
		}
		return t, nil
	}
	b, err := statedir.ReadSecret(joinPath(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the team hub to join: %w", err)
	}
	var saved Ticket
	if err := json.Unmarshal(b, &saved); err != nil {
		return nil, fmt.Errorf("read %s: %w", joinPath(home), err)
	}
	return &saved, nil
}

// SaveJoin records in home that its hub is a leaf of t's team hub, from
// its next start on.
func SaveJoin(home string, t Ticket) error {
	if err := ensureDirs(home); err != nil {
		return fmt.Errorf("record the team hub to join: %w", err)
	}
	_, err := loadJoin(home, &t)
	return err
}

// Leave forgets the team's hub that home's hub joined, so that its next
// start runs on its own. It does not stop a running hub.
func Leave(home string) error {
	if err := os.Remove(joinPath(home)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("leave the team hub: %w", err)
	}
	return nil
}

// setupLeaf sets the JetStream domain and the leafnode side of sopts: a
// remote to the team's hub on a leaf, a listener on the team's hub. It
// returns the listener's host ("" on a leaf).
func setupLeaf(sopts *server.Options, o *Options, join *Ticket, lastPort int) (string, error) {
	if join != nil {
		sopts.JetStreamDomain = LeafDomain(join.Machine)
		u, err := url.Parse(join.URL)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("team hub address %q: %w", join.URL, ErrBadTicket)
		}
		u.User = url.UserPassword(leafUserPrefix+join.Machine, join.Secret)
		r := &server.RemoteLeafOpts{URLs: []*url.URL{u}}
		if u.Scheme == "tls" || join.TLSPin != "" {
			r.TLS = true
			r.TLSConfig = pinnedTLS(join.TLSPin)
		}
		sopts.LeafNode.Remotes = []*server.RemoteLeafOpts{r}
		sopts.LeafNode.ReconnectInterval = time.Second
		return "", nil
	}
	sopts.JetStreamDomain = DomainTeam
	host, port := "127.0.0.1", 0
	if o.LeafListen != "" {
		h, p, err := net.SplitHostPort(o.LeafListen)
		if err != nil {
			return "", fmt.Errorf("leaf listen address %q: want HOST:PORT: %w", o.LeafListen, err)
		}
		if port, err = strconv.Atoi(p); err != nil || port < 0 || port > 65535 {
			return "", fmt.Errorf("leaf listen address %q: port %q is not a number from 0 to 65535", o.LeafListen, p)
		}
		if host = h; host == "" {
			host = "0.0.0.0"
		}
		if !isLoopback(host) && o.TLSCert == "" {
			return "", fmt.Errorf("%w: leaf listener %s would take leaf machines' secrets in clear text; give a TLS certificate and key",
				ErrNotLoopback, o.LeafListen)
		}
	} else if lastPort > 0 && portFree(host, lastPort) {
		port = lastPort
	}
	if port == 0 {
		// nats-server does not tell a random leafnode port: take a free one.
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return "", fmt.Errorf("%w: leaf listener on %s: %w", ErrAddressRefused, host, unwrapOp(err))
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	sopts.LeafNode.Host, sopts.LeafNode.Port = host, port
	if sopts.TLSConfig != nil {
		sopts.LeafNode.TLSConfig = sopts.TLSConfig.Clone()
	}
	return host, nil
}

// setLeafURL records the leafnode listener's URL for tickets and returns
// its port (0 on a leaf).
func (h *Hub) setLeafURL(host string, port int, scheme string) int {
	if h.join != nil || port == 0 {
		return 0
	}
	if host == "0.0.0.0" || host == "::" {
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	if scheme == "nats" {
		scheme = "nats-leaf"
	}
	h.leafURL = scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port))
	return port
}

// Domain is the hub's JetStream domain: DomainTeam, or LeafDomain(machine)
// on a leaf.
func (h *Hub) Domain() string { return h.domain }

// Joined is the ticket of the team's hub this hub is a leaf of, nil on a
// team's hub.
func (h *Hub) Joined() *Ticket { return h.join }

// LeafURL is the address of the leafnode listener that tickets name; "" on
// a leaf.
func (h *Hub) LeafURL() string { return h.leafURL }

// LinkUp reports whether a leaf's link to the team's hub is up (on the
// team's hub: whether any leaf is linked).
func (h *Hub) LinkUp() bool { return h.srv.NumLeafNodes() > 0 }

// pinnedTLS trusts the one certificate whose SHA-256 is pin (any, without
// a pin: the ticket came over a channel the user trusts, and the secret is
// the check).
func pinnedTLS(pin string) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // the pin below is the check
		VerifyConnection: func(cs tls.ConnectionState) error {
			if pin == "" {
				return nil
			}
			if len(cs.PeerCertificates) == 0 {
				return ErrPinMismatch
			}
			sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if got := hex.EncodeToString(sum[:]); got != pin {
				return fmt.Errorf("%w (sha256 %.16s…, ticket %.16s…)", ErrPinMismatch, got, pin)
			}
			return nil
		},
	}
}
