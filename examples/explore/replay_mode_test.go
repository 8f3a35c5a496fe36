package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		t.Run(addr+" is accepted", func(t *testing.T) {
			ln, err := listenLoopback(addr)
			require.NoError(t, err)
			assert.Contains(t, ln.Addr().String(), "127.0.0.1:")
			ln.Close()
		})
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8077", "example.com:8077", "nonsense"} {
		t.Run(addr+" is refused", func(t *testing.T) {
			_, err := listenLoopback(addr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), addr)
		})
	}
}
