package kube

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/kubeconfig"
)

func TestNewLogger(t *testing.T) {
	t.Run("records below the level are dropped and the rest are kept", func(t *testing.T) {
		var buf bytes.Buffer
		log, err := NewLogger(&buf, "warn", "text")
		require.NoError(t, err)
		log.Info("quiet")
		log.Warn("loud")
		assert.NotContains(t, buf.String(), "quiet")
		assert.Contains(t, buf.String(), "msg=loud")
	})
	t.Run("debug level lets debug records through", func(t *testing.T) {
		var buf bytes.Buffer
		log, err := NewLogger(&buf, "debug", "")
		require.NoError(t, err)
		log.Debug("detail")
		assert.Contains(t, buf.String(), "msg=detail")
	})
	t.Run("empty level and format mean info and text", func(t *testing.T) {
		var buf bytes.Buffer
		log, err := NewLogger(&buf, "", "")
		require.NoError(t, err)
		log.Debug("hidden")
		log.Info("shown", "k", "v")
		assert.NotContains(t, buf.String(), "hidden")
		assert.Contains(t, buf.String(), "msg=shown k=v")
	})
	t.Run("json format writes one JSON object per record", func(t *testing.T) {
		var buf bytes.Buffer
		log, err := NewLogger(&buf, "error", "json")
		require.NoError(t, err)
		log.Error("boom", "key", "value")
		var rec map[string]any
		require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
		assert.Equal(t, "boom", rec["msg"])
		assert.Equal(t, "value", rec["key"])
		assert.Equal(t, "ERROR", rec["level"])
	})
	t.Run("an unknown level is a clear error", func(t *testing.T) {
		_, err := NewLogger(&bytes.Buffer{}, "loud", "text")
		require.ErrorIs(t, err, ErrBadLogFlag)
		assert.Contains(t, err.Error(), `"loud"`)
	})
	t.Run("an unknown format is a clear error", func(t *testing.T) {
		_, err := NewLogger(&bytes.Buffer{}, "info", "xml")
		require.ErrorIs(t, err, ErrBadLogFlag)
		assert.Contains(t, err.Error(), `"xml"`)
	})
}

func TestAddFlags(t *testing.T) {
	t.Run("defaults are no kubeconfig, info level and text format", func(t *testing.T) {
		f := AddFlags(flag.NewFlagSet("x", flag.ContinueOnError))
		assert.Equal(t, Flags{LogLevel: "info", LogFormat: "text"}, *f)
	})
	t.Run("parsed flags land in the struct and drive the logger", func(t *testing.T) {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		f := AddFlags(fs)
		require.NoError(t, fs.Parse([]string{"-kubeconfig=/k", "-log-level=error", "-log-format=json"}))
		assert.Equal(t, Flags{Kubeconfig: "/k", LogLevel: "error", LogFormat: "json"}, *f)

		var buf bytes.Buffer
		log, err := f.Logger(&buf)
		require.NoError(t, err)
		log.Warn("dropped")
		assert.Empty(t, buf.String())
	})
	t.Run("Config loads the file the flag names", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cfg")
		require.NoError(t, os.WriteFile(path, []byte(`{"apiVersion": "v1", "kind": "Config",
"clusters": [{"name": "c", "cluster": {"server": "https://flags.example:6443"}}],
"contexts": [{"name": "x", "context": {"cluster": "c"}}], "current-context": "x"}`), 0o600))
		f := &Flags{Kubeconfig: path}
		cfg, src, err := f.Config()
		require.NoError(t, err)
		assert.Equal(t, kubeconfig.SourceFlag, src)
		assert.Equal(t, "https://flags.example:6443", cfg.Host)
	})
}
