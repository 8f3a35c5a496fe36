package metricdefs_test

import (
	"fmt"

	"github.com/kubeinternals/informers/metricdefs"
	"github.com/kubeinternals/informers/reflector"
)

// A provider for another metrics library builds each metric from its description.
func ExampleGet() {
	d, _ := metricdefs.Get(reflector.RelistsMetricName)
	fmt.Println(d.Name, d.Kind == metricdefs.Counter, d.Labels)
	// Output: reflector_relists_total true [name reason]
}
