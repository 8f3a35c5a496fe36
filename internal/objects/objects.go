// Package objects holds the two helpers the reflector and the REST ListerWatcher both
// need about a Kubernetes object: its key and whether it is nil.
package objects

import (
	"reflect"
	"strconv"
)

// Key is namespace/name, or name for a cluster-scoped object: the key client-go's
// MetaNamespaceKeyFunc gives.
//
// client-go: tools/cache/object-names.go ObjectName.String
func Key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// IsNil reports whether obj is nil or a nil pointer inside an interface.
//
// Why reflect: T is usually a pointer type, and a nil *v1.Pod inside an interface is
// not == nil. reflect.ValueOf on a pointer does not allocate.
func IsNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// ResourceVersionMetric is rv as a metric's value: its last 15 digits, so that the
// float64 a metric holds represents it exactly (2^53 has 16). false when rv is not a
// number (only etcd-backed servers promise one).
//
// client-go: tools/cache/thread_safe_store.go parseRVForMetricsWithTruncation
func ResourceVersionMetric(rv string) (float64, bool) {
	if len(rv) > 15 {
		rv = rv[len(rv)-15:]
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	return float64(n), err == nil
}
