package trace

import (
	"errors"
	"fmt"
	"time"
)

// eventLine is one Event as a recording line stores it. Its field names are the
// format's (docs/recordings/README.md); every field but t, stage and kind is left out at its
// zero value.
//
// Invariant: it has one field per Event field. TestARecordingKeepsEveryEventField
// fails when Event gains a field this type does not carry — adding one is a new
// format version.
type eventLine struct {
	T          int64  `json:"t"` // nanoseconds since the header's start
	Stage      Stage  `json:"stage"`
	Kind       Kind   `json:"kind"`
	Source     string `json:"source,omitempty"`
	Informer   string `json:"informer,omitempty"`
	Key        string `json:"key,omitempty"`
	RV         string `json:"rv,omitempty"`
	Type       string `json:"type,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Detail     string `json:"detail,omitempty"`
	Attrs      string `json:"attrs,omitempty"` // since version 2
	Items      int    `json:"items,omitempty"`
	Paged      bool   `json:"paged,omitempty"`
	Tombstones int    `json:"tombstones,omitempty"`
	Pending    int    `json:"pending,omitempty"`
	QueueLen   int    `json:"queueLen,omitempty"`
	Listeners  int    `json:"listeners,omitempty"`
	Skipped    int    `json:"skipped,omitempty"`
	Backlog    int    `json:"backlog,omitempty"`
	Requeues   int    `json:"requeues,omitempty"`
	Duration   int64  `json:"duration,omitempty"` // nanoseconds
}

func lineOf(e Event, start time.Time) eventLine {
	return eventLine{
		T: int64(e.Time.Sub(start)), Stage: e.Stage, Kind: e.Kind, Source: e.Source, Informer: e.Informer,
		Key: e.Key, RV: e.ResourceVersion, Type: e.Type, Reason: e.Reason, Detail: e.Detail, Attrs: e.Attrs,
		Items: e.Items, Paged: e.Paged, Tombstones: e.Tombstones, Pending: e.Pending, QueueLen: e.QueueLen,
		Listeners: e.Listeners, Skipped: e.Skipped, Backlog: e.Backlog, Requeues: e.Requeues,
		Duration: int64(e.Duration),
	}
}

// event is the Event the line stores, in a recording of format version, or why the
// line is not one.
func (l eventLine) event(start time.Time, version int) (Event, error) {
	if l.Stage == "" || l.Kind == "" {
		return Event{}, errors.New(`an event needs a "stage" and a "kind"`)
	}
	// Why: version 1 had no log lines; one in a file that says version 1 was written
	// by something that does not keep the format.
	if version < 2 && (l.Attrs != "" || l.Stage == Log) {
		return Event{}, fmt.Errorf(`a log line (stage %q, "attrs") in a version %d recording: log lines came with version 2`, Log, version)
	}
	for _, n := range []int{l.Items, l.Tombstones, l.Pending, l.QueueLen, l.Listeners, l.Skipped, l.Backlog, l.Requeues} {
		if n < 0 {
			return Event{}, errors.New("a count is negative")
		}
	}
	if l.Duration < 0 {
		return Event{}, errors.New(`"duration" is negative`)
	}
	return Event{
		Time: start.Add(time.Duration(l.T)), Stage: l.Stage, Kind: l.Kind, Source: l.Source, Informer: l.Informer,
		Key: l.Key, ResourceVersion: l.RV, Type: l.Type, Reason: l.Reason, Detail: l.Detail, Attrs: l.Attrs,
		Items: l.Items, Paged: l.Paged, Tombstones: l.Tombstones, Pending: l.Pending, QueueLen: l.QueueLen,
		Listeners: l.Listeners, Skipped: l.Skipped, Backlog: l.Backlog, Requeues: l.Requeues,
		Duration: time.Duration(l.Duration),
	}, nil
}
