package bytecount

import (
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConnAndBodyCountWhatIsRead(t *testing.T) {
	var body atomic.Int64
	b := &Body{ReadCloser: io.NopCloser(strings.NewReader("twelve bytes")), N: &body}
	got, err := io.ReadAll(b)
	require.NoError(t, err)
	assert.Equal(t, "twelve bytes", string(got))
	assert.Equal(t, int64(12), body.Load())

	client, server := net.Pipe()
	defer client.Close()
	go func() { _, _ = server.Write([]byte("hello")); server.Close() }()
	var conn atomic.Int64
	got, err = io.ReadAll(&Conn{Conn: client, N: &conn})
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	assert.Equal(t, int64(5), conn.Load())
}
