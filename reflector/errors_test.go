package reflector

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestErrorClassification(t *testing.T) {
	legacyTooLargeMessage := apierrors.NewTimeoutError("Too large resource version: 10, current: 5", 1)
	legacyTooLargeCause := apierrors.NewTimeoutError("timeout", 1)
	legacyTooLargeCause.ErrStatus.Details.Causes = []metav1.StatusCause{{Message: "Too large resource version"}}
	tests := []struct {
		name                         string
		err                          error
		expired, tooLarge, retriable bool
	}{
		{"410 Expired is an expired RV", errExpired(), true, false, false},
		//lint:ignore SA1019 NewGone is what servers before 1.18 sent; the reflector must still recognise it.
		{"410 Gone (servers before 1.18) is an expired RV", apierrors.NewGone("gone"), true, false, false},
		{"a wrapped 410 is still an expired RV", fmt.Errorf("list: %w", errExpired()), true, false, false},
		{"the ResourceVersionTooLarge cause is a too-large RV", errTooLargeRV(), false, true, false},
		{"a Timeout saying Too large resource version (1.17 and older) is a too-large RV", legacyTooLargeMessage, false, true, false},
		{"a Timeout with that cause message (1.17–1.18.5) is a too-large RV", legacyTooLargeCause, false, true, false},
		{"a plain Timeout is neither", apierrors.NewTimeoutError("slow", 1), false, false, false},
		{"429 is retriable without a relist", errTooManyRequests(), false, false, true},
		{"connection refused is retriable without a relist", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), false, false, true},
		{"a 500 is none of them", errInternal(), false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.expired, isExpiredError(tt.err), "expired")
			assert.Equal(t, tt.tooLarge, isTooLargeResourceVersionError(tt.err), "too large")
			assert.Equal(t, tt.retriable, isWatchErrorRetriable(tt.err), "retriable")
		})
	}
}

func TestStatusError(t *testing.T) {
	t.Run("an Error event's status becomes the matching API error", func(t *testing.T) {
		s := apierrors.NewForbidden(cmResource, "x", errors.New("no")).ErrStatus
		assert.True(t, apierrors.IsForbidden(statusError(&s)))
	})
	t.Run("an Error event without a status is still an error", func(t *testing.T) {
		require.Error(t, statusError(nil))
	})
}

func TestListWatchFuncs(t *testing.T) {
	t.Run("a ListWatch without functions returns ErrNoFunc instead of panicking", func(t *testing.T) {
		var lw ListWatch[cmT]
		_, err := lw.List(t.Context(), metav1.ListOptions{})
		require.ErrorIs(t, err, ErrNoFunc)
		_, err = lw.Watch(t.Context(), metav1.ListOptions{})
		require.ErrorIs(t, err, ErrNoFunc)
	})
}

func TestFakeWatch(t *testing.T) {
	t.Run("Send after Stop returns false instead of blocking or panicking", func(t *testing.T) {
		w := NewFakeWatch[cmT]()
		w.Stop()
		w.Stop()
		assert.False(t, w.Add(cm("a", "1")))
		_, open := <-w.ResultChan()
		assert.False(t, open)
	})
	t.Run("Close ends the stream from the server side", func(t *testing.T) {
		w := NewFakeWatch[cmT]()
		w.Close()
		_, open := <-w.ResultChan()
		assert.False(t, open)
		assert.False(t, w.Modify(cm("a", "1")))
		w.Stop()
	})
}
