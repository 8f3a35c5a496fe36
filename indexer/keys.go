package indexer

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ErrMalformedKey is wrapped by every error SplitMetaNamespaceKey returns.
var ErrMalformedKey = errors.New("malformed object key")

// ErrNilObject is returned by the key functions when asked for the key of a nil object.
var ErrNilObject = errors.New("object is nil")

// KeyFunc computes the key an object is stored under. Keys must be unique per object
// and stable for the object's lifetime.
//
// client-go: tools/cache/store.go KeyFunc
type KeyFunc[T any] func(obj T) (string, error)

// MetaNamespaceKeyFunc returns "namespace/name" for a namespaced object and "name" for a
// cluster-scoped one. It is the default key function of every store in this module.
//
// client-go: tools/cache/store.go MetaNamespaceKeyFunc
func MetaNamespaceKeyFunc[T Object](obj T) (string, error) {
	if isNil(obj) {
		return "", ErrNilObject
	}
	return ObjectKey(obj.GetNamespace(), obj.GetName()), nil
}

// ObjectKey is the key MetaNamespaceKeyFunc gives an object with this namespace and name.
// A Lister's Get uses it to look an object up without having the object.
//
// client-go: tools/cache/object-names.go ObjectName.String
func ObjectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// ObjectName is an object's namespace and name: the two parts of its key, apart. A
// delete handler gets one from DeletedObject.GetObjectName (package informer) even
// when all it has is a tombstone's key.
//
// Simplified: client-go's ObjectName also has NewObjectName, Parts, ParseObjectName
// and conversions to and from types.NamespacedName; a struct literal,
// SplitMetaNamespaceKey and the two fields cover them here.
//
// client-go: tools/cache/object-names.go ObjectName
type ObjectName struct {
	Namespace string
	Name      string
}

// String is the object's key: ObjectKey(n.Namespace, n.Name), so "namespace/name", or
// the name alone when there is no namespace.
//
// client-go: tools/cache/object-names.go ObjectName.String
func (n ObjectName) String() string { return ObjectKey(n.Namespace, n.Name) }

// appendObjectKey appends ObjectKey(namespace, name) to dst. The store uses it to build
// keys in a stack buffer (see table.find).
func appendObjectKey(dst []byte, namespace, name string) []byte {
	if namespace != "" {
		dst = append(dst, namespace...)
		dst = append(dst, '/')
	}
	return append(dst, name...)
}

// SplitMetaNamespaceKey is the inverse of MetaNamespaceKeyFunc. A key with one part is a
// cluster-scoped name; with two parts it is namespace/name. Anything else — an empty
// key, an empty name, an empty namespace before a slash, or more than one slash — is
// rejected with an error wrapping ErrMalformedKey.
//
// Differences from client-go: client-go accepts "ns/" (empty name) and "/name" (empty
// namespace) silently; both can only come from a bug in the caller, so we reject them.
//
// client-go: tools/cache/store.go SplitMetaNamespaceKey
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	ns, n, found := strings.Cut(key, "/")
	switch {
	case !found && key != "":
		return "", key, nil
	case !found:
		return "", "", fmt.Errorf("%w: empty key", ErrMalformedKey)
	case ns == "":
		return "", "", fmt.Errorf("%w: %q has an empty namespace", ErrMalformedKey, key)
	case n == "":
		return "", "", fmt.Errorf("%w: %q has an empty name", ErrMalformedKey, key)
	case strings.Contains(n, "/"):
		return "", "", fmt.Errorf("%w: %q has more than one '/'", ErrMalformedKey, key)
	}
	return ns, n, nil
}

// isNil reports whether obj is a nil interface or an interface holding a nil pointer,
// so that key functions return ErrNilObject instead of panicking on obj.GetName().
//
// Why reflect: T is usually a pointer type, and a nil *v1.Pod inside an interface is
// not == nil. reflect.ValueOf on a pointer does not allocate.
func isNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
