package deltafifo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

func TestDeltaTypeString(t *testing.T) {
	tests := []struct {
		name string
		typ  DeltaType
		want string
	}{
		{"Added is spelled as in client-go", Added, "Added"},
		{"Updated is spelled as in client-go", Updated, "Updated"},
		{"Deleted is spelled as in client-go", Deleted, "Deleted"},
		{"Replaced is spelled as in client-go", Replaced, "Replaced"},
		{"Sync is spelled as in client-go", Sync, "Sync"},
		{"ReplacedAll is spelled as in client-go", ReplacedAll, "ReplacedAll"},
		{"SyncAll is spelled as in client-go", SyncAll, "SyncAll"},
		{"Bookmark is spelled as in client-go", Bookmark, "Bookmark"},
		{"the zero value is not a valid type", DeltaType(0), "DeltaType(0)"},
		{"an out-of-range value prints its number", DeltaType(42), "DeltaType(42)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.typ.String())
		})
	}
}

func TestDeltasOldestNewest(t *testing.T) {
	t.Run("an empty Deltas has neither oldest nor newest", func(t *testing.T) {
		var d Deltas[*corev1.ConfigMap]
		assert.Nil(t, d.Oldest())
		assert.Nil(t, d.Newest())
	})
	t.Run("the oldest is first and the newest is last", func(t *testing.T) {
		d := Deltas[*corev1.ConfigMap]{
			{Type: Added, Object: cm("ns", "a", "1")},
			{Type: Updated, Object: cm("ns", "a", "2")},
			{Type: Deleted, Object: cm("ns", "a", "3")},
		}
		assert.Equal(t, "1", d.Oldest().Object.ResourceVersion)
		assert.Equal(t, "3", d.Newest().Object.ResourceVersion)
	})
}
