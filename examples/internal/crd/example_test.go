package crd_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
	"github.com/kubeinternals/informers/examples/internal/crd"
)

// InstallCRD applies the manifest with server-side apply, then reads the CRD until it
// is Established. This stand-in API server reports Established on the first read.
func ExampleInstallCRD() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			fmt.Println(r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		} else {
			fmt.Println(r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":{"conditions":[
			{"type":"NamesAccepted","status":"True"},{"type":"Established","status":"True"}]}}`)
	}))
	defer srv.Close()

	names, err := crd.InstallCRD(context.Background(), &rest.Config{Host: srv.URL}, artifacts.CRD(), crd.Options{})
	fmt.Println(names, err)
	// Output:
	// PATCH /apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.samplecontroller.k8s.io application/apply-patch+yaml
	// GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.samplecontroller.k8s.io
	// [foos.samplecontroller.k8s.io] <nil>
}
