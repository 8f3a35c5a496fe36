// Package promprovider records the library's metrics in prometheus/client_golang
// collectors: one Provider is a workqueue.MetricsProvider, an informer.MetricsProvider
// (its reflector's metrics included) and a leaderelection.MetricsProvider, under the
// names those packages export (workqueue.DepthMetricName, reflector.RelistsMetricName,
// informer.HandlerBacklogMetricName, leaderelection.LeaderMetricName, …).
//
//	reg := prometheus.NewRegistry()
//	metrics, err := promprovider.New(reg)
//	…
//	factory := informer.NewFactory(cfg, informer.FactoryOptions{MetricsProvider: metrics})
//	queue := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{
//		Options: workqueue.Options{Name: "foos", MetricsProvider: metrics}, …})
//	elector, err := leaderelection.New(leaderelection.Config{MetricsProvider: metrics, …})
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Why a module of its own
//
// The library (github.com/kubeinternals/informers) imports no metrics library: every
// stage takes a provider of small interfaces, and nil costs nothing. This package is a
// separate Go module, github.com/kubeinternals/informers/promprovider, so that
// prometheus/client_golang enters the module graph of a program that asks for it and of
// no other. docs/use-in-your-module.md shows a program that `go get`s it; a test builds
// that program in a module of its own, through a module proxy, as a user would.
//
// # Labels
//
// Every metric has the label "name": the queue's, informer's or reflector's
// Options.Name (a Factory informer's: its resource), or the election's Config.Name. The
// per-handler metrics add "handler", the reflector's relists "reason" and its watch
// events "type". A removed handler's series are deleted (DeleteHandlerMetrics).
//
// # Differences from client-go
//
// client-go's adapters (k8s.io/component-base/metrics/prometheus/workqueue, …/clientgo)
// register on a process-wide registry from a package init and install themselves with a
// SetProvider that only the first caller wins. Here the program passes the registry, and
// registering twice on one registry is an error New returns. The workqueue's and the
// informer's first three metrics and the election's first two have client-go's names
// and buckets; the others are this library's (each package's MetricsProvider says which).
// Names, help texts, labels and buckets come from package metricdefs, which
// foo-controller's text exporter reads too.
//
// # Reading order
//
// provider.go (New: a collector per metricdefs description), then workqueue.go,
// reflector.go, informer.go and leaderelection.go: one method per metric.
package promprovider
