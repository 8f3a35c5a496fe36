// Package objects holds the two helpers the reflector and the REST ListerWatcher both
// need about a Kubernetes object: its key and whether it is nil.
package objects

import "reflect"

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
