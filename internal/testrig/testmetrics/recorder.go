// Package testmetrics records what the library hands its metrics, for tests: every value
// of every metric, under a key the test chooses ("lists{foos}", "foos watch_events").
// The reflector's and the informer's metrics tests build their providers on it.
package testmetrics

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Recorder keeps every value each metric received, in order. The zero value is
// ready; it is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	values map[string][]float64 // guarded by mu
}

// Metric records under key: Inc as 1, Set and Observe as the value. It satisfies
// the counter, gauge, summary and histogram interfaces of reflector and informer.
func (r *Recorder) Metric(key string) Metric { return Metric{r, key} }

// Labeled records Inc(label) as 1 under key{label}: a labeled counter.
func (r *Recorder) Labeled(key string) Labeled { return Labeled{r, key} }

// Metric is one recorded metric.
type Metric struct {
	r   *Recorder
	key string
}

func (m Metric) Inc()              { m.r.put(m.key, 1) }
func (m Metric) Set(v float64)     { m.r.put(m.key, v) }
func (m Metric) Observe(v float64) { m.r.put(m.key, v) }

// Labeled is one recorded labeled counter.
type Labeled struct {
	r   *Recorder
	key string
}

func (m Labeled) Inc(label string) { m.r.put(m.key+"{"+label+"}", 1) }

func (r *Recorder) put(key string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.values == nil {
		r.values = map[string][]float64{}
	}
	r.values[key] = append(r.values[key], v)
}

// Values is every value key received, in order.
func (r *Recorder) Values(key string) []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]float64(nil), r.values[key]...)
}

// Last is the last value key received, or -1 if none.
func (r *Recorder) Last(key string) float64 {
	v := r.Values(key)
	if len(v) == 0 {
		return -1
	}
	return v[len(v)-1]
}

// String lists every key with its count and last value, sorted: "key×count=last …",
// for failure messages.
func (r *Recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k, v := range r.values {
		out = append(out, fmt.Sprintf("%s×%d=%v", k, len(v), v[len(v)-1]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
