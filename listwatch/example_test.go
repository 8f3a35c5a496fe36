package listwatch_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/listwatch"
)

// Building the real thing: a REST client for the group version, a ListerWatcher
// for the resource, and a reflector into your store (a DeltaFIFO, an indexer, …).
func ExampleNew() {
	// Usually from a kubeconfig, e.g. with k8s.io/client-go/tools/clientcmd.
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}
	client, err := listwatch.NewRESTClient(cfg, corev1.SchemeGroupVersion)
	if err != nil {
		fmt.Println(err)
		return
	}
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		fmt.Println(err)
		return
	}
	lw, err := listwatch.New[*corev1.ConfigMap](client, listwatch.Options{
		Resource:      "configmaps",
		Namespace:     "default",
		LabelSelector: "app=web",
		Scheme:        scheme,
		Protobuf:      true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Then: r, err := reflector.NewReflector(lw, store, reflector.Options[*corev1.ConfigMap]{})
	// (a watch-list; InitialList: reflector.PagedList for the classic LIST)
	// and r.Run(ctx). Nothing has been sent to the server yet.
	fmt.Printf("%T\n", lw)
	// Output: *listwatch.RESTListerWatcher[*k8s.io/api/core/v1.ConfigMap]
}
