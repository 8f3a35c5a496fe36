package promprovider

import "github.com/kubeinternals/informers/reflector"

// reflectorMetrics are the reflector's: lists, watches, relists by reason, watch
// events by type, the time of the last event, and whether a watch is open.
func reflectorMetrics() []definition {
	return []definition{
		{reflector.ListsMetricName, counter, "Lists (LIST or watch-list) that replaced the cache.", byName, nil},
		{reflector.ListDurationMetricName, histogram, "Seconds from a list's request to its last object.", byName, longBuckets},
		{reflector.ItemsInListMetricName, histogram, "Objects per list.", byName, itemBuckets},
		{reflector.WatchesMetricName, counter, "Watches the server opened, a watch-list's stream included.", byName, nil},
		{reflector.ShortWatchesMetricName, counter, "Watches that ended within a second with no event.", byName, nil},
		{reflector.WatchDurationMetricName, histogram, "Seconds from a watch's request to its end.", byName, longBuckets},
		{reflector.ItemsInWatchMetricName, histogram, "Events per watch, bookmarks excluded.", byName, itemBuckets},
		{reflector.LastResourceVersionMetricName, gauge, "The reflector's last synced resourceVersion (its last 15 digits).", byName, nil},
		{reflector.RelistsMetricName, counter, "Fetches of the whole state after the first, by reason.", []string{"name", "reason"}, nil},
		{reflector.WatchEventsMetricName, counter, "Watch events, by type.", []string{"name", "type"}, nil},
		{reflector.LastEventTimeMetricName, gauge, "Unix time of the last watch event or bookmark.", byName, nil},
		{reflector.WatchOpenMetricName, gauge, "1 while a watch stream is open, 0 while none is.", byName, nil},
	}
}

func (p *Provider) NewListsMetric(name string) reflector.CounterMetric {
	return p.counters[reflector.ListsMetricName].WithLabelValues(name)
}

func (p *Provider) NewListDurationMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.ListDurationMetricName].WithLabelValues(name)
}

func (p *Provider) NewItemsInListMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.ItemsInListMetricName].WithLabelValues(name)
}

func (p *Provider) NewWatchesMetric(name string) reflector.CounterMetric {
	return p.counters[reflector.WatchesMetricName].WithLabelValues(name)
}

func (p *Provider) NewShortWatchesMetric(name string) reflector.CounterMetric {
	return p.counters[reflector.ShortWatchesMetricName].WithLabelValues(name)
}

func (p *Provider) NewWatchDurationMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.WatchDurationMetricName].WithLabelValues(name)
}

func (p *Provider) NewItemsInWatchMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.ItemsInWatchMetricName].WithLabelValues(name)
}

func (p *Provider) NewLastResourceVersionMetric(name string) reflector.GaugeMetric {
	return p.gauges[reflector.LastResourceVersionMetricName].WithLabelValues(name)
}

func (p *Provider) NewRelistsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.counters[reflector.RelistsMetricName], name}
}

func (p *Provider) NewWatchEventsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.counters[reflector.WatchEventsMetricName], name}
}

func (p *Provider) NewLastEventTimeMetric(name string) reflector.GaugeMetric {
	return p.gauges[reflector.LastEventTimeMetricName].WithLabelValues(name)
}

func (p *Provider) NewWatchOpenMetric(name string) reflector.GaugeMetric {
	return p.gauges[reflector.WatchOpenMetricName].WithLabelValues(name)
}
