package deltafifo

import "github.com/kubeinternals/informers/indexer"

// rvOf is obj's resourceVersion for the trace, "" for a nil object. Called only when
// a tracer is set: isNil uses reflection.
func rvOf[T indexer.Object](obj T) string {
	if isNil(obj) {
		return ""
	}
	return obj.GetResourceVersion()
}
