package testenv

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLaunchStartsOverOnlyWhenItLostAPortItChoseItself(t *testing.T) {
	taken := errors.New("etcd exited: exit status 1; last log lines:\n... listen tcp 127.0.0.1:42469: bind: address already in use")
	other := errors.New("kube-apiserver not ready after 1m30s")
	cases := []struct {
		name string
		opts Options
		err  error
		want bool
	}{
		{"a free port taken by another process before the bind: start over", Options{}, taken, true},
		{"a fixed port in use: that is the answer (make cluster with a cluster running)", Options{APIServerPort: 6443, EtcdPort: 2379}, taken, false},
		{"any other error: no retry", Options{}, other, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, lostFreePort(c.opts, c.err))
		})
	}
}
