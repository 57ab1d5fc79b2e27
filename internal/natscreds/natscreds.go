//go:build !lean

// Package natscreds makes relay's identities for an external NATS
// deployment in NATS's decentralized JWT form (the form nsc makes): an
// operator, a system account, relay's account with JetStream, and one user
// per agent whose permissions are the hub's own definition
// (hub.WrapperPermissions). It writes a server configuration include that
// trusts the operator and preloads both accounts (a MEMORY resolver), and
// revokes users in the account's JWT, pushed to running servers through
// the system account.
//
// A folder made by Init holds (seeds and credentials 0600, in a 0700 folder):
//
//	operator.nk, operator.jwt     the operator's seed and its self-signed JWT
//	sys.nk, sys.jwt, sys.creds    the system account, and its user (pushes updates)
//	account.nk, account.jwt       relay's account, which signs every user
//	admin.creds                   a user of relay's account with every right
//	users.json                    the users issued: workspace, name, public key
//	relay-server.conf             the include for nats-server's configuration
package natscreds

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
)

// Files of a credentials folder.
const (
	OperatorSeed = "operator.nk"
	OperatorJWT  = "operator.jwt"
	SystemSeed   = "sys.nk"
	SystemJWT    = "sys.jwt"
	SystemCreds  = "sys.creds"
	AccountSeed  = "account.nk"
	AccountJWT   = "account.jwt"
	AdminCreds   = "admin.creds"
	UsersFile    = "users.json"
	// Include is the server configuration include: `include relay-server.conf`
	// in each server's configuration (beside JetStream, listen and cluster).
	Include = "relay-server.conf"
)

// AccountName is the name of relay's account in its JWT.
const AccountName = "RELAY"

// ErrExists is returned by Init for a folder that already holds an operator.
var ErrExists = errors.New("credentials folder already initialised")

// ErrNoUser is returned by Revoke for a name that was never issued.
var ErrNoUser = errors.New("no such user")

// User is one issued user in users.json.
type User struct {
	Workspace string    `json:"workspace"`
	Name      string    `json:"name"`
	PublicKey string    `json:"public_key"`
	Issued    time.Time `json:"issued"`
	Revoked   bool      `json:"revoked,omitempty"`
}

