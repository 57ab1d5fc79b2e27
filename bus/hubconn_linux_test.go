package bus

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// dialRaw dials a fresh listener with Connect's dialer and returns both
// ends; it fails the test unless the dialer's end reads and writes raw.
func dialRaw(t *testing.T) (*rawConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := newHubDialer(nil, 2*time.Second).Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	peer, ok := <-accepted
	if !ok {
		t.Fatal("nothing accepted")
	}
	t.Cleanup(func() { peer.Close() })
	rc, ok := c.(*rawConn)
	if !ok {
		t.Fatalf("Connect's dialer made a %T, not a connection that reads and writes raw", c)
	}
	return rc, peer
}

// TestHubConnMovesBytes: what the hub's connection writes arrives whole
// and in order, across writes larger than the socket takes at once (the
// raw write waits on the netpoller and goes on), and the other side's
// close reads as io.EOF.
func TestHubConnMovesBytes(t *testing.T) {
	c, peer := dialRaw(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(peer)
		got <- b
	}()
	n, err := c.Write(want)
	if err != nil || n != len(want) {
		t.Fatalf("Write = %d, %v; want %d", n, err, len(want))
	}
	c.Conn.(*net.TCPConn).CloseWrite()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the other side read %d bytes, not the %d written in order", len(b), len(want))
	}

	if _, err := peer.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err = io.ReadFull(c, buf[:6])
	if err != nil || string(buf[:n]) != "PING\r\n" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	peer.Close()
	if n, err := c.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("Read after the other side closed = %d, %v; want io.EOF", n, err)
	}
}

// TestHubConnDeadlines: nats.go bounds its connect handshake and its
// writes with deadlines; the raw connection's reads and writes end at
// them with os.ErrDeadlineExceeded, a timeout, as the net package's do,
// and work again once the deadline is lifted.
func TestHubConnDeadlines(t *testing.T) {
	c, peer := dialRaw(t)
	buf := make([]byte, 64)
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	start := time.Now()
	_, err := c.Read(buf)
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past its deadline = %v; want a timeout", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("Read returned %v after its deadline", waited)
	}
	c.SetReadDeadline(time.Time{})
	go peer.Write([]byte("INFO\r\n"))
	if n, err := c.Read(buf); err != nil || n == 0 {
		t.Fatalf("Read with the deadline lifted = %d, %v", n, err)
	}

	// Nobody reads the other side: the socket fills and the write waits
	// until its deadline.
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	n, err := c.Write(make([]byte, 64<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Write past its deadline = %d, %v; want a timeout", n, err)
	}
	if n <= 0 || n >= 64<<20 {
		t.Fatalf("Write past its deadline wrote %d bytes; want what the socket took", n)
	}
}

// TestHubConnClose: a read blocked on the connection ends when the
// connection is closed (nats.go's Close and reconnect), with net.ErrClosed.
func TestHubConnClose(t *testing.T) {
	c, _ := dialRaw(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 64))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // the read parked, or about to: either way it must end
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Read ended by Close = %v; want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read still blocked after Close")
	}
	if _, err := c.Write([]byte("PUB\r\n")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after Close = %v; want net.ErrClosed", err)
	}
}

// TestHubConnUnderTLS: nats.go layers TLS on the connection the dialer
// returns; a handshake and an exchange both ways go through the raw reads
// and writes.
func TestHubConnUnderTLS(t *testing.T) {
	files := testutil.TLS(t, "localhost")
	cert, err := tls.LoadX509KeyPair(files.Cert, files.Key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	c, peer := dialRaw(t)
	srv := tls.Server(peer, &tls.Config{Certificates: []tls.Certificate{cert}})
	echoed := make(chan error, 1)
	go func() {
		buf := make([]byte, 1<<20)
		n, err := io.ReadFull(srv, buf)
		if err == nil {
			_, err = srv.Write(buf[:n])
		}
		echoed <- err
	}()
	cl := tls.Client(c, &tls.Config{ServerName: "localhost", RootCAs: roots})
	cl.SetDeadline(time.Now().Add(30 * time.Second))
	if err := cl.Handshake(); err != nil {
		t.Fatalf("TLS handshake over the raw connection: %v", err)
	}
	want := bytes.Repeat([]byte("HPUB x 0 0\r\n"), (1<<20)/12+1)[:1<<20]
	if _, err := cl.Write(want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(cl, got); err != nil {
		t.Fatal(err)
	}
	if err := <-echoed; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the exchange under TLS came back changed")
	}
}
