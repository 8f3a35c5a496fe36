package markdown

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlockAfter(t *testing.T) {
	page := "# Title\n```sh\nnot this\n```\nWhat it printed:\n\ntext\n```go\npackage main\n\nfunc main() {}\n```\n```\nnor this\n```\n"
	t.Run("the first block after the marker line, without its fences", func(t *testing.T) {
		body, err := BlockAfter(page, "What it printed")
		require.NoError(t, err)
		assert.Equal(t, "package main\n\nfunc main() {}\n", body)
	})
	t.Run("a missing marker is an error", func(t *testing.T) {
		_, err := BlockAfter(page, "nowhere")
		assert.ErrorContains(t, err, `no line contains "nowhere"`)
	})
	t.Run("a block that never closes is an error", func(t *testing.T) {
		_, err := BlockAfter("marker\n```\nopen\n", "marker")
		assert.ErrorContains(t, err, "no complete fenced code block")
	})
}
