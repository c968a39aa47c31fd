//! The API's Prometheus metrics: requests by route template, method and status, their
//! latency, and the requests in flight. Recorded in one place, [`crate::dispatch`], for every
//! request the listener answers (CORS `OPTIONS` and `/healthcheck` included).

use openkeel_core::metrics::{self, Collector, CounterVec, Gauge, HistogramVec};

/// The API's metric families (one set per API instance, see [`crate::ApiState::metrics`]).
#[derive(Debug)]
pub struct ApiMetrics {
    pub requests: CounterVec,
    pub duration: HistogramVec,
    pub in_flight: Gauge,
}

impl Default for ApiMetrics {
    fn default() -> Self {
        ApiMetrics {
            requests: CounterVec::new(
                "openkeel_api_requests_total",
                "HTTP requests answered by the API, by route template, method and status.",
                &["route", "method", "status"],
            ),
            duration: HistogramVec::new(
                "openkeel_api_request_duration_seconds",
                "Time from the request reaching the API to its response head, by route template and method.",
                &["route", "method"],
                metrics::DEFAULT_BUCKETS,
            ),
            in_flight: Gauge::new(
                "openkeel_api_requests_in_flight",
                "Requests the API is handling now.",
            ),
        }
    }
}

/// The `method` label: the HTTP methods a client of Magnum's API sends, anything else
/// `other` (a method name is the client's to choose; every label value is a series).
pub fn method_label(method: &http::Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "HEAD" => "HEAD",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "OPTIONS" => "OPTIONS",
        _ => "other",
    }
}

impl ApiMetrics {
    /// Count one request in flight until the guard is dropped (also when the client goes
    /// away and the request's future is dropped).
    pub fn start(&self) -> InFlight<'_> {
        self.in_flight.inc();
        InFlight(self)
    }

    /// One answered request.
    pub fn observe(&self, route: &str, method: &http::Method, status: u16, seconds: f64) {
        let method = method_label(method);
        let status = status.to_string();
        self.requests.inc(&[route, method, &status]);
        self.duration.observe(&[route, method], seconds);
    }
}

/// A request in flight ([`ApiMetrics::start`]).
pub struct InFlight<'a>(&'a ApiMetrics);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}

#[async_trait::async_trait]
impl Collector for ApiMetrics {
    async fn collect(&self, out: &mut String) {
        self.requests.encode(out);
        self.duration.encode(out);
        self.in_flight.encode(out);
    }
}
