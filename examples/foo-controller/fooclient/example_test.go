package fooclient_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
)

// A typed client is a URL builder plus a scheme: this stand-in API server prints the
// request the client sends and answers with a Foo, which comes back as a *v1alpha1.Foo.
func ExampleClient_Foos() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Method, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo",
			"metadata":{"name":"example-foo","namespace":"default","resourceVersion":"7"},
			"spec":{"deploymentName":"example-foo","replicas":1},"status":{"availableReplicas":1}}`)
	}))
	defer srv.Close()

	c, err := fooclient.NewClient(&rest.Config{Host: srv.URL}, fooclient.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	foo, err := c.Foos("default").Get(context.Background(), "example-foo", metav1.GetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s wants %d replicas of %s, %d available (rv %s)\n",
		foo.Name, *foo.Spec.Replicas, foo.Spec.DeploymentName, foo.Status.AvailableReplicas, foo.ResourceVersion)
	// Output:
	// GET /apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos/example-foo
	// example-foo wants 1 replicas of example-foo, 1 available (rv 7)
}
