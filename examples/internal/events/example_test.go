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

// The same event again — same object, type, reason, action and note — is not a second
// Event: the recorder PATCHes the first one's series, which `kubectl describe` shows as
// "(x3 over …)". This stand-in API server prints each request and what it carries.
func ExampleRecorder_Eventf_repeats() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev eventsv1.Event
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			fmt.Println("POST", ev.Reason, ev.Note)
			ev.Name = "example-foo.1"
			body, _ = json.Marshal(ev)
			w.WriteHeader(http.StatusCreated)
		} else {
			fmt.Println(r.Method, r.URL.Path, "series.count", ev.Series.Count)
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()

	rec, err := events.NewRecorder(&rest.Config{Host: srv.URL}, events.Options{ReportingController: "kubeinternals.io/foo-controller"})
	if err != nil {
		fmt.Println(err)
		return
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "example-foo", Namespace: "default"}}
	for range 3 {
		rec.Eventf(context.Background(), d, events.TypeWarning, "ErrResourceExists", "Sync",
			"Resource %q already exists and is not managed by Foo", d.Name)
	}
	// Output:
	// POST ErrResourceExists Resource "example-foo" already exists and is not managed by Foo
	// PATCH /apis/events.k8s.io/v1/namespaces/default/events/example-foo.1 series.count 2
	// PATCH /apis/events.k8s.io/v1/namespaces/default/events/example-foo.1 series.count 3
}
