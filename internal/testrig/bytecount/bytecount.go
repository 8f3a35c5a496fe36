// Package bytecount counts the bytes read through a connection or a response body:
// the tests and benchmarks that measure what a watch costs on the wire (gzipped) and
// after the transport decoded it.
package bytecount

import (
	"io"
	"net"
	"sync/atomic"
)

// Conn adds every byte read from the connection to N.
type Conn struct {
	net.Conn
	N *atomic.Int64
}

// Read reads from the connection and counts what it read.
func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.N.Add(int64(n))
	return n, err
}

// Body adds every byte read from the body to N.
type Body struct {
	io.ReadCloser
	N *atomic.Int64
}

// Read reads from the body and counts what it read.
func (b *Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.N.Add(int64(n))
	return n, err
}