// Init creates the operator, the system account and relay's account in
// dir (made 0700 when missing) and writes the server include and the
// administrator's credentials. It refuses a folder that has an operator.
func Init(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, OperatorSeed)); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("credentials folder: %w", err)
	}
	op, err := nkeys.CreateOperator()
	if err != nil {
		return fmt.Errorf("operator key: %w", err)
	}
	sys, err := nkeys.CreateAccount()
	if err != nil {
		return fmt.Errorf("system account key: %w", err)
	}
	acc, err := nkeys.CreateAccount()
	if err != nil {
		return fmt.Errorf("account key: %w", err)
	}
	opPub, _ := op.PublicKey()
	sysPub, _ := sys.PublicKey()
	accPub, _ := acc.PublicKey()

	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "relay"
	oc.SystemAccount = sysPub
	opJWT, err := oc.Encode(op)
	if err != nil {
		return fmt.Errorf("operator JWT: %w", err)
	}
	sc := jwt.NewAccountClaims(sysPub)
	sc.Name = "SYS"
	sysJWT, err := sc.Encode(op)
	if err != nil {
		return fmt.Errorf("system account JWT: %w", err)
	}
	ac := jwt.NewAccountClaims(accPub)
	ac.Name = AccountName
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{
		MemoryStorage: jwt.NoLimit, DiskStorage: jwt.NoLimit, Streams: jwt.NoLimit, Consumer: jwt.NoLimit,
		MaxAckPending: jwt.NoLimit, MemoryMaxStreamBytes: jwt.NoLimit, DiskMaxStreamBytes: jwt.NoLimit,
	}
	accJWT, err := ac.Encode(op)
	if err != nil {
		return fmt.Errorf("account JWT: %w", err)
	}
	sysCreds, err := userCreds(sys, "sys", nil)
	if err != nil {
		return err
	}
	adminCreds, err := userCreds(acc, "relay-admin", nil)
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{
		{OperatorSeed, seed(op)}, {OperatorJWT, []byte(opJWT)},
		{SystemSeed, seed(sys)}, {SystemJWT, []byte(sysJWT)}, {SystemCreds, sysCreds},
		{AccountSeed, seed(acc)}, {AccountJWT, []byte(accJWT)},
		{AdminCreds, adminCreds}, {UsersFile, []byte("[]\n")},
		{Include, include(opJWT, sysPub, sysJWT, accPub, accJWT)},
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// Issue writes a new user for agent name of workspace ws, signed by
// relay's account, with hub.WrapperPermissions, and returns its .creds
// file's content. Each call makes a new key; the ones issued before stay
// valid until Revoke, which revokes every key of the name.
func Issue(dir, ws, name string) ([]byte, error) {
	if err := bus.ValidName("workspace", ws); err != nil {
		return nil, err
	}
	if err := bus.ValidName("agent", name); err != nil {
		return nil, err
	}
	acc, err := readSeed(filepath.Join(dir, AccountSeed))
	if err != nil {
		return nil, err
	}
	users, err := readUsers(dir)
	if err != nil {
		return nil, err
	}
	creds, pub, err := agentCreds(acc, ws, name)
	if err != nil {
		return nil, err
	}
	users = append(users, User{Workspace: ws, Name: name, PublicKey: pub, Issued: time.Now().UTC()})
	if err := writeUsers(dir, users); err != nil {
		return nil, err
	}
	return creds, nil
}

// Revoke revokes every key issued to agent name of workspace ws in relay's
// account: it rewrites account.jwt and the include, and returns the new
// account JWT, which Push hands to running servers (they close the
// revoked user's connections and refuse it afterwards).
func Revoke(dir, ws, name string) (string, error) {
	users, err := readUsers(dir)
	if err != nil {
		return "", err
	}
	var keys []string
	for i, u := range users {
		if u.Workspace == ws && u.Name == name {
			users[i].Revoked = true
			keys = append(keys, u.PublicKey)
		}
	}
	if len(keys) == 0 {
		return "", fmt.Errorf("%w: %s in workspace %s (see %s)", ErrNoUser, name, ws, filepath.Join(dir, UsersFile))
	}
	accJWT, err := revokeKeys(dir, keys)
	if err != nil {
		return "", err
	}
	if err := writeUsers(dir, users); err != nil {
		return "", err
	}
	return accJWT, nil
}

// Users lists the users issued from dir.
func Users(dir string) ([]User, error) { return readUsers(dir) }

// revokeKeys adds the revocations of keys to relay's account, signed by the
// operator, and rewrites account.jwt and the include.
func revokeKeys(dir string, keys []string) (string, error) {
	op, err := readSeed(filepath.Join(dir, OperatorSeed))
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, AccountJWT))
	if err != nil {
		return "", fmt.Errorf("read account: %w", err)
	}
	ac, err := jwt.DecodeAccountClaims(strings.TrimSpace(string(b)))
	if err != nil {
		return "", fmt.Errorf("read account %s: %w", filepath.Join(dir, AccountJWT), err)
	}
	// A revocation covers the keys' JWTs issued up to now; a second later,
	// so that one issued within this second is covered too.
	at := time.Now().Add(time.Second)
	for _, k := range keys {
		ac.RevokeAt(k, at)
	}
	accJWT, err := ac.Encode(op)
	if err != nil {
		return "", fmt.Errorf("account JWT: %w", err)
	}
	if err := writeFile(filepath.Join(dir, AccountJWT), []byte(accJWT)); err != nil {
		return "", err
	}
	opJWT, err := os.ReadFile(filepath.Join(dir, OperatorJWT))
	if err != nil {
		return "", fmt.Errorf("read operator: %w", err)
	}
	sysJWT, err := os.ReadFile(filepath.Join(dir, SystemJWT))
	if err != nil {
		return "", fmt.Errorf("read system account: %w", err)
	}
	sc, err := jwt.DecodeAccountClaims(string(sysJWT))
	if err != nil {
		return "", fmt.Errorf("read system account: %w", err)
	}
	inc := include(string(opJWT), sc.Subject, string(sysJWT), ac.Subject, accJWT)
	if err := writeFile(filepath.Join(dir, Include), inc); err != nil {
		return "", err
	}
	return accJWT, nil
}

