package metricstext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseNamesALineItCannotRead(t *testing.T) {
	_, err := Parse(strings.NewReader("# HELP x X.\nx{name=\"a\"} many\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `x{name=\"a\"} many`)
	_, err = Parse(strings.NewReader("lonely\n"))
	assert.ErrorContains(t, err, "not a sample line")
}
