// Command 01-raw-list-watch does by hand what a reflector does for an informer: one LIST
// of the ConfigMaps in a namespace, then a WATCH from the list's resourceVersion. It
// prints each line of the watch response exactly as it arrives on the wire, then what
// that line decodes to. Run it, and create, edit and delete a ConfigMap in another
// terminal. See README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
)

func main() {
	flags := kube.AddFlags(flag.CommandLine)
	namespace := flag.String("namespace", "default", "namespace whose ConfigMaps to list and watch")
	timeout := flag.Duration("timeout", 60*time.Second, "stop watching after this long")
	flag.Parse()

	log := flags.MustLogger()
	cfg := flags.MustConfig(log)

	ctx, stop := kube.SignalContext(context.Background())
	defer stop()
	if err := run(ctx, os.Stdout, cfg, *namespace, *timeout); err != nil {
		log.Error("failed", "err", err)
		os.Exit(1)
	}
}

// run lists, then watches until timeout passes or ctx ends.
func run(ctx context.Context, out io.Writer, cfg *rest.Config, namespace string, timeout time.Duration) error {
	// A typed REST client is a config plus a scheme that knows the Go types. Core types
	// live under /api/v1; every named group under /apis/<group>/<version>.
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"}) // Status, for errors
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return err
	}

	// 1. LIST: a snapshot, and the resourceVersion it was taken at.
	list := &corev1.ConfigMapList{}
	if err := client.Get().Namespace(namespace).Resource("configmaps").Do(ctx).Into(list); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	fmt.Fprintf(out, "LIST %d configmaps at resourceVersion %s\n", len(list.Items), list.ResourceVersion)
	for _, cm := range list.Items {
		fmt.Fprintf(out, "  %s (rv %s)\n", cm.Name, cm.ResourceVersion)
	}

	// 2. WATCH from exactly that resourceVersion: every change after the snapshot, none
	// missed, none repeated. The server ends the stream after timeoutSeconds; our own
	// deadline, a little later, is only a safety net.
	seconds := max(1, int(timeout.Seconds()))
	req := client.Get().Namespace(namespace).Resource("configmaps").
		Param("watch", "true").
		Param("resourceVersion", list.ResourceVersion).
		Param("allowWatchBookmarks", "true").
		Param("timeoutSeconds", strconv.Itoa(seconds))
	fmt.Fprintf(out, "WATCH %s\n", req.URL())
	ctx, cancel := context.WithTimeout(ctx, time.Duration(seconds)*time.Second+5*time.Second)
	defer cancel()
	stream, err := req.Stream(ctx) // the raw body: one JSON object per line, as chunks arrive
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer stream.Close()

	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	lines := bufio.NewScanner(stream)
	lines.Buffer(make([]byte, 0, 64<<10), 16<<20) // a ConfigMap may hold up to 1 MiB
	for lines.Scan() {
		fmt.Fprintf(out, "wire: %s\n", lines.Bytes())
		// Each line is a WatchEvent: {"type": ..., "object": <the full object>}.
		var ev metav1.WatchEvent
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			return fmt.Errorf("decode event: %w", err)
		}
		obj, _, err := decoder.Decode(ev.Object.Raw, nil, nil)
		if err != nil {
			return fmt.Errorf("decode %s object: %w", ev.Type, err)
		}
		switch o := obj.(type) {
		case *corev1.ConfigMap: // ADDED, MODIFIED, DELETED, and BOOKMARK (only an RV)
			fmt.Fprintf(out, "  → %s configmap %q rv=%s\n", ev.Type, o.Name, o.ResourceVersion)
		case *metav1.Status: // ERROR, e.g. 410 Gone: the RV is too old, LIST again
			fmt.Fprintf(out, "  → %s status %d %s: %s\n", ev.Type, o.Code, o.Reason, o.Message)
		default:
			fmt.Fprintf(out, "  → %s %T\n", ev.Type, obj)
		}
	}
	// A clean end (the server's timeout) or our context ending (Ctrl-C) is normal.
	if err := lines.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("read watch: %w", err)
	}
	fmt.Fprintln(out, "watch ended")
	return nil
}
