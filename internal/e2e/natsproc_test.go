package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// natsServerPkg is nats-server's main package; built from the module
// version go.mod requires (the one the hub embeds), from the module cache.
const natsServerPkg = "github.com/nats-io/nats-server/v2"

// natsServerBuild is the nats-server binary, built once per test run.
var natsServerBuild struct {
	once sync.Once
	path string
	err  error
}

// natsServerBin returns the path of a nats-server binary built from the
// module relay uses (without the race detector: the binary users run),
// built at the first call into the run's temporary folder.
func natsServerBin(t testing.TB) string {
	t.Helper()
	b := &natsServerBuild
	b.once.Do(func() {
		b.path = filepath.Join(runDir, "nats-server")
		// The tags of every other build of the project, so that the
		// packages compiled by go vet and the relay build are reused.
		cmd := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", b.path, natsServerPkg)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", natsServerPkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// natsNode is one nats-server process of a test cluster.
type natsNode struct {
	name      string
	dir       string
	cmd       *exec.Cmd
	exited    chan struct{} // closed when the process has exited
	clientURL string        // nats://127.0.0.1:PORT
	monitor   string        // http://127.0.0.1:PORT
}

// natsPorts is the part of nats-server's ports file (ports_file_dir) read.
type natsPorts struct {
	Nats       []string `json:"nats"`
	Monitoring []string `json:"monitoring"`
	Cluster    []string `json:"cluster"`
}

// natsProcCluster runs n real nats-server processes (the binary of
// natsServerBin) with JetStream, routed to each other on loopback, each
// configured by a file that includes include (a server configuration
// include, as `relay creds init` writes it). Client and monitor ports are
// random (read from each server's ports file); the first node's cluster
// port is chosen free and the others find each other through it. It
// returns once every node answers /healthz (JetStream current) and has
// routes to all the others; the processes are stopped with the test.
func natsProcCluster(t *testing.T, n int, include string) []*natsNode {
	t.Helper()
	bin := natsServerBin(t)
	inc, err := os.ReadFile(include)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var nodes []*natsNode
	// The seed's route port was free a moment ago; one taken since makes
	// the seed exit, and another port is tried.
	for attempt := 0; ; attempt++ {
		seedPort := freePort(t)
		seed := startNatsNode(t, bin, root, "n1", inc, seedPort, seedPort)
		if err := seed.waitPorts(); err == nil {
			nodes = append(nodes, seed)
			for i := 2; i <= n; i++ {
				nodes = append(nodes, startNatsNode(t, bin, root, fmt.Sprintf("n%d", i), inc, -1, seedPort))
			}
			break
		} else if attempt == 2 || !strings.Contains(seed.log(), "address already in use") {
			t.Fatalf("nats-server %s: %v\n%s", seed.name, err, seed.log())
		}
	}
	for _, nd := range nodes[1:] {
		if err := nd.waitPorts(); err != nil {
			t.Fatalf("nats-server %s: %v\n%s", nd.name, err, nd.log())
		}
	}
	testutil.WaitFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		for _, nd := range nodes {
			if err := nd.ready(n - 1); err != nil {
				return fmt.Errorf("%s: %w", nd.name, err)
			}
		}
		return nil
	})
	return nodes
}

// startNatsNode starts one server whose cluster listens on clusterPort
// (-1: any) with a route to seedPort, and stops it with the test.
func startNatsNode(t *testing.T, bin, root, name string, include []byte, clusterPort, seedPort int) *natsNode {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// nats-server resolves an include beside the file that names it.
	if err := os.WriteFile(filepath.Join(dir, "relay-server.conf"), include, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`server_name: %s
listen: "127.0.0.1:-1"
http: "127.0.0.1:-1"
ports_file_dir: %q
include "relay-server.conf"
jetstream { store_dir: %q }
cluster {
  name: relay-test
  listen: "127.0.0.1:%d"
  routes: ["nats-route://127.0.0.1:%d"]
}
`, name, dir, filepath.Join(dir, "js"), clusterPort, seedPort)
	path := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", path)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start nats-server: %v", err)
	}
	nd := &natsNode{name: name, dir: dir, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		logf.Close()
		close(nd.exited)
	}()
	t.Cleanup(func() { nd.stop(t) })
	return nd
}

// waitPorts waits for the server's ports file, written once it listens.
func (nd *natsNode) waitPorts() error {
	file := filepath.Join(nd.dir, fmt.Sprintf("nats-server_%d.ports", nd.cmd.Process.Pid))
	deadline := time.Now().Add(60 * time.Second)
	for {
		var p natsPorts
		b, err := os.ReadFile(file)
		if err == nil && json.Unmarshal(b, &p) == nil && len(p.Nats) > 0 && len(p.Monitoring) > 0 {
			nd.clientURL, nd.monitor = p.Nats[0], p.Monitoring[0]
			return nil
		}
		select {
		case <-nd.exited:
			return errors.New("exited before it listened")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("no ports file after 60s")
		}
	}
}

// ready says why the server is not yet a healthy member of a cluster
// with peers others: /healthz (which waits for JetStream's meta leader)
// and a route to each peer (/routez).
func (nd *natsNode) ready(peers int) error {
	select {
	case <-nd.exited:
		return fmt.Errorf("exited:\n%s", nd.log())
	default:
	}
	var h struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := nd.get("/healthz", &h); err != nil {
		return err
	}
	if h.Status != "ok" {
		return fmt.Errorf("healthz %s: %s", h.Status, h.Error)
	}
	var rz struct {
		Routes []struct {
			RemoteName string `json:"remote_name"`
		} `json:"routes"`
	}
	if err := nd.get("/routez", &rz); err != nil {
		return err
	}
	remotes := map[string]bool{}
	for _, r := range rz.Routes {
		remotes[r.RemoteName] = true
	}
	if len(remotes) < peers {
		return fmt.Errorf("routes to %d of %d peers", len(remotes), peers)
	}
	return nil
}

// get decodes the monitor's JSON answer at path into v; a status other
// than 200 is an error (healthz answers 503 with its JSON while not ok).
func (nd *natsNode) get(path string, v any) error {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(nd.monitor + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w: %q", path, err, b)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", path, resp.Status, b)
	}
	return nil
}

// userConns counts the client connections of the user whose public key
// is user, from the server's /connz.
func (nd *natsNode) userConns(t *testing.T, user string) int {
	t.Helper()
	var cz struct {
		Conns []struct {
			AuthorizedUser string `json:"authorized_user"`
		} `json:"connections"`
	}
	if err := nd.get("/connz?auth=true&limit=4096", &cz); err != nil {
		t.Fatalf("connections of %s: %v", nd.name, err)
	}
	n := 0
	for _, c := range cz.Conns {
		if c.AuthorizedUser == user {
			n++
		}
	}
	return n
}

// log is what the server wrote so far.
func (nd *natsNode) log() string {
	b, _ := os.ReadFile(filepath.Join(nd.dir, "server.log"))
	return string(b)
}

// stop ends the server (SIGTERM, then a kill) and waits for it.
func (nd *natsNode) stop(t *testing.T) {
	select {
	case <-nd.exited:
		return
	default:
	}
	nd.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-nd.exited:
	case <-time.After(10 * time.Second):
		t.Logf("nats-server %s did not stop on SIGTERM: killed", nd.name)
		nd.cmd.Process.Kill()
		<-nd.exited
	}
}

// natsUserConns counts user's connections on every node.
func natsUserConns(t *testing.T, nodes []*natsNode, user string) int {
	t.Helper()
	n := 0
	for _, nd := range nodes {
		n += nd.userConns(t, user)
	}
	return n
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
