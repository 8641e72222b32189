"""The server's Prometheus metrics, on a registry of its own (one per app, so several apps share no counts)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
REASON_CHARS = 80  # a miss reason is a short fixed text; cut so no label grows with a question


class Metrics:
    def __init__(self) -> None:
        self._series: dict[tuple[str, int], tuple[Counter, Histogram]] = {}
        self._misses: dict[str, Counter] = {}
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("planbake_requests", "HTTP requests served, by endpoint and status code.",
                                ["endpoint", "status"], registry=r)
        self.hits = Counter("planbake_lookup_hits", "Lookups that hit a recurring shape.", registry=r)
        self.misses = Counter("planbake_lookup_misses", "Lookups that missed, by reason.", ["reason"], registry=r)
        self.latency = Histogram("planbake_request_seconds", "Time to answer a request, by endpoint.", ["endpoint"],
                                 buckets=LATENCY_BUCKETS, registry=r)
        self.not_covered = Counter("planbake_retrieve_parts_not_covered",
                                   "Retrieve parts reported not covered (a step failed, timed out or was refused).",
                                   registry=r)
        self.publication = Gauge("planbake_publication_info", "The publication being served (value 1).", ["run_id"],
                                 registry=r)
        self.age = Gauge("planbake_publication_age_seconds", "Seconds since the served publication was published.",
                         registry=r)
        self.reloads = Counter("planbake_reloads", "Publications swapped in after CURRENT switched.", registry=r)
        self.refused = Counter("planbake_reloads_refused", "Publications refused (damaged); the old one stayed.",
                               registry=r)

        self.planner = Counter("planbake_online_planner_calls", "Misses sent to the online planner, by outcome "
                               "(planned, invalid, late, failed).", ["outcome"], registry=r)
        self.fallbacks = Counter("planbake_online_planner_fallbacks", "Online planner calls that fell back to one "
                                 "search.", registry=r)

    def request(self, endpoint: str, status: int, seconds: float) -> None:
        """One request counted and timed (each label set's series looked up once, not per request)."""
        key = (endpoint, status)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = (self.requests.labels(endpoint, str(status)), self.latency.labels(endpoint))
        series[0].inc()
        series[1].observe(seconds)

    def served(self, run_id: str, old: str | None) -> None:
        if old is not None:
            self.publication.remove(old)
            self.reloads.inc()
        self.publication.labels(run_id).set(1)

    def miss(self, reason: str) -> None:
        counter = self._misses.get(reason)
        if counter is None:
            counter = self._misses[reason] = self.misses.labels(reason[:REASON_CHARS] or "unknown")
        counter.inc()
