package testenv_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// CPUTime counts what a process has run: this test's own process, spinning, reaches
// 100 ms more (ten kernel ticks) well within 10 s of wall time however busy the
// machine; and it fails clearly for a process that does not exist.
func TestCPUTimeCountsWhatAProcessRan(t *testing.T) {
	self := []int{os.Getpid()}
	before, err := testenv.CPUTime(self)
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		now, err := testenv.CPUTime(self)
		require.NoError(t, err)
		if now-before >= 100*time.Millisecond {
			break
		}
		require.True(t, time.Now().Before(deadline), "CPUTime grew only %v in 10 s of spinning", now-before)
	}

	_, err = testenv.CPUTime([]int{1 << 30})
	assert.Error(t, err)
}
