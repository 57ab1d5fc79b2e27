//go:build !linux

package bus

import "net"

// rawConnOf returns c: elsewhere than on Linux the hub's connection reads
// and writes the net package's way.
func rawConnOf(c net.Conn) net.Conn { return c }
