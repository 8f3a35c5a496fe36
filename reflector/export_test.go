package reflector

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// What the external tests (package reflector_test: the integration tests, which need
// the REST ListerWatcher of package listwatch, which imports this package) may see of
// the internals.

// DescribeCall describes a List or Watch call as the scripted ListerWatcher's calls
// print: "list rv=\"0\" limit=50".
func DescribeCall(verb string, opts metav1.ListOptions) string {
	return call{verb: verb, opts: opts}.String()
}

// BufferWithoutAMap adds items to a watch-list buffer, as initial events, and reports
// whether the buffer never needed its map and how many objects it lists.
func BufferWithoutAMap[T Object](items []T) (noMap bool, listed int, err error) {
	b := newInitialEvents[T]()
	for _, o := range items {
		if err := b.Add(o); err != nil {
			return false, 0, err
		}
	}
	return b.byName == nil, len(b.list()), nil
}
