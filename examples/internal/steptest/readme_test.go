package steptest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLineRegexp(t *testing.T) {
	for _, tt := range []struct {
		sample, output string
		match          bool
	}{
		{"late  add    demo rv=775 initial=false", "late  add    demo rv=12 initial=false", true},
		{"late  add    demo rv=775 initial=false", "late  add    demo rv=12 initial=true", false},
		{"early resync x rv=256→256", "early resync x rv=3→3", true},
		{"Replace  1 items at rv 330: [x]", "Replace  1 items at rv 9: [x]", true},
		{"Replace  1 items at rv 330: [x]", "Replace  2 items at rv 9: [x]", false},
		{`wire: {"type":"ADDED",…"data":{"k":"v"}}`, `wire: {"type":"ADDED","object":{}, "data":{"k":"v"}}`, true},
		{"a (b) [c] *d+ $e", "a (b) [c] *d+ $e", true},
		{"a line", "a line and more", false},
		{"+101ms  flaky", "+100ms  flaky", false},
	} {
		assert.Equal(t, tt.match, lineRegexp(tt.sample).MatchString(tt.output), "%q ~ %q", tt.sample, tt.output)
	}
}

func TestSample(t *testing.T) {
	readme := filepath.Join(t.TempDir(), "README.md")
	text := "# x\n\n```sh\nnot this\n```\n\nSample output:\n\n```\ntime=2026 level=INFO msg=connecting\nline one\n…\nline two\n```\n\n```\nnot this either\n```\n"
	if err := os.WriteFile(readme, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	assert.Equal(t, []string{"line one", "…", "line two"}, Sample(t, readme, "Sample output"))
}

// recorder is a T that remembers whether an assertion failed.
type recorder struct{ failed bool }

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}

func TestAssertSample(t *testing.T) {
	output := "a rv=1\nnoise\nb rv=2\nc rv=3\n"
	t.Run("in order", func(t *testing.T) {
		ok := &recorder{}
		AssertSampleInOrder(ok, []string{"a rv=9", "c rv=9"}, output)
		assert.False(t, ok.failed)
		bad := &recorder{}
		AssertSampleInOrder(bad, []string{"c rv=9", "a rv=9"}, output)
		assert.True(t, bad.failed)
	})
	t.Run("any order", func(t *testing.T) {
		ok := &recorder{}
		AssertSampleAnyOrder(ok, []string{"c rv=9", "a rv=9"}, output)
		assert.False(t, ok.failed)
		bad := &recorder{}
		AssertSampleAnyOrder(bad, []string{"d rv=9"}, output)
		assert.True(t, bad.failed)
	})
}
