package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/events"
)

// Eventf posts one events.k8s.io/v1 Event; this stand-in API server prints what arrives.
// The Deployment has no apiVersion/kind set, as objects from a cache do: the recorder
// looks its kind up in the scheme.
func ExampleRecorder_Eventf() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev eventsv1.Event
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Println(r.Method, r.URL.Path)
		fmt.Printf("%s %s %s: %s %s/%s %q\n", ev.Type, ev.Reason, ev.Action,
			ev.Regarding.APIVersion, ev.Regarding.Kind, ev.Regarding.Name, ev.Note)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	}))
	defer srv.Close()

	rec, err := events.NewRecorder(&rest.Config{Host: srv.URL}, events.Options{ReportingController: "kubeinternals.io/foo-controller"})
	if err != nil {
		fmt.Println(err)
		return
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "example-foo", Namespace: "default"}}
	rec.Eventf(context.Background(), d, events.TypeWarning, "ErrResourceExists", "Sync",
		"Resource %q already exists and is not managed by Foo", d.Name)
	// Output:
	// POST /apis/events.k8s.io/v1/namespaces/default/events
	// Warning ErrResourceExists Sync: apps/v1 Deployment/example-foo "Resource \"example-foo\" already exists and is not managed by Foo"
}