// agentCreds makes a user of acc for agent name of workspace ws.
func agentCreds(acc nkeys.KeyPair, ws, name string) ([]byte, string, error) {
	p := hub.WrapperPermissions(ws, name)
	creds, err := userCreds(acc, name, p)
	if err != nil {
		return nil, "", err
	}
	c, err := jwt.ParseDecoratedJWT(creds)
	if err != nil {
		return nil, "", err
	}
	uc, err := jwt.DecodeUserClaims(c)
	if err != nil {
		return nil, "", err
	}
	return creds, uc.Subject, nil
}

// userCreds makes a new user signed by acc with permissions p (nil: every
// right) and returns its .creds file's content.
func userCreds(acc nkeys.KeyPair, name string, p *server.Permissions) ([]byte, error) {
	u, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("user key: %w", err)
	}
	pub, _ := u.PublicKey()
	uc := jwt.NewUserClaims(pub)
	uc.Name = name
	if p != nil {
		uc.Permissions = jwtPermissions(p)
	}
	token, err := uc.Encode(acc)
	if err != nil {
		return nil, fmt.Errorf("user JWT for %s: %w", name, err)
	}
	s, err := u.Seed()
	if err != nil {
		return nil, fmt.Errorf("user seed: %w", err)
	}
	b, err := jwt.FormatUserConfig(token, s)
	if err != nil {
		return nil, fmt.Errorf("credentials of %s: %w", name, err)
	}
	return b, nil
}

// jwtPermissions is p in a user JWT's form.
func jwtPermissions(p *server.Permissions) jwt.Permissions {
	var jp jwt.Permissions
	if p.Publish != nil {
		jp.Pub.Allow.Add(p.Publish.Allow...)
		jp.Pub.Deny.Add(p.Publish.Deny...)
	}
	if p.Subscribe != nil {
		jp.Sub.Allow.Add(p.Subscribe.Allow...)
		jp.Sub.Deny.Add(p.Subscribe.Deny...)
	}
	if p.Response != nil {
		jp.Resp = &jwt.ResponsePermission{MaxMsgs: p.Response.MaxMsgs, Expires: p.Response.Expires}
	}
	return jp
}

// include is the server configuration include: the operator, the system
// account and both accounts preloaded in a memory resolver.
func include(opJWT, sysPub, sysJWT, accPub, accJWT string) []byte {
	var b strings.Builder
	b.WriteString("# relay creds: trust relay's operator; its accounts are preloaded.\n")
	b.WriteString("# Written by `relay creds init` and `relay creds revoke`; include it in each server's configuration.\n")
	fmt.Fprintf(&b, "operator: %q\n", strings.TrimSpace(opJWT))
	fmt.Fprintf(&b, "system_account: %s\n", sysPub)
	b.WriteString("resolver: MEMORY\n")
	b.WriteString("resolver_preload: {\n")
	fmt.Fprintf(&b, "  %s: %q\n", sysPub, strings.TrimSpace(sysJWT))
	fmt.Fprintf(&b, "  %s: %q\n", accPub, strings.TrimSpace(accJWT))
	b.WriteString("}\n")
	return []byte(b.String())
}

func seed(kp nkeys.KeyPair) []byte {
	s, _ := kp.Seed()
	return append(s, '\n')
}

// readSeed reads a key pair from a seed file, which must be private.
func readSeed(path string) (nkeys.KeyPair, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (run relay creds init first)", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key %s is readable by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(b))))
	if err != nil {
		return nil, fmt.Errorf("read key %s: %w", path, err)
	}
	return kp, nil
}

func readUsers(dir string) ([]User, error) {
	b, err := os.ReadFile(filepath.Join(dir, UsersFile))
	if err != nil {
		return nil, fmt.Errorf("read users: %w", err)
	}
	var users []User
	if err := json.Unmarshal(b, &users); err != nil {
		return nil, fmt.Errorf("read users %s: %w", filepath.Join(dir, UsersFile), err)
	}
	return users, nil
}

func writeUsers(dir string, users []User) error {
	sort.SliceStable(users, func(i, j int) bool { return users[i].Issued.Before(users[j].Issued) })
	b, _ := json.MarshalIndent(users, "", "  ")
	return writeFile(filepath.Join(dir, UsersFile), append(b, '\n'))
}

// writeFile replaces path with data, 0600, atomically.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
